public import AtriumJSON

/// What a node tells the cluster about itself in each heartbeat (docs/cluster.md).
public struct NodeInfo: Equatable, Sendable {
    public var id: NodeID
    /// Where clients and other nodes reach its HTTP API and WebSocket (`--public-url`).
    public var url: String
    /// The media addresses it announces as ICE candidates (`host:port`): media goes there directly.
    public var mediaAddresses: [String]
    /// Its passive ICE-TCP candidates (`host:port`, `--media-tcp-port`), for viewers placed on it whose
    /// UDP is blocked; empty without.
    public var mediaTCPAddresses: [String] = []
    /// The SHA-256 digest (hex) of its media plane's DTLS certificate: viewers placed on it see it in
    /// their offers, and relay links to it check it; empty without media.
    public var mediaFingerprint = ""
    /// It runs viewers of rooms other nodes own (`--edge-after`): only such a node is given them.
    public var takesEdges = false
    /// The rooms other nodes own whose viewers it runs, the largest first (at most `maxEdgeRooms`).
    public var edgeRooms: [EdgeRoom] = []
    public var load: NodeLoad
    /// Draining (SIGTERM): it takes no new rooms.
    public var draining: Bool
    public var startedAt: Int64
    /// Wall-clock seconds of the heartbeat that wrote this record.
    public var updatedAt: Int64

    public init(
        id: NodeID, url: String, mediaAddresses: [String], load: NodeLoad = NodeLoad(), draining: Bool = false,
        startedAt: Int64, updatedAt: Int64
    ) {
        self.id = id
        self.url = url
        self.mediaAddresses = mediaAddresses
        self.load = load
        self.draining = draining
        self.startedAt = startedAt
        self.updatedAt = updatedAt
    }

    public var json: JSONValue {
        .object([
            "id": .string(id.rawValue), "url": .string(url),
            "mediaAddresses": .array(mediaAddresses.map { .string($0) }), "mediaFingerprint": .string(mediaFingerprint),
            "mediaTcpAddresses": .array(mediaTCPAddresses.map { .string($0) }),
            "takesEdges": .bool(takesEdges),
            "edgeRooms": .array(edgeRooms.map(\.json)),
            "load": load.json, "draining": .bool(draining), "startedAt": .int(startedAt), "updatedAt": .int(updatedAt),
        ])
    }

    /// Reads a record another node wrote; nil when it is not one.
    public init?(json v: JSONValue) {
        guard let id = v["id"]?.stringValue, NodeID.isValid(id), let url = v["url"]?.stringValue,
            let load = v["load"].flatMap(NodeLoad.init(json:))
        else { return nil }
        self.init(
            id: NodeID(id), url: url, mediaAddresses: v["mediaAddresses"]?.arrayValue?.compactMap(\.stringValue) ?? [],
            load: load, draining: v["draining"]?.boolValue ?? false, startedAt: v["startedAt"]?.int64Value ?? 0,
            updatedAt: v["updatedAt"]?.int64Value ?? 0)
        takesEdges = v["takesEdges"]?.boolValue ?? false
        mediaTCPAddresses = v["mediaTcpAddresses"]?.arrayValue?.compactMap(\.stringValue) ?? []
        edgeRooms = (v["edgeRooms"]?.arrayValue ?? []).prefix(Self.maxEdgeRooms).compactMap(EdgeRoom.init(json:))
        let fp = v["mediaFingerprint"]?.stringValue ?? ""
        mediaFingerprint =
            fp.utf8.count == 64 && fp.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
            ? fp : ""
    }
}

extension NodeInfo {
    /// A record lists at most this many edge rooms (the largest): a node record stays small.
    public static let maxEdgeRooms = 64

    /// A room another node owns, some of whose viewers this node runs.
    public struct EdgeRoom: Equatable, Sendable {
        public var room: String
        public var owner: String
        /// Viewer connections (subscriber transports) here.
        public var viewers: Int

        public init(room: String, owner: String, viewers: Int) {
            self.room = room
            self.owner = owner
            self.viewers = viewers
        }

        var json: JSONValue {
            .object(["room": .string(room), "owner": .string(owner), "viewers": .int(Int64(viewers))])
        }

        init?(json v: JSONValue) {
            guard let room = v["room"]?.stringValue, let owner = v["owner"]?.stringValue, NodeID.isValid(owner),
                let n = v["viewers"]?.int64Value, n >= 0
            else { return nil }
            self.init(room: room, owner: owner, viewers: Int(clamping: n))
        }
    }
}

/// A node's load as placement weighs it.
public struct NodeLoad: Equatable, Sendable {
    public var rooms = 0
    public var participants = 0
    /// Media packets forwarded since the node started.
    public var forwardedPackets: UInt64 = 0
    /// Process CPU over the last heartbeat period, percent of one core.
    public var cpuPercent = 0.0
    /// Viewer connections it runs for rooms other nodes own (as an edge).
    public var edgeViewers = 0

    public init(
        rooms: Int = 0, participants: Int = 0, forwardedPackets: UInt64 = 0, cpuPercent: Double = 0,
        edgeViewers: Int = 0
    ) {
        self.edgeViewers = edgeViewers
        self.rooms = rooms
        self.participants = participants
        self.forwardedPackets = forwardedPackets
        self.cpuPercent = cpuPercent
    }

    /// One number to compare nodes by: participants weigh most (each is signaling and media), and a
    /// viewer run for another node's room as one; then rooms, then CPU beyond what those explain.
    public var score: Double { Double(participants) + Double(edgeViewers) + 5 * Double(rooms) + cpuPercent }

    public var json: JSONValue {
        .object([
            "rooms": .int(Int64(rooms)), "participants": .int(Int64(participants)),
            "forwardedPackets": .int(Int64(clamping: forwardedPackets)),
            "cpuPercent": .double((cpuPercent * 10).rounded() / 10), "edgeViewers": .int(Int64(edgeViewers)),
        ])
    }

    public init?(json v: JSONValue) {
        guard let r = v["rooms"]?.int64Value, let p = v["participants"]?.int64Value else { return nil }
        rooms = Int(clamping: r)
        participants = Int(clamping: p)
        forwardedPackets = UInt64(clamping: v["forwardedPackets"]?.int64Value ?? 0)
        edgeViewers = Int(clamping: max(0, v["edgeViewers"]?.int64Value ?? 0))
        switch v["cpuPercent"] {
        case .double(let d): cpuPercent = d
        case .int(let n): cpuPercent = Double(n)
        default: cpuPercent = 0
        }
    }
}
