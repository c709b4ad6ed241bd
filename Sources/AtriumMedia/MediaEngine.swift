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
    let poller: EpollPoller
    /// The passive ICE-TCP socket (`MediaEngine+TCP`), when configured.
    let tcpListener: TCPListener?
    let certificate: DTLSCertificate
    /// The DTLS context every transport's endpoint shares (made at the first; nil until then).
    var dtlsContext: DTLSContext?
    let config: MediaConfiguration
    let logger: Logger
    /// The address ICE reports as our side of every pair.
    let iceAddress: STUNTransportAddress
    let clock = ContinuousClock()
    let epoch: ContinuousClock.Instant
    /// The same start on CLOCK_BOOTTIME (what `ContinuousClock` reads on Linux), for `now`.
    let epochTime: timespec
    let clockSource: MediaClock
    var random: MediaRandom

    /// Rooms' media, each owning its transports, producers and consumers; the maps below index them.
    var routers: [String: Router] = [:]
    var transports: [String: Transport] = [:] { didSet { transportRefs = transports.values.map(Borrowed.init) } }
    var byUfrag: [String: Transport] = [:]
    var byAddress: [SocketAddress: Transport] = [:] {
        didSet {
            addressRefs = byAddress.mapValues(Borrowed.init)
            lastAddressRef = nil
        }
    }
    /// `transports` and `byAddress` for the packet path and the timers (`Borrowed`: no reference
    /// counting), rebuilt when a transport or an address comes or goes.
    private(set) var transportRefs: [Borrowed<Transport>] = []
    private(set) var addressRefs: [SocketAddress: Borrowed<Transport>] = [:]
    /// The last address the packet path looked up in `addressRefs` and what it found (`transportRef`),
    /// forgotten whenever `byAddress` changes.
    private var lastAddressRef: (address: SocketAddress, ref: Borrowed<Transport>)?
    var producers: [String: Producer] = [:]
    var consumers: [String: Consumer] = [:]
    /// Recording outputs by id (`addRecorder`).
    var recorders: [String: RecordingSink] = [:]
    var recorderLines: [String: RecorderLine] = [:]
    var counters = MediaCounters()
    /// Consumers being started from a key-frame cache (`MediaEngine+Cache`).
    var replaying: [Consumer] = []
    /// Viewers waiting for the fresh key frame their start asked for (`startViewer`).
    var awaitingFresh: [Consumer] = []
    var events: [MediaEvent] = []
    /// Transports with an SCTP association, serviced each round.
    var dataTransports: [Transport] = []
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
    /// The send side: the batch of send slots, the pacers holding packets (`Egress`).
    let egress: Egress
    var lossState: UInt64 = 0x9E37_79B9_7F4A_7C15
    var lastTick: Double = 0
    var lastSecond: Double = 0
    /// The buffers of the cameras' pictures let go, for the next key frame of any stream here, and
    /// when they were last trimmed.
    var pictureSpares = PictureSpares()
    var lastSparesTrim: Double = 0
    var lastLevels: Double = 0
    var reportedLevels = false
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
        var start = timespec()
        clock_gettime(CLOCK_BOOTTIME, &start)
        epochTime = start
        clockSource = clock
        random = MediaRandom(seed: config.randomSeed)
        // 32 for the socket's batch, one more for replays from the key-frame caches, one for ICE-TCP
        // frames, one for packets from another worker's pipe (`pipeSlot`).
        rx = (0..<35).map { _ in Datagram(capacity: Self.slotCapacity) }
        // A round's output, sent at once: 32 packets in to 32 viewers fit, so the socket can group each
        // viewer's packets into segmented runs.
        egress = Egress(slots: Self.sendQueueSlots, capacity: Self.slotCapacity)
        tcpDirty.reserveCapacity(64)
        tcpDoomed.reserveCapacity(64)
    }

    deinit {
        // Producers and consumers hold their transport, and consumers their producer: let go of them.
        for p in producers.values { p.consumers.removeAll() }
        for t in transports.values { t.detach() }
    }

    /// Whether something waits for time rather than packets (a pacer's queue, a probe being sent):
    /// the worker then waits for at most a few milliseconds.
    var hasPendingSends: Bool { !egress.pacing.isEmpty || isProbing }

    /// How long the worker may sleep before its timers: a few milliseconds while something waits for
    /// time, the 20 ms timer while it carries media, and a second while it holds nothing. An idle
    /// worker (a server's other cores before their rooms come) then wakes once a second, for its
    /// stats, instead of 50 times: each wakeup costs about 40 us of CPU on a VM, mostly the kernel's
    /// (docs/benchmarks.md). A command wakes it at once whatever the timeout.
    var pollTimeout: Duration {
        if hasPendingSends { return .milliseconds(2) }
        return isIdle ? .seconds(1) : .milliseconds(20)
    }

    /// Nothing that a timer serves: no transport (a pipe's end is one), producer, consumer, recording,
    /// recorder line or ICE-TCP connection.
    var isIdle: Bool {
        transports.isEmpty && producers.isEmpty && consumers.isEmpty && recorders.isEmpty && recorderLines.isEmpty
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

    /// The transport whose peer is at `address`. A burst of datagrams mostly comes from one peer: the
    /// last one found is checked first, and the address is hashed (SipHash) only when it differs.
    @inline(__always) func transportRef(at address: SocketAddress) -> Borrowed<Transport>? {
        if let last = lastAddressRef, last.address == address { return last.ref }
        guard let ref = addressRefs[address] else { return nil }
        lastAddressRef = (address, ref)
        return ref
    }

    /// Seconds since the engine started (the packet path's clock).
    @inline(__always) var now: Double {
        switch clockSource {
        case .system:
            // Read directly: `clock.now - epoch` and its `components` take 128-bit arithmetic, and the
            // packet path reads the time a few times per packet (about 1.5 % of a one-viewer worker).
            var t = timespec()
            clock_gettime(CLOCK_BOOTTIME, &t)
            return Double(t.tv_sec - epochTime.tv_sec) + Double(t.tv_nsec - epochTime.tv_nsec) * 1e-9
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
        if !dataTransports.isEmpty { serviceDataTransports() }
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
