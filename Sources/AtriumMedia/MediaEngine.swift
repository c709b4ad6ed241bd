import AtriumCongestion
import AtriumDTLS
import AtriumForwarding
import AtriumICE
import AtriumLog
import AtriumRTP
import AtriumSRTP
import AtriumSTUN
import AtriumUDP

#if canImport(Glibc)
    import Glibc
#endif

/// Everything the media worker thread owns: the socket, the transports, producers and consumers, and
/// the packet path. Nothing here is touched from another thread (`MediaWorker` hands commands in).
final class MediaEngine {
    let io: MediaIO
    /// The UDP socket of `io`, read from a `let` (an enum's payload is retained where it is taken out).
    let socket: UDPSocket?
    /// Zero bytes to append from (`appendZeros`), made once: no array slice (retained) per packet.
    let zeros: UnsafeMutableRawBufferPointer
    let poller: EpollPoller
    /// The passive ICE-TCP socket (`MediaEngine+TCP`), when configured.
    let tcpListener: TCPListener?
    let certificate: DTLSCertificate
    let config: MediaConfiguration
    let logger: Logger
    /// The address ICE reports as our side of every pair.
    let iceAddress: STUNTransportAddress
    let clock = ContinuousClock()
    let epoch: ContinuousClock.Instant
    let clockSource: MediaClock
    var random: MediaRandom

    /// Rooms' media, each owning its transports, producers and consumers; the maps below index them.
    var routers: [String: Router] = [:]
    var transports: [String: Transport] = [:] { didSet { transportRefs = transports.values.map(Borrowed.init) } }
    var byUfrag: [String: Transport] = [:]
    var byAddress: [SocketAddress: Transport] = [:] { didSet { addressRefs = byAddress.mapValues(Borrowed.init) } }
    /// `transports` and `byAddress` for the packet path and the timers (`Borrowed`: no reference
    /// counting), rebuilt when a transport or an address comes or goes.
    private(set) var transportRefs: [Borrowed<Transport>] = []
    private(set) var addressRefs: [SocketAddress: Borrowed<Transport>] = [:]
    var producers: [String: Producer] = [:]
    var consumers: [String: Consumer] = [:]
    /// Recording outputs by id (`addRecorder`).
    var recorders: [String: RecordingSink] = [:]
    var counters = MediaCounters()
    /// Consumers being started from a key-frame cache (`MediaEngine+Cache`).
    var replaying: [Consumer] = []
    /// Viewers waiting for the fresh key frame their start asked for (`startViewer`).
    var awaitingFresh: [Consumer] = []
    /// Subscriber transports whose pacer holds packets (`MediaEngine+Pacer`).
    var pacing: [Transport] = []
    var events: [MediaEvent] = []
    /// ICE-TCP connections by poller token and by peer address, those written in the current flush,
    /// and those to close after the round in hand.
    var tcpConnections: [UInt64: TCPConnection] = [:]
    var tcpByAddress: [SocketAddress: TCPConnection] = [:]
    var tcpDirty: [TCPConnection] = []
    var tcpDoomed: [TCPConnection] = []
    var nextTCPToken: UInt64 = 3
    var lastTCPSweep: Double = 0
    /// Set while the listener is off the poller after an accept failure.
    var tcpAcceptPausedAt: Double?

    var rx: [Datagram]
    /// The poller's readable tokens, kept between waits so that waiting allocates nothing.
    var ready: [UInt64] = Array(repeating: 0, count: EpollPoller.maxEvents)
    var tx: [Datagram]
    var txCount = 0
    var lossState: UInt64 = 0x9E37_79B9_7F4A_7C15
    var lastTick: Double = 0
    var lastSecond: Double = 0
    var lastLevels: Double = 0
    var reportedLevels = false
    var lastSendFailureLog: Double = -10
    /// A room spread over several workers (`MediaEngine+Pipe`): the links this worker pushes
    /// packets into (it is their home) and those it drains, and the piped producers by tag.
    var pipesOut: [PipeLink] = []
    var pipesIn: [PipeLink] = []
    var pipeTags: [UInt32: Producer] = [:]

    static let slotCapacity = 1500 + 64
    static let sendQueueSlots = 1024

    /// An engine on a UDP socket bound to `config.bind`, or (`memory`) one whose datagrams stay in
    /// memory: a test hands packets to `receive(_:from:)`, advances a manual clock and calls `tick`.
    /// `certificate` is the one every worker of the process presents (made once at start);
    /// nil makes one of its own.
    init(
        config: MediaConfiguration, logger: Logger, clock: MediaClock = .system, memory: MemoryPort? = nil,
        certificate shared: DTLSCertificate? = nil
    ) throws {
        self.config = config
        self.logger = logger
        poller = try EpollPoller()
        if let memory {
            io = .memory(memory)
        } else {
            let socket = try UDPSocket(
                bindingTo: config.bind, batchSize: 32, sendBatchSize: UDPSocket.maxSendBatchSize,
                maxDatagramSize: Self.slotCapacity)
            try? socket.setBufferSizes(receive: 4 << 20, send: 4 << 20)
            try poller.register(socket, token: Self.udpToken)
            io = .udp(socket)
        }
        if case .udp(let s) = io { socket = s } else { socket = nil }
        zeros = .allocate(byteCount: 256, alignment: 16)
        zeros.initializeMemory(as: UInt8.self, repeating: 0)
        if memory == nil, let tcpBind = config.tcpBind {
            let listener = try TCPListener(bindingTo: tcpBind)
            try poller.register(listener, token: Self.tcpListenerToken)
            tcpListener = listener
        } else {
            tcpListener = nil
        }
        certificate = try shared ?? DTLSCertificate()
        let local = io.localAddress
        let announced = config.announced.first ?? local
        iceAddress = Self.stunAddress(announced.withPort(local.port))
        epoch = self.clock.now
        clockSource = clock
        random = MediaRandom(seed: config.randomSeed)
        // 32 for the socket's batch, one more for replays from the key-frame caches, one for ICE-TCP
        // frames, one for packets from another worker's pipe (`pipeSlot`).
        rx = (0..<35).map { _ in Datagram(capacity: Self.slotCapacity) }
        // A round's output, sent at once: 32 packets in to 32 viewers fit, so the socket can group each
        // viewer's packets into segmented runs.
        tx = (0..<Self.sendQueueSlots).map { _ in Datagram(capacity: Self.slotCapacity) }
        tcpDirty.reserveCapacity(64)
        tcpDoomed.reserveCapacity(64)
    }

    deinit {
        zeros.deallocate()
        // Producers and consumers hold their transport, and consumers their producer: let go of them.
        for p in producers.values { p.consumers.removeAll() }
        for t in transports.values { t.detach() }
    }

    /// Whether something waits for time rather than packets (a pacer's queue, a probe being sent):
    /// the worker then waits for at most a few milliseconds.
    var hasPendingSends: Bool { !pacing.isEmpty || isProbing }

    /// How long the worker may sleep before its timers: a few milliseconds while something waits for
    /// time, the 20 ms timer while it carries media, and a second while it holds nothing. An idle
    /// worker (a server's other cores before their rooms come) then wakes once a second, for its
    /// stats, instead of 50 times: each wakeup costs about 40 us of CPU on a VM, mostly the kernel's
    /// (docs/benchmarks.md). A command wakes it at once whatever the timeout.
    var pollTimeout: Duration {
        if hasPendingSends { return .milliseconds(2) }
        return isIdle ? .seconds(1) : .milliseconds(20)
    }

    /// Nothing that a timer serves: no transport (a pipe's end is one), producer, consumer, recording
    /// or ICE-TCP connection.
    var isIdle: Bool {
        transports.isEmpty && producers.isEmpty && consumers.isEmpty && recorders.isEmpty
            && tcpConnections.isEmpty && pipesIn.isEmpty && pipesOut.isEmpty && replaying.isEmpty
    }

    /// Whether a transport sends a probe cluster now. By index over `transportRefs`: asked every
    /// round, it must not retain each transport.
    var isProbing: Bool {
        var n = 0
        while n < transportRefs.count {
            if transportRefs[n].with({ $0.downlink.probing != nil }) { return true }
            n += 1
        }
        return false
    }

    /// Seconds since the engine started (the packet path's clock).
    @inline(__always) var now: Double {
        switch clockSource {
        case .system:
            let d = clock.now - epoch
            return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
        case .manual(let m):
            return m.now
        }
    }

    /// The same time as an instant, for the ICE agents.
    var instant: ContinuousClock.Instant {
        switch clockSource {
        case .system: clock.now
        case .manual(let m): epoch.advanced(by: .seconds(m.now))
        }
    }

    static func stunAddress(_ a: SocketAddress) -> STUNTransportAddress {
        switch a {
        case .v4(let ip, let port): STUNTransportAddress(address: .v4(ip), port: port)
        case .v6(let h, let l, let port, _): STUNTransportAddress(address: .v6(high: h, low: l), port: port)
        }
    }

    static func socketAddress(_ a: STUNTransportAddress) -> SocketAddress {
        switch a.address {
        case .v4(let ip): .v4(address: ip, port: a.port)
        case .v6(let h, let l): .v6(high: h, low: l, port: a.port, scopeID: 0)
        }
    }

    // MARK: - The loop

    /// Receives and forwards until the socket has nothing more, then runs timers. Returns when `wait`
    /// returns (the caller loops and applies commands when the wakeup fired).
    func runOnce(timeout: Duration) throws -> Bool {
        // What commands and timers pushed into pipes since the last round, before sleeping.
        wakePipes()
        let woken = try poller.wait(timeout: timeout, ready: &ready)
        if !pipesIn.isEmpty || !pipesOut.isEmpty { drainPipes() }
        var udpReady = false
        // By index: a `for ... in` retains the array (every round).
        var r = 0
        while r < ready.count {
            let token = ready[r]
            r += 1
            if token == Self.udpToken {
                udpReady = true
            } else {
                serviceTCP(token)
            }
        }
        if tcpListener != nil {
            flush()
            sweepTCP(now: now)
        }
        if udpReady, let socket {
            var rounds = 0
            let full = min(rx.count, socket.batchSize)
            while rounds < 16 {
                let n = try socket.receive(into: &rx)
                if n == 0 { break }
                for i in 0..<n { receive(i) }
                drainPacers()
                flush()
                // The far workers of the packets just piped start on them while this one reads on.
                if !pipesOut.isEmpty { for link in pipesOut { link.wakeFarIfPending() } }
                rounds += 1
                // A short batch emptied the queue: what came since wakes the (level-triggered) poll
                // at once, and a light load is spared an empty recvmmsg per wakeup.
                if n < full { break }
            }
        }
        let t = now
        if t - lastTick >= 0.02 {
            lastTick = t
            tick(t)
        } else {
            advanceProbes()
            drainPacers()
        }
        flush()
        wakePipes()
        return woken
    }

    @inline(__always) func injectedLoss() -> Bool {
        guard config.lossPercent > 0 else { return false }
        lossState ^= lossState << 13
        lossState ^= lossState >> 7
        lossState ^= lossState << 17
        return Int(lossState % 100) < config.lossPercent
    }

    /// A datagram from memory (an in-memory engine's input): received as if from the socket, then
    /// what it caused is sent.
    func receive(_ bytes: [UInt8], from address: SocketAddress) {
        rx[0].payload.removeAll(keepingCapacity: true)
        rx[0].payload.append(contentsOf: bytes)
        rx[0].address = address
        receive(0)
        flush()
    }

    func receive(_ i: Int) {
        let address = rx[i].address
        switch PacketDemultiplexer.classify(rx[i].payload) {
        case .stun: receiveSTUN(rx[i].payload, from: address)
        case .dtls: receiveDTLS(rx[i].payload, from: address)
        case .rtp, .rtcp:
            if injectedLoss() {
                counters.drop(.injectedLoss)
                return
            }
            receiveSRTP(i, from: address)
        default: counters.drop(.malformed)
        }
    }

    // MARK: - ICE

    func receiveSTUN(_ bytes: [UInt8], from address: SocketAddress) {
        guard let message = try? STUNMessage(parsing: bytes) else {
            counters.drop(.malformed)
            return
        }
        counters.stunRequests += 1
        guard let username = message.usernameBytes, let colon = username.firstIndex(of: UInt8(ascii: ":")),
            let transport = byUfrag[String(decoding: username[..<colon], as: UTF8.self)]
        else {
            counters.drop(.unknownSource)
            return
        }
        let source = Self.stunAddress(address)
        let actions = transport.session.ice.receive(stun: message, from: source, now: instant)
        transport.lastHeard = now
        if transport.session.ice.validPairs.contains(source) && !transport.session.addresses.contains(address) {
            transport.session.addresses.insert(address)
            byAddress[address] = transport
            if transport.session.peer == nil { transport.session.peer = address }
            forgetStaleAddresses(of: transport)
        }
        perform(actions, on: transport)
    }

    /// A peer sending valid checks from ever new ports must not grow the address tables: they follow
    /// the agent's valid pairs (at most `maxValidPairs`), keeping the selected peer.
    func forgetStaleAddresses(of t: Transport) {
        guard t.session.addresses.count > t.session.ice.configuration.maxValidPairs else { return }
        for a in t.session.addresses
        where a != t.session.peer && !t.session.ice.validPairs.contains(Self.stunAddress(a)) {
            t.session.addresses.remove(a)
            if byAddress[a] === t { byAddress[a] = nil }
        }
    }

    func perform(_ actions: [ICEAction], on transport: Transport) {
        for action in actions {
            switch action {
            case .send(let bytes, let to):
                // A Binding error response (class 0b11, RFC 8489 section 5): a check refused.
                if bytes.count > 1 && bytes[0] == 0x01 && bytes[1] == 0x11 { counters.drop(.stunRejected) }
                enqueue(bytes, to: Self.socketAddress(to))
            case .selected(let a):
                let address = Self.socketAddress(a)
                transport.session.peer = address
                byAddress[address] = transport
                transport.session.addresses.insert(address)
                startDTLSIfClient(transport)
            case .disconnected:
                report(transport, .disconnected)
                // The peer is gone or cut off for the consent timeout: its screen shares are over.
                for p in transport.listener.producers where p.lastActivity != nil { checkInactivity(p, now: .infinity) }
            case .reconnected: report(transport, .connected)
            case .failed: report(transport, .failed)
            case .dropped: counters.drop(.stunRejected)
            }
        }
    }

    func report(_ t: Transport, _ state: MediaEvent.TransportState) {
        // A pipe transport is the engine's own, unknown to the coordinator.
        guard t.pipe == nil else { return }
        events.append(.transportState(id: t.id, state: state))
        logger.debug("media transport", ("transport", t.label), ("state", state.rawValue))
    }

    // MARK: - DTLS

    func makeDTLS(_ t: Transport) {
        guard let remote = t.session.remote, t.session.dtls == nil else { return }
        do {
            let endpoint = try DTLSEndpoint(
                role: remote.dtlsClient ? .client : .server, certificate: certificate,
                remoteFingerprint: DTLSFingerprint(hashFunction: "sha-256", digest: remote.fingerprint))
            t.session.dtls = endpoint
            if !remote.dtlsClient { _ = try endpoint.start() }
        } catch {
            logger.warn("dtls setup failed", ("transport", t.label), ("error", "\(error)"))
        }
    }

    func startDTLSIfClient(_ t: Transport) {
        guard let dtls = t.session.dtls, dtls.role == .client, dtls.state == .idle, let peer = t.session.peer else {
            return
        }
        do {
            for d in try dtls.start() { enqueue(d, to: peer) }
        } catch {
            counters.dtlsFailures += 1
        }
    }

    func receiveDTLS(_ bytes: [UInt8], from address: SocketAddress) {
        guard let t = byAddress[address] else {
            counters.drop(.unknownSource)
            return
        }
        if t.session.dtls == nil, t.session.remote == nil, DTLSEndpoint.isClientHello(bytes) {
            // A subscriber's ClientHello on a checked ICE pair before its SDP answer reached us (the
            // WebSocket and UDP race): the peer is the DTLS client, so we are the server. The
            // fingerprint is checked when the answer arrives, before any media is sent.
            do {
                let early = try DTLSEndpoint(role: .server, certificate: certificate, remoteFingerprint: nil)
                _ = try early.start()
                t.session.dtls = early
                t.session.dtlsGeneration = t.session.iceGeneration
                t.session.dtlsAddress = address
            } catch {
                counters.dtlsFailures += 1
                return
            }
        }
        guard var dtls = t.session.dtls else {
            counters.drop(.unknownSource)
            return
        }
        if t.session.dtlsAddress == nil { t.session.dtlsAddress = address }
        // A ClientHello that starts a new association: after the handshake, from a peer that made a
        // new DTLS transport (a browser does when its BUNDLE transport was replaced, with new ICE
        // credentials; the old keys stay in use until it completes); on an association that failed;
        // or from another address than the handshake in progress (a second answerer of the same
        // offer, whose first never completed: the fingerprint decides which one is the peer).
        if dtls.role == .server, DTLSEndpoint.isClientHello(bytes),
            (dtls.state == .connected && t.session.iceGeneration != t.session.dtlsGeneration) || dtls.state == .failed
                || (dtls.state != .connected && address != t.session.dtlsAddress)
        {
            do {
                let fresh = try DTLSEndpoint(
                    role: .server, certificate: certificate,
                    remoteFingerprint: t.session.remote.map {
                        DTLSFingerprint(hashFunction: "sha-256", digest: $0.fingerprint)
                    }
                )
                _ = try fresh.start()
                t.session.dtls = fresh
                t.session.dtlsGeneration = t.session.iceGeneration
                t.session.dtlsAddress = address
                dtls = fresh
                logger.info("dtls restarted by the peer", ("transport", t.label))
            } catch {
                counters.dtlsFailures += 1
                return
            }
        }
        do {
            let out = try dtls.receive(bytes)
            for d in out.datagrams { enqueue(d, to: address) }
            if out.discarded > 0 { counters.drop(.dtlsInvalid) }
            try handle(out.events, on: t)
        } catch {
            counters.dtlsFailures += 1
            logger.warn("dtls failed", ("transport", t.label), ("error", "\(error)"))
        }
    }

    func handle(_ events: [DTLSEvent], on t: Transport) throws {
        for e in events {
            switch e {
            case .connected(let keys):
                t.session.srtpIn = try keys.inboundSession()
                t.session.srtpOut = try keys.outboundSession()
                t.session.connected = true
                counters.dtlsHandshakes += 1
                report(t, .connected)
                logger.info("media transport connected", ("transport", t.label), ("srtp", "\(keys.profile)"))
                for p in t.listener.producers { requestKeyFrames(p) }
                // A subscriber can decode nothing before a key frame: ask each publisher now, not on the
                // next periodic request.
                for c in t.consumers {
                    if let k = c.keyFrameStream { startViewer(c, stream: k) }
                }
            case .closed:
                t.session.connected = false
                report(t, .closed)
            case .applicationData: break
            }
        }
    }

    // MARK: - SRTP and SRTCP in

    func receiveSRTP(_ i: Int, from address: SocketAddress) {
        guard let t = addressRefs[address] else {
            counters.drop(.unknownSource)
            return
        }
        t.with { t in
            guard let srtp = t.session.srtpInRef else {
                counters.drop(.unknownSource)
                return
            }
            srtp.with { receiveSRTP(i, on: t, srtp: $0) }
        }
    }

    /// An SRTP or SRTCP packet from the peer of `t`: decrypted in place, then handled.
    func receiveSRTP(_ i: Int, on t: Transport, srtp: SRTPSession) {
        let isRTCP = rx[i].payload.count > 1 && PacketDemultiplexer.isRTCP(secondByte: rx[i].payload[1])
        let length = rx[i].payload.count
        // Not a typed-throwing closure: through the stdlib's generic `withUnsafe...` one takes a heap
        // context in a debug build.
        let plain = rx[i].payload.withUnsafeMutableBytes { buf in
            (try? isRTCP ? srtp.unprotectRTCP(buf, length: length) : srtp.unprotect(srtp: buf, length: length)) ?? -1
        }
        guard plain >= 0 else {
            counters.drop(.srtp)
            return
        }
        rx[i].payload.removeLast(length - plain)
        t.lastHeard = now
        if isRTCP {
            counters.rtcpIn += 1
            receiveRTCP(rx[i].payload, on: t)
        } else {
            receiveRTP(i, on: t)
        }
    }

    // MARK: - Output

    /// Queues a datagram (copied into a preallocated slot); sends the batch when it is full.
    func enqueue(_ bytes: [UInt8], to address: SocketAddress) {
        if txCount == tx.count { flush() }
        tx[txCount].payload.removeAll(keepingCapacity: true)
        tx[txCount].payload.append(contentsOf: bytes)
        tx[txCount].address = address
        txCount += 1
    }

    func flush() {
        guard txCount > 0 else { return }
        if !tcpByAddress.isEmpty {
            divertToTCP()
            guard txCount > 0 else { return }
        }
        guard let socket else {
            if case .memory(let m) = io { m.record(tx[0..<txCount]) }
            txCount = 0
            return
        }
        do {
            let sent = try socket.send(tx[0..<txCount])
            if sent < txCount {
                for _ in sent..<txCount { counters.drop(.sendBufferFull) }
            }
            // Checked first: a `for ... in` retains even an empty array.
            if !socket.refusals.isEmpty {
                for r in socket.refusals {
                    counters.drop(.sendRefused)
                    byAddress[tx[r.index].address]?.sendErrors += 1
                }
            }
            counters.udpMessages = socket.messagesSent
            counters.udpSegmentedDatagrams = socket.segmentedDatagrams
            if socket.segmentationFallbacks > counters.udpSegmentationFallbacks {
                counters.udpSegmentationFallbacks = socket.segmentationFallbacks
                logger.warn("the kernel refused UDP GSO; sending without it")
            }
        } catch {
            counters.sendFailures += 1
            if now - lastSendFailureLog >= 10 {
                lastSendFailureLog = now
                logger.warn("media send failed", ("error", "\(error)"))
            }
        }
        txCount = 0
    }

    /// Encrypts an RTCP compound for a transport and queues it.
    func sendRTCP(_ packets: [RTCPPacket], on t: Transport) {
        guard let srtp = t.session.srtpOut, let peer = t.session.peer, !packets.isEmpty,
            var bytes = try? RTCPCompound.serialize(packets)
        else { return }
        do {
            try srtp.protectRTCP(&bytes)
        } catch {
            return
        }
        counters.rtcpOut += 1
        enqueue(bytes, to: peer)
    }

    // MARK: - Commands

    func apply(_ command: MediaCommand) {
        switch command {
        case .openTransport(let spec):
            guard transports[spec.id] == nil else { return }
            let ice = ICELiteAgent(
                localAddress: iceAddress,
                localCredentials: ICECredentials(ufrag: spec.localUfrag, password: spec.localPassword),
                remoteUfrag: spec.remote?.ufrag, remotePassword: spec.remote?.password, now: instant)
            let router = routers[spec.router] ?? Router(id: spec.router)
            routers[spec.router] = router
            let t = Transport(spec: spec, router: router, ice: ice, rtcpSSRC: random.nonzero32())
            transports[spec.id] = t
            router.transports[spec.id] = t
            byUfrag[spec.localUfrag] = t
            makeDTLS(t)
        case .updateTransport(let id, let remote, let ufrag, let password):
            guard let t = transports[id] else { return }
            update(t, remote: remote, ufrag: ufrag, password: password)
        case .closeTransport(let id):
            if let t = transports[id] { close(t) }
        case .closeRouter(let id):
            guard let router = routers[id] else { return }
            for t in router.transports.values { close(t) }
            routers[id] = nil
        case .reject(let id, let mids, let ssrcs):
            transports[id]?.listener.reject(mids: mids, ssrcs: ssrcs)
        case .addProducer(let spec):
            guard producers[spec.id] == nil, let t = transports[spec.transport] else { return }
            let p = Producer(spec: spec, transport: t, cache: config.keyFrameCache)
            producers[spec.id] = p
            t.router.producers[spec.id] = p
            t.listener.add(p)
            reportWanted(p)
        case .pauseProducer(let id, let paused):
            guard let p = producers[id], p.paused != paused else { return }
            p.paused = paused
            if !paused {
                if p.lastActivity != nil { p.lastActivity = now }
                for c in p.consumers { c.restart() }
                for sink in p.sinks { sink.restart() }
                requestKeyFrames(p)
            }
        case .closeProducer(let id):
            if let p = producers[id] { close(p) }
        case .addConsumer(let spec):
            guard consumers[spec.id] == nil, let p = producers[spec.producer], let t = transports[spec.transport]
            else { return }
            guard p.transport.router === t.router else {
                // The media layer's own check: another room's track is never forwarded.
                counters.consumersRefused += 1
                logger.warn("consumer refused: producer of another router", ("consumer", spec.id))
                return
            }
            let c = Consumer(spec: spec, producer: p, transport: t, random: &random)
            c.createdAt = now
            consumers[spec.id] = c
            t.router.consumers[spec.id] = c
            p.consumers.append(c)
            t.add(c)
            c.reselect(available: p.availableMask)
            reportWanted(p)
            // Started from the cached picture when there is one; else a key frame is asked for. Before
            // DTLS completes both wait for it (`handle(_:on:)`).
            if t.isSecure, let k = c.keyFrameStream { startViewer(c, stream: k) }
        case .setPreference(let id, let preference):
            guard let c = consumers[id], c.preference != preference else { return }
            c.preference = preference
            if let k = c.reselect(available: c.producer.availableMask) { switchLayer(c, to: k) }
            reportWanted(c.producer)
        case .closeConsumer(let id):
            if let c = consumers[id] {
                close(c, bye: true)
                reportWanted(c.producer)
            }
        case .allocate(let id, let allocation):
            if let t = transports[id] { allocate(t, allocation) }
        case .addRecorder(let spec): addRecorder(spec)
        case .closeRecorder(let id): closeRecorder(id: id)
        case .pipeProducer(let id, let link, let tag): pipeProducer(id: id, link: link, tag: tag)
        case .addPipeProducer(let spec, let router, let link, let tag):
            addPipeProducer(spec, router: router, link: link, tag: tag)
        }
    }

    /// The peer's latest description: ICE credentials (a restart when they changed), the DTLS peer (a
    /// new certificate means a new association), header extension ids.
    func update(_ t: Transport, remote: RemoteSpec, ufrag: String, password: String) {
        t.midExtensionID = remote.midExtensionID
        t.twccExtensionID = remote.transportWideCCExtensionID
        if t.session.remote == nil, !t.session.ice.validPairs.isEmpty, t.session.ice.state != .failed,
            t.session.ice.localCredentials.ufrag == ufrag
        {
            // Checks arrived before the answer (they need only our credentials): keep their pairs.
            t.session.ice.setRemoteCredentials(ufrag: remote.ufrag, password: remote.password)
        } else if t.session.remote == nil || t.session.ice.state == .failed {
            // The first answer (or one after the agent gave up): the agent starts waiting from now, not
            // from when the offer was made.
            byUfrag[t.session.ice.localCredentials.ufrag] = nil
            t.session.ice = ICELiteAgent(
                localAddress: iceAddress, localCredentials: ICECredentials(ufrag: ufrag, password: password),
                remoteUfrag: remote.ufrag, remotePassword: remote.password, now: instant)
            byUfrag[ufrag] = t
        } else if t.session.ice.remoteUfrag != remote.ufrag || t.session.ice.localCredentials.ufrag != ufrag {
            byUfrag[t.session.ice.localCredentials.ufrag] = nil
            t.session.ice.restart(
                localCredentials: ICECredentials(ufrag: ufrag, password: password), remoteUfrag: remote.ufrag,
                remotePwd: remote.password, now: instant)
            byUfrag[ufrag] = t
            t.session.iceGeneration += 1
            logger.info("ice restart", ("transport", t.label))
        }
        let newPeer = t.session.remote.map {
            $0.fingerprint != remote.fingerprint || $0.dtlsClient != remote.dtlsClient
        }
        let first = t.session.remote == nil
        t.session.remote = remote
        if first, let early = t.session.dtls, early.remoteFingerprint == nil {
            // The handshake began before the answer: check the peer's certificate now.
            if remote.dtlsClient {
                // The answer makes us the client after all: that handshake was not the peer's.
                t.session.dtls = nil
                t.session.dtlsAddress = nil
            } else {
                do {
                    try handle(
                        early.verify(
                            remoteFingerprint: DTLSFingerprint(hashFunction: "sha-256", digest: remote.fingerprint)),
                        on: t)
                } catch {
                    // The early handshake was not the answerer's (another peer answered the same offer
                    // first): a fresh association waits for the real one's ClientHello.
                    counters.dtlsFailures += 1
                    logger.warn("dtls failed", ("transport", t.label), ("error", "\(error)"))
                    t.session.dtls = nil
                    t.session.dtlsAddress = nil
                }
            }
        }
        if newPeer == true, let old = t.session.dtls {
            // Another RTCPeerConnection behind the same transport: a new DTLS association and SRTP keys.
            if let peer = t.session.peer { for d in old.close() { enqueue(d, to: peer) } }
            t.session.dtls = nil
            t.session.dtlsAddress = nil
            t.session.srtpIn = nil
            t.session.srtpOut = nil
            t.session.connected = false
            logger.info("dtls peer changed", ("transport", t.label))
        }
        if t.session.dtls == nil {
            makeDTLS(t)
            startDTLSIfClient(t)
        }
    }

    /// Ends a transport with everything on it; its router goes with its last transport.
    func close(_ t: Transport) {
        guard transports.removeValue(forKey: t.id) != nil else { return }
        for c in t.consumers { close(c, bye: false) }
        for p in t.listener.producers { close(p) }
        byUfrag = byUfrag.filter { $0.value !== t }
        for a in t.session.addresses where byAddress[a] === t {
            byAddress[a] = nil
            // Its ICE-TCP connections go with it (after the round in hand).
            if let c = tcpByAddress[a] { doom(c, .shutdown) }
        }
        if let dtls = t.session.dtls, let peer = t.session.peer { for d in dtls.close() { enqueue(d, to: peer) } }
        report(t, .closed)
        t.downlink.paced.removeAll()
        pacing.removeAll { $0 === t }
        t.router.transports[t.id] = nil
        if t.router.transports.isEmpty, routers[t.router.id] === t.router { routers[t.router.id] = nil }
    }

    /// Ends a producer: its consumers end (their subscribers get RTCP BYE) and its mid and SSRCs count
    /// as ended (`Transport.remove`).
    func close(_ p: Producer) {
        forgetPipes(of: p)
        for c in p.consumers { close(c, bye: true) }
        p.consumers.removeAll()
        for sink in p.sinks { recorders[sink.spec.id] = nil }
        p.sinks.removeAll()
        p.transport.listener.remove(p)
        producers[p.spec.id] = nil
        p.transport.router.producers[p.spec.id] = nil
    }

    func close(_ c: Consumer, bye: Bool) {
        guard !c.closed else { return }
        c.closed = true
        stopReplay(c)
        if bye { sendRTCP([.goodbye(Goodbye(sources: [c.spec.ssrc]))], on: c.transport) }
        c.producer.consumers.removeAll { $0 === c }
        c.transport.remove(c)
        consumers[c.spec.id] = nil
        c.transport.router.consumers[c.spec.id] = nil
    }

    // MARK: - Snapshot

    /// The top stream that arrives (the first one when none does); an SVC stream's size is its top
    /// layer's.
    func top(_ p: Producer) -> (width: Int, height: Int, framesPerSecond: Int) {
        let k = p.streams.indices.last { p.availableMask & (1 << $0) != 0 } ?? 0
        let s = p.streams[k]
        if let layer = p.svcLayers.last, layer.width > 0 { return (layer.width, layer.height, s.framesPerSecond) }
        return (s.width, s.height, s.framesPerSecond)
    }

    /// The spatial layer a video viewer gets now, -1 for none.
    func layer(of c: Consumer) -> Int {
        if c.bandwidthPaused || c.packetsOut == 0 { return -1 }
        if let v = c.svc { return v.current?.spatial ?? -1 }
        if let s = c.selector { return s.current?.spatial ?? -1 }
        return 0
    }

    func snapshot() -> MediaStats {
        var s = MediaStats()
        s.counters = counters
        s.peerAddresses = byAddress.count
        s.tcpConnections = tcpConnections.count
        s.routers = routers.count
        s.transports = transports.values.filter { $0.pipe == nil }.map {
            TransportStats(
                id: $0.id, label: $0.label, connected: $0.session.connected, rtt: $0.rtt, loss: $0.loss,
                packetsIn: $0.packetsIn,
                bytesIn: $0.bytesIn, packetsOut: $0.packetsOut, bytesOut: $0.bytesOut, sendErrors: $0.sendErrors,
                retransmissionsRefused: $0.retransmission.refused,
                estimate: $0.downlink.hasEstimate ? $0.downlink.rate.estimate : nil,
                allocated: $0.downlink.allocated, wanted: $0.downlink.wanted, pausedTracks: $0.downlink.pausedTracks,
                probes: $0.downlink.probes.probesSent, probeBytes: $0.downlink.probeBytes,
                pacerDelayed: $0.downlink.pacerDelayed,
                pacerDropped: $0.downlink.pacerDropped, pacerQueued: $0.downlink.paced.count)
        }
        s.consumers = consumers.values.filter { $0.producer.isVideo && $0.transport.pipe == nil }.map { c in
            ConsumerStats(
                transport: c.transport.label, track: c.producer.spec.id, layer: layer(of: c),
                switchesUp: c.switchesUp, switchesDown: c.switchesDown)
        }.sorted { ($0.transport, $0.track) < ($1.transport, $1.track) }
        s.tracks = producers.values.map { p in
            TrackStats(
                track: p.spec.id, source: p.spec.source, packetsIn: p.packetsIn, bytesIn: p.bytesIn,
                packetsOut: p.packetsOut, bytesOut: p.bytesOut,
                nacksSent: p.nacksSent, plisSent: p.plisSent, consumers: p.consumers.count,
                lost: p.streams.reduce(0) { $0 + $1.stats.lost }, width: top(p).width, height: top(p).height,
                framesPerSecond: top(p).framesPerSecond, cachedBytes: p.streams.reduce(0) { $0 + $1.cache.byteCount })
        }.sorted { $0.track < $1.track }
        return s
    }
}
