public import AtriumJSON
public import AtriumModel

/// Everything the server pushes without being asked (docs/protocol.md sections 2, 6 and 14).
public enum ServerEvent: Equatable, Sendable {
    /// The connection authenticated.
    case welcome(Welcome)
    /// You left the room (the connection closes next).
    case left(reason: LeaveReason)
    /// The room moves to another node: join again.
    case move(reason: String)
    case participantJoined(ParticipantInfo)
    case participantUpdated(ParticipantInfo)
    case participantLeft(ParticipantID, reason: LeaveReason)
    case trackPublished(TrackInfo)
    case trackUnpublished(TrackID, participant: ParticipantID, source: TrackSource, reason: String)
    case trackMuted(TrackID, participant: ParticipantID, muted: Bool, by: By?)
    case shareStarted(ShareInfo)
    case sharePaused(ShareInfo)
    case shareResumed(ShareInfo)
    case shareStopped(ShareInfo, reason: ShareStopReason, by: By?)
    case permissionsChanged(ParticipantID, Permissions, by: By?)
    case shareLockChanged(locked: Bool, by: By?)
    case sharePolicyChanged(SharePolicy, by: By?)
    case shareRequested(ShareRequestInfo)
    case shareRequestResolved(ShareRequestInfo, outcome: ShareRequestOutcome, by: By?)
    case roomEnded(by: By?)
    /// A data message from a participant or the server.
    case data(DataInfo)
    /// A participant's attributes, all of them after the change.
    case attributesChanged(ParticipantID, attributes: [String: String], by: By?)
    /// The next offer of your subscriber connection (`reset`: for a new connection).
    case subscriberOffer(SubscriberOffer)
    /// The rids of your simulcast track that some viewer wants, bottom first.
    case layersWanted(TrackID, rids: [String])
    case mediaState(target: MediaTarget, state: MediaTransportState)
    /// A track you subscribe to is no longer forwarded to you (reason `bandwidth`), or is again.
    case trackPaused(TrackID, reason: String)
    case trackResumed(TrackID, reason: String)
    case activeSpeakers([Speaker])
    case networkQuality([NetworkQualityEntry])

    public var type: String {
        switch self {
        case .welcome: "welcome"
        case .left: "left"
        case .move: "move"
        case .participantJoined: "participant_joined"
        case .participantUpdated: "participant_updated"
        case .participantLeft: "participant_left"
        case .trackPublished: "track_published"
        case .trackUnpublished: "track_unpublished"
        case .trackMuted: "track_muted"
        case .shareStarted: "share_started"
        case .sharePaused: "share_paused"
        case .shareResumed: "share_resumed"
        case .shareStopped: "share_stopped"
        case .permissionsChanged: "permissions_changed"
        case .shareLockChanged: "share_lock_changed"
        case .sharePolicyChanged: "share_policy_changed"
        case .shareRequested: "share_requested"
        case .shareRequestResolved: "share_request_resolved"
        case .roomEnded: "room_ended"
        case .data: "data"
        case .attributesChanged: "attributes_changed"
        case .subscriberOffer: "subscriber_offer"
        case .layersWanted: "layers_wanted"
        case .mediaState: "media_state"
        case .trackPaused: "track_paused"
        case .trackResumed: "track_resumed"
        case .activeSpeakers: "active_speakers"
        case .networkQuality: "network_quality"
        }
    }

    /// The whole message, `type` first.
    public var json: JSONObject {
        var o: JSONObject = ["type": .string(type)]
        for (k, v) in fields { o[k] = v }
        return o
    }

    var fields: JSONObject {
        switch self {
        case .welcome(let w): return w.fields
        case .left(let reason): return ["reason": .string(reason.rawValue)]
        case .move(let reason): return ["reason": .string(reason)]
        case .participantJoined(let p), .participantUpdated(let p): return ["participant": p.json]
        case .participantLeft(let p, let reason):
            return ["participantId": .string(p.rawValue), "reason": .string(reason.rawValue)]
        case .trackPublished(let t): return ["track": t.json]
        case .trackUnpublished(let t, let p, let source, let reason):
            return [
                "trackId": .string(t.rawValue), "participantId": .string(p.rawValue),
                "source": .string(source.rawValue), "reason": .string(reason),
            ]
        case .trackMuted(let t, let p, let muted, let by):
            return [
                "trackId": .string(t.rawValue), "participantId": .string(p.rawValue), "muted": .bool(muted),
                "by": By.json(by),
            ]
        case .shareStarted(let s), .sharePaused(let s), .shareResumed(let s): return ["share": s.json]
        case .shareStopped(let s, let reason, let by):
            return ["share": s.json, "reason": .string(reason.rawValue), "by": By.json(by)]
        case .permissionsChanged(let p, let permissions, let by):
            return ["participantId": .string(p.rawValue), "permissions": permissions.json, "by": By.json(by)]
        case .shareLockChanged(let locked, let by): return ["locked": .bool(locked), "by": By.json(by)]
        case .sharePolicyChanged(let p, let by): return ["sharePolicy": p.json, "by": By.json(by)]
        case .shareRequested(let r): return ["request": r.json]
        case .shareRequestResolved(let r, let outcome, let by):
            return ["request": r.json, "outcome": .string(outcome.rawValue), "by": By.json(by)]
        case .roomEnded(let by): return ["by": By.json(by)]
        case .data(let d): return d.json.objectValue ?? [:]
        case .attributesChanged(let p, let attributes, let by):
            return [
                "participantId": .string(p.rawValue), "attributes": AttributeCoding.encodeSet(attributes),
                "by": By.json(by),
            ]
        case .subscriberOffer(let o): return o.fields
        case .layersWanted(let t, let rids):
            return ["trackId": .string(t.rawValue), "rids": .array(rids.map { .string($0) })]
        case .mediaState(let target, let state):
            return ["target": .string(target.rawValue), "state": .string(state.rawValue)]
        case .trackPaused(let t, let reason), .trackResumed(let t, let reason):
            return ["trackId": .string(t.rawValue), "reason": .string(reason)]
        case .activeSpeakers(let speakers): return ["speakers": .array(speakers.map(\.json))]
        case .networkQuality(let entries): return ["participants": .array(entries.map(\.json))]
        }
    }

    /// The event a pushed message carries; `bad_request` for a type this version does not have.
    public init(type: String, _ f: FieldReader) throws(ProtocolError) {
        func pid(_ key: String = "participantId") throws(ProtocolError) -> ParticipantID {
            ParticipantID(try f.string(key, max: 64))
        }
        func tid() throws(ProtocolError) -> TrackID { TrackID(try f.string("trackId", max: 64)) }
        switch type {
        case "welcome": self = .welcome(try Welcome(f))
        case "left": self = .left(reason: try f.enumValue("reason"))
        case "move": self = .move(reason: try f.string("reason", max: 256))
        case "participant_joined": self = .participantJoined(try ParticipantInfo(json: try f.value("participant")))
        case "participant_updated": self = .participantUpdated(try ParticipantInfo(json: try f.value("participant")))
        case "participant_left": self = .participantLeft(try pid(), reason: try f.enumValue("reason"))
        case "track_published": self = .trackPublished(try TrackInfo(json: try f.value("track")))
        case "track_unpublished":
            self = .trackUnpublished(
                try tid(), participant: try pid(), source: try f.enumValue("source"),
                reason: try f.string("reason", max: 64))
        case "track_muted":
            self = .trackMuted(try tid(), participant: try pid(), muted: try f.bool("muted"), by: try By.read(f))
        case "share_started": self = .shareStarted(try ShareInfo(json: try f.value("share")))
        case "share_paused": self = .sharePaused(try ShareInfo(json: try f.value("share")))
        case "share_resumed": self = .shareResumed(try ShareInfo(json: try f.value("share")))
        case "share_stopped":
            self = .shareStopped(
                try ShareInfo(json: try f.value("share")), reason: try f.enumValue("reason"), by: try By.read(f))
        case "permissions_changed":
            self = .permissionsChanged(
                try pid(), try Permissions(json: try f.value("permissions")), by: try By.read(f))
        case "share_lock_changed": self = .shareLockChanged(locked: try f.bool("locked"), by: try By.read(f))
        case "share_policy_changed":
            self = .sharePolicyChanged(try SharePolicy(json: try f.value("sharePolicy")), by: try By.read(f))
        case "share_requested": self = .shareRequested(try ShareRequestInfo(json: try f.value("request")))
        case "share_request_resolved":
            self = .shareRequestResolved(
                try ShareRequestInfo(json: try f.value("request")), outcome: try f.enumValue("outcome"),
                by: try By.read(f))
        case "room_ended": self = .roomEnded(by: try By.read(f))
        case "data": self = .data(try DataInfo(json: .object(f.object)))
        case "attributes_changed":
            self = .attributesChanged(
                try pid(), attributes: try AttributeCoding.decodeSet(try f.value("attributes"), "attributes"),
                by: try By.read(f))
        case "subscriber_offer": self = .subscriberOffer(try SubscriberOffer(f))
        case "layers_wanted":
            var rids: [String] = []
            for v in try f.array("rids") {
                guard let s = v.stringValue else { throw .invalidField("rids", "expected strings") }
                rids.append(s)
            }
            self = .layersWanted(try tid(), rids: rids)
        case "media_state": self = .mediaState(target: try f.enumValue("target"), state: try f.enumValue("state"))
        case "track_paused": self = .trackPaused(try tid(), reason: try f.string("reason", max: 64))
        case "track_resumed": self = .trackResumed(try tid(), reason: try f.string("reason", max: 64))
        case "active_speakers": self = .activeSpeakers(try f.list("speakers", Speaker.init(json:)))
        case "network_quality": self = .networkQuality(try f.list("participants", NetworkQualityEntry.init(json:)))
        default: throw .unknownType(type)
        }
    }
}

/// `welcome`: who the connection authenticated as.
public struct Welcome: Equatable, Sendable {
    public var protocolVersion: Int
    public var identity: String
    /// The token's room scope (a name or an id).
    public var room: String
    public var role: ParticipantRole
    public var grants: GrantsInfo
    public var expiresAt: Int64

    public init(identity: String, room: String, role: ParticipantRole, grants: GrantsInfo, expiresAt: Int64) {
        self.protocolVersion = ProtocolVersion.current
        self.identity = identity
        self.room = room
        self.role = role
        self.grants = grants
        self.expiresAt = expiresAt
    }

    init(_ f: FieldReader) throws(ProtocolError) {
        self.init(
            identity: try f.string("identity", max: 256), room: try f.string("room", max: 256),
            role: try f.enumValue("role"), grants: try GrantsInfo(json: try f.value("grants")),
            expiresAt: try f.int64("expiresAt"))
        protocolVersion = try f.int("protocol", 0...Int(Int32.max))
    }

    var fields: JSONObject {
        [
            "protocol": .int(Int64(protocolVersion)), "identity": .string(identity), "room": .string(room),
            "role": .string(role.rawValue), "grants": grants.json, "expiresAt": .int(expiresAt),
        ]
    }
}

/// The state of one of a participant's media connections.
public enum MediaTransportState: String, CaseIterable, Sendable {
    case connected, disconnected, failed, closed
}

/// `subscriber_offer`: the server's offer for the subscriber connection, and whose track each mid carries.
public struct SubscriberOffer: Equatable, Sendable {
    public struct Track: Equatable, Sendable {
        public var mid: String
        public var track: TrackID
        public var publisher: ParticipantID
        public var source: TrackSource

        public init(mid: String, track: TrackID, publisher: ParticipantID, source: TrackSource) {
            self.mid = mid
            self.track = track
            self.publisher = publisher
            self.source = source
        }
    }

    public var revision: Int
    public var sdp: String
    public var tracks: [Track]
    /// The offer is for a new connection: close the old one.
    public var reset: Bool

    public init(revision: Int, sdp: String, tracks: [Track], reset: Bool = false) {
        self.revision = revision
        self.sdp = sdp
        self.tracks = tracks
        self.reset = reset
    }

    init(_ f: FieldReader) throws(ProtocolError) {
        self.init(
            revision: try f.int("revision", 0...Int(Int32.max)), sdp: try f.string("sdp", max: 1 << 20),
            tracks: try f.list("tracks") { (v: JSONValue) throws(ProtocolError) -> Track in
                let t = try FieldReader(v, "tracks")
                return Track(
                    mid: try t.string("mid", max: 32), track: TrackID(try t.string("trackId", max: 64)),
                    publisher: ParticipantID(try t.string("participantId", max: 64)), source: try t.enumValue("source"))
            },
            reset: try f.optionalBool("reset") ?? false)
    }

    var fields: JSONObject {
        let list: [JSONValue] = tracks.map { t in
            .object([
                "mid": .string(t.mid), "trackId": .string(t.track.rawValue),
                "participantId": .string(t.publisher.rawValue), "source": .string(t.source.rawValue),
            ])
        }
        var o: JSONObject = ["revision": .int(Int64(revision)), "sdp": .string(sdp), "tracks": .array(list)]
        if reset { o["reset"] = .bool(true) }
        return o
    }
}

/// One entry of `active_speakers`, loudest first.
public struct Speaker: WireValue {
    public var participant: ParticipantID
    /// Linear amplitude, 1 at 0 dBov, rounded to three places.
    public var level: Double

    public init(participant: ParticipantID, level: Double) {
        self.participant = participant
        self.level = level
    }

    public init(json: JSONValue) throws(ProtocolError) {
        let f = try FieldReader(json, "speakers")
        self.init(participant: ParticipantID(try f.string("participantId", max: 64)), level: try f.double("level"))
    }

    public var json: JSONValue { .object(["participantId": .string(participant.rawValue), "level": .double(level)]) }
}

/// One participant's entry of `network_quality`.
public struct NetworkQualityEntry: WireValue {
    public enum Level: String, CaseIterable, Sendable {
        case excellent, good, poor
        /// Every transport of the participant is disconnected.
        case lost
    }

    public var participant: ParticipantID
    public var quality: Level
    /// Round-trip time in milliseconds; nil until measured.
    public var rttMs: Int64?
    /// 0 to 1, three places; nil until reported.
    public var loss: Double?

    public init(participant: ParticipantID, quality: Level, rttMs: Int64?, loss: Double?) {
        self.participant = participant
        self.quality = quality
        self.rttMs = rttMs
        self.loss = loss
    }

    public init(json: JSONValue) throws(ProtocolError) {
        let f = try FieldReader(json, "participants")
        self.init(
            participant: ParticipantID(try f.string("participantId", max: 64)), quality: try f.enumValue("quality"),
            rttMs: f.has("rttMs") ? try f.int64("rttMs") : nil, loss: f.has("loss") ? try f.double("loss") : nil)
    }

    public var json: JSONValue {
        var o: JSONObject = ["participantId": .string(participant.rawValue), "quality": .string(quality.rawValue)]
        if let rttMs { o["rttMs"] = .int(rttMs) }
        if let loss { o["loss"] = .double(loss) }
        return .object(o)
    }
}

/// Any message the server sends: an answer to a request, or an event.
public enum ServerMessage: Equatable, Sendable {
    /// The request with this `id` succeeded; read `data` with `Response(data:answering:)`.
    case result(id: JSONValue?, data: JSONObject)
    /// A request failed (with its `id`), or a message was not a request (no `id`).
    case error(id: JSONValue?, ErrorBody)
    case event(ServerEvent)

    public init(json: JSONValue) throws(ProtocolError) {
        guard let o = json.objectValue, let type = o["type"]?.stringValue else { throw .notAMessage }
        let f = FieldReader(object: o)
        switch type {
        case "result":
            guard let data = o["data"]?.objectValue else { throw .invalidField("data", "expected an object") }
            self = .result(id: o["id"], data: data)
        case "error": self = .error(id: o["id"], try ErrorBody(json: try f.value("error")))
        default: self = .event(try ServerEvent(type: type, f))
        }
    }

    public var json: JSONObject {
        switch self {
        case .result(let id, let data):
            var o: JSONObject = ["type": "result"]
            if let id { o["id"] = id }
            o["data"] = .object(data)
            return o
        case .error(let id, let body):
            var o: JSONObject = ["type": "error"]
            if let id { o["id"] = id }
            o["error"] = body.json
            return o
        case .event(let e): return e.json
        }
    }
}
