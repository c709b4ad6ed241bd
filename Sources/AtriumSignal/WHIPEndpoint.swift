public import AtriumAuth
public import AtriumHTTP
import AtriumJSON
import AtriumMediaControl
import AtriumModel
import AtriumProtocol
import AtriumRoomCoding
import AtriumRooms
public import AtriumRouting
import AtriumSDP

/// WHIP (RFC 9725) and WHEP: a tool (OBS, GStreamer, ffmpeg) publishes into a room, or a player plays
/// from it, with one HTTP `POST` of its SDP offer and a participant token as Bearer. A publisher is a
/// participant of the room (its token's identity); its video is a screen share by default
/// (`?source=camera` for a camera) and goes through the room's share policy like the page's. A player
/// is a hidden participant that follows the room's active share, or one participant's tracks
/// (`?participant=<identity>`), without a new offer (`MediaCoordinator+Player`). docs/whip-whep.md.
///
/// | Route (`whip` or `whep`) | |
/// |---|---|
/// | `POST /v1/rooms/{room}/whip` | offer in, `201` with the answer, `Location` and `ETag` |
/// | `PATCH /v1/rooms/{room}/whip/{session}` | trickled candidates: `204` (the server is ICE-lite); an ICE restart: `422` |
/// | `DELETE /v1/rooms/{room}/whip/{session}` | ends the session: a publisher's share stops (`user_stopped`); it leaves |
/// | `OPTIONS` on both | CORS preflight, and the TURN servers as `Link` headers |
public final class WHIPEndpoint: HTTPHandler {
    public enum Kind: String, Sendable {
        case whip, whep
    }

    struct Session {
        var kind: Kind
        var id: String
        var room: RoomID
        var roomKey: String
        var participant: ParticipantID
        var identity: String
        var etag: String
    }

    let signal: SignalEndpoint
    let verifier: TokenVerifier
    let next: any HTTPHandler
    var sessions: [String: Session] = [:]
    let makeID: () -> String
    /// The cluster's nodes: a call for a room another node runs is answered by that node (nil on one node).
    public var nodes: (any NodeDirectory)?

    public init(signal: SignalEndpoint, verifier: TokenVerifier, next: any HTTPHandler, makeID: @escaping () -> String)
    {
        self.signal = signal
        self.verifier = verifier
        self.next = next
        self.makeID = makeID
    }

    /// Sessions of a kind live now, for the metrics.
    public func sessionCount(_ kind: Kind) -> Int { sessions.values.count { $0.kind == kind } }

    public func refuse(_ request: HTTPRequest, status: Int, code: String, message: String) -> HTTPResponse {
        next.refuse(request, status: status, code: code, message: message)
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        // ["", "v1", "rooms", room, "whip"] or [..., "whip", session]; the same with "whep".
        guard parts.count >= 5, parts.count <= 6, parts[1] == "v1", parts[2] == "rooms",
            let kind = Kind(rawValue: parts[4]),
            !parts[3].isEmpty
        else { return next.handle(request) }
        let room = parts[3]
        let session = parts.count == 6 ? parts[5] : nil
        if session?.isEmpty == true { return next.handle(request) }
        // In a cluster, the node running the room answers (its media addresses are in the answer, and
        // its sessions are there): a POST for a room live elsewhere, a PATCH or DELETE of a session
        // this node does not have.
        if request.method != .OPTIONS, session.map({ sessions[$0]?.kind != kind }) ?? true,
            let r = forwarded(request, room)
        {
            return r
        }
        var response: HTTPResponse
        do throws(WHIPError) {
            switch (request.method, session) {
            case (.OPTIONS, _): response = options(request, session: session != nil)
            case (.POST, nil): response = try kind == .whip ? publish(request, room: room) : play(request, room: room)
            case (.PATCH, let id?): response = try patch(request, kind, room: room, session: id)
            case (.DELETE, let id?): response = try end(request, kind, room: room, session: id)
            default:
                throw WHIPError(
                    status: 405, code: "method_not_allowed", message: "\(request.method.rawValue) is not allowed here",
                    headers: [("allow", session == nil ? "POST, OPTIONS" : "PATCH, DELETE, OPTIONS")])
            }
        } catch {
            // Another node's answer comes with its own headers.
            if let r = error.forwarded { return r }
            response = error.response
        }
        response.headers += [
            ("access-control-allow-origin", "*"),
            ("access-control-expose-headers", "Location, ETag, Link"),
        ]
        return response
    }

    // MARK: - POST

    func publish(_ request: HTTPRequest, room key: String) throws(WHIPError) -> HTTPResponse {
        let claims = try authenticate(request, room: key)
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
        let video: TrackSource
        switch request.queryValue("source") ?? "screen_share" {
        case "screen_share": video = .screenShare
        case "camera": video = .camera
        default: throw WHIPError(status: 400, code: "invalid_field", message: "source: expected screen_share or camera")
        }
        let audio: TrackSource = video == .screenShare ? .screenShareAudio : .microphone
        // Bind each sendable audio and video section to a new track of the chosen sources.
        let offer: SessionDescription
        do { offer = try SessionDescription.parse(sdp) } catch {
            throw WHIPError(status: 400, code: "invalid_sdp", message: "the SDP does not parse: \(error)")
        }
        var entries: [PublishOfferRequest.Entry] = []
        var taken = Set<TrackSource>()
        for m in offer.media where m.port != 0 || m.bundleOnly {
            guard let mid = m.mid else { continue }
            let source: TrackSource? = m.kind == .video ? video : m.kind == .audio ? audio : nil
            guard let source, taken.insert(source).inserted else { continue }
            entries.append(PublishOfferRequest.Entry(mid: mid, binding: .new(TrackRequest(source: source))))
        }
        guard taken.contains(video) || taken.contains(audio) else {
            throw WHIPError(status: 400, code: "invalid_sdp", message: "the offer sends no audio or video")
        }
        let t = signal.now()
        let roomID: RoomID
        do throws(HubError) { roomID = try signal.hub.open(scope: key, grants: claims.grants, now: t) } catch {
            // Placed on another node just now: that node answers.
            if case .roomElsewhere = error, let r = forwarded(request, key) { throw WHIPError(forwarded: r) }
            throw WHIPError(error)
        }
        // A WHIP tool cannot encrypt its frames, nor a WHEP player decrypt them: refused, as a recording is.
        if signal.hub.state(roomID)?.room.e2ee == true { throw .e2eeRoom("publishing") }
        let pid = signal.hub.ids.participant()
        let join = JoinRequest(
            participant: pid, identity: claims.identity, name: claims.name ?? claims.identity, metadata: "",
            grants: claims.grants, autoSubscribe: false)
        do throws(HubError) { try signal.hub.apply(.join(join), in: roomID, by: .participant(pid), now: t) } catch {
            throw WHIPError(error)
        }
        let offerRequest: PublishRequest
        do throws(NegotiationError) {
            offerRequest = try PublishRequest(PublishOfferRequest(sdp: sdp, tracks: entries))
        } catch {
            leave(pid, roomID)
            throw WHIPError(status: 400, code: error.code, message: error.message)
        }
        defer { signal.flushMedia() }
        var pending = media.planOffer(offerRequest, by: pid, in: roomID, state: signal.hub.state(roomID))
        // The share's video before its audio: share audio joins a running share.
        pending.publishing.sort { a, _ in a.request.source == video }
        var published: [String: Result<Track, HubError>] = [:]
        for (mid, track) in pending.publishing {
            do throws(HubError) {
                published[mid] = .success(try signal.hub.publish(track, by: pid, in: roomID, now: t).0)
            } catch {
                published[mid] = .failure(error)
            }
        }
        let answer = media.answerOffer(pending, published: published, rooms: signal.hub)
        // The video refused (the share lock, one share at a time, no permission): nothing is published.
        if let refusal = published.values.compactMap({ r -> HubError? in
            if case .failure(let e) = r { return e } else { return nil }
        }).first, answer.tracks.allSatisfy({ $0.source != video }) {
            leave(pid, roomID)
            throw WHIPError(refusal)
        }
        // Nothing could be taken (no codec the server forwards): refused with the section's reason.
        if answer.tracks.isEmpty {
            leave(pid, roomID)
            let why = answer.rejected.first
            throw WHIPError(
                status: 400, code: why?.code ?? "sdp_unsupported",
                message: why?.message ?? "no section of the offer could be taken")
        }
        let id = makeID()
        let etag = "\"\(makeID())\""
        sessions[id] = Session(
            kind: .whip, id: id, room: roomID, roomKey: key, participant: pid, identity: claims.identity, etag: etag)
        let location = "/v1/rooms/\(key)/whip/\(id)"
        return HTTPResponse(
            status: 201,
            headers: [("content-type", "application/sdp"), ("location", location), ("etag", etag)]
                + iceLinks(identity: claims.identity, participant: pid),
            body: Array(answer.sdp.utf8))
    }

    // MARK: - PATCH, DELETE, OPTIONS

    func patch(_ request: HTTPRequest, _ kind: Kind, room key: String, session id: String) throws(WHIPError)
        -> HTTPResponse
    {
        let s = try owned(request, kind, room: key, session: id)
        guard let match = request.header("if-match"), match == s.etag || match == "*" else {
            throw WHIPError(status: 412, code: "precondition_failed", message: "If-Match must be the session's ETag")
        }
        guard request.header("content-type")?.lowercased().hasPrefix("application/trickle-ice-sdpfrag") == true else {
            throw WHIPError(
                status: 415, code: "unsupported_media_type", message: "a PATCH carries application/trickle-ice-sdpfrag")
        }
        let text = String(decoding: request.body, as: UTF8.self)
        // New ICE credentials ask for an ICE restart, which this server does not do over WHIP: the client
        // publishes again with a new POST. Trickled candidates need nothing: the server is ICE-lite and
        // learns the client's address from its checks.
        if match == "*" || text.contains("a=ice-ufrag:") {
            throw WHIPError(
                status: 422, code: "ice_restart_unsupported",
                message: "ICE restarts are not supported; end the session and publish again")
        }
        return HTTPResponse(status: 204)
    }

    func end(_ request: HTTPRequest, _ kind: Kind, room key: String, session id: String) throws(WHIPError)
        -> HTTPResponse
    {
        let s = try owned(request, kind, room: key, session: id)
        sessions[id] = nil
        let t = signal.now()
        if let state = signal.hub.state(s.room) {
            for share in state.shares where share.sharer == s.participant {
                _ = try? signal.hub.apply(
                    .stopShare(share.id, reason: .userStopped), in: s.room, by: .participant(s.participant), now: t)
            }
        }
        leave(s.participant, s.room)
        return HTTPResponse(status: 200)
    }

    func options(_ request: HTTPRequest, session: Bool) -> HTTPResponse {
        let methods = session ? "PATCH, DELETE, OPTIONS" : "POST, OPTIONS"
        var headers: [(name: String, value: String)] = [
            ("allow", methods), ("access-control-allow-methods", methods),
            ("access-control-allow-headers", "Authorization, Content-Type, If-Match"),
            ("access-control-max-age", "600"), ("accept-post", "application/sdp"),
        ]
        // The TURN servers for a client with a valid token (RFC 9725 section 4.6).
        if let token = bearer(request), let claims = try? verifier.verify(token, now: signal.now()) {
            headers += iceLinks(identity: claims.identity, participant: ParticipantID("whip"))
        }
        return HTTPResponse(status: 204, headers: headers)
    }

    /// Sessions whose peer went away without `DELETE` (no ICE consent for 30 s) end as a dropped
    /// participant does: a publisher's share stops with `disconnected`.
    public func tick() {
        guard let media = signal.media else { return }
        for (id, s) in sessions {
            let present = signal.hub.state(s.room)?.participants[s.participant] != nil
            let gone = s.kind == .whip ? media.publisherGone(s.participant) : media.playerGone(s.participant)
            guard !present || gone else { continue }
            sessions[id] = nil
            if present {
                _ = try? signal.hub.apply(
                    .leave(s.participant, reason: .disconnected), in: s.room, by: .participant(s.participant),
                    now: signal.now())
            }
        }
    }

    // MARK: - Helpers

    /// The answer of the node running the room, when another one does.
    func forwarded(_ request: HTTPRequest, _ key: String) -> HTTPResponse? {
        guard let nodes, signal.hub.remoteOwner(scope: key) != nil, let id = signal.hub.storedRoomID(scope: key) else {
            return nil
        }
        return nodes.forward(request, room: id)
    }

    func leave(_ pid: ParticipantID, _ room: RoomID) {
        _ = try? signal.hub.apply(.leave(pid, reason: .left), in: room, by: .participant(pid), now: signal.now())
        signal.flushMedia()
    }

    func bearer(_ request: HTTPRequest) -> String? {
        guard let h = request.header("authorization") else { return nil }
        let parts = h.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = String(parts[1].filter { $0 != " " && $0 != "\t" })
        return token.isEmpty ? nil : token
    }

    /// A valid participant token for this room (its scope, by name or id, is the path's room).
    func authenticate(_ request: HTTPRequest, room key: String) throws(WHIPError) -> TokenClaims {
        guard let token = bearer(request) else {
            throw WHIPError(
                status: 401, code: "missing_token", message: "a participant token is required as Bearer",
                headers: [("www-authenticate", "Bearer realm=\"atrium\"")])
        }
        let claims: TokenClaims
        do throws(AuthError) { claims = try verifier.verify(token, now: signal.now()) } catch {
            throw WHIPError(
                status: 401, code: error.code, message: error.message,
                headers: [("www-authenticate", "Bearer realm=\"atrium\", error=\"invalid_token\"")])
        }
        guard claims.grants.roomJoin, let scope = claims.grants.room else {
            throw WHIPError(
                status: 403, code: "missing_grant", message: "the token lacks the roomJoin grant for a room")
        }
        // The same string, or the same live room by its name and its id.
        guard
            scope == key
                || signal.hub.rooms.values.contains(where: {
                    $0.state.room.matchesScope(key) && $0.state.room.matchesScope(scope)
                })
        else {
            throw WHIPError(status: 403, code: "wrong_room", message: "the token is for another room")
        }
        return claims
    }

    /// The session, asked for with a token of the identity that made it.
    func owned(_ request: HTTPRequest, _ kind: Kind, room key: String, session id: String) throws(WHIPError)
        -> Session
    {
        guard let s = sessions[id], s.roomKey == key, s.kind == kind else {
            throw WHIPError(
                status: 404, code: "session_not_found",
                message: "no \(kind.rawValue.uppercased()) session \"\(id)\" in this room")
        }
        let claims = try authenticate(request, room: key)
        guard claims.identity == s.identity else {
            throw WHIPError(status: 403, code: "not_allowed", message: "the session belongs to another identity")
        }
        return s
    }

    /// `Link: <turn:...>; rel="ice-server"; username=...; credential=...` (RFC 9725 section 4.6).
    func iceLinks(identity: String, participant: ParticipantID) -> [(name: String, value: String)] {
        signal.iceServers(identity: identity, participant: participant).flatMap { server in
            server.urls.map { url in
                (
                    "link",
                    "<\(url)>; rel=\"ice-server\"; username=\"\(server.username)\"; credential=\"\(server.credential)\"; credential-type=\"password\""
                )
            }
        }
    }
}

/// A WHIP refusal: an HTTP status and the JSON error body every API of the server uses.
struct WHIPError: Error {
    var status: Int
    var code: String
    var message: String
    var headers: [(name: String, value: String)] = []
    /// Another node's whole answer, passed on as it is.
    var forwarded: HTTPResponse?

    init(forwarded: HTTPResponse) {
        self.init(status: forwarded.status, code: "", message: "")
        self.forwarded = forwarded
    }

    init(status: Int, code: String, message: String, headers: [(name: String, value: String)] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    /// An end-to-end encrypted room's refusal: the tool cannot encrypt (WHIP) or decrypt (WHEP) frames.
    static func e2eeRoom(_ what: String) -> WHIPError {
        WHIPError(
            status: 409, code: "e2ee_room",
            message: "the room is end-to-end encrypted: a WHIP or WHEP tool cannot take part in it (\(what))")
    }

    /// A room's refusal: missing things 404, the share rules 403 (locked, no permission) or 409 (another
    /// share, the maximum), an unreachable cluster 503.
    init(_ e: HubError) {
        let status: Int =
            switch e {
            case .roomNotFound, .participantNotFound, .trackNotFound, .shareNotFound: 404
            case .notAllowed, .shareLocked, .invalidRoomName: 403
            case .clusterUnavailable, .roomElsewhere, .storeUnavailable: 503
            case .invalidField, .badRequest: 400
            default: 409
            }
        self.init(status: status, code: e.code, message: e.message)
    }

    var response: HTTPResponse {
        if let forwarded { return forwarded }
        let body = JSONValue.object(["error": .object(["code": .string(code), "message": .string(message)])])
        return HTTPResponse(
            status: status, headers: [("content-type", "application/json")] + headers, body: body.bytes())
    }
}
