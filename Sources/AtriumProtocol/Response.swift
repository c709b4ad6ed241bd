public import AtriumJSON
public import AtriumModel

/// The `data` of a `result`, by the request it answers (docs/protocol.md section 5).
public enum Response: Equatable, Sendable {
    /// `{}`: most requests.
    case empty
    /// `ping`: the server's clock, seconds since the epoch.
    case pong(Int64)
    /// `join` and `resume`.
    case snapshot(Snapshot)
    /// `publish`: the new track, and the share it started (a screen share).
    case published(TrackInfo, share: ShareInfo?)
    /// `publish_offer`.
    case publishAnswer(PublishAnswer)
    case subscribed(TrackID, quality: VideoQuality)
    case unsubscribed(TrackID)
    case viewport(TrackID, width: Int, height: Int)
    /// `request_share`: the new request's id.
    case shareRequested(ShareRequestID)
    case shareLock(Bool)
    case sharePolicy(SharePolicy)
    /// `send_data`: the message's id, its server time, and how many participants it was sent to.
    case dataSent(MessageID, at: Int64, recipients: Int)
    /// `set_attributes`: the participant's attributes after the change.
    case attributes(ParticipantID, [String: String])

    /// Reads the `data` of a result that answers a request of this type.
    public init(data: JSONValue, answering type: RequestType) throws(ProtocolError) {
        let f = try FieldReader(data, "data")
        switch type {
        case .ping: self = .pong(try f.int64("pong"))
        case .join, .resume: self = .snapshot(try Snapshot(json: data))
        case .publish:
            self = .published(
                try TrackInfo(json: try f.value("track")),
                share: f.has("share") ? try ShareInfo(json: try f.value("share")) : nil)
        case .publishOffer: self = .publishAnswer(try PublishAnswer(json: data))
        case .subscribe:
            self = .subscribed(TrackID(try f.string("trackId", max: 64)), quality: try f.enumValue("quality"))
        case .unsubscribe: self = .unsubscribed(TrackID(try f.string("trackId", max: 64)))
        case .setViewport:
            self = .viewport(
                TrackID(try f.string("trackId", max: 64)), width: try f.int("width", 0...16384),
                height: try f.int("height", 0...16384))
        case .requestShare: self = .shareRequested(ShareRequestID(try f.string("requestId", max: 64)))
        case .setShareLock: self = .shareLock(try f.bool("locked"))
        case .setSharePolicy: self = .sharePolicy(try SharePolicy(json: try f.value("sharePolicy")))
        case .sendData:
            self = .dataSent(
                MessageID(try f.string("messageId", max: 64)), at: try f.int64("at"),
                recipients: try f.int("recipients", 0...Int(Int32.max)))
        case .setAttributes:
            self = .attributes(
                ParticipantID(try f.string("participantId", max: 64)),
                try AttributeCoding.decodeSet(try f.value("attributes"), "attributes"))
        case .auth, .leave, .update, .unpublish, .mute, .pauseShare, .resumeShare, .stopShare, .answerShareRequest,
            .setPermission, .muteParticipant, .removeParticipant, .endRoom, .subscriberAnswer, .iceCandidate:
            self = .empty
        }
    }

    public var json: JSONObject {
        switch self {
        case .empty: return [:]
        case .pong(let t): return ["pong": .int(t)]
        case .snapshot(let s): return s.json.objectValue ?? [:]
        case .published(let track, let share):
            var o: JSONObject = ["track": track.json]
            if let share { o["share"] = share.json }
            return o
        case .publishAnswer(let a): return a.json.objectValue ?? [:]
        case .subscribed(let id, let quality):
            return ["trackId": .string(id.rawValue), "quality": .string(quality.rawValue)]
        case .unsubscribed(let id): return ["trackId": .string(id.rawValue)]
        case .viewport(let id, let w, let h):
            return ["trackId": .string(id.rawValue), "width": .int(Int64(w)), "height": .int(Int64(h))]
        case .shareRequested(let id): return ["requestId": .string(id.rawValue)]
        case .shareLock(let locked): return ["locked": .bool(locked)]
        case .sharePolicy(let p): return ["sharePolicy": p.json]
        case .dataSent(let id, let at, let recipients):
            return ["messageId": .string(id.rawValue), "at": .int(at), "recipients": .int(Int64(recipients))]
        case .attributes(let p, let a):
            return ["participantId": .string(p.rawValue), "attributes": AttributeCoding.encodeSet(a)]
        }
    }
}

/// The result of a `publish_offer`: the answer, the tracks bound to mids, the sections refused.
public struct PublishAnswer: WireValue {
    public struct Bound: Equatable, Sendable {
        public var mid: String
        public var track: TrackID
        public var source: TrackSource
        public var share: ShareID?

        public init(mid: String, track: TrackID, source: TrackSource, share: ShareID? = nil) {
            self.mid = mid
            self.track = track
            self.source = source
            self.share = share
        }
    }

    /// A refused section, with the documented code of why (docs/protocol.md, "Rejected media sections").
    public struct Rejection: Equatable, Sendable {
        public var mid: String
        public var code: String
        public var message: String

        public init(mid: String, code: String, message: String) {
            self.mid = mid
            self.code = code
            self.message = message
        }
    }

    public var sdp: String
    public var tracks: [Bound]
    public var rejected: [Rejection]

    public init(sdp: String, tracks: [Bound], rejected: [Rejection]) {
        self.sdp = sdp
        self.tracks = tracks
        self.rejected = rejected
    }

    public init(json: JSONValue) throws(ProtocolError) {
        let f = try FieldReader(json, "data")
        self.init(
            sdp: try f.string("sdp", max: 65536),
            tracks: try f.list("tracks") { (v: JSONValue) throws(ProtocolError) -> Bound in
                let t = try FieldReader(v, "tracks")
                return Bound(
                    mid: try t.string("mid", max: 32), track: TrackID(try t.string("trackId", max: 64)),
                    source: try t.enumValue("source"), share: try t.optionalString("shareId", max: 64).map(ShareID.init)
                )
            },
            rejected: try f.list("rejected") { (v: JSONValue) throws(ProtocolError) -> Rejection in
                let r = try FieldReader(v, "rejected")
                return Rejection(
                    mid: try r.string("mid", max: 32), code: try r.string("code", max: 64),
                    message: try r.string("message", max: 4096))
            })
    }

    public var json: JSONValue {
        let tracks: [JSONValue] = tracks.map { b in
            var o: JSONObject = [
                "mid": .string(b.mid), "trackId": .string(b.track.rawValue), "source": .string(b.source.rawValue),
            ]
            if let share = b.share { o["shareId"] = .string(share.rawValue) }
            return .object(o)
        }
        let rejected: [JSONValue] = rejected.map { r in
            .object(["mid": .string(r.mid), "code": .string(r.code), "message": .string(r.message)])
        }
        return .object(["sdp": .string(sdp), "tracks": .array(tracks), "rejected": .array(rejected)])
    }
}
