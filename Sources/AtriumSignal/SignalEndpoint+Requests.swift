import AtriumAuth
import AtriumHTTP
import AtriumJSON
import AtriumMediaControl
import AtriumModel
import AtriumProtocol
import AtriumRoomCoding
import AtriumRooms
import AtriumSDP

/// The requests of protocol version 1 (docs/protocol.md), decoded once into `ClientRequest` and
/// dispatched by an exhaustive switch. Each returns the `data` of its `result`.
extension SignalEndpoint {
    func handle(_ typeName: String, _ f: FieldReader, session: Session) throws(SignalError) -> Response {
        guard let type = RequestType(rawValue: typeName), type != .auth else {
            throw .badRequest("unknown message type \"\(typeName)\"")
        }
        // Who may send what is decided by type, before the fields are read.
        switch type {
        case .ping: break
        case .join, .resume: if session.member != nil { throw .alreadyJoined }
        default: if session.member == nil { throw .notJoined }
        }
        let request: ClientRequest
        do throws(ProtocolError) { request = try ClientRequest(type, f) } catch { throw SignalError(error) }
        switch request {
        case .ping: return .pong(now())
        case .join(let options): return .snapshot(try join(options, session))
        case .resume(let token): return .snapshot(try resume(token, session))
        default: break
        }
        guard let member = session.member else { throw .notJoined }
        let me = member.participant
        let actor = Actor.participant(me)
        let t = now()
        // Every room request of a joined session is a command for its room, applied by the hub.
        func run(_ command: HubCommand) throws(SignalError) {
            do throws(HubError) { try hub.apply(command, in: member.room, by: actor, now: t) } catch {
                throw .hub(error)
            }
        }
        func mediaPlane() throws(SignalError) -> MediaCoordinator {
            guard let media else { throw .media(code: "media_unavailable", message: "this server runs without media") }
            return media
        }
        switch request {
        case .auth, .ping, .join, .resume:
            throw .alreadyJoined
        case .leave:
            members[me] = nil
            byResumeToken[member.resumeToken] = nil
            session.member = nil
            try run(.leave(me, reason: .left))
            close(session, SignalCloseCode.left, "left")
            return .empty
        case .update(let name, let metadata):
            try run(.update(name: name, metadata: metadata))
            return .empty
        case .publish(let request):
            let (track, events): (Track, [RoomEvent])
            do throws(HubError) { (track, events) = try hub.publish(request, by: me, in: member.room, now: t) } catch {
                throw .hub(error)
            }
            var published = track
            var share: ShareInfo?
            for e in events {
                if case .trackPublished(let tr) = e, tr.id == track.id { published = tr }
                if case .shareStarted(let sh) = e, sh.videoTrack == track.id { share = HubCoding.shareInfo(sh) }
            }
            return .published(HubCoding.trackInfo(published), share: share)
        case .publishOffer(let offer):
            let media = try mediaPlane()
            let request: PublishRequest
            do throws(NegotiationError) { request = try PublishRequest(offer) } catch { throw SignalError(error) }
            defer { flushMedia() }
            // Media control plans; the room changes go through the hub here; then media control answers.
            let pending = media.planOffer(request, by: me, in: member.room, state: hub.state(member.room))
            for track in pending.ending {
                _ = try? hub.apply(.unpublish(track, reason: .userStopped), in: member.room, by: actor, now: t)
            }
            var published: [String: Result<Track, HubError>] = [:]
            for (mid, request) in pending.publishing {
                do throws(HubError) {
                    published[mid] = .success(try hub.publish(request, by: me, in: member.room, now: t).0)
                } catch {
                    published[mid] = .failure(error)
                }
            }
            return .publishAnswer(media.answerOffer(pending, published: published, rooms: hub))
        case .subscriberAnswer(let revision, let sdp):
            let media = try mediaPlane()
            defer { flushMedia() }
            do throws(NegotiationError) {
                try media.subscriberAnswer(me, revision: revision, sdp: sdp)
            } catch { throw SignalError(error) }
            return .empty
        case .iceCandidate(_, let text):
            // ICE-lite: the server learns addresses from the checks; a candidate is checked, then ignored.
            if !text.isEmpty && Candidate(parsing: text) == nil {
                throw .invalidField("candidate", "not an ICE candidate attribute")
            }
            return .empty
        case .unpublish(let trackID, let reason):
            // `connection_lost` is the server's to say.
            guard reason != .connectionLost else {
                throw .invalidField("reason", "must be user_stopped or capture_ended")
            }
            try run(.unpublish(trackID, reason: reason ?? .userStopped))
            return .empty
        case .mute(let trackID, let muted):
            try run(.setMuted(trackID, muted))
            return .empty
        case .subscribe(let trackID, let quality):
            let quality = quality ?? .high
            try run(.subscribe(trackID, quality: quality))
            return .subscribed(trackID, quality: quality)
        case .setViewport(let trackID, let width, let height):
            try setViewport(trackID, width: width, height: height, me: me, room: member.room)
            return .viewport(trackID, width: width, height: height)
        case .unsubscribe(let trackID):
            try run(.unsubscribe(trackID))
            return .unsubscribed(trackID)
        case .pauseShare(let shareID):
            try run(.pauseShare(shareID))
            return .empty
        case .resumeShare(let shareID):
            try run(.resumeShare(shareID))
            return .empty
        case .stopShare(let shareID, let reason):
            try run(.stopShare(shareID, reason: reason ?? .userStopped))
            return .empty
        case .requestShare:
            let requestID = hub.ids.request()
            try run(.requestShare(requestID))
            return .shareRequested(requestID)
        case .answerShareRequest(let requestID, let grant):
            try run(.answerShareRequest(requestID, grant: grant))
            return .empty
        case .setShareLock(let locked):
            try run(.setShareLock(locked))
            return .shareLock(locked)
        case .setSharePolicy(let change):
            guard let policy = hub.state(member.room)?.policy else { throw .notJoined }
            let next = change.applied(to: policy)
            try run(.setSharePolicy(next))
            return .sharePolicy(next)
        case .setPermission(let target, let permission, let granted):
            switch permission ?? .source(.screenShare) {
            case .source(let source): try run(.setPermission(target, source: source, granted: granted))
            case .data: try run(.setDataPermission(target, granted: granted))
            }
            return .empty
        case .sendData(let topic, let payload, let to):
            guard admitData(me, size: payload.utf8.count) else { throw .dataRateLimited }
            let message = DataMessage(
                id: hub.ids.message(), from: me, topic: topic, payload: payload, to: to, at: nowMillis())
            let events: [RoomEvent]
            do throws(HubError) { events = try hub.apply(.sendData(message), in: member.room, by: actor, now: t) } catch
            {
                throw .hub(error)
            }
            var recipients = 0
            for case .data(let sent) in events {
                recipients = sent.to?.count ?? max(0, (hub.state(member.room)?.participants.count ?? 1) - 1)
            }
            return .dataSent(message.id, at: message.at, recipients: recipients)
        case .setAttributes(let target, let changes):
            let who = target ?? me
            try run(.setAttributes(who, changes))
            return .attributes(who, hub.state(member.room)?.participants[who]?.attributes ?? [:])
        case .muteParticipant(let trackID):
            try run(.setMuted(trackID, true))
            return .empty
        case .removeParticipant(let target):
            try run(.removeParticipant(target))
            return .empty
        case .endRoom:
            try run(.endRoom)
            return .empty
        }
    }

    private func join(_ options: JoinOptions, _ session: Session) throws(SignalError) -> Snapshot {
        guard session.member == nil else { throw .alreadyJoined }
        guard let claims = session.claims, let scope = claims.grants.room else { throw .notJoined }
        let name = options.name ?? claims.name ?? claims.identity
        let metadata = options.metadata ?? ""
        let autoSubscribe = options.autoSubscribe ?? true
        let t = now()
        let roomID: RoomID
        do throws(HubError) { roomID = try hub.open(scope: scope, grants: claims.grants, now: t) } catch {
            throw .hub(error)
        }
        let pid = hub.ids.participant()
        // A live session of the same identity in this room is replaced (the hub emits `replaced`).
        let request = JoinRequest(
            participant: pid, identity: claims.identity, name: name, metadata: metadata, grants: claims.grants,
            autoSubscribe: autoSubscribe, dataChannels: options.dataChannels ?? false)
        if let offer = options.subscriberOffer {
            // Read before the join: the subscriber connection is made (or taken over) in it.
            do throws(NegotiationError) { try media?.keep(pid, offer: offer) } catch { throw SignalError(error) }
        }
        do throws(HubError) { try hub.apply(.join(request), in: roomID, by: .participant(pid), now: t) } catch {
            media?.forgetKept(pid)
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
        guard
            let result = HubCoding.snapshot(
                state, me: pid, resumeToken: token, iceServers: iceServers(identity: claims.identity, participant: pid))
        else { throw .hub(.roomNotFound(scope)) }
        // Who speaks now, right after the result (the others got it when it changed).
        if let speakers = media?.currentSpeakers(in: roomID) { session.afterResult.append(speakers.json) }
        return result
    }

    /// Rebinds a participant whose socket dropped to this connection, within the resume window.
    private func resume(_ token: String, _ session: Session) throws(SignalError) -> Snapshot {
        guard session.member == nil else { throw .alreadyJoined }
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
        guard
            let result = HubCoding.snapshot(
                fresh, me: pid, resumeToken: token, iceServers: iceServers(identity: claims.identity, participant: pid))
        else { throw .resumeFailed }
        if let speakers = media?.currentSpeakers(in: member.room) { session.afterResult.append(speakers.json) }
        return result
    }

    /// The `RTCIceServer`s a participant gets: the configured TURN servers with credentials made now,
    /// valid for the configured TTL (new ones at every resume). Empty without TURN, or when the clock
    /// gives no valid expiry.
    func iceServers(identity: String, participant: ParticipantID) -> [IceServer] {
        guard let turn = options.turn,
            let c = turn.credential(identity: identity, fallback: participant.rawValue, now: now())
        else { return [] }
        return [IceServer(urls: c.urls, username: c.username, credential: c.credential)]
    }
}
