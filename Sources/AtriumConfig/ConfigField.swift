import AtriumJSON
import AtriumLog

/// A raw setting before parsing: JSON from the config file, text from the environment or a flag.
enum RawSetting {
    case json(JSONValue)
    case text(String)
}

/// One setting with its three spellings: the config file's dotted path, the environment variable and the flag.
struct ConfigField: Sendable {
    let path: String
    let env: String
    let flag: String
    let help: String
    /// Applies a raw value; returns a message when it is not valid.
    let apply: @Sendable (inout ServerConfig, RawSetting) -> String?

    static let all: [ConfigField] = [
        nonEmptyText("bind", "ATRIUM_BIND", "--bind", "address to listen on", "expected an address such as 127.0.0.1") {
            $0.bind = $1
        },
        integer(
            "port", "ATRIUM_PORT", "--port", "TCP port (0: any free port)", 0...65535,
            "expected a port number from 0 to 65535"
        ) { $0.port = $1 },
        ConfigField(path: "store", env: "ATRIUM_STORE", flag: "--store", help: "sqlite or memory") { c, raw in
            guard let s = text(raw), let k = StoreKind(rawValue: s) else { return "expected sqlite or memory" }
            c.store = k
            return nil
        },
        nonEmptyText(
            "dataDir", "ATRIUM_DATA_DIR", "--data-dir", "directory for the database and dev keys",
            "expected a directory path"
        ) { $0.dataDir = $1 },
        ConfigField(path: "keys", env: "ATRIUM_KEYS", flag: "--keys", help: "API keys, KEY:SECRET[,KEY:SECRET]") {
            c, raw in
            switch raw {
            case .json(.object(let o)):
                var keys: [String: String] = [:]
                for (k, v) in o {
                    guard let s = v.stringValue else { return "the secret of key \"\(k)\" must be a string" }
                    keys[k] = s
                }
                c.keys = keys
                return nil
            case .json(.string(let s)), .text(let s):
                var keys: [String: String] = [:]
                for pair in s.split(separator: ",") {
                    guard let colon = pair.firstIndex(of: ":"), colon != pair.startIndex,
                        pair.index(after: colon) != pair.endIndex
                    else { return "expected KEY:SECRET pairs separated by commas" }
                    keys[String(pair[..<colon])] = String(pair[pair.index(after: colon)...])
                }
                c.keys = keys
                return nil
            default:
                return "expected an object of key to secret, or KEY:SECRET pairs"
            }
        },
        ConfigField(
            path: "dev", env: "ATRIUM_DEV", flag: "--dev", help: "development mode: creates and prints a dev key"
        ) { c, raw in
            guard let b = bool(raw) else { return "expected true or false" }
            c.dev = b
            return nil
        },
        nonEmptyText(
            "tls.cert", "ATRIUM_TLS_CERT", "--tls-cert", "PEM certificate for https/wss", "expected a file path"
        ) { $0.tlsCert = $1 },
        nonEmptyText("tls.key", "ATRIUM_TLS_KEY", "--tls-key", "PEM private key for https/wss", "expected a file path")
        { $0.tlsKey = $1 },
        ConfigField(
            path: "cors.origins", env: "ATRIUM_CORS_ORIGINS", flag: "--cors-origins",
            help: "origins allowed by CORS, comma-separated, or *"
        ) { c, raw in
            switch raw {
            case .json(.array(let a)):
                let s = a.compactMap(\.stringValue)
                guard s.count == a.count else { return "expected an array of origins" }
                c.corsOrigins = s
            case .json(.string(let s)), .text(let s):
                c.corsOrigins = s.split(separator: ",").map { String($0) }
            default: return "expected an array of origins"
            }
            return nil
        },
        ConfigField(path: "log.level", env: "ATRIUM_LOG_LEVEL", flag: "--log-level", help: "debug, info, warn or error")
        { c, raw in
            guard let s = text(raw), let l = LogLevel(name: s) else { return "expected debug, info, warn or error" }
            c.logLevel = l
            return nil
        },
        ConfigField(path: "log.format", env: "ATRIUM_LOG_FORMAT", flag: "--log-format", help: "text (logfmt) or json") {
            c, raw in
            guard let s = text(raw), let f = LogFormat(rawValue: s) else { return "expected text or json" }
            c.logFormat = f
            return nil
        },
        integer(
            "limits.maxBodyBytes", "ATRIUM_MAX_BODY_BYTES", "--max-body-bytes", "largest admin request body",
            1024...(64 << 20), "expected a size from 1024 to 67108864 bytes"
        ) { $0.maxBodyBytes = $1 },
        integer(
            "limits.requestTimeoutSeconds", "ATRIUM_REQUEST_TIMEOUT", "--request-timeout",
            "seconds an HTTP request may take, head and body (408 after)", 1...300, "expected 1 to 300 seconds"
        ) { $0.requestTimeout = $1 },
        integer(
            "limits.maxConnections", "ATRIUM_MAX_CONNECTIONS", "--max-connections",
            "open connections in total, held below the descriptor limit", 8...1_000_000,
            "expected 8 to 1000000 connections"
        ) { $0.maxConnections = $1 },
        integer(
            "limits.maxConnectionsPerAddress", "ATRIUM_MAX_CONNECTIONS_PER_ADDRESS", "--max-connections-per-address",
            "open connections from one source address", 1...1_000_000, "expected 1 to 1000000 connections"
        ) { $0.maxConnectionsPerAddress = $1 },
        integer(
            "auth.leewaySeconds", "ATRIUM_TOKEN_LEEWAY", "--token-leeway", "clock skew tolerated on token times",
            0...600, "expected 0 to 600 seconds"
        ) { $0.tokenLeeway = $1 },
        integer(
            "signal.authTimeoutSeconds", "ATRIUM_SIGNAL_AUTH_TIMEOUT", "--signal-auth-timeout",
            "seconds a WebSocket has to authenticate", 1...300, "expected 1 to 300 seconds"
        ) { $0.signalAuthTimeout = $1 },
        integer(
            "signal.idleTimeoutSeconds", "ATRIUM_SIGNAL_IDLE_TIMEOUT", "--signal-idle-timeout",
            "seconds of silence before a WebSocket is closed", 5...3600, "expected 5 to 3600 seconds"
        ) { $0.signalIdleTimeout = $1 },
        integer(
            "signal.stallTimeoutSeconds", "ATRIUM_SIGNAL_STALL_TIMEOUT", "--signal-stall-timeout",
            "seconds a WebSocket may take no bytes while messages wait before it is a slow consumer (4009)",
            1...600, "expected 1 to 600 seconds"
        ) { $0.signalStallTimeout = $1 },
        integer(
            "signal.resumeWindowSeconds", "ATRIUM_RESUME_WINDOW", "--resume-window",
            "seconds a dropped participant may resume", 0...600, "expected 0 to 600 seconds"
        ) { $0.resumeWindow = $1 },
        ConfigField(
            path: "rooms.autoCreate", env: "ATRIUM_AUTO_CREATE_ROOMS", flag: "--auto-create-rooms",
            help: "off, grant (token has roomCreate) or any"
        ) { c, raw in
            guard let s = text(raw), ["off", "grant", "any"].contains(s) else { return "expected off, grant or any" }
            c.autoCreateRooms = s
            return nil
        },
        nonEmptyText(
            "web.dir", "ATRIUM_WEB_DIR", "--web-dir", "directory with the meeting page (web/) and the JS client (js/)",
            "expected a directory path"
        ) { $0.webDir = $1 },
        integer(
            "media.udpPort", "ATRIUM_UDP_PORT", "--udp-port", "UDP port of the media plane (0: any free port; -1: off)",
            -1...65535, "expected a port number from 0 to 65535, or -1 for no media plane"
        ) { $0.udpPort = $1 },
        ConfigField(
            path: "media.udpPorts", env: "ATRIUM_UDP_PORTS", flag: "--udp-ports",
            help: "UDP port range of the media workers, A-B (worker i on A+i); default: from media.udpPort on"
        ) { c, raw in
            guard let s = text(raw), let range = MediaPortPlan.parseRange(s) else {
                return "expected a port range such as 40000-40015 (1 to 65535, first not above last)"
            }
            c.udpPortRange = range
            return nil
        },
        integer(
            "media.workers", "ATRIUM_MEDIA_WORKERS", "--media-workers",
            "media worker threads, each with its own UDP port and rooms (0: the cores the process may use)",
            0...MediaPortPlan.maxWorkers, "expected a number of media workers from 0 to \(MediaPortPlan.maxWorkers)"
        ) { $0.mediaWorkers = $1 },
        integer(
            "media.roomSpread", "ATRIUM_MEDIA_ROOM_SPREAD", "--media-room-spread",
            "a room's transports on one media worker before its new viewers go to another (0: a room stays on one)",
            0...1_000_000, "expected a number of transports from 0 to 1000000"
        ) { $0.mediaRoomSpread = $1 },
        nonEmptyText(
            "media.bind", "ATRIUM_MEDIA_BIND", "--media-bind", "address the media socket binds",
            "expected an address such as 127.0.0.1 or 0.0.0.0"
        ) { $0.mediaBind = $1 },
        ConfigField(
            path: "media.announce", env: "ATRIUM_MEDIA_ANNOUNCE", flag: "--media-announce",
            help: "addresses announced as ICE candidates (comma-separated); default: the bind address"
        ) { c, raw in
            let list: [String]
            switch raw {
            case .json(.array(let a)):
                let texts = a.compactMap(\.stringValue)
                guard texts.count == a.count else { return "expected an array of addresses" }
                list = texts
            case .json(.string(let s)), .text(let s):
                list = s.split(separator: ",").map { String($0).trimmingSpaces }
            default: return "expected addresses separated by commas"
            }
            guard list.allSatisfy({ !$0.isEmpty }) else { return "expected addresses separated by commas" }
            c.mediaAnnounce = list
            return nil
        },
        integer(
            "media.tcpPort", "ATRIUM_MEDIA_TCP_PORT", "--media-tcp-port",
            "TCP port of the passive ICE-TCP candidate, on media.bind (0: any free port; -1: off)", -1...65535,
            "expected a port number from 0 to 65535, or -1 for no ICE-TCP"
        ) { $0.mediaTCPPort = $1 },
        ConfigField(
            path: "turn.urls", env: "ATRIUM_TURN_URLS", flag: "--turn-urls",
            help: "TURN/TURNS URLs handed to clients (comma-separated), e.g. turn:turn.example.com:3478?transport=udp"
        ) { c, raw in
            let list: [String]
            switch raw {
            case .json(.array(let a)):
                let texts = a.compactMap(\.stringValue)
                guard texts.count == a.count else { return "expected an array of turn: or turns: URLs" }
                list = texts
            case .json(.string(let s)), .text(let s):
                list = s.split(separator: ",").map { String($0).trimmingSpaces }
            default: return "expected turn: or turns: URLs separated by commas"
            }
            for u in list where !ServerConfig.isTURNURL(u) {
                return "\"\(u)\" is not a turn: or turns: URL (RFC 7065: turn:host[:port][?transport=udp|tcp])"
            }
            c.turnURLs = list
            return nil
        },
        nonEmptyText(
            "turn.secret", "ATRIUM_TURN_SECRET", "--turn-secret",
            "coturn's static-auth-secret: TURN credentials are signed with it (TURN REST API)",
            "expected the shared secret of coturn's use-auth-secret"
        ) { $0.turnSecret = $1 },
        integer(
            "turn.ttlSeconds", "ATRIUM_TURN_TTL", "--turn-ttl",
            "seconds a TURN credential handed out at join or resume stays valid", 60...604_800,
            "expected 60 to 604800 seconds"
        ) { $0.turnTTL = $1 },
        integer(
            "media.testLossPercent", "ATRIUM_MEDIA_LOSS_PERCENT", "--media-loss-percent",
            "testing only: drop this percentage of media datagrams at random", 0...50, "expected 0 to 50"
        ) { $0.mediaLossPercent = $1 },
        integer(
            "media.maxPublishBitrate", "ATRIUM_MAX_PUBLISH_BITRATE", "--max-publish-bitrate",
            "highest bitrate announced to a publisher (REMB), bits per second", 100_000...100_000_000,
            "expected 100000 to 100000000 bits per second"
        ) { $0.maxPublishBitrate = $1 },
        integer(
            "media.keyFrameCacheBytes", "ATRIUM_KEY_FRAME_CACHE_BYTES", "--key-frame-cache-bytes",
            "bytes of each video stream's current picture kept to start new viewers; 0 turns the cache off",
            0...(64 << 20), "expected 0 to 67108864 bytes"
        ) { $0.keyFrameCacheBytes = $1 },
        integer(
            "media.keyFrameCacheSeconds", "ATRIUM_KEY_FRAME_CACHE_SECONDS", "--key-frame-cache-seconds",
            "how long after its key frame a cached picture is still served to new viewers", 1...3600,
            "expected 1 to 3600 seconds"
        ) { $0.keyFrameCacheSeconds = $1 },
        ConfigField(
            path: "cluster.redis", env: "ATRIUM_REDIS", flag: "--redis",
            help: "Redis URL (redis://host:port[/db], rediss:// for TLS) that turns the cluster on"
        ) { c, raw in
            guard let s = text(raw),
                (s.hasPrefix("redis://") && s.count > 8) || (s.hasPrefix("rediss://") && s.count > 9)
            else {
                return "expected a URL such as redis://127.0.0.1:6379 or rediss://redis.internal:6380"
            }
            c.redis = s
            return nil
        },
        nonEmptyText(
            "cluster.redisCA", "ATRIUM_REDIS_CA", "--redis-ca",
            "rediss://: the CA file Redis's certificate is checked against (default: the system's CAs)",
            "expected a file path"
        ) { $0.redisCA = $1 },
        nonEmptyText(
            "cluster.redisCert", "ATRIUM_REDIS_CERT", "--redis-cert",
            "rediss://: this node's certificate (PEM) when Redis asks clients for one; with --redis-key",
            "expected a file path"
        ) { $0.redisCert = $1 },
        nonEmptyText(
            "cluster.redisKey", "ATRIUM_REDIS_KEY", "--redis-key", "rediss://: the private key (PEM) of --redis-cert",
            "expected a file path"
        ) { $0.redisKey = $1 },
        ConfigField(
            path: "cluster.nodeId", env: "ATRIUM_NODE_ID", flag: "--node-id",
            help: "this node's id in the cluster (1 to 64 of A-Z a-z 0-9 _ - .); random when unset"
        ) { c, raw in
            guard let s = text(raw), !s.isEmpty, s.utf8.count <= 64,
                s.utf8.allSatisfy({ c in
                    (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F
                        || c == 0x2D || c == 0x2E
                })
            else { return "expected 1 to 64 characters of A-Z a-z 0-9 _ - ." }
            c.nodeID = s
            return nil
        },
        ConfigField(
            path: "cluster.publicUrl", env: "ATRIUM_PUBLIC_URL", flag: "--public-url",
            help: "where clients and other nodes reach this node (http[s]://host:port)"
        ) { c, raw in
            guard let s = text(raw), s.hasPrefix("http://") || s.hasPrefix("https://") else {
                return "expected a URL such as http://10.0.0.5:8800"
            }
            c.publicURL = s
            return nil
        },
        integer(
            "cluster.edgeAfter", "ATRIUM_EDGE_AFTER", "--edge-after",
            "a room's transports on its node before its next participants' media goes to other nodes, joined by relay links (0: a room stays on one node)",
            0...1_000_000, "expected a number of transports from 0 to 1000000"
        ) { $0.edgeAfter = $1 },
        ConfigField(
            path: "cluster.secret", env: "ATRIUM_CLUSTER_SECRET", flag: "--cluster-secret",
            help:
                "the key of what nodes send each other through Redis (at least 32 characters, the same on every node); derived from the API keys when unset"
        ) { c, raw in
            guard let s = text(raw), s.utf8.count >= 32 else { return "expected at least 32 characters" }
            c.clusterSecret = s
            return nil
        },
        ConfigField(
            path: "webhooks", env: "ATRIUM_WEBHOOKS", flag: "--webhooks",
            help: "webhook endpoints, a JSON array of {\"url\", \"secret\"} (and \"chat\": true for chat messages)"
        ) { c, raw in
            let value: JSONValue
            switch raw {
            case .json(.string(let s)), .text(let s):
                guard let v = try? JSONParser.parse(s) else { return "expected a JSON array of {\"url\", \"secret\"}" }
                value = v
            case .json(let v): value = v
            }
            guard let a = value.arrayValue else { return "expected a JSON array of {\"url\", \"secret\"}" }
            var out: [WebhookSetting] = []
            for (i, e) in a.enumerated() {
                guard let url = e["url"]?.stringValue, let secret = e["secret"]?.stringValue else {
                    return "endpoint \(i) needs a \"url\" and a \"secret\" string"
                }
                guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
                    return "endpoint \(i): the url must start with http:// or https://"
                }
                guard !secret.isEmpty else { return "endpoint \(i): the secret must not be empty" }
                var chat = false
                if let c = e["chat"] {
                    guard let b = c.boolValue else { return "endpoint \(i): \"chat\" must be true or false" }
                    chat = b
                }
                out.append(WebhookSetting(url: url, secret: secret, chat: chat))
            }
            c.webhooks = out
            return nil
        },
        integer(
            "webhookTimeoutSeconds", "ATRIUM_WEBHOOK_TIMEOUT", "--webhook-timeout",
            "seconds one webhook attempt may take before it is retried", 1...120, "expected 1 to 120 seconds"
        ) { $0.webhookTimeout = $1 },
        nonEmptyText(
            "recording.ffmpeg", "ATRIUM_FFMPEG", "--ffmpeg", "the ffmpeg run for recordings (path or name in PATH)",
            "expected a path"
        ) { $0.ffmpeg = $1 },
    ]

    /// An integer setting that must lie in `range`; `message` explains a refusal.
    static func integer(
        _ path: String, _ env: String, _ flag: String, _ help: String, _ range: ClosedRange<Int>, _ message: String,
        _ set: @escaping @Sendable (inout ServerConfig, Int) -> Void
    ) -> ConfigField {
        ConfigField(path: path, env: env, flag: flag, help: help) { c, raw in
            guard let n = int(raw), range.contains(n) else { return message }
            set(&c, n)
            return nil
        }
    }

    /// A text setting that must not be empty; `message` explains a refusal.
    static func nonEmptyText(
        _ path: String, _ env: String, _ flag: String, _ help: String, _ message: String,
        _ set: @escaping @Sendable (inout ServerConfig, String) -> Void
    ) -> ConfigField {
        ConfigField(path: path, env: env, flag: flag, help: help) { c, raw in
            guard let s = text(raw), !s.isEmpty else { return message }
            set(&c, s)
            return nil
        }
    }

    static func text(_ raw: RawSetting) -> String? {
        switch raw {
        case .text(let s), .json(.string(let s)): s
        default: nil
        }
    }

    static func int(_ raw: RawSetting) -> Int? {
        switch raw {
        case .text(let s): Int(s)
        case .json(let v): v.int64Value.flatMap { Int(exactly: $0) }
        }
    }

    static func bool(_ raw: RawSetting) -> Bool? {
        switch raw {
        case .json(.bool(let b)): b
        case .text(let s), .json(.string(let s)):
            switch s.lowercased() {
            case "1", "true", "yes", "on", "": true
            case "0", "false", "no", "off": false
            default: nil
            }
        default: nil
        }
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
