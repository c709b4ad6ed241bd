public import AtriumAuth
public import AtriumHTTP
import AtriumJSON
public import AtriumMediaControl
public import AtriumModel
import AtriumProtocol
import AtriumRoomCoding
public import AtriumRooms
public import AtriumRouting

/// The WebSocket endpoint `/v1/signal`: authenticates each connection (the `access_token` query
/// parameter or a first `auth` message), decodes requests once into typed calls on the `Hub`, answers
/// each with exactly one `result` or `error`, and pushes the hub's events to their audiences.
/// Keeps sessions across socket losses for the resume window. Runs on the edge's service thread.
public final class SignalEndpoint: WebSocketHandler, HubOutput {
    public static let protocolVersion = ProtocolVersion.current
    public let path = "/v1/signal"

    final class Session {
        let connection: any WebSocketConnection
        var claims: TokenClaims?
        /// The token it authenticated with (handed to the owner node when the session is relayed).
        var token: String?
        /// The session runs on another node: its messages go through `relay`.
        var relayed = false
        var member: Member?
        var lastSeen: Int64
        var tokens: Double
        var lastRefill: Double
        var droppedThisSecond = 0
        var dropSecond: Int64 = 0
        var closing = false
        /// True while a request is handled: a close it causes waits until its result is sent.
        var handling = false
        var pendingClose: (code: UInt16, reason: String)?
        /// Messages pushed to this session while it had a request in hand: sent right after its result.
        var afterResult: [JSONObject] = []

        init(connection: any WebSocketConnection, now: Int64, burst: Double, mono: Double) {
            self.connection = connection
            self.lastSeen = now
            self.tokens = burst
            self.lastRefill = mono
        }
    }

    /// A participant as the endpoint tracks it, connected or waiting to resume.
    struct Member {
        var room: RoomID
        var participant: ParticipantID
        var resumeToken: String
        var connection: UInt64?
        var disconnectedAt: Int64?
    }

    let verifier: TokenVerifier
    let hub: Hub
    let options: SignalOptions
    let now: () -> Int64
    let monotonic: () -> Double
    /// Unix milliseconds: the server time of data messages.
    let nowMillis: () -> Int64
    let makeToken: () -> String
    var sessions: [UInt64: Session] = [:]
    var members: [ParticipantID: Member] = [:]
    var byResumeToken: [String: ParticipantID] = [:]
    /// Each participant's data message budget (`send_data` and its data channels together), apart
    /// from the request rate.
    var dataLimits: [ParticipantID: DataRateLimiter] = [:]
    /// The media plane's signaling side; nil when the server runs without media. What it has for
    /// participants is sent after each call into it (`flushMedia`).
    public var media: MediaCoordinator?
    /// The cluster's relay to the node running a room; nil on one node.
    public var relay: (any SignalRelay)?
    /// When `network_quality` was last pushed.
    var lastNetworkQuality: Int64 = 0

    public var authenticatedCount: Int { sessions.values.filter { $0.claims != nil }.count }

    public init(
        verifier: TokenVerifier, hub: Hub, options: SignalOptions, now: @escaping () -> Int64,
        monotonic: @escaping () -> Double, nowMillis: (() -> Int64)? = nil, makeToken: @escaping () -> String
    ) {
        self.verifier = verifier
        self.hub = hub
        self.options = options
        self.now = now
        self.monotonic = monotonic
        self.nowMillis = nowMillis ?? { now() * 1000 }
        self.makeToken = makeToken
        hub.output = self
    }

    // MARK: - WebSocketHandler

    public func opened(_ connection: any WebSocketConnection) {
        sessions[connection.id] = Session(
            connection: connection, now: now(), burst: options.rateBurst, mono: monotonic())
        if let token = connection.query.first(where: { $0.name == "access_token" })?.value {
            authenticate(connection, token: token)
        } else {
            connection.setTimer(seconds: options.authTimeout)
        }
    }

    public func received(_ connection: any WebSocketConnection, message: [UInt8], binary: Bool) {
        guard let session = sessions[connection.id], !session.closing else { return }
        session.lastSeen = now()
        guard admit(session) else { return }
        if session.relayed, let relay {
            relay.forward(connection, message: message)
            return
        }
        let parsed: JSONValue
        do {
            parsed = try JSONParser.parse(message)
        } catch {
            send(session, ProtocolError.malformedJSON("\(error)"), id: nil)
            if session.claims == nil { close(session, SignalCloseCode.unauthorized, "malformed_json") }
            return
        }
        let envelope: (type: String, id: JSONValue?, fields: FieldReader)
        do throws(ProtocolError) { envelope = try ClientMessage.envelope(parsed) } catch {
            send(session, error, id: parsed["id"])
            return
        }
        let id = envelope.id
        guard session.claims != nil else {
            guard envelope.type == RequestType.auth.rawValue, let token = envelope.fields.object["token"]?.stringValue
            else {
                send(
                    session, error: "missing_token", "the first message must be {\"type\":\"auth\",\"token\":...}",
                    id: id)
                close(session, SignalCloseCode.unauthorized, "missing_token")
                return
            }
            authenticate(connection, token: token)
            return
        }
        session.handling = true
        do throws(SignalError) {
            let response = try handle(envelope.type, envelope.fields, session: session)
            send(session, ServerMessage.result(id: id, data: response.json).json)
        } catch .hub(.roomElsewhere(let node)) {
            // The room runs on another node: hand the session over, this first request included.
            if let relay, let token = session.token, relay.open(connection, node: node, token: token, first: message) {
                session.relayed = true
            } else {
                let e = HubError.roomElsewhere(node: node)
                send(session, error: e.code, e.message, id: id)
            }
        } catch {
            send(session, error: error.code, error.message, id: id)
        }
        session.handling = false
        for m in session.afterResult { send(session, m) }
        session.afterResult.removeAll()
        if let (code, reason) = session.pendingClose { close(session, code, reason) }
    }

    public func timerFired(_ connection: any WebSocketConnection) {
        guard let session = sessions[connection.id], session.claims == nil else { return }
        send(session, error: "auth_timeout", "no token within \(Int(options.authTimeout)) s", id: nil)
        close(session, SignalCloseCode.authTimeout, "auth_timeout")
    }

    public func closed(_ connection: any WebSocketConnection) {
        guard let session = sessions.removeValue(forKey: connection.id) else { return }
        if session.relayed { relay?.closed(connection) }
        guard let member = session.member, members[member.participant]?.connection == connection.id else { return }
        // The socket is gone but the participant stays for the resume window; the others see nothing yet.
        members[member.participant]?.connection = nil
        members[member.participant]?.disconnectedAt = now()
        let p = member.participant
        _ = try? hub.apply(.setConnected(p, false), in: member.room, by: .participant(p), now: now())
    }

    // MARK: - Authentication and rate limiting

    private func authenticate(_ connection: any WebSocketConnection, token: String) {
        guard let session = sessions[connection.id] else { return }
        connection.setTimer(seconds: -1)
        let claims: TokenClaims
        do throws(AuthError) {
            claims = try verifier.verify(token, now: now())
            guard claims.grants.roomJoin else { throw .missingGrant("roomJoin") }
            guard claims.grants.room != nil else { throw .wrongRoom("(none)") }
            guard ParticipantIdentity.isValid(claims.identity) else {
                throw .malformedToken("sub (the identity) must be 1 to 256 characters, no control characters or '/'")
            }
        } catch {
            send(session, error: error.code, error.message, id: nil)
            close(
                session, error.isAuthentication ? SignalCloseCode.unauthorized : SignalCloseCode.forbidden, error.code)
            return
        }
        session.claims = claims
        session.token = token
        let welcome = Welcome(
            identity: claims.identity, room: claims.grants.room ?? "", role: claims.grants.role,
            grants: GrantsInfo(claims.grants), expiresAt: claims.expiresAt)
        send(session, ServerEvent.welcome(welcome).json)
    }

    /// Token bucket per connection. Over the limit a message is dropped with one `rate_limited` error per
    /// second; a flood beyond `rateDropLimit` a second closes the connection (4029).
    private func admit(_ s: Session) -> Bool {
        let t = monotonic()
        s.tokens = min(options.rateBurst, s.tokens + (t - s.lastRefill) * options.rateLimit)
        s.lastRefill = t
        if s.tokens >= 1 {
            s.tokens -= 1
            return true
        }
        let second = Int64(t)
        if second != s.dropSecond {
            s.dropSecond = second
            s.droppedThisSecond = 0
        }
        s.droppedThisSecond += 1
        if s.droppedThisSecond == 1 { send(s, error: "rate_limited", SignalError.rateLimited.message, id: nil) }
        if s.droppedThisSecond > options.rateDropLimit { close(s, SignalCloseCode.rateLimited, "rate_limited") }
        return false
    }

    // MARK: - Output

    func send(_ s: Session, _ message: JSONObject) {
        guard !s.closing else { return }
        if !s.connection.send(text: JSONValue.object(message).bytes()) {
            // The client does not read fast enough: its queue is full. Drop it rather than buffer without bound.
            close(s, SignalCloseCode.slowConsumer, "slow_consumer")
        }
    }

    func send(_ s: Session, error code: String, _ message: String, id: JSONValue?) {
        send(s, ServerMessage.error(id: id, ErrorBody(code: code, message: message)).json)
    }

    func send(_ s: Session, _ error: ProtocolError, id: JSONValue?) {
        send(s, ServerMessage.error(id: id, ErrorBody(error)).json)
    }

    func close(_ s: Session, _ code: UInt16, _ reason: String) {
        guard !s.closing else { return }
        if s.handling {
            s.pendingClose = s.pendingClose ?? (code, reason)
            return
        }
        s.closing = true
        s.connection.close(code: code, reason: reason)
    }

    func session(of participant: ParticipantID) -> Session? {
        members[participant]?.connection.flatMap { sessions[$0] }
    }

    public func deliver(_ event: RoomEvent, room: RoomID, to recipients: [ParticipantID]) {
        if case .data(let m) = event, m.path != .signaling {
            deliverOnChannels(m, to: recipients)
            return
        }
        broadcast(HubCoding.event(event).json, to: recipients)
    }

    /// Sends one message, encoded once, to every connected recipient.
    func broadcast(_ message: JSONObject, to recipients: [ParticipantID]) {
        let bytes = JSONValue.object(message).bytes()
        for p in recipients {
            guard let s = session(of: p), !s.closing else { continue }
            if !s.connection.send(text: bytes) { close(s, SignalCloseCode.slowConsumer, "slow_consumer") }
        }
    }

    public func roomChanged(_ room: RoomID, state: RoomState?) {
        media?.reconcile(room, state)
        flushMedia()
    }

    /// Sends what the media coordinator has for participants: to each connected one at once, or right
    /// after the result of the request its session has in hand.
    func flushMedia() {
        guard let media else { return }
        for (pid, message) in media.takeMessages() {
            guard let s = session(of: pid) else { continue }
            if s.handling { s.afterResult.append(message.json) } else { send(s, message.json) }
        }
    }

    public func ended(_ participant: ParticipantID, room: RoomID, reason: LeaveReason) {
        guard let member = members.removeValue(forKey: participant) else { return }
        byResumeToken[member.resumeToken] = nil
        guard let s = member.connection.flatMap({ sessions[$0] }) else { return }
        s.member = nil
        send(s, ServerEvent.left(reason: reason).json)
        let code: UInt16 =
            switch reason {
            case .replaced: SignalCloseCode.replaced
            case .removed: SignalCloseCode.removed
            case .roomEnded: SignalCloseCode.roomEnded
            case .left, .disconnected: SignalCloseCode.left
            }
        close(s, code, reason.rawValue)
    }

    /// Drain (cluster, SIGTERM): tells every session its room moves (`{"type":"move","reason":...}`,
    /// docs/protocol.md) and closes it with 4104 `moved`; clients join again through any node and the
    /// room is placed on a node that does not drain.
    public func moveAll(reason: String) {
        for s in sessions.values where !s.closing {
            if s.claims != nil { send(s, ServerEvent.move(reason: reason).json) }
            close(s, SignalCloseCode.moved, "moved")
        }
    }

    /// The room moved to another node (this one lost its ownership): its sessions here are told to
    /// move and closed with 4104 `moved`, as in a drain; they join again through any node.
    public func move(room: RoomID, reason: String) {
        for s in sessions.values where !s.closing && s.member?.room == room {
            send(s, ServerEvent.move(reason: reason).json)
            close(s, SignalCloseCode.moved, "moved")
        }
    }

    public var sessionCount: Int { sessions.count }

    // MARK: - Housekeeping

    /// Called about twice a second: idle connections close, resume windows end, hub timers run.
    public func tick() {
        let t = now()
        for s in sessions.values where !s.closing && t - s.lastSeen >= options.idleTimeout {
            send(s, error: "idle_timeout", "no message for \(options.idleTimeout) s", id: nil)
            close(s, SignalCloseCode.idleTimeout, "idle_timeout")
        }
        for (pid, m) in members {
            guard m.connection == nil, let since = m.disconnectedAt, t - since >= options.resumeWindow else { continue }
            members[pid] = nil
            byResumeToken[m.resumeToken] = nil
            _ = try? hub.apply(.leave(pid, reason: .disconnected), in: m.room, by: .participant(pid), now: t)
        }
        hub.tick(now: t)
        for pid in dataLimits.keys where members[pid] == nil { dataLimits[pid] = nil }
        drainMedia()
        if t - lastNetworkQuality >= options.networkQualityInterval {
            lastNetworkQuality = t
            pushNetworkQuality()
        }
    }

    /// `network_quality` to the members of each room whose participants have media transports: each
    /// its own and the publishers' (`NetworkQuality.audiences`).
    func pushNetworkQuality() {
        guard let media else { return }
        for (room, entries) in media.networkQuality() where !entries.isEmpty {
            guard let state = hub.state(room) else { continue }
            let publishers = Set(state.tracks.values.map(\.owner))
            for group in NetworkQuality.audiences(entries, publishers: publishers, members: state.order) {
                broadcast(NetworkQuality.message(group.entries), to: group.recipients)
            }
        }
    }

    /// Handles what the media worker reported: `media_state`, `active_speakers`, captures that ended.
    /// Called on every tick and whenever the worker wakes the service thread.
    public func drainMedia() {
        guard let media else { return }
        let t = now()
        let (speakers, changes) = media.drainEvents(rooms: hub, now: t)
        for d in media.takeData() { relayChannelData(d) }
        for change in changes {
            switch change {
            case .stopShare(let share, let sharer, let room, let reason):
                _ = try? hub.apply(.stopShare(share, reason: reason), in: room, by: .participant(sharer), now: t)
            case .unpublish(let track, let publisher, let room):
                _ = try? hub.apply(
                    .unpublish(track, reason: .connectionLost), in: room, by: .participant(publisher), now: t)
            }
        }
        flushMedia()
        for s in speakers {
            if let state = hub.state(s.room) { broadcast(s.json, to: state.order) }
        }
    }
}
