public import AtriumHTTP
public import AtriumJSON
import AtriumModel
import AtriumProtocol
public import AtriumRedis
public import AtriumRooms
public import AtriumRouting

/// Relays what reaches this node for rooms another node runs, over Redis pub/sub (one inbox channel
/// per node, `ClusterKeys.inbox`): signaling sessions (the client's socket stays here, its messages
/// go to the owner and the owner's come back; docs/cluster.md) and admin calls on live rooms. Runs on
/// the service thread; the subscriber thread only queues and wakes it.
///
/// A Redis outage does not end relayed sessions: a frame that cannot be published waits in its
/// session's `RelayBacklog` (bounded; later frames queue behind it), the backlogs are flushed in order
/// on every tick and wake once Redis and the peer's inbox answer again, and a session is given up only
/// when its backlog overflows or waits longer than `outageLimit` (the client is then told `moved`
/// and resumes). Media never passes here, so it flows on during the outage.
public final class ClusterRelay: SignalRelay {
    let node: ClusterNode
    let redis: RedisClient
    let keys: ClusterKeys
    public var subscriber: RedisSubscriber?
    /// The owner side: this node's signaling endpoint and HTTP handler.
    public weak var signal: (any WebSocketHandler)?
    public weak var http: (any HTTPHandler)?
    /// The owner side of commands: this node's hub.
    public weak var hub: Hub?
    /// How long an admin call waits for the owner's answer.
    public var callTimeoutMillis = 3000
    /// How long (seconds) a relayed session's frames may wait for Redis before the session is given
    /// up; the composition root sets it to the resume window, so the owner-side session outlives it.
    public var outageLimit = 20.0

    struct Entry {
        var session: String
        var node: String
        var connection: any WebSocketConnection
    }

    /// Sessions entered here and run elsewhere, by local connection id, and their keys.
    var entries: [UInt64: Entry] = [:]
    var entryBySession: [String: UInt64] = [:]
    /// Sessions run here that entered elsewhere, by session key.
    var owned: [String: RelayedConnection] = [:]
    var closedOwned: [RelayedConnection] = []
    var nextConnectionID: UInt64 = 1 << 62
    var calls = 0
    /// Frames waiting for Redis, by session key (either side; a session that ended may still have
    /// its `close` waiting).
    var backlogs: [String: RelayBacklog] = [:]
    /// Peers seen without an inbox subscriber, and since when (`ClusterTiming.peerGrace`).
    var missingSince: [String: Double] = [:]
    /// The subscriber's subscription count last seen: a change means Redis came back.
    var subscriptionsSeen = 0
    /// Inbox messages that were not valid relay messages, or for sessions gone.
    public private(set) var dropped = 0

    /// `seal`: what every message published on an inbox goes through (the cluster's key).
    public init(node: ClusterNode, redis: RedisClient, keys: ClusterKeys, seal: RelaySeal) {
        self.node = node
        self.redis = redis
        self.keys = keys
        self.seal = seal
    }

    let seal: RelaySeal

    /// Media commands, events and relay-link setup from another node (`ClusterMediaPlane`).
    public var onMedia: ((String, JSONValue) -> Void)?

    /// Publishes a media message on `node`'s inbox; false when it could not be sent.
    public func sendMedia(_ body: JSONValue, to node: String) -> Bool {
        publish(to: node, .media(from: me, body: body))
    }

    /// A message from this node's inbox: opened, then decoded; nil when it is not one sealed for this
    /// node (another cluster's key, tampered with, or plain).
    func message(_ payload: [UInt8]) -> RelayMessage? {
        seal.open(payload, at: me).flatMap { RelayMessage(bytes: $0) }
    }

    var me: String { node.id.rawValue }
    public var relayedSessions: Int { entries.count }
    public var ownedRelayedSessions: Int { owned.count }
    /// Frames waiting for Redis, over every session.
    public var backlogFrames: Int { backlogs.values.reduce(0) { $0 + $1.frames.count } }
    /// Sessions given up because their frames could not reach Redis in time or overflowed.
    public private(set) var givenUp = 0

    // MARK: - Entry side (SignalRelay)

    public func open(_ connection: any WebSocketConnection, node target: String, token: String, first: [UInt8])
        -> Bool
    {
        guard NodeID.isValid(target), target != me else { return false }
        let key = "\(me):\(connection.id)"
        guard publish(to: target, .open(from: me, session: key, token: token, first: Self.text(first))) else {
            return false
        }
        entries[connection.id] = Entry(session: key, node: target, connection: connection)
        entryBySession[key] = connection.id
        return true
    }

    public func forward(_ connection: any WebSocketConnection, message: [UInt8]) {
        guard let e = entries[connection.id] else { return }
        if !send(e.session, to: e.node, .message(from: me, session: e.session, data: Self.text(message))) {
            givenUp += 1
            drop(entry: connection.id, code: SignalCloseCode.moved, reason: "relay_unavailable")
        }
    }

    public func closed(_ connection: any WebSocketConnection) {
        guard let e = entries.removeValue(forKey: connection.id) else { return }
        entryBySession[e.session] = nil
        if !send(e.session, to: e.node, .close(from: me, session: e.session, code: 1001, reason: "client gone")) {
            backlogs[e.session] = nil
        }
    }

    /// Closes a client whose session's node cannot be reached: it reconnects and joins again.
    func drop(entry id: UInt64, code: UInt16, reason: String) {
        guard let e = entries.removeValue(forKey: id) else { return }
        entryBySession[e.session] = nil
        backlogs[e.session] = nil
        e.connection.close(code: code, reason: reason)
    }

    // MARK: - Owner side

    /// False only when the session's backlog is full: the endpoint then ends the session like a slow
    /// consumer's (the participant waits for a resume).
    func sendToEntry(_ c: RelayedConnection, _ text: [UInt8]) -> Bool {
        if send(c.session, to: c.peer, .message(from: me, session: c.session, data: Self.text(text))) { return true }
        givenUp += 1
        return false
    }

    func closeFromOwner(_ c: RelayedConnection, code: UInt16, reason: String) {
        if !send(c.session, to: c.peer, .close(from: me, session: c.session, code: Int(code), reason: reason)) {
            backlogs[c.session] = nil
        }
        if owned.removeValue(forKey: c.session) != nil { closedOwned.append(c) }
    }

    /// The owner side loses a relayed session as it would lose a socket: the participant stays for
    /// the resume window, the client (told `moved` by its entry node) resumes.
    func lose(owned key: String) {
        guard let c = owned.removeValue(forKey: key) else { return }
        c.closed = true
        closedOwned.append(c)
    }

    // MARK: - Inbox

    /// Handles what the subscriber queued (called when it wakes the service thread, and on ticks).
    public func drain() {
        if let subscriber {
            let n = subscriber.subscriptions
            if n != subscriptionsSeen {
                // Subscribed again: Redis is back (perhaps empty). Register and re-assert our rooms now.
                subscriptionsSeen = n
                node.beat(force: true)
                flushBacklogs()
            }
            for m in subscriber.drain() {
                guard let r = message(m.payload) else {
                    dropped += 1
                    continue
                }
                handle(r)
            }
        }
        finishClosed()
    }

    func handle(_ r: RelayMessage) {
        switch r {
        case .open(let from, let session, let token, let first):
            guard let signal, NodeID.isValid(from) else { return }
            let c = RelayedConnection(id: nextConnectionID, session: session, peer: from, token: token, relay: self)
            nextConnectionID &+= 1
            owned[session] = c
            signal.opened(c)
            if !c.closed { signal.received(c, message: Array(first.utf8), binary: false) }
        case .message(let from, let session, let data):
            if let c = owned[session], let signal {
                signal.received(c, message: Array(data.utf8), binary: false)
            } else if let id = entryBySession[session], let e = entries[id] {
                if !e.connection.send(text: Array(data.utf8)) {
                    drop(entry: id, code: 4009, reason: "slow_consumer")
                }
            } else {
                dropped += 1
                // A session its peer still uses but that ended here (its close could not be sent, or
                // it was given up in an outage): tell the peer, so the client resumes.
                if NodeID.isValid(from), from != me {
                    _ = publish(
                        to: from, .close(from: me, session: session, code: Int(SignalCloseCode.moved), reason: "moved"))
                }
            }
        case .close(_, let session, let code, let reason):
            backlogs[session] = nil
            if owned[session] != nil {
                lose(owned: session)
            } else if let id = entryBySession[session] {
                drop(entry: id, code: UInt16(clamping: code), reason: reason)
            }
        case .http(let from, let call, let request):
            answer(call, from: from, request)
        case .command(let from, let call, let body):
            answerCommand(call, from: from, body)
        case .media(let from, let body):
            if let onMedia { onMedia(from, body) } else { dropped += 1 }
        case .httpReply, .commandReply:
            dropped += 1  // its caller gave up waiting
        }
        finishClosed()
    }

    /// The owner's endpoint learns that a relayed session's socket is gone (outside its own calls).
    func finishClosed() {
        while !closedOwned.isEmpty {
            let c = closedOwned.removeFirst()
            signal?.closed(c)
        }
    }

    /// Every tick: sessions relayed to a node that stopped listening (killed, expired) are closed
    /// with `moved`, so their clients reconnect and join the room where it is placed next; sessions
    /// relayed here from a node that left are ended like lost sockets.
    ///
    /// A peer counts as gone only after `ClusterTiming.peerGrace` seconds without a subscriber, with
    /// this node settled (connected, and past `ClusterTiming.recoveryHold` after an outage): right
    /// after Redis comes back every node is still subscribing again, and none of them is dead.
    public func tick() {
        flushBacklogs()
        guard node.isSettled else {
            missingSince = [:]
            return
        }
        let peerNames = Set(entries.values.map(\.node) + owned.values.map(\.peer))
        missingSince = missingSince.filter { peerNames.contains($0.key) }
        guard !peerNames.isEmpty, let listening = try? node.directory.listening(peerNames.map { NodeID($0) }),
            node.isSettled  // again: that call may have found Redis restarted under an idle connection
        else {
            return
        }
        let live = Set(listening.map(\.rawValue))
        let t = node.monotonic()
        var gone: Set<String> = []
        for p in peerNames {
            if live.contains(p) {
                missingSince[p] = nil
            } else if let since = missingSince[p] {
                if t - since >= ClusterTiming.peerGrace { gone.insert(p) }
            } else {
                missingSince[p] = t
            }
        }
        guard !gone.isEmpty else { return }
        for (id, e) in entries where gone.contains(e.node) {
            drop(entry: id, code: SignalCloseCode.moved, reason: "moved")
        }
        for (key, c) in owned where gone.contains(c.peer) {
            backlogs[key] = nil
            lose(owned: key)
        }
        finishClosed()
    }

    /// Publishes what waits, in order per session; gives up sessions that waited past `outageLimit`.
    func flushBacklogs() {
        guard !backlogs.isEmpty else { return }
        let t = node.monotonic()
        for key in Array(backlogs.keys) {
            guard var b = backlogs[key] else { continue }
            let target = b.node
            b.flush { publish(to: target, $0) }
            if b.isEmpty {
                backlogs[key] = nil
            } else if b.expired(now: t, limit: outageLimit) {
                backlogs[key] = nil
                givenUp += 1
                if let id = entryBySession[key] {
                    drop(entry: id, code: SignalCloseCode.moved, reason: "relay_unavailable")
                } else {
                    lose(owned: key)
                }
            } else {
                backlogs[key] = b
            }
        }
        finishClosed()
    }

    /// Closes every client relayed from here and every session relayed to here (drain, shutdown).
    public func closeAll(code: UInt16, reason: String) {
        for id in Array(entries.keys) { drop(entry: id, code: code, reason: reason) }
        for c in owned.values { c.close(code: code, reason: reason) }
        finishClosed()
    }

    // MARK: - Admin calls

    /// Runs an admin call relayed from another node through this node's handler and sends the answer.
    func answer(_ call: String, from: String, _ r: RelayedRequest) {
        guard let http, let method = HTTPMethod(rawValue: r.method), NodeID.isValid(from) else { return }
        var headers: [String: String] = [:]
        for (k, v) in r.headers { headers[k] = v }
        headers[Self.relayedHeader] = "1"
        let request = HTTPRequest(
            method: method, path: r.path, query: r.query.map { (name: $0.0, value: $0.1) }, headers: headers,
            body: Array(r.body.utf8))
        let response = http.handle(request)
        let reply = RelayMessage.httpReply(
            call: call, status: response.status, headers: response.headers.map { ($0.name, $0.value) },
            body: Self.text(response.body))
        _ = publish(to: from, reply)
    }

    /// Marks a call relayed from another node, so it is never relayed again.
    public static let relayedHeader = "x-atrium-relayed"

    /// Sends a call to `target` and waits for its answer (the service thread blocks for at most
    /// `callTimeoutMillis`; the owner answers within one round trip through Redis).
    public func call(_ request: HTTPRequest, on target: String) -> HTTPResponse {
        calls += 1
        let id = "\(me):\(calls)"
        let r = RelayedRequest(
            method: request.method.rawValue, path: request.path, query: request.query.map { ($0.name, $0.value) },
            headers: request.headers.map { ($0.key, $0.value) }, body: Self.text(request.body))
        guard let subscriber, publish(to: target, .http(from: me, call: id, request: r)) else {
            return Self.unavailable("the node running the room cannot be reached")
        }
        let answer = subscriber.take(within: callTimeoutMillis) { m in
            guard case .httpReply(let call, _, _, _) = message(m.payload) else { return false }
            return call == id
        }
        guard let answer, case .httpReply(_, let status, let headers, let body) = message(answer.payload)
        else { return Self.unavailable("the node running the room did not answer in time") }
        return HTTPResponse(
            status: status, headers: headers.filter { $0.0 != "content-length" }.map { (name: $0.0, value: $0.1) },
            body: Array(body.utf8))
    }

    static func unavailable(_ message: String) -> HTTPResponse {
        let body: JSONValue = .object([
            "error": .object(["code": "cluster_unavailable", "message": .string(message)])
        ])
        return HTTPResponse(status: 503, headers: [("content-type", "application/json")], body: body.bytes())
    }

    // MARK: - Publishing

    /// Sends one frame of a session: published at once, or queued behind the frames of the session that
    /// wait already (or when Redis or the peer's inbox is away). False when the backlog is full.
    func send(_ session: String, to target: String, _ message: RelayMessage) -> Bool {
        let frame = message.json.serialized()
        if var b = backlogs[session] {
            guard b.append(frame) else { return false }
            b.flush { publish(to: target, $0) }
            backlogs[session] = b.isEmpty ? nil : b
            return true
        }
        if publish(to: target, frame) { return true }
        var b = RelayBacklog(node: target, since: node.monotonic())
        guard b.append(frame) else { return false }
        backlogs[session] = b
        return true
    }

    /// Publishes to a node's inbox; false when Redis fails or nobody listens there.
    func publish(to target: String, _ message: RelayMessage) -> Bool {
        publish(to: target, message.json.serialized())
    }

    func publish(to target: String, _ payload: String) -> Bool {
        guard let sealed = seal.seal(payload, for: target),
            let n = try? redis.run(["PUBLISH", keys.inbox(NodeID(target)), sealed]).integer
        else { return false }
        return n > 0
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}
