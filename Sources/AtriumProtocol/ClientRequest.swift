public import AtriumJSON
public import AtriumModel

/// The `type` of every request of protocol version 1 (docs/protocol.md sections 5 and 14).
public enum RequestType: String, CaseIterable, Sendable {
    case auth, ping, join, resume, leave, update, publish, unpublish, mute, subscribe, unsubscribe
    case setViewport = "set_viewport"
    case pauseShare = "pause_share"
    case resumeShare = "resume_share"
    case stopShare = "stop_share"
    case requestShare = "request_share"
    case answerShareRequest = "answer_share_request"
    case setShareLock = "set_share_lock"
    case setSharePolicy = "set_share_policy"
    case setPermission = "set_permission"
    case muteParticipant = "mute_participant"
    case removeParticipant = "remove_participant"
    case endRoom = "end_room"
    case publishOffer = "publish_offer"
    case subscriberAnswer = "subscriber_answer"
    case iceCandidate = "ice_candidate"
    case sendData = "send_data"
    case setAttributes = "set_attributes"
}

/// Every request a client sends, as a value (docs/protocol.md section 5 for the rooms, section 14 for
/// media). Decoded once, checked field by field with the documented `invalid_field` messages.
public enum ClientRequest: Equatable, Sendable {
    /// The first message of a connection without `access_token`.
    case auth(token: String)
    case ping
    case join(JoinOptions)
    case resume(resumeToken: String)
    case leave
    case update(name: String?, metadata: String?)
    case publish(TrackRequest)
    case unpublish(TrackID, reason: ShareStopReason?)
    case mute(TrackID, muted: Bool)
    case subscribe(TrackID, quality: VideoQuality?)
    case unsubscribe(TrackID)
    case setViewport(TrackID, width: Int, height: Int)
    case pauseShare(ShareID)
    case resumeShare(ShareID)
    case stopShare(ShareID, reason: ShareStopReason?)
    case requestShare
    case answerShareRequest(ShareRequestID, grant: Bool)
    case setShareLock(Bool)
    case setSharePolicy(SharePolicyChange)
    /// nil target: `screen_share`.
    case setPermission(ParticipantID, target: PermissionTarget?, granted: Bool)
    case muteParticipant(TrackID)
    case removeParticipant(ParticipantID)
    case endRoom
    case publishOffer(PublishOfferRequest)
    case subscriberAnswer(revision: Int, sdp: String)
    case iceCandidate(target: MediaTarget, candidate: String)
    /// A data message to everyone (`to` nil) or to the listed participants.
    case sendData(topic: String, payload: String, to: [ParticipantID]?)
    /// Sets (a string) or removes (nil) attributes of the sender, or of `participantId` (hosts clear).
    case setAttributes(ParticipantID?, [String: String?])

    public var type: RequestType {
        switch self {
        case .auth: .auth
        case .ping: .ping
        case .join: .join
        case .resume: .resume
        case .leave: .leave
        case .update: .update
        case .publish: .publish
        case .unpublish: .unpublish
        case .mute: .mute
        case .subscribe: .subscribe
        case .unsubscribe: .unsubscribe
        case .setViewport: .setViewport
        case .pauseShare: .pauseShare
        case .resumeShare: .resumeShare
        case .stopShare: .stopShare
        case .requestShare: .requestShare
        case .answerShareRequest: .answerShareRequest
        case .setShareLock: .setShareLock
        case .setSharePolicy: .setSharePolicy
        case .setPermission: .setPermission
        case .muteParticipant: .muteParticipant
        case .removeParticipant: .removeParticipant
        case .endRoom: .endRoom
        case .publishOffer: .publishOffer
        case .subscriberAnswer: .subscriberAnswer
        case .iceCandidate: .iceCandidate
        case .sendData: .sendData
        case .setAttributes: .setAttributes
        }
    }

    /// The request of this type from a message's fields (the envelope's `type` and `id` aside).
    public init(_ type: RequestType, _ f: FieldReader) throws(ProtocolError) {
        func track() throws(ProtocolError) -> TrackID { TrackID(try f.string("trackId", max: 64)) }
        func share() throws(ProtocolError) -> ShareID { ShareID(try f.string("shareId", max: 64)) }
        func participant() throws(ProtocolError) -> ParticipantID {
            ParticipantID(try f.string("participantId", max: 64))
        }
        switch type {
        case .auth: self = .auth(token: try f.string("token", max: 8192))
        case .ping: self = .ping
        case .join:
            try Self.checkProtocol(f)
            self = .join(
                JoinOptions(
                    name: try f.optionalString("name", max: 256),
                    metadata: try f.optionalString("metadata", max: 16 * 1024),
                    autoSubscribe: try f.optionalBool("autoSubscribe"),
                    dataChannels: try f.optionalBool("dataChannels"),
                    subscriberOffer: try f.optionalString("subscriberOffer", max: 65536)))
        case .resume:
            try Self.checkProtocol(f)
            self = .resume(resumeToken: try f.string("resumeToken", max: 128))
        case .leave: self = .leave
        case .update:
            self = .update(
                name: try f.optionalString("name", max: 256), metadata: try f.optionalString("metadata", max: 16 * 1024)
            )
        case .publish: self = .publish(try TrackRequest(f))
        case .unpublish: self = .unpublish(try track(), reason: try f.optionalEnum("reason"))
        case .mute: self = .mute(try track(), muted: try f.bool("muted"))
        case .subscribe: self = .subscribe(try track(), quality: try f.optionalEnum("quality"))
        case .unsubscribe: self = .unsubscribe(try track())
        case .setViewport:
            self = .setViewport(
                try track(), width: try f.int("width", 0...16384), height: try f.int("height", 0...16384))
        case .pauseShare, .resumeShare, .stopShare:
            let id = try share()
            let reason: ShareStopReason? = try f.optionalEnum("reason")
            self =
                type == .pauseShare
                ? .pauseShare(id) : type == .resumeShare ? .resumeShare(id) : .stopShare(id, reason: reason)
        case .requestShare: self = .requestShare
        case .answerShareRequest:
            self = .answerShareRequest(ShareRequestID(try f.string("requestId", max: 64)), grant: try f.bool("grant"))
        case .setShareLock: self = .setShareLock(try f.bool("locked"))
        case .setSharePolicy: self = .setSharePolicy(try SharePolicyChange(f))
        case .setPermission:
            let target = try participant()
            var permission: PermissionTarget?
            if let raw = try f.optionalString("source", max: 64) {
                guard let p = PermissionTarget(rawValue: raw) else {
                    throw .invalidField("source", "expected a track source or data")
                }
                permission = p
            }
            self = .setPermission(target, target: permission, granted: try f.bool("granted"))
        case .muteParticipant: self = .muteParticipant(try track())
        case .removeParticipant: self = .removeParticipant(try participant())
        case .endRoom: self = .endRoom
        case .publishOffer: self = .publishOffer(try PublishOfferRequest(f))
        case .subscriberAnswer:
            let revision = try f.int("revision", 0...Int(Int32.max))
            self = .subscriberAnswer(revision: revision, sdp: try f.string("sdp", max: 65536))
        case .iceCandidate:
            let target = try f.string("target", max: 16)
            guard let t = MediaTarget(rawValue: target) else {
                throw .invalidField("target", "expected publisher or subscriber")
            }
            self = .iceCandidate(target: t, candidate: try f.string("candidate", max: 1024))
        case .sendData:
            let topic = try f.string("topic", max: DataLimits.maxTopicBytes)
            guard !topic.isEmpty else { throw .invalidField("topic", "is empty") }
            let payload = try f.string("payload", max: DataLimits.maxPayloadBytes)
            var to: [ParticipantID]?
            if f.has("to"), try f.value("to") != .null {
                let list = try f.list("to") { v throws(ProtocolError) in
                    guard let s = v.stringValue, !s.isEmpty, s.utf8.count <= 64 else {
                        throw .invalidField("to", "expected participant ids")
                    }
                    return ParticipantID(s)
                }
                guard !list.isEmpty, list.count <= DataLimits.maxRecipients else {
                    throw .invalidField("to", "1 to \(DataLimits.maxRecipients) participants")
                }
                to = list
            }
            self = .sendData(topic: topic, payload: payload, to: to)
        case .setAttributes:
            let target = try f.optionalString("participantId", max: 64).map(ParticipantID.init)
            let changes = try AttributeCoding.decode(f, "attributes")
            guard changes.count <= AttributeLimits.maxKeys else {
                throw .invalidField("attributes", "at most \(AttributeLimits.maxKeys) keys")
            }
            self = .setAttributes(target, changes)
        }
    }

    /// `join` and `resume` name the version they speak.
    static func checkProtocol(_ f: FieldReader) throws(ProtocolError) {
        guard let v = f.object["protocol"] else {
            throw .invalidField("protocol", "is required (this server speaks \(ProtocolVersion.current))")
        }
        guard let n = v.int64Value else { throw .invalidField("protocol", "expected an integer") }
        guard n == Int64(ProtocolVersion.current) else { throw .unsupportedProtocol(Int(clamping: n)) }
    }

    /// The request's own fields, beside `type` and `id`.
    public var fields: JSONObject {
        let v = ProtocolVersion.current
        switch self {
        case .auth(let token): return ["token": .string(token)]
        case .ping, .leave, .requestShare, .endRoom: return [:]
        case .join(let o):
            var out: JSONObject = ["protocol": .int(Int64(v))]
            if let name = o.name { out["name"] = .string(name) }
            if let metadata = o.metadata { out["metadata"] = .string(metadata) }
            if let a = o.autoSubscribe { out["autoSubscribe"] = .bool(a) }
            if let d = o.dataChannels { out["dataChannels"] = .bool(d) }
            if let s = o.subscriberOffer { out["subscriberOffer"] = .string(s) }
            return out
        case .resume(let token): return ["protocol": .int(Int64(v)), "resumeToken": .string(token)]
        case .update(let name, let metadata):
            var out: JSONObject = [:]
            if let name { out["name"] = .string(name) }
            if let metadata { out["metadata"] = .string(metadata) }
            return out
        case .publish(let t): return t.fields
        case .unpublish(let id, let reason):
            var out: JSONObject = ["trackId": .string(id.rawValue)]
            if let reason { out["reason"] = .string(reason.rawValue) }
            return out
        case .stopShare(let id, let reason):
            var out: JSONObject = ["shareId": .string(id.rawValue)]
            if let reason { out["reason"] = .string(reason.rawValue) }
            return out
        case .mute(let id, let muted): return ["trackId": .string(id.rawValue), "muted": .bool(muted)]
        case .subscribe(let id, let quality):
            var out: JSONObject = ["trackId": .string(id.rawValue)]
            if let quality { out["quality"] = .string(quality.rawValue) }
            return out
        case .unsubscribe(let id), .muteParticipant(let id): return ["trackId": .string(id.rawValue)]
        case .setViewport(let id, let w, let h):
            return ["trackId": .string(id.rawValue), "width": .int(Int64(w)), "height": .int(Int64(h))]
        case .pauseShare(let id), .resumeShare(let id): return ["shareId": .string(id.rawValue)]
        case .answerShareRequest(let id, let grant): return ["requestId": .string(id.rawValue), "grant": .bool(grant)]
        case .setShareLock(let locked): return ["locked": .bool(locked)]
        case .setSharePolicy(let change): return change.fields
        case .setPermission(let p, let target, let granted):
            var out: JSONObject = ["participantId": .string(p.rawValue)]
            if let target { out["source"] = .string(target.rawValue) }
            out["granted"] = .bool(granted)
            return out
        case .removeParticipant(let p): return ["participantId": .string(p.rawValue)]
        case .publishOffer(let r): return r.fields
        case .subscriberAnswer(let revision, let sdp): return ["revision": .int(Int64(revision)), "sdp": .string(sdp)]
        case .iceCandidate(let target, let candidate):
            return ["target": .string(target.rawValue), "candidate": .string(candidate)]
        case .sendData(let topic, let payload, let to):
            var out: JSONObject = ["topic": .string(topic), "payload": .string(payload)]
            if let to { out["to"] = .array(to.map { .string($0.rawValue) }) }
            return out
        case .setAttributes(let target, let changes):
            var out: JSONObject = ["attributes": AttributeCoding.encode(changes)]
            if let target { out["participantId"] = .string(target.rawValue) }
            return out
        }
    }
}

/// A request with its envelope: the `id` the answer copies (any JSON value, or none).
public struct ClientMessage: Equatable, Sendable {
    public var id: JSONValue?
    public var request: ClientRequest

    public init(id: JSONValue? = nil, _ request: ClientRequest) {
        self.id = id
        self.request = request
    }

    /// The message's `type` string and `id`, before its fields are read (the server decides what a
    /// session may send by type first).
    public static func envelope(_ value: JSONValue) throws(ProtocolError) -> (
        type: String, id: JSONValue?, fields: FieldReader
    ) {
        guard let o = value.objectValue, let type = o["type"]?.stringValue else { throw .notAMessage }
        return (type, o["id"], FieldReader(object: o))
    }

    public init(json: JSONValue) throws(ProtocolError) {
        let (type, id, f) = try Self.envelope(json)
        guard let t = RequestType(rawValue: type) else { throw .unknownType(type) }
        self.init(id: id, try ClientRequest(t, f))
    }

    public var json: JSONValue {
        var o: JSONObject = ["type": .string(request.type.rawValue)]
        if let id { o["id"] = id }
        for (k, v) in request.fields { o[k] = v }
        return .object(o)
    }
}

/// What `join` may say beside the protocol version.
public struct JoinOptions: Equatable, Sendable {
    /// Default: the token's `name` claim, else the identity.
    public var name: String?
    public var metadata: String?
    /// Default true: subscribe to every track, now and later.
    public var autoSubscribe: Bool?
    /// Default false: the subscriber connection carries a data channel section from its first offer
    /// (sent at once, with or without tracks).
    public var dataChannels: Bool?
    /// The last subscriber offer the client applied, when it joins again after its room's node was
    /// lost and kept its subscriber connection: the room's new owner goes on with that connection if
    /// it can, and otherwise offers a new one (`reset`).
    public var subscriberOffer: String?

    public init(
        name: String? = nil, metadata: String? = nil, autoSubscribe: Bool? = nil, dataChannels: Bool? = nil,
        subscriberOffer: String? = nil
    ) {
        self.subscriberOffer = subscriberOffer
        self.dataChannels = dataChannels
        self.name = name
        self.metadata = metadata
        self.autoSubscribe = autoSubscribe
    }
}

/// Which of a participant's two connections: the one it publishes on, or the one it receives on.
public enum MediaTarget: String, CaseIterable, Sendable {
    case publisher, subscriber
}

/// A track as `publish` or a `publish_offer` entry describes it.
public struct TrackRequest: Equatable, Sendable {
    public var source: TrackSource
    public var name: String
    public var width: Int
    public var height: Int
    /// Simulcast layers, bottom first.
    public var layers: [SimulcastLayer]
    public var muted: Bool

    public init(
        source: TrackSource, name: String = "", width: Int = 0, height: Int = 0, layers: [SimulcastLayer] = [],
        muted: Bool = false
    ) {
        self.source = source
        self.name = name
        self.width = width
        self.height = height
        self.layers = layers
        self.muted = muted
    }

    public init(_ f: FieldReader) throws(ProtocolError) {
        source = try f.enumValue("source")
        if let kind = try f.optionalString("kind"), kind != TrackKind(source: source).rawValue {
            throw .invalidField("kind", "\(source.rawValue) is \(TrackKind(source: source).rawValue)")
        }
        layers = []
        if let raw = f.object["layers"] {
            guard let arr = raw.arrayValue, arr.count <= 4 else {
                throw .invalidField("layers", "expected up to 4 layers")
            }
            for item in arr { layers.append(try SimulcastLayer.read(item)) }
        }
        name = try f.optionalString("name", max: 256) ?? ""
        width = try f.optionalInt("width", 0...16384) ?? 0
        height = try f.optionalInt("height", 0...16384) ?? 0
        muted = try f.optionalBool("muted") ?? false
    }

    public var fields: JSONObject {
        var o: JSONObject = ["source": .string(source.rawValue)]
        if !name.isEmpty { o["name"] = .string(name) }
        if width != 0 || height != 0 {
            o["width"] = .int(Int64(width))
            o["height"] = .int(Int64(height))
        }
        if !layers.isEmpty { o["layers"] = .array(layers.map(\.json)) }
        if muted { o["muted"] = .bool(true) }
        return o
    }
}

/// `set_share_policy`: the fields to change; unknown fields are refused.
public struct SharePolicyChange: Equatable, Sendable {
    public var shareMode: ShareMode?
    public var maxConcurrentShares: Int?
    public var whoCanShare: WhoCanShare?
    public var shareRequestRequired: Bool?
    public var shareLocked: Bool?

    public init(
        shareMode: ShareMode? = nil, maxConcurrentShares: Int? = nil, whoCanShare: WhoCanShare? = nil,
        shareRequestRequired: Bool? = nil, shareLocked: Bool? = nil
    ) {
        self.shareMode = shareMode
        self.maxConcurrentShares = maxConcurrentShares
        self.whoCanShare = whoCanShare
        self.shareRequestRequired = shareRequestRequired
        self.shareLocked = shareLocked
    }

    static let known: Set<String> = [
        "type", "id", "shareMode", "maxConcurrentShares", "whoCanShare", "shareRequestRequired", "shareLocked",
    ]

    /// The change from a request's fields, or from an admin API body (whose fields are the same).
    public init(_ f: FieldReader, allowing extra: Set<String> = []) throws(ProtocolError) {
        for key in f.object.keys where !Self.known.contains(key) && !extra.contains(key) {
            throw .invalidField(key, "unknown field")
        }
        shareMode = try f.optionalEnum("shareMode")
        maxConcurrentShares = try f.optionalInt("maxConcurrentShares", 1...SharePolicy.maxConcurrentSharesLimit)
        whoCanShare = try f.optionalEnum("whoCanShare")
        shareRequestRequired = try f.optionalBool("shareRequestRequired")
        shareLocked = try f.optionalBool("shareLocked")
    }

    public func applied(to policy: SharePolicy) -> SharePolicy {
        var p = policy
        if let shareMode { p.shareMode = shareMode }
        if let maxConcurrentShares { p.maxConcurrentShares = maxConcurrentShares }
        if let whoCanShare { p.whoCanShare = whoCanShare }
        if let shareRequestRequired { p.shareRequestRequired = shareRequestRequired }
        if let shareLocked { p.shareLocked = shareLocked }
        return p
    }

    public var fields: JSONObject {
        var o: JSONObject = [:]
        if let shareMode { o["shareMode"] = .string(shareMode.rawValue) }
        if let maxConcurrentShares { o["maxConcurrentShares"] = .int(Int64(maxConcurrentShares)) }
        if let whoCanShare { o["whoCanShare"] = .string(whoCanShare.rawValue) }
        if let shareRequestRequired { o["shareRequestRequired"] = .bool(shareRequestRequired) }
        if let shareLocked { o["shareLocked"] = .bool(shareLocked) }
        return o
    }
}

/// `publish_offer`: the publisher connection's offer and what its transceivers carry, by mid.
public struct PublishOfferRequest: Equatable, Sendable {
    /// One entry of `tracks`. What is wrong with a new track's description (its name, its layers)
    /// refuses only that section of the offer, so it is kept as a value.
    public enum Binding: Equatable, Sendable {
        /// A track the publisher already has (nil: `trackId` is not a string).
        case existing(TrackID?)
        case new(TrackRequest)
        case invalid(TrackSource, ProtocolError, raw: JSONObject)
    }

    public struct Entry: Equatable, Sendable {
        public var mid: String
        public var binding: Binding

        public init(mid: String, binding: Binding) {
            self.mid = mid
            self.binding = binding
        }
    }

    public var sdp: String
    public var tracks: [Entry]

    public init(sdp: String, tracks: [Entry]) {
        self.sdp = sdp
        self.tracks = tracks
    }

    public init(_ f: FieldReader) throws(ProtocolError) {
        sdp = try f.string("sdp", max: 65536)
        tracks = []
        guard let raw = f.object["tracks"] else { return }
        guard let list = raw.arrayValue, list.count <= 16 else {
            throw .invalidField("tracks", "expected an array of up to 16 objects")
        }
        var seen = Set<String>()
        for item in list {
            guard let o = item.objectValue else { throw .invalidField("tracks", "expected objects") }
            let entry = FieldReader(object: o)
            let mid = try entry.string("mid", max: 32)
            guard seen.insert(mid).inserted else { throw .invalidField("tracks", "mid \"\(mid)\" appears twice") }
            if let id = o["trackId"] {
                tracks.append(Entry(mid: mid, binding: .existing(id.stringValue.map(TrackID.init))))
            } else {
                let source: TrackSource = try entry.enumValue("source")
                do throws(ProtocolError) {
                    tracks.append(Entry(mid: mid, binding: .new(try TrackRequest(entry))))
                } catch {
                    tracks.append(Entry(mid: mid, binding: .invalid(source, error, raw: o)))
                }
            }
        }
    }

    public var fields: JSONObject {
        let list: [JSONValue] = tracks.map { e in
            switch e.binding {
            case .existing(let id):
                return .object(["mid": .string(e.mid), "trackId": id.map { .string($0.rawValue) } ?? .null])
            case .new(let t):
                var o: JSONObject = ["mid": .string(e.mid)]
                for (k, v) in t.fields { o[k] = v }
                return .object(o)
            case .invalid(_, _, let raw): return .object(raw)
            }
        }
        return ["sdp": .string(sdp), "tracks": .array(list)]
    }
}
