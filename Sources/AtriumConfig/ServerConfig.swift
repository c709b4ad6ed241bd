public import AtriumLog

/// Where rooms are kept.
public enum StoreKind: String, Sendable, CaseIterable {
    /// An SQLite file in the data directory (the default): rooms survive restarts.
    case sqlite
    /// In memory: rooms are gone at exit.
    case memory
}

/// Everything `atrium serve` needs, resolved from defaults, a config file, `ATRIUM_*` variables and flags
/// (in increasing precedence). See `ConfigField.all` for every setting and its three spellings.
public struct ServerConfig: Equatable, Sendable {
    /// Secrets shorter than this are refused outside `--dev`: HS256 keys should carry 256 bits.
    public static let minimumSecretLength = 32

    public var bind = "127.0.0.1"
    public var port = 8800
    public var store = StoreKind.sqlite
    public var dataDir = "atrium-data"
    /// API key -> secret.
    public var keys: [String: String] = [:]
    public var dev = false
    public var tlsCert: String?
    public var tlsKey: String?
    /// Origins allowed to call the admin API from a browser; `*` allows any.
    public var corsOrigins: [String] = []
    public var logLevel = LogLevel.info
    public var logFormat = LogFormat.text
    public var maxBodyBytes = 1 << 20
    /// Seconds an HTTP connection has to send a complete request, head and body (408 at the deadline).
    public var requestTimeout = 10
    /// Open connections in total (held below the descriptor limit minus a reserve).
    public var maxConnections = 4096
    /// Open connections from one source address.
    public var maxConnectionsPerAddress = 1024
    /// Seconds of clock skew tolerated on token times.
    public var tokenLeeway = 30
    /// Seconds a WebSocket may take to authenticate with its first message.
    public var signalAuthTimeout = 10
    /// Seconds without a message before a signaling connection is closed (clients ping every 10 s).
    public var signalIdleTimeout = 30
    /// Seconds a connection may accept no bytes while messages wait for it before it is closed as a
    /// slow consumer (4009).
    public var signalStallTimeout = 5
    /// Seconds a participant whose connection dropped may resume its session.
    public var resumeWindow = 20
    /// When joining a missing room creates it: `off`, `grant` (the token has roomCreate) or `any`.
    public var autoCreateRooms = "grant"
    /// The directory with the meeting page (`web/`) and the JavaScript client (`js/atrium.js`).
    public var webDir = "clients"
    /// The media plane: UDP port for every peer (0: any free port; -1: no media plane).
    public var udpPort = 8801
    /// The UDP ports of the media workers, worker i on the range's i-th port (`--udp-ports A-B`); when
    /// nil they follow `udpPort` (each worker on the next port, or all on 0: any free port).
    public var udpPortRange: ClosedRange<Int>?
    /// Media worker threads, each with its own sockets and rooms (0: the cores the process may use).
    public var mediaWorkers = 0
    /// A room's transports on one media worker before its new viewers' transports open on another,
    /// fed through a pipe (docs/media-workers.md); 0: a room stays on its worker.
    public var mediaRoomSpread = 200
    /// The address the media socket binds.
    public var mediaBind = "127.0.0.1"
    /// The passive ICE-TCP candidate's port on `mediaBind` (0: any free port; -1: no ICE-TCP).
    public var mediaTCPPort = -1
    /// Addresses announced as ICE candidates (public address, 1:1 NAT); the bind address when empty.
    public var mediaAnnounce: [String] = []
    /// Testing only: percentage of media datagrams dropped at random.
    public var mediaLossPercent = 0
    /// The highest bitrate announced to publishers (REMB), bits per second.
    public var maxPublishBitrate = 10_000_000
    /// The key-frame cache of each video stream: its byte bound (0: off) and how long after its key
    /// frame it is served.
    public var keyFrameCacheBytes = 4 << 20
    public var keyFrameCacheSeconds = 300
    /// The cluster's Redis (`redis://host:port[/db]`, `rediss://` for TLS); nil runs a single node
    /// (docs/cluster.md).
    public var redis: String?
    /// TLS to Redis (`rediss://`): the CA its certificate is checked against (nil: the system's), and
    /// this node's certificate and key when Redis asks for one.
    public var redisCA: String?
    public var redisCert: String?
    public var redisKey: String?
    /// This node's id in the cluster; made at start when nil.
    public var nodeID: String?
    /// Where clients and the other nodes reach this node's HTTP and WebSocket; from the bind address
    /// and port when nil.
    public var publicURL: String?
    /// The secret every node seals its messages to the others with (`RelaySeal`); from the API keys
    /// when nil.
    public var clusterSecret: String?
    /// A room's transports on its node before its next participants' media goes to other nodes (0: never).
    public var edgeAfter = 0
    /// Where room events are POSTed, each endpoint with its own signing secret (docs/webhooks.md).
    public var webhooks: [WebhookSetting] = []
    /// Seconds one webhook attempt may take before it is retried.
    public var webhookTimeout = 5
    /// The ffmpeg the server runs for recordings (a path, or a name looked up in PATH).
    public var ffmpeg = "ffmpeg"

    /// TURN servers handed to every participant at join and resume (`turn:` / `turns:` URLs, RFC 7065),
    /// with credentials signed by coturn's `static-auth-secret` and valid for `turnTTL` seconds.
    public var turnURLs: [String] = []
    public var turnSecret: String?
    public var turnTTL = 86_400

    public init() {}

    /// A `turn:` or `turns:` URI as RFC 7065 section 3.1 has it: a host (or `[v6]`), an optional port,
    /// an optional `?transport=udp|tcp`; no spaces, quotes or other characters a client could misread.
    public static func isTURNURL(_ text: String) -> Bool {
        let rest: Substring
        if text.hasPrefix("turn:") {
            rest = text.dropFirst(5)
        } else if text.hasPrefix("turns:") {
            rest = text.dropFirst(6)
        } else {
            return false
        }
        let parts = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard let hostPort = parts.first, !hostPort.isEmpty, hostPort.utf8.count <= 255,
            hostPort.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:[]".contains($0)) })
        else { return false }
        if parts.count == 2 { return parts[1] == "transport=udp" || parts[1] == "transport=tcp" }
        return true
    }
}

/// One webhook endpoint as configured.
public struct WebhookSetting: Equatable, Sendable {
    public var url: String
    public var secret: String
    /// Whether it also gets a `chat_message` per chat message (off by default: chat can be busy).
    public var chat: Bool

    public init(url: String, secret: String, chat: Bool = false) {
        self.url = url
        self.secret = secret
        self.chat = chat
    }
}

/// One problem in the configuration, named by its field (the config file's dotted path).
public struct ConfigIssue: Equatable, Sendable, CustomStringConvertible {
    public var field: String
    public var source: String
    public var message: String

    public init(field: String, source: String, message: String) {
        self.field = field
        self.source = source
        self.message = message
    }

    public var description: String { "\(field): \(message) (from \(source))" }
}
