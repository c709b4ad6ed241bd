import AtriumJSON
public import AtriumModel
public import AtriumProtocol
import AtriumSFrame

/// A participant's session in a room over `/v1/signal` (docs/protocol.md), with the protocol's own
/// types (`AtriumProtocol`, the server's): requests are `ClientRequest` values, answers `Response`
/// values, events `ServerEvent` values. The room's state (participants, their tracks, shares, the
/// share policy) follows the events; `events` streams them, in order, with the share status changes
/// and the connection's state. A dropped socket is resumed (backoff, then `resume` with the join's
/// token; a session the server no longer knows is joined again), as the JS SDK does. As it does too,
/// an open socket sends a `ping` every `pingInterval` seconds (the server closes a silent one with
/// `idle_timeout`, 30 s by default), and a request, or a connection's welcome, with no answer after
/// `requestTimeout` seconds fails with `timeout`.
public actor AtriumRoom {
    public let url: String
    let token: String
    let makeSocket: @Sendable () -> any SignalSocket
    let backoff: [Double]
    let pingInterval: Double
    let requestTimeout: Double

    /// The events of the room, in order, until `leave` (or the room ends).
    public nonisolated let events: AsyncStream<RoomEvent>
    let emit: AsyncStream<RoomEvent>.Continuation
    /// Optional: told of every event too, for delegate-style apps.
    public weak var delegate: (any RoomDelegate)?

    public private(set) var welcome: Welcome?
    public private(set) var me: ParticipantInfo?
    public private(set) var room: RoomInfo?
    /// Everyone else, by id.
    public private(set) var participants: [ParticipantID: ParticipantInfo] = [:]
    /// Running and paused shares, oldest first.
    public private(set) var shares: [ShareInfo] = []
    /// Pending share requests (hosts and cohosts).
    public private(set) var requests: [ShareRequestInfo] = []
    public private(set) var connection: ConnectionState = .disconnected
    /// Everyone in the room (this client too) by the order they joined, as the server lists them: the
    /// first leads key rotation.
    var joinRank: [ParticipantID: Int] = [:]
    var resumeToken: String?
    var joinOptions = JoinOptions()
    /// End-to-end encryption: the secret (`join(_:e2ee:)`), the keyring made of it in an encrypted
    /// room, whether the attached session encrypts, and key rotation when members leave.
    var e2ee: E2EESecret?
    var keys: SFrameKeyring?
    var encrypting = false
    var rotation: KeyRotation?

    var socket: (any SignalSocket)?
    var generation = 0
    var nextID = 0
    var pending: [String: (RequestType, CheckedContinuation<Response, any Error>)] = [:]
    var welcomeWaiter: CheckedContinuation<Welcome, any Error>?
    var leaving = false
    /// A resume is under way: a socket of its that closes fails its own wait, not a second resume.
    var resuming = false
    /// How the last socket of the resume closed, if it did.
    var resumeClose: (code: UInt16, reason: String)?
    /// The media, once attached, and a subscriber offer waiting for it.
    var media: (any MediaSession)?
    var pendingOffer: SubscriberOffer?
    var offerChain: Task<Void, Never>?

    /// `url`: the server's base URL (`ws://host:port` or `wss://...`); `token`: a participant token.
    /// `backoff`: seconds to wait before each attempt to resume a dropped session. `pingInterval`:
    /// seconds between the keep-alive pings of an open socket; `requestTimeout`: seconds a request
    /// waits for its answer.
    public init(
        url: String, token: String, backoff: [Double] = [0.25, 0.5, 1, 2, 4, 8], pingInterval: Double = 10,
        requestTimeout: Double = 15, socket: @escaping @Sendable () -> any SignalSocket = { LWSWebSocket() }
    ) {
        self.url = url
        self.token = token
        self.backoff = backoff.map { Self.seconds($0, else: 1) }
        self.pingInterval = Self.seconds(pingInterval, else: 10)
        self.requestTimeout = Self.seconds(requestTimeout, else: 15)
        self.makeSocket = socket
        (events, emit) = AsyncStream.makeStream(of: RoomEvent.self)
    }

    /// Waits `seconds` (one of the room's clamped intervals); a cancelled wait ends early.
    static func sleep(_ seconds: Double) async {
        try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
    }

    /// An app's interval in seconds, from 10 ms to a day (`fallback` when it is not a number).
    static func seconds(_ value: Double, else fallback: Double) -> Double {
        value.isFinite ? min(max(0.01, value), 86_400) : fallback
    }

    // MARK: - State

    /// The share lock (Zoom's `isShareLocked`).
    public var isShareLocked: Bool { room?.sharePolicy.shareLocked ?? false }
    /// Whether this participant may share its screen now (Stream's screenshare capability).
    public var canShareScreen: Bool {
        guard let me else { return false }
        return me.permissions.sources.contains(.screenShare) && (!isShareLocked || me.role.isModerator)
    }
    /// This participant's share, if it shares.
    public var myShare: ShareInfo? { shares.first { $0.participantId == me?.id } }

    // MARK: - Joining and leaving

    /// Connects, authenticates and joins; returns the room as it is.
    /// `e2ee`: the secret of an end-to-end encrypted room (docs/e2ee.md), which refuses to join
    /// without one (`e2ee_required`); in a room that is not encrypted it is not used. `rotateOnLeave`:
    /// the key rolls when a member leaves, as the JavaScript SDK's option does (every client of the
    /// room needs it).
    @discardableResult
    public func join(_ options: JoinOptions = JoinOptions(), e2ee: E2EESecret? = nil, rotateOnLeave: Bool = false)
        async throws(AtriumError) -> Snapshot
    {
        joinOptions = options
        leaving = false
        self.e2ee = e2ee
        let snapshot: Snapshot
        do throws(AtriumError) {
            try await connect()
            snapshot = try await enter(.join(options))
        } catch {
            // Refused or unanswered: this socket goes, its pings with it, and what it says after is
            // not heard.
            drop()
            setConnection(.disconnected)
            throw error
        }
        // A client asked to encrypt never sends in clear on the server's word.
        if e2ee != nil && !snapshot.room.e2ee {
            await leave()
            throw AtriumError(code: "e2ee_mismatch", message: "the server says the room is not end-to-end encrypted")
        }
        if snapshot.room.e2ee {
            do throws(AtriumError) { try await startE2EE(rotateOnLeave: rotateOnLeave) } catch {
                await leave()
                throw error
            }
        }
        return snapshot
    }

    /// Leaves for good (no resume): the socket closes and `events` ends.
    public func leave() async {
        leaving = true
        _ = try? await request(.leave)
        socket?.close()
        socket = nil
        await media?.close()
        setConnection(.disconnected)
        emit.finish()
    }

    func connect() async throws(AtriumError) {
        generation += 1
        let g = generation
        let s = makeSocket()
        socket = s
        setConnection(.connecting)
        let base = url.hasSuffix("/") ? String(url.dropLast()) : url
        // The socket's events, in the order it reports them, handled one after the other.
        let (stream, feed) = AsyncStream.makeStream(of: SocketEvent.self)
        // The welcome is waited for as long as an answer to a request.
        let timeout = requestTimeout
        Task { [weak self] in
            await Self.sleep(timeout)
            await self?.expireWelcome(generation: g)
        }
        Task { [weak self] in
            for await e in stream {
                guard let self else { return }
                await self.received(e, generation: g)
            }
        }
        do {
            welcome = try await withCheckedThrowingContinuation { (c: CheckedContinuation<Welcome, any Error>) in
                welcomeWaiter = c
                do throws(AtriumError) {
                    try s.open(url: "\(base)/v1/signal?access_token=\(token)") { e in
                        feed.yield(e)
                        if case .closed = e { feed.finish() }
                    }
                } catch {
                    welcomeWaiter = nil
                    drop()
                    c.resume(throwing: error)
                }
            }
        } catch let e as AtriumError {
            throw e
        } catch {
            throw AtriumError(code: "socket_failed", message: "\(error)")
        }
        keepAlive(generation: g)
    }

    /// Fails the wait for the welcome of `generation` with `timeout` if it still waits, and drops that
    /// socket (a server that accepted the connection but does not speak).
    func expireWelcome(generation g: Int) {
        guard g == generation, let w = welcomeWaiter else { return }
        welcomeWaiter = nil
        drop()
        w.resume(throwing: AtriumError(code: "timeout", message: "no welcome within \(requestTimeout) s"))
    }

    /// Pings the socket of `generation` every `pingInterval` seconds while it is the room's open one
    /// (without an id: the answer is not waited for).
    func keepAlive(generation g: Int) {
        let interval = pingInterval
        Task { [weak self] in
            while true {
                await Self.sleep(interval)
                guard let self, await self.ping(generation: g) else { return }
            }
        }
    }

    /// Closes the room's socket as a new generation: its close and anything it still reports are not
    /// heard (else a resume that failed would start a second resume from that close).
    func drop() {
        generation += 1
        socket?.close()
        socket = nil
    }

    /// Sends a ping on the socket of `generation`; false once that socket is gone.
    func ping(generation g: Int) -> Bool {
        guard g == generation, let socket, !leaving else { return false }
        socket.send(ClientMessage(.ping).json.serialized())
        return true
    }

    /// `join` or `resume` on an authenticated socket: the snapshot becomes the state.
    func enter(_ r: ClientRequest) async throws(AtriumError) -> Snapshot {
        guard case .snapshot(let snap) = try await request(r) else {
            throw AtriumError(code: "bad_message", message: "the answer to \(r.type.rawValue) has no snapshot")
        }
        apply(snap)
        setConnection(.connected)
        return snap
    }

    func apply(_ snap: Snapshot) {
        room = snap.room
        me = snap.participant
        participants = Dictionary(snap.participants.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        // The snapshot lists the others in the order they joined. At a join this client comes last; at
        // a resume it keeps its place, and those who joined meanwhile come after everyone known.
        if joinRank[snap.participant.id] == nil { joinRank = [:] }
        for p in snap.participants { rankJoined(p.id) }
        rankJoined(snap.participant.id)
        shares = snap.shares
        requests = snap.requests ?? []
        resumeToken = snap.resumeToken
    }

    func rankJoined(_ id: ParticipantID) {
        if joinRank[id] == nil { joinRank[id] = joinRank.count }
    }

    func setConnection(_ c: ConnectionState) {
        guard c != connection else { return }
        connection = c
        publish(.connection(c))
    }

    func publish(_ e: RoomEvent) {
        emit.yield(e)
        if let delegate {
            let room = self
            Task { @MainActor in delegate.room(room, didReceive: e) }
        }
    }

    // MARK: - Requests

    /// Sends a request and waits for its answer: the result's data as a `Response`, or the error with
    /// its documented code.
    @discardableResult
    public func request(_ r: ClientRequest) async throws(AtriumError) -> Response {
        guard let socket, connection != .disconnected else { throw AtriumError.disconnected }
        nextID += 1
        let id = "k\(nextID)"
        let timeout = requestTimeout
        Task { [weak self] in
            await Self.sleep(timeout)
            await self?.expire(id)
        }
        do {
            return try await withCheckedThrowingContinuation { (c: CheckedContinuation<Response, any Error>) in
                pending[id] = (r.type, c)
                socket.send(ClientMessage(id: .string(id), r).json.serialized())
            }
        } catch let e as AtriumError {
            throw e
        } catch {
            throw AtriumError(code: "bad_message", message: "\(error)")
        }
    }

    /// Fails request `id` with `timeout` if it still waits for its answer (a later answer is dropped).
    func expire(_ id: String) {
        guard let (type, c) = pending.removeValue(forKey: id) else { return }
        c.resume(throwing: AtriumError(code: "timeout", message: "no answer to \(type.rawValue)"))
    }

    // MARK: - What arrives

    func received(_ e: SocketEvent, generation g: Int) async {
        guard g == generation else { return }
        switch e {
        case .opened: break
        case .text(let text): handle(text)
        case .closed(let code, let reason): await closed(code: code, reason: reason)
        }
    }

    func handle(_ text: String) {
        guard let value = try? JSONParser.parse(Array(text.utf8)), let o = value.objectValue,
            let type = o["type"]?.stringValue
        else { return }
        if type == "result" || type == "error", let id = o["id"]?.stringValue, let (rtype, c) = pending[id] {
            pending[id] = nil
            if type == "error" {
                let body = (try? ErrorBody(json: o["error"] ?? .null)) ?? ErrorBody(code: "bad_message", message: text)
                c.resume(throwing: AtriumError(body))
            } else {
                do throws(ProtocolError) {
                    c.resume(returning: try Response(data: o["data"] ?? .object([:]), answering: rtype))
                } catch {
                    c.resume(throwing: AtriumError(code: "bad_message", message: error.message))
                }
            }
            return
        }
        if type == "error" {
            // An error without an id (the first message refused): the socket closes next.
            if o["id"] == nil || o["id"] == .null, let w = welcomeWaiter,
                let body = try? ErrorBody(json: o["error"] ?? .null)
            {
                welcomeWaiter = nil
                w.resume(throwing: AtriumError(body))
            }
            return
        }
        guard let event = try? ServerEvent(type: type, FieldReader(object: o)) else { return }
        if case .welcome(let w) = event, let waiter = welcomeWaiter {
            welcomeWaiter = nil
            waiter.resume(returning: w)
            return
        }
        // Key rotation's messages are the room's own, not the app's.
        if case .data(let d) = event, d.topic == KeyRotation.topic, rotation != nil {
            rotationMessage(d)
            return
        }
        track(event)
        if case .participantLeft(let id, _) = event, rotation != nil { memberLeft(id) }
        publish(.event(event))
        switch event {
        case .subscriberOffer(let offer):
            // Answered in the order offered, one after the other.
            let previous = offerChain
            offerChain = Task {
                await previous?.value
                await self.answer(offer)
            }
        case .layersWanted(let t, let rids):
            if let media { Task { await media.layersWanted(t, rids: rids) } }
        default: break
        }
        if let status = ShareStatus(event, me: me?.id) { publish(.shareStatus(status)) }
    }

    /// The state follows the events.
    func track(_ e: ServerEvent) {
        switch e {
        case .participantJoined(let p), .participantUpdated(let p):
            if p.id == me?.id { me = p } else { participants[p.id] = p }
            rankJoined(p.id)
        case .participantLeft(let id, _):
            participants[id] = nil
        case .trackPublished(let t):
            if t.participantId == me?.id {
                me?.tracks.append(t)
            } else {
                participants[t.participantId]?.tracks.append(t)
            }
        case .trackUnpublished(let id, let p, _, _):
            if p == me?.id {
                me?.tracks.removeAll { $0.id == id }
            } else {
                participants[p]?.tracks.removeAll { $0.id == id }
            }
        case .shareStarted(let s):
            shares.append(s)
        case .sharePaused(let s), .shareResumed(let s):
            if let i = shares.firstIndex(where: { $0.id == s.id }) { shares[i] = s }
        case .shareStopped(let s, _, _):
            shares.removeAll { $0.id == s.id }
        case .permissionsChanged(let id, let perms, _):
            if id == me?.id { me?.permissions = perms } else { participants[id]?.permissions = perms }
        case .shareLockChanged(let locked, _):
            room?.sharePolicy.shareLocked = locked
        case .sharePolicyChanged(let policy, _):
            room?.sharePolicy = policy
        case .shareRequested(let r):
            requests.append(r)
        case .shareRequestResolved(let r, _, _):
            requests.removeAll { $0.id == r.id }
        case .attributesChanged(let id, let attributes, _):
            if id == me?.id { me?.attributes = attributes } else { participants[id]?.attributes = attributes }
        default:
            break
        }
    }

    /// The socket closed: pending requests fail; a session that may come back is resumed.
    func closed(code: UInt16, reason: String) async {
        socket = nil
        for (_, (_, c)) in pending { c.resume(throwing: AtriumError.disconnected) }
        pending = [:]
        if let w = welcomeWaiter {
            welcomeWaiter = nil
            w.resume(throwing: AtriumError(code: "disconnected", message: "closed with \(code) \(reason)"))
        }
        if resuming {
            // A socket of the resume: its attempt fails, and the resume decides what its close means.
            resumeClose = (code, reason)
            return
        }
        resuming = true
        defer { resuming = false }
        var cause = (code: code, reason: reason)
        while true {
            guard !leaving, resumeToken != nil, !SignalCloseCode.final.contains(cause.code) else {
                await end(code: cause.code, reason: cause.reason)
                return
            }
            // The socket a resume ended on closed before the resume was done: resumed again.
            guard let next = await resume(after: cause) else { return }
            cause = next
        }
    }

    /// Resumes after the socket closed with `cause`: on a new socket, `resume` (or join again when the
    /// server forgot the session, or the room moved), the backoff's waits between attempts. Returns
    /// how the new socket closed if it did before this was done, nil once resumed or ended.
    func resume(after cause: (code: UInt16, reason: String)) async -> (code: UInt16, reason: String)? {
        setConnection(.reconnecting)
        for wait in backoff {
            await Self.sleep(wait)
            guard !leaving else { return nil }
            resumeClose = nil
            var rejoining = false
            do throws(AtriumError) {
                try await connect()
                if cause.code == SignalCloseCode.moved {
                    rejoining = true
                    try await rejoin()
                } else {
                    do throws(AtriumError) {
                        _ = try await enter(.resume(resumeToken: resumeToken ?? ""))
                        rotationResumed()
                        publish(.resumed)
                    } catch  where error.code == "resume_failed" {
                        // The server forgot the session (restarted, or past the resume window): join again.
                        rejoining = true
                        try await rejoin()
                    }
                }
                return resumeClose
            } catch {
                guard !leaving else { return nil }
                drop()
                // Refused for good: the token (expired meanwhile, or the server's keys changed) or a
                // final close. Trying again with the same token cannot succeed.
                if let refused = SignalCloseCode.refusing(error.code) {
                    await end(code: refused, reason: error.code)
                    return nil
                }
                if let (c, r) = resumeClose, SignalCloseCode.final.contains(c) {
                    await end(code: c, reason: r)
                    return nil
                }
                // The server refused the join again for good (the room gone, full, ...): no more tries
                // either, as the JavaScript SDK (which gives "resume_failed" as the reason).
                if rejoining && error.fromServer && !AtriumError.tryAgain.contains(error.code) {
                    await end(code: cause.code, reason: error.code)
                    return nil
                }
                continue
            }
        }
        await end(code: cause.code, reason: "could not resume: \(cause.reason)")
        return nil
    }

    /// The session ended for good: the media's connections and threads end with it (unless the app
    /// left, which closes them itself), `.closed` is published and `events` ends.
    func end(code: UInt16, reason: String) async {
        setConnection(.disconnected)
        if !leaving, let m = media {
            // Taken first: a `leave` after this does not close it again.
            media = nil
            await m.close()
        }
        publish(.closed(code: code, reason: reason))
        if !leaving { emit.finish() }
    }

    /// Joins again as a new participant, with the subscriber connection the media session keeps: the
    /// room's new node takes it over when it can (a viewer on a node that outlived the room's), and
    /// otherwise offers a new one (`reset`).
    func rejoin() async throws(AtriumError) {
        var options = joinOptions
        options.subscriberOffer = await media?.keptSubscriberOffer()
        do throws(AtriumError) {
            _ = try await enter(.join(options))
        } catch  where options.subscriberOffer != nil && ["invalid_sdp", "sdp_unsupported"].contains(error.code) {
            // The kept connection cannot be taken over: joined without it (the first offer resets it).
            options.subscriberOffer = nil
            _ = try await enter(.join(options))
        }
        // Frames carry keys derived for their sender's id: the new one from now on.
        if encrypting, let media, let keys, let me { _ = await media.encryptFrames(with: keys, sender: me.id) }
        announceAgain()
        publish(.rejoined)
    }
}

/// What an `AtriumRoom` streams.
public enum RoomEvent: Equatable, Sendable {
    /// An event of the protocol, as the server sent it.
    case event(ServerEvent)
    /// A share started, paused, resumed or stopped (Zoom's `onUserShareStatusChanged`).
    case shareStatus(ShareStatus)
    case connection(ConnectionState)
    /// The session came back on a new socket (`resume`): events meanwhile are not replayed; the
    /// state is the server's snapshot.
    case resumed
    /// The server no longer knew the session: the room was joined again (a new participant id).
    case rejoined
    /// The session ended for good (`left`, removed, room ended, or it could not be resumed).
    case closed(code: UInt16, reason: String)
    /// The media session could not answer the server (its error).
    case mediaError(AtriumError)
    /// End-to-end encryption: frames are sent with key index `index` from now on (a key rolled).
    case e2eeKey(index: UInt64)
}

public enum ConnectionState: String, Equatable, Sendable {
    case connecting, connected, reconnecting, disconnected
}

/// One change of a share's status, with whose it is and why (the seeds' share-status callbacks).
public struct ShareStatus: Equatable, Sendable {
    public enum Change: String, Sendable {
        case started, paused, resumed, stopped
    }

    public var change: Change
    public var share: ShareInfo
    /// The reason a share stopped (`user_stopped`, `capture_ended`, `preempted`, `locked`, ...).
    public var reason: ShareStopReason?
    /// Whether it is this participant's own share.
    public var isMine: Bool

    init?(_ e: ServerEvent, me: ParticipantID?) {
        switch e {
        case .shareStarted(let s): (change, share, reason) = (.started, s, nil)
        case .sharePaused(let s): (change, share, reason) = (.paused, s, nil)
        case .shareResumed(let s): (change, share, reason) = (.resumed, s, nil)
        case .shareStopped(let s, let r, _): (change, share, reason) = (.stopped, s, r)
        default: return nil
        }
        isMine = share.participantId == me
    }
}

/// For apps in the delegate style: told of each event on the main actor.
public protocol RoomDelegate: AnyObject, Sendable {
    @MainActor func room(_ room: AtriumRoom, didReceive event: RoomEvent)
}

extension ParticipantRole {
    var isModerator: Bool { self == .host || self == .cohost }
}
