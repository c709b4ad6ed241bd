import AtriumAuth
import AtriumHTTP
import AtriumMediaControl
import AtriumModel
import AtriumRooms

/// WHEP: `POST /v1/rooms/{room}/whep[?participant=<identity>]` with a receive-only offer. The player
/// joins as a hidden participant (the token's identity with `#whep-<session>`, so that it never
/// replaces the person whose token it is) and follows the room's active share, or the participant
/// named, from the answer on.
extension WHIPEndpoint {
    func play(_ request: HTTPRequest, room key: String) throws(WHIPError) -> HTTPResponse {
        let claims = try authenticate(request, room: key)
        guard claims.grants.canSubscribe else {
            throw WHIPError(status: 403, code: "not_allowed", message: "the token may not subscribe")
        }
        guard request.header("content-type")?.lowercased().hasPrefix("application/sdp") == true else {
            throw WHIPError(
                status: 415, code: "unsupported_media_type", message: "the offer's Content-Type is application/sdp")
        }
        guard let sdp = String(validating: request.body, as: UTF8.self), !sdp.isEmpty else {
            throw WHIPError(status: 400, code: "invalid_sdp", message: "the body is not an SDP offer")
        }
        guard let media = signal.media else {
            throw WHIPError(status: 503, code: "media_unavailable", message: "this server runs without media")
        }
        let follow: MediaCoordinator.Follow
        if let identity = request.queryValue("participant") {
            guard !identity.isEmpty, identity.utf8.count <= 256 else {
                throw WHIPError(
                    status: 400, code: "invalid_field", message: "participant: an identity of 1 to 256 bytes")
            }
            follow = .participant(identity)
        } else {
            follow = .share
        }
        let t = signal.now()
        let roomID: RoomID
        do throws(HubError) { roomID = try signal.hub.open(scope: key, grants: claims.grants, now: t) } catch {
            if case .roomElsewhere = error, let r = forwarded(request, key) { throw WHIPError(forwarded: r) }
            throw WHIPError(error)
        }
        if signal.hub.state(roomID)?.room.e2ee == true { throw .e2eeRoom("playing") }
        let id = makeID()
        let pid = signal.hub.ids.participant()
        var grants = claims.grants
        grants.hidden = true
        grants.canPublish = false
        grants.canPublishData = false
        let join = JoinRequest(
            participant: pid, identity: "\(claims.identity)#whep-\(id)", name: claims.name ?? claims.identity,
            metadata: "", grants: grants, autoSubscribe: false)
        do throws(HubError) { try signal.hub.apply(.join(join), in: roomID, by: .participant(pid), now: t) } catch {
            throw WHIPError(error)
        }
        defer { signal.flushMedia() }
        let answer: String
        do throws(NegotiationError) {
            answer = try media.play(offer: sdp, by: pid, in: roomID, follow: follow, state: signal.hub.state(roomID))
        } catch {
            leave(pid, roomID)
            throw WHIPError(status: 400, code: error.code, message: error.message)
        }
        let etag = "\"\(makeID())\""
        sessions[id] = Session(
            kind: .whep, id: id, room: roomID, roomKey: key, participant: pid, identity: claims.identity, etag: etag)
        return HTTPResponse(
            status: 201,
            headers: [
                ("content-type", "application/sdp"), ("location", "/v1/rooms/\(key)/whep/\(id)"), ("etag", etag),
            ] + iceLinks(identity: claims.identity, participant: pid),
            body: Array(answer.utf8))
    }
}
