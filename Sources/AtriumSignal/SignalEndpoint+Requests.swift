import AtriumAuth
import AtriumHTTP
import AtriumJSON
import AtriumMediaControl
import AtriumModel
import AtriumRoomCoding
import AtriumRooms
import AtriumSDP

/// The requests of protocol version 1 (docs/protocol.md). Each returns the `data` of its `result`.
extension SignalEndpoint {
    func handle(_ type: String, _ f: Fields, session: Session) throws(SignalError) -> JSONObject {
        switch type {
        case "ping": return ["pong": .int(now())]
        case "join": return try join(f, session)
        case "resume": return try resume(f, session)
        default: break
        }
        guard let member = session.member else {
            if Self.requestTypes.contains(type) { throw .notJoined }
            throw .badRequest("unknown message type \"\(type)\"")
        }
        let me = member.participant
        let actor = Actor.participant(me)
        let t = now()
        // Every room request of a joined session is a command for its room, applied by the hub.
        func run(_ command: HubCommand) throws(SignalError) {
            do throws(HubError) { try hub.apply(command, in: member.room, by: actor, now: t) } catch {
                throw .hub(error)
            }
        }
        switch type {
        case "leave":
            members[me] = nil
            byResumeToken[member.resumeToken] = nil
            session.member = nil
            try run(.leave(me, reason: .left))
            close(session, SignalCloseCode.left, "left")
            return [:]
        case "update":
            let name = try f.optionalString("name", max: 256)
            let metadata = try f.optionalString("metadata", max: 16 * 1024)
            try run(.update(name: name, metadata: metadata))
            return [:]
        case "publish":
            let request = try TrackRequest(f)
            let (track, events): (Track, [RoomEvent])
            do throws(HubError) { (track, events) = try hub.publish(request, by: me, in: member.room, now: t) } catch {
                throw .hub(error)
            }
            var out: JSONObject = [:]
            for e in events {
                if case .trackPublished(let tr) = e, tr.id == track.id { out["track"] = HubCoding.track(tr) }
                if case .shareStarted(let sh) = e, sh.videoTrack == track.id { out["share"] = HubCoding.share(sh) }
            }
            return out
        case "publish_offer":
            guard let media else { throw .media(code: "media_unavailable", message: "this server runs without media") }
            let request = try PublishRequest(f)
            defer { flushMedia() }
            return media.publishOffer(request, by: me, in: member.room, rooms: hub, now: t).json
        case "subscriber_answer":
            guard let media else { throw .media(code: "media_unavailable", message: "this server runs without media") }
            let revision = try f.int("revision", 0...Int(Int32.max))
            defer { flushMedia() }
            try media.subscriberAnswer(me, revision: revision, sdp: try f.string("sdp", max: 65536))
            return [:]
        case "ice_candidate":
            let target = try f.string("target", max: 16)
            guard target == "publisher" || target == "subscriber" else {
                throw .invalidField("target", "expected publisher or subscriber")
            }
            let text = try f.string("candidate", max: 1024)
            if !text.isEmpty && Candidate(parsing: text) == nil {
                throw .invalidField("candidate", "not an ICE candidate attribute")
            }
            return [:]
        case "unpublish":
            let trackID = TrackID(try f.string("trackId", max: 64))
            let reason: ShareStopReason = try f.optionalEnum("reason") ?? .userStopped
            try run(.unpublish(trackID, reason: reason))
            return [:]
        case "mute":
            let trackID = TrackID(try f.string("trackId", max: 64))
            let muted = try f.bool("muted")
            try run(.setMuted(trackID, muted))
            return [:]
        case "subscribe":
            let trackID = TrackID(try f.string("trackId", max: 64))
            let quality: VideoQuality = try f.optionalEnum("quality") ?? .high
            try run(.subscribe(trackID, quality: quality))
            return ["trackId": .string(trackID.rawValue), "quality": .string(quality.rawValue)]
        case "set_viewport":
            return try setViewport(f, me: me, room: member.room)
        case "unsubscribe":
            let trackID = TrackID(try f.string("trackId", max: 64))
            try run(.unsubscribe(trackID))
            return ["trackId": .string(trackID.rawValue)]
        case "pause_share", "resume_share", "stop_share":
            let shareID = ShareID(try f.string("shareId", max: 64))
            let reason: ShareStopReason = try f.optionalEnum("reason") ?? .userStopped
            switch type {
            case "pause_share": try run(.pauseShare(shareID))
            case "resume_share": try run(.resumeShare(shareID))
            default: try run(.stopShare(shareID, reason: reason))
            }
            return [:]
        case "request_share":
            let requestID = hub.ids.request()
            try run(.requestShare(requestID))
            return ["requestId": .string(requestID.rawValue)]
        case "answer_share_request":
            let requestID = ShareRequestID(try f.string("requestId", max: 64))
            let grant = try f.bool("grant")
            try run(.answerShareRequest(requestID, grant: grant))
            return [:]
        case "set_share_lock":
            let locked = try f.bool("locked")
            try run(.setShareLock(locked))
            return ["locked": .bool(locked)]
        case "set_share_policy":
            guard var policy = hub.state(member.room)?.policy else { throw .notJoined }
            try Self.applyPolicy(f, to: &policy)
            try run(.setSharePolicy(policy))
            return ["sharePolicy": HubCoding.policy(policy)]
        case "set_permission":
            let target = ParticipantID(try f.string("participantId", max: 64))
            let source: TrackSource = try f.optionalEnum("source") ?? .screenShare
            let granted = try f.bool("granted")
            try run(.setPermission(target, source: source, granted: granted))
            return [:]
        case "mute_participant":
            let trackID = TrackID(try f.string("trackId", max: 64))
            try run(.setMuted(trackID, true))
            return [:]
        case "remove_participant":
            let target = ParticipantID(try f.string("participantId", max: 64))
            try run(.removeParticipant(target))
            return [:]
        case "end_room":
            try run(.endRoom)
            return [:]
        case "join", "resume":
            throw .alreadyJoined
        default:
            throw .badRequest("unknown message type \"\(type)\"")
        }
    }

    static let requestTypes: Set<String> = [
        "leave", "update", "publish", "publish_offer", "subscriber_answer", "ice_candidate", "unpublish", "mute",
        "subscribe", "unsubscribe", "set_viewport", "pause_share", "resume_share",
        "stop_share", "request_share", "answer_share_request", "set_share_lock", "set_share_policy", "set_permission",
        "mute_participant", "remove_participant", "end_room",
    ]

    static func applyPolicy(_ f: Fields, to policy: inout SharePolicy) throws(SignalError) {
        let known: Set<String> = [
            "type", "id", "shareMode", "maxConcurrentShares", "whoCanShare", "shareRequestRequired", "shareLocked",
        ]
        for key in f.object.keys where !known.contains(key) { throw .invalidField(key, "unknown field") }
        if let m: ShareMode = try f.optionalEnum("shareMode") { policy.shareMode = m }
        if let n = try f.optionalInt("maxConcurrentShares", 1...SharePolicy.maxConcurrentSharesLimit) {
            policy.maxConcurrentShares = n
        }
        if let w: WhoCanShare = try f.optionalEnum("whoCanShare") { policy.whoCanShare = w }
        if let r = try f.optionalBool("shareRequestRequired") { policy.shareRequestRequired = r }
        if let l = try f.optionalBool("shareLocked") { policy.shareLocked = l }
    }

    private func checkProtocol(_ f: Fields) throws(SignalError) {
        guard let v = f.object["protocol"] else {
            throw .invalidField("protocol", "is required (this server speaks 1)")
        }
        guard let n = v.int64Value else { throw .invalidField("protocol", "expected an integer") }
        guard n == Int64(Self.protocolVersion) else { throw .unsupportedProtocol(Int(clamping: n)) }
    }

    private func join(_ f: Fields, _ session: Session) throws(SignalError) -> JSONObject {
        guard session.member == nil else { throw .alreadyJoined }
        guard let claims = session.claims, let scope = claims.grants.room else { throw .notJoined }
        try checkProtocol(f)
        let name = try f.optionalString("name", max: 256) ?? claims.name ?? claims.identity
        let metadata = try f.optionalString("metadata", max: 16 * 1024) ?? ""
        let autoSubscribe = try f.optionalBool("autoSubscribe") ?? true
        let t = now()
        let roomID: RoomID
        do throws(HubError) { roomID = try hub.open(scope: scope, grants: claims.grants, now: t) } catch {
            throw .hub(error)
        }
        let pid = hub.ids.participant()
        // A live session of the same identity in this room is replaced (the hub emits `replaced`).
        let request = JoinRequest(
            participant: pid, identity: claims.identity, name: name, metadata: metadata, grants: claims.grants,
            autoSubscribe: autoSubscribe)
        do throws(HubError) { try hub.apply(.join(request), in: roomID, by: .participant(pid), now: t) } catch {
            throw .hub(error)
        }
        let token = makeToken()
        let member = Member(room: roomID, participant: pid, resumeToken: token, connection: session.connection.id)
        members[pid] = member
        byResumeToken[token] = pid
        session.member = member
        guard let state = hub.state(roomID) else { throw .hub(.roomNotFound(scope)) }
        // A subscriber offer made during the join (tracks already published) follows the result.
        media?.resumed(pid)
        flushMedia()
        var result = HubCoding.snapshot(state, me: pid, resumeToken: token, protocolVersion: Self.protocolVersion)
        result["iceServers"] = iceServers(identity: claims.identity, participant: pid)
        // Who speaks now, right after the result (the others got it when it changed).
        if let speakers = media?.currentSpeakers(in: roomID) { session.afterResult.append(speakers.json) }
        return result
    }

    /// Rebinds a participant whose socket dropped to this connection, within the resume window.
    private func resume(_ f: Fields, _ session: Session) throws(SignalError) -> JSONObject {
        guard session.member == nil else { throw .alreadyJoined }
        try checkProtocol(f)
        let token = try f.string("resumeToken", max: 128)
        if byResumeToken[token] == nil, let scope = session.claims?.grants.room,
            let node = hub.remoteOwner(scope: scope)
        {
            throw .hub(.roomElsewhere(node: node))
        }
        guard let pid = byResumeToken[token], var member = members[pid], let claims = session.claims,
            let state = hub.state(member.room), let p = state.participants[pid], p.identity == claims.identity,
            let scope = claims.grants.room, state.room.matchesScope(scope)
        else { throw .resumeFailed }
        if let old = member.connection.flatMap({ sessions[$0] }) {
            old.member = nil
            close(old, SignalCloseCode.replaced, "resumed elsewhere")
        }
        member.connection = session.connection.id
        member.disconnectedAt = nil
        members[pid] = member
        session.member = member
        do throws(HubError) {
            try hub.apply(.setConnected(pid, true), in: member.room, by: .participant(pid), now: now())
        } catch { throw .hub(error) }
        guard let fresh = hub.state(member.room) else { throw .resumeFailed }
        media?.resumed(pid)
        flushMedia()
        var result = HubCoding.snapshot(fresh, me: pid, resumeToken: token, protocolVersion: Self.protocolVersion)
        result["iceServers"] = iceServers(identity: claims.identity, participant: pid)
        if let speakers = media?.currentSpeakers(in: member.room) { session.afterResult.append(speakers.json) }
        return result
    }

    /// The `RTCIceServer`s a participant gets: the configured TURN servers with credentials made now,
    /// valid for the configured TTL (new ones at every resume). Empty without TURN, or when the clock
    /// gives no valid expiry.
    func iceServers(identity: String, participant: ParticipantID) -> JSONValue {
        guard let turn = options.turn,
            let c = turn.credential(identity: identity, fallback: participant.rawValue, now: now())
        else { return .array([]) }
        return .array([
            .object([
                "urls": .array(c.urls.map(JSONValue.string)), "username": .string(c.username),
                "credential": .string(c.credential),
            ])
        ])
    }
}
