public import AtriumJSON
public import AtriumModel

/// A value with one JSON form in docs/protocol.md section 7, read and written by this module alone.
public protocol WireValue: Equatable, Sendable {
    init(json: JSONValue) throws(ProtocolError)
    var json: JSONValue { get }
}

/// Who acted (`by`): a participant, the admin API, or nobody (a timer).
public enum By: Equatable, Sendable {
    case participant(ParticipantID)
    case admin

    static func json(_ by: By?) -> JSONValue {
        switch by {
        case .participant(let id): .string(id.rawValue)
        case .admin: .string("admin")
        case nil: .null
        }
    }

    static func read(_ f: FieldReader) throws(ProtocolError) -> By? {
        guard let s = try f.optionalString("by", max: 64) else { return nil }
        return s == "admin" ? .admin : .participant(ParticipantID(s))
    }
}

/// What a participant may do (`permissions`).
public struct Permissions: WireValue {
    public var sources: [TrackSource]
    public var canSubscribe: Bool
    public var shareGranted: Bool
    /// Sending data messages (`send_data`).
    public var canPublishData: Bool

    public init(sources: [TrackSource], canSubscribe: Bool, shareGranted: Bool, canPublishData: Bool = true) {
        self.sources = sources
        self.canSubscribe = canSubscribe
        self.shareGranted = shareGranted
        self.canPublishData = canPublishData
    }

    public init(json: JSONValue) throws(ProtocolError) {
        let f = try FieldReader(json, "permissions")
        var sources: [TrackSource] = []
        for v in try f.array("sources") {
            guard let s = v.stringValue.flatMap(TrackSource.init(rawValue:)) else {
                throw .invalidField("sources", "expected track sources")
            }
            sources.append(s)
        }
        self.init(
            sources: sources, canSubscribe: try f.bool("canSubscribe"), shareGranted: try f.bool("shareGranted"),
            canPublishData: try f.bool("canPublishData"))
    }

    public var json: JSONValue {
        .object([
            "sources": .array(sources.map { .string($0.rawValue) }), "canSubscribe": .bool(canSubscribe),
            "shareGranted": .bool(shareGranted), "canPublishData": .bool(canPublishData),
        ])
    }
}

/// A published track (`track`).
public struct TrackInfo: WireValue {
    public var id: TrackID
    public var participantId: ParticipantID
    public var source: TrackSource
    public var kind: TrackKind
    public var name: String
    public var width: Int
    public var height: Int
    public var layers: [SimulcastLayer]
    public var muted: Bool
    public var shareId: ShareID?

    public init(
        id: TrackID, participantId: ParticipantID, source: TrackSource, name: String = "", width: Int = 0,
        height: Int = 0, layers: [SimulcastLayer] = [], muted: Bool = false, shareId: ShareID? = nil
    ) {
        self.id = id
        self.participantId = participantId
        self.source = source
        self.kind = TrackKind(source: source)
        self.name = name
        self.width = width
        self.height = height
        self.layers = layers
        self.muted = muted
        self.shareId = shareId
    }

    public init(json: JSONValue) throws(ProtocolError) {
        let f = try FieldReader(json, "track")
        self.init(
            id: TrackID(try f.string("id", max: 64)),
            participantId: ParticipantID(try f.string("participantId", max: 64)),
            source: try f.enumValue("source"), name: try f.string("name", max: 256),
            width: try f.int("width", 0...16384),
            height: try f.int("height", 0...16384), layers: try f.list("layers", SimulcastLayer.read),
            muted: try f.bool("muted"), shareId: try f.optionalString("shareId", max: 64).map(ShareID.init))
        kind = try f.enumValue("kind")
    }

    public var json: JSONValue {
        .object([
            "id": .string(id.rawValue), "participantId": .string(participantId.rawValue),
            "source": .string(source.rawValue), "kind": .string(kind.rawValue), "name": .string(name),
            "width": .int(Int64(width)), "height": .int(Int64(height)), "layers": .array(layers.map(\.json)),
            "muted": .bool(muted), "shareId": shareId.map { .string($0.rawValue) } ?? .null,
        ])
    }
}

extension SimulcastLayer {
    /// One layer as `publish` declares it and `track` shows it.
    public var json: JSONValue {
        .object(["rid": .string(rid), "width": .int(Int64(width)), "height": .int(Int64(height))])
    }

    static func read(_ v: JSONValue) throws(ProtocolError) -> SimulcastLayer {
        guard let o = v.objectValue else { throw .invalidField("layers", "expected objects") }
        let f = FieldReader(object: o)
        return SimulcastLayer(
            rid: try f.string("rid", max: 16), width: try f.int("width", 0...16384),
            height: try f.int("height", 0...16384))
    }
}

/// A participant with its tracks (`participant`).
public struct ParticipantInfo: WireValue {
    public var id: ParticipantID
    public var identity: String
    public var name: String
    public var metadata: String
    public var role: ParticipantRole
    public var joinedAt: Int64
    public var permissions: Permissions
    public var tracks: [TrackInfo]
    /// Its key/value attributes (`set_attributes`).
    public var attributes: [String: String]

    public init(
        id: ParticipantID, identity: String, name: String, metadata: String, role: ParticipantRole, joinedAt: Int64,
        permissions: Permissions, tracks: [TrackInfo], attributes: [String: String] = [:]
    ) {
        self.attributes = attributes
        self.id = id
        self.identity = identity
        self.name = name
        self.metadata = metadata
        self.role = role
        self.joinedAt = joinedAt
        self.permissions = permissions
        self.tracks = tracks
    }

    public init(json: JSONValue) throws(ProtocolError) {
        let f = try FieldReader(json, "participant")
        self.init(
            id: ParticipantID(try f.string("id", max: 64)), identity: try f.string("identity", max: 256),
            name: try f.string("name", max: 256), metadata: try f.string("metadata", max: 16 * 1024),
            role: try f.enumValue("role"), joinedAt: try f.int64("joinedAt"),
            permissions: try Permissions(json: try f.value("permissions")),
            tracks: try f.list("tracks", TrackInfo.init(json:)),
            attributes: try AttributeCoding.decodeSet(try f.value("attributes"), "attributes"))
    }

    public var json: JSONValue {
        .object([
            "id": .string(id.rawValue), "identity": .string(identity), "name": .string(name),
            "metadata": .string(metadata), "role": .string(role.rawValue), "joinedAt": .int(joinedAt),
            "permissions": permissions.json, "tracks": .array(tracks.map(\.json)),
            "attributes": AttributeCoding.encodeSet(attributes),
        ])
    }
}

/// A running or paused screen share (`share`).
public struct ShareInfo: WireValue {
    public var id: ShareID
    public var participantId: ParticipantID
    public var state: ShareState
    public var trackId: TrackID
    public var audioTrackId: TrackID?
    public var startedAt: Int64

    public init(
        id: ShareID, participantId: ParticipantID, state: ShareState, trackId: TrackID, audioTrackId: TrackID?,
        startedAt: Int64
    ) {
        self.id = id
        self.participantId = participantId
        self.state = state
        self.trackId = trackId
        self.audioTrackId = audioTrackId
        self.startedAt = startedAt
    }

    public init(json: JSONValue) throws(ProtocolError) {
        let f = try FieldReader(json, "share")
        self.init(
            id: ShareID(try f.string("id", max: 64)),
            participantId: ParticipantID(try f.string("participantId", max: 64)),
            state: try f.enumValue("state"), trackId: TrackID(try f.string("trackId", max: 64)),
            audioTrackId: try f.optionalString("audioTrackId", max: 64).map(TrackID.init),
            startedAt: try f.int64("startedAt"))
    }

    public var json: JSONValue {
        .object([
            "id": .string(id.rawValue), "participantId": .string(participantId.rawValue),
            "state": .string(state.rawValue), "trackId": .string(trackId.rawValue),
            "audioTrackId": audioTrackId.map { .string($0.rawValue) } ?? .null, "startedAt": .int(startedAt),
        ])
    }
}

/// A pending request to share (`request`).
public struct ShareRequestInfo: WireValue {
    public var id: ShareRequestID
    public var participantId: ParticipantID
    public var createdAt: Int64
    public var expiresAt: Int64

    public init(id: ShareRequestID, participantId: ParticipantID, createdAt: Int64, expiresAt: Int64) {
        self.id = id
        self.participantId = participantId
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    public init(json: JSONValue) throws(ProtocolError) {
        let f = try FieldReader(json, "request")
        self.init(
            id: ShareRequestID(try f.string("id", max: 64)),
            participantId: ParticipantID(try f.string("participantId", max: 64)),
            createdAt: try f.int64("createdAt"), expiresAt: try f.int64("expiresAt"))
    }

    public var json: JSONValue {
        .object([
            "id": .string(id.rawValue), "participantId": .string(participantId.rawValue),
            "createdAt": .int(createdAt), "expiresAt": .int(expiresAt),
        ])
    }
}

extension SharePolicy: WireValue {
    public init(json: JSONValue) throws(ProtocolError) {
        let f = try FieldReader(json, "sharePolicy")
        self.init()
        shareMode = try f.enumValue("shareMode")
        maxConcurrentShares = try f.int("maxConcurrentShares", 1...SharePolicy.maxConcurrentSharesLimit)
        whoCanShare = try f.enumValue("whoCanShare")
        shareRequestRequired = try f.bool("shareRequestRequired")
        shareLocked = try f.bool("shareLocked")
    }

    public var json: JSONValue {
        .object([
            "shareMode": .string(shareMode.rawValue), "maxConcurrentShares": .int(Int64(maxConcurrentShares)),
            "whoCanShare": .string(whoCanShare.rawValue), "shareRequestRequired": .bool(shareRequestRequired),
            "shareLocked": .bool(shareLocked),
        ])
    }
}

/// The room as participants see it (`room`).
public struct RoomInfo: WireValue {
    public var id: RoomID
    public var name: String?
    public var maxParticipants: Int
    public var metadata: String
    public var sharePolicy: SharePolicy
    /// End-to-end encrypted: every participant encrypts its frames (SFrame) with the room's keys.
    public var e2ee: Bool

    public init(
        id: RoomID, name: String?, maxParticipants: Int, metadata: String, sharePolicy: SharePolicy, e2ee: Bool = false
    ) {
        self.id = id
        self.name = name
        self.maxParticipants = maxParticipants
        self.metadata = metadata
        self.sharePolicy = sharePolicy
        self.e2ee = e2ee
    }

    public init(json: JSONValue) throws(ProtocolError) {
        let f = try FieldReader(json, "room")
        self.init(
            id: RoomID(try f.string("id", max: 64)), name: try f.optionalString("name", max: 128),
            maxParticipants: try f.int("maxParticipants", 0...Room.maxParticipantsLimit),
            metadata: try f.string("metadata", max: Room.maxMetadataLength * 4),
            sharePolicy: try SharePolicy(json: try f.value("sharePolicy")), e2ee: try f.optionalBool("e2ee") ?? false)
    }

    public var json: JSONValue {
        .object([
            "id": .string(id.rawValue), "name": name.map { .string($0) } ?? .null,
            "maxParticipants": .int(Int64(maxParticipants)), "metadata": .string(metadata),
            "sharePolicy": sharePolicy.json, "e2ee": .bool(e2ee),
        ])
    }
}

/// A subscription of the snapshot: a track and the quality asked for it.
public struct Subscription: WireValue {
    public var trackId: TrackID
    public var quality: VideoQuality

    public init(trackId: TrackID, quality: VideoQuality) {
        self.trackId = trackId
        self.quality = quality
    }

    public init(json: JSONValue) throws(ProtocolError) {
        let f = try FieldReader(json, "subscriptions")
        self.init(trackId: TrackID(try f.string("trackId", max: 64)), quality: try f.enumValue("quality"))
    }

    public var json: JSONValue {
        .object(["trackId": .string(trackId.rawValue), "quality": .string(quality.rawValue)])
    }
}

/// A TURN server for `RTCConfiguration.iceServers`, with credentials made for this participant.
public struct IceServer: WireValue {
    public var urls: [String]
    public var username: String
    public var credential: String

    public init(urls: [String], username: String, credential: String) {
        self.urls = urls
        self.username = username
        self.credential = credential
    }

    public init(json: JSONValue) throws(ProtocolError) {
        let f = try FieldReader(json, "iceServers")
        var urls: [String] = []
        for u in try f.array("urls") {
            guard let s = u.stringValue else { throw .invalidField("urls", "expected strings") }
            urls.append(s)
        }
        self.init(urls: urls, username: try f.string("username"), credential: try f.string("credential"))
    }

    public var json: JSONValue {
        .object([
            "urls": .array(urls.map { .string($0) }), "username": .string(username), "credential": .string(credential),
        ])
    }
}

/// The result of `join` and `resume`: the room as this participant sees it.
public struct Snapshot: WireValue {
    public var protocolVersion: Int
    public var room: RoomInfo
    /// You, with your tracks.
    public var participant: ParticipantInfo
    /// Everyone else in join order (hidden participants left out).
    public var participants: [ParticipantInfo]
    public var shares: [ShareInfo]
    public var subscriptions: [Subscription]
    public var resumeToken: String
    public var iceServers: [IceServer]
    /// Pending share requests: only for hosts and cohosts.
    public var requests: [ShareRequestInfo]?
    /// The room's last `chat` messages to everyone, oldest first (`chatHistory` of the room).
    public var chat: [DataInfo]

    public init(
        room: RoomInfo, participant: ParticipantInfo, participants: [ParticipantInfo], shares: [ShareInfo],
        subscriptions: [Subscription], resumeToken: String, iceServers: [IceServer] = [],
        requests: [ShareRequestInfo]? = nil, chat: [DataInfo] = []
    ) {
        self.chat = chat
        self.protocolVersion = ProtocolVersion.current
        self.room = room
        self.participant = participant
        self.participants = participants
        self.shares = shares
        self.subscriptions = subscriptions
        self.resumeToken = resumeToken
        self.iceServers = iceServers
        self.requests = requests
    }

    public init(json: JSONValue) throws(ProtocolError) {
        let f = try FieldReader(json, "data")
        self.init(
            room: try RoomInfo(json: try f.value("room")),
            participant: try ParticipantInfo(json: try f.value("participant")),
            participants: try f.list("participants", ParticipantInfo.init(json:)),
            shares: try f.list("shares", ShareInfo.init(json:)),
            subscriptions: try f.list("subscriptions", Subscription.init(json:)),
            resumeToken: try f.string("resumeToken", max: 128),
            iceServers: try f.list("iceServers", IceServer.init(json:)),
            requests: f.has("requests") ? try f.list("requests", ShareRequestInfo.init(json:)) : nil,
            chat: try f.list("chat", DataInfo.init(json:)))
        protocolVersion = try f.int("protocol", 0...Int(Int32.max))
    }

    public var json: JSONValue {
        var o: JSONObject = [
            "protocol": .int(Int64(protocolVersion)), "room": room.json, "participant": participant.json,
            "participants": .array(participants.map(\.json)), "shares": .array(shares.map(\.json)),
            "subscriptions": .array(subscriptions.map(\.json)), "resumeToken": .string(resumeToken),
            "iceServers": .array(iceServers.map(\.json)), "chat": .array(chat.map(\.json)),
        ]
        if let requests { o["requests"] = .array(requests.map(\.json)) }
        return .object(o)
    }
}

/// The grants of the token a connection authenticated with, as `welcome` shows them.
public struct GrantsInfo: WireValue {
    public var room: String?
    public var roomJoin = false
    public var roomCreate = false
    public var roomList = false
    public var roomAdmin = false
    public var canPublish = false
    public var canSubscribe = false
    /// nil: every source.
    public var canPublishSources: [TrackSource]?
    public var role: ParticipantRole = .participant
    public var hidden = false
    /// Absent means granted.
    public var canPublishData = true

    public init() {}

    public init(json: JSONValue) throws(ProtocolError) {
        let f = try FieldReader(json, "grants")
        canPublishData = try f.optionalBool("canPublishData") ?? true
        room = try f.optionalString("room", max: 256)
        roomJoin = try f.optionalBool("roomJoin") ?? false
        roomCreate = try f.optionalBool("roomCreate") ?? false
        roomList = try f.optionalBool("roomList") ?? false
        roomAdmin = try f.optionalBool("roomAdmin") ?? false
        canPublish = try f.optionalBool("canPublish") ?? false
        canSubscribe = try f.optionalBool("canSubscribe") ?? false
        if f.has("canPublishSources") {
            var sources: [TrackSource] = []
            for v in try f.array("canPublishSources") {
                guard let s = v.stringValue.flatMap(TrackSource.init(rawValue:)) else {
                    throw .invalidField("canPublishSources", "expected track sources")
                }
                sources.append(s)
            }
            canPublishSources = sources
        }
        role = try f.optionalEnum("role") ?? .participant
        hidden = try f.optionalBool("hidden") ?? false
    }

    /// Only what is granted is written (absent means not granted).
    public var json: JSONValue {
        var o = JSONObject()
        if let room { o["room"] = .string(room) }
        for (key, value) in [
            ("roomJoin", roomJoin), ("roomCreate", roomCreate), ("roomList", roomList), ("roomAdmin", roomAdmin),
            ("canPublish", canPublish), ("canSubscribe", canSubscribe),
        ] where value {
            o[key] = .bool(true)
        }
        if let canPublishSources { o["canPublishSources"] = .array(canPublishSources.map { .string($0.rawValue) }) }
        if !canPublishData { o["canPublishData"] = .bool(false) }
        o["role"] = .string(role.rawValue)
        if hidden { o["hidden"] = .bool(true) }
        return .object(o)
    }
}
