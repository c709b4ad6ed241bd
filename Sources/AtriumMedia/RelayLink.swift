public import AtriumDTLS
import AtriumRTP
import AtriumSRTP
public import AtriumSync
public import AtriumUDP

#if canImport(Glibc)
    import Glibc
#endif

/// One end of a relay link between two nodes: the pipes between media workers (`PipeLink`) carried
/// over UDP between a room's owner node and an edge node, both ways. For an outbound route the end
/// takes the place of a far worker (it pops the packets a home worker here piped, and pushes back
/// the feedback that came over the link); for an inbound one it takes the place of a home worker
/// (it pushes the packets that came, and pops the feedback of this node's workers to send). The
/// owner's viewers' producers flow outbound from it; a publisher on an edge flows outbound from the
/// edge, up to the owner.
///
/// - Nothing crosses in clear: DTLS between the two nodes (each one's certificate fingerprint as the
///   cluster published it; the node with the smaller id is the client), then SRTP keyed by it.
/// - A datagram not from the expected address is a stranger's: dropped and counted, as is one that
///   does not authenticate or does not parse.
/// - One thread per link; its packet path allocates nothing (preallocated send slots, SRTP in place).
/// - Pings every second measure the RTT; gaps in the link's own sequence numbers count as loss.
public final class RelayLink: @unchecked Sendable {
    public enum Side: Sendable, Equatable {
        /// The room's owner: its routes are outbound unless said otherwise.
        case owner
        /// An edge: its routes are inbound unless said otherwise.
        case edge
    }

    /// Which way a route's packets go.
    public enum Direction: Sendable, Equatable {
        /// Packets from a home worker here to a pipe producer on the other node; feedback comes back.
        case outbound
        /// Packets from the other node into a pipe producer here; its feedback goes back.
        case inbound
    }

    public enum State: String, Sendable, Equatable {
        case handshaking, connected, failed, closed
    }

    /// The link's figures, as the thread last published them.
    public struct Counters: Sendable, Equatable {
        public var state = State.handshaking
        public var packetsOut = 0
        public var bytesOut = 0
        public var packetsIn = 0
        public var bytesIn = 0
        public var feedbackOut = 0
        public var feedbackIn = 0
        /// Datagrams from an address that is not the other node's.
        public var strangers = 0
        /// Datagrams that failed SRTP authentication (or came before the keys).
        public var unauthenticated = 0
        public var malformed = 0
        /// Packets a full ring refused (the far worker behind).
        public var ringFull = 0
        /// Gaps in the other end's sequence numbers.
        public var lost = 0
        public var rttMilliseconds: Double?
        public var failure: String?
        /// Media packets by the stream (simulcast layer) they are of, streams 0 to 3.
        public var streamPackets = StreamCounts()
        /// Pipe producers (tracks) routed through the link.
        public var tracks = 0
    }

    /// Four counters, by stream index.
    public struct StreamCounts: Sendable, Equatable {
        public var s0 = 0, s1 = 0, s2 = 0, s3 = 0

        public subscript(k: Int) -> Int {
            switch k {
            case 0: s0
            case 1: s1
            case 2: s2
            case 3: s3
            default: 0
            }
        }

        mutating func count(_ k: UInt8) {
            switch k {
            case 0: s0 += 1
            case 1: s1 += 1
            case 2: s2 += 1
            case 3: s3 += 1
            default: break
            }
        }
    }

    struct Shared {
        /// Routes to add (a pipe and the tag on this node) or remove (nil), in order.
        var changes: [(tag: UInt32, link: PipeLink?, local: UInt32, direction: Direction)] = []
        var stopped = false
        var counters = Counters()
    }

    public let side: Side
    public let socket: UDPSocket
    /// Wakes the link's thread: a home worker's `PipeLink` on the owner is made with it as `wakeFar`,
    /// an edge worker's with it as `wakeHome`.
    public var wakeup: Wakeup { poller.wakeup }
    /// The other node's relay address (set by `start`).
    public internal(set) var remote: SocketAddress = .loopbackV4(port: 0)
    let poller: EpollPoller
    let dtls: DTLSEndpoint
    let shared = Monitor(Shared())
    let ssrc: UInt32
    var thread: JoinableThread?

    /// Outgoing slots, filled in place; the link's sequence number; SRTP once the handshake is done.
    var tx: [Datagram]
    /// `maxDatagram` zero bytes, to bring a slot back to its full size.
    let zeros: UnsafeMutableRawBufferPointer
    var count = 0
    var sequence: UInt16
    var srtpIn: SRTPSession? {
        didSet { srtpInRef = srtpIn.map(Borrowed.init) }
    }
    var srtpOut: SRTPSession? {
        didSet { srtpOutRef = srtpOut.map(Borrowed.init) }
    }
    /// The sessions as the packet path reaches them: without reference counting each packet.
    var srtpInRef: Borrowed<SRTPSession>?
    var srtpOutRef: Borrowed<SRTPSession>?
    /// Each direction's routes: the pipe of each tag on the link and the tag it has on this node
    /// (an edge numbers the pipe producers of every owner in one space, a node its piped producers
    /// in another), the way back from this node's tag, and each pipe once (the thread's own).
    struct Routes {
        var byLinkTag: [UInt32: (link: Borrowed<PipeLink>, local: UInt32)] = [:]
        var linkTags: [UInt32: UInt32] = [:]
        var links: [PipeLink] = []
        /// Each route's pipe, strongly.
        var strong: [UInt32: PipeLink] = [:]

        mutating func apply(tag: UInt32, link: PipeLink?, local: UInt32) {
            if let old = byLinkTag[tag] { linkTags[old.local] = nil }
            byLinkTag[tag] = link.map { (Borrowed($0), local) }
            if let link {
                linkTags[local] = tag
                strong[tag] = link
            } else {
                strong[tag] = nil
            }
            links.removeAll()
            for l in strong.values where !links.contains(where: { $0 === l }) { links.append(l) }
        }
    }

    var outbound = Routes()
    var inbound = Routes()
    var counters = Counters()
    var highest: UInt16?
    var nextPing: UInt64 = 0
    /// The last datagram from the other node that authenticated (or took the handshake on).
    var lastHeard: UInt64 = 0
    /// A link with nothing heard for this long (nanoseconds; pings go every second) has failed.
    let silence: UInt64

    public static let maxDatagram = 2048
    /// Five pings missed.
    public static let defaultSilence = 5.0

    /// `bind`: this node's relay address (port 0: any); `client`: this end starts the handshake (the
    /// node with the smaller id); `silence`: seconds without an authenticated datagram (or a
    /// handshake message) from the other node after which the link has failed.
    public init(
        side: Side, bind: SocketAddress, certificate: DTLSCertificate, remoteFingerprint: DTLSFingerprint,
        client: Bool, silence: Double = RelayLink.defaultSilence
    ) throws {
        self.side = side
        self.silence = UInt64(min(max(silence, 0.1), 3600) * 1e9)
        socket = try UDPSocket(bindingTo: bind, batchSize: 32, maxDatagramSize: Self.maxDatagram)
        _ = try? socket.setBufferSizes(receive: 4 << 20, send: 4 << 20)
        poller = try EpollPoller()
        try poller.register(socket, token: 0)
        dtls = try DTLSEndpoint(
            role: client ? .client : .server, certificate: certificate, remoteFingerprint: remoteFingerprint,
            options: DTLSOptions(initialRetransmitTimeout: .milliseconds(200)))
        tx = (0..<32).map { _ in Datagram(capacity: Self.maxDatagram) }
        zeros = .allocate(byteCount: Self.maxDatagram, alignment: 16)
        zeros.initializeMemory(as: UInt8.self, repeating: 0)
        var rng = SystemRandomNumberGenerator()
        ssrc = UInt32.random(in: 1...UInt32.max, using: &rng)
        sequence = UInt16.random(in: 0...UInt16.max, using: &rng)
    }

    deinit { zeros.deallocate() }

    /// Pipe producer `tag`'s packets and its requests (the other way) go through this link: popped
    /// from `link` and sent (outbound: a producer here, the pipe producer on the other node), or
    /// received and pushed into it (inbound: the pipe producer here, `local` on this node; the
    /// producer on the other node). An outbound route's `local` is the tag the home worker pushes
    /// with. `direction` defaults to the side's. Safe from any thread.
    public func route(tag: UInt32, _ link: PipeLink, local: UInt32? = nil, direction: Direction? = nil) {
        shared.withLock { $0.changes.append((tag, link, local ?? tag, direction ?? defaultDirection)) }
        wakeup.wake()
    }

    /// The tag's route is gone: what still comes for it is dropped (counted as malformed).
    public func unroute(tag: UInt32, direction: Direction? = nil) {
        shared.withLock { $0.changes.append((tag, nil, tag, direction ?? defaultDirection)) }
        wakeup.wake()
    }

    var defaultDirection: Direction { side == .owner ? .outbound : .inbound }

    public var figures: Counters { shared.withLock { $0.counters } }

    /// Starts the thread, talking to the other node's relay address `remote`.
    public func start(remote: SocketAddress) throws(ThreadStartError) {
        self.remote = remote
        thread = try JoinableThread.start { [self] in run() }
    }

    /// Ends the thread (joined) and the link.
    public func stop() {
        shared.withLock { $0.stopped = true }
        wakeup.wake()
        thread?.join()
        thread = nil
    }

    // MARK: - The thread

    func run() {
        lastHeard = MonotonicNanoseconds.now()
        if dtls.role == .client {
            do { for d in try dtls.start() { queue(d) } } catch { fail("DTLS start: \(error)") }
        }
        var ready: [UInt64] = []
        ready.reserveCapacity(EpollPoller.maxEvents)
        while true {
            let (stopped, changes) = shared.withLock { s in
                defer { s.changes.removeAll() }
                return (s.stopped, s.changes)
            }
            if stopped { break }
            if !changes.isEmpty {
                for c in changes {
                    if c.direction == .outbound {
                        outbound.apply(tag: c.tag, link: c.link, local: c.local)
                    } else {
                        inbound.apply(tag: c.tag, link: c.link, local: c.local)
                    }
                }
                counters.tracks = outbound.byLinkTag.count + inbound.byLinkTag.count
            }
            let now = MonotonicNanoseconds.now()
            receive(now: now)
            timers(now: now)
            if counters.state == .connected { pump() }
            flush()
            var k = 0
            while k < outbound.links.count {
                outbound.links[k].wakeHomeIfPending()
                k += 1
            }
            k = 0
            while k < inbound.links.count {
                inbound.links[k].wakeFarIfPending()
                k += 1
            }
            shared.withLock { $0.counters = counters }
            let wait: Duration = counters.state == .handshaking ? .milliseconds(20) : .milliseconds(100)
            _ = try? poller.wait(timeout: wait, ready: &ready)
        }
        counters.state = .closed
        shared.withLock { $0.counters = counters }
    }

    func fail(_ why: String) {
        counters.state = .failed
        counters.failure = why
    }

    /// Everything waiting on the socket, each datagram where the kernel put it.
    func receive(now: UInt64) {
        while true {
            let n = try? socket.receiveInPlace { index, bytes in
                guard socket.receivedSource(index) == remote else {
                    counters.strangers += 1
                    return
                }
                handle(bytes, now: now)
            }
            guard let n, n == socket.batchSize else { return }
        }
    }

    func handle(_ bytes: UnsafeMutableRawBufferPointer, now: UInt64) {
        guard bytes.count > 12 else {
            counters.malformed += 1
            return
        }
        // RFC 7983: 20-63 DTLS, 128-191 RTP.
        if bytes[0] >= 20 && bytes[0] <= 63 {
            if counters.state == .handshaking { lastHeard = now }
            handshake(Array(bytes))
            return
        }
        guard bytes[0] >= 128 && bytes[0] <= 191, let srtpInRef else {
            counters.unauthenticated += 1
            return
        }
        let length = srtpInRef.with { session -> Int in
            do { return try session.unprotect(srtp: bytes, length: bytes.count) } catch { return -1 }
        }
        guard length >= 0 else {
            counters.unauthenticated += 1
            return
        }
        lastHeard = now
        let plain = UnsafeRawBufferPointer(rebasing: bytes[0..<min(length, bytes.count)])
        guard let h = try? RTPHeader(parsing: plain), h.payloadRange.upperBound <= plain.count else {
            counters.malformed += 1
            return
        }
        if let last = highest {
            let gap = h.sequenceNumber &- last
            if gap > 0 && gap < 0x8000 {
                counters.lost += Int(gap) - 1
                highest = h.sequenceNumber
            }
        } else {
            highest = h.sequenceNumber
        }
        let payload = UnsafeRawBufferPointer(rebasing: plain[h.payloadRange])
        switch h.payloadType {
        case RelayFrame.media: receiveMedia(payload)
        case RelayFrame.feedback: receiveFeedback(payload)
        case RelayFrame.ping where payload.count == 8:
            send(RelayFrame.pong) { out, at in
                for i in 0..<8 { out[at + i] = payload[i] }
                return 8
            }
        case RelayFrame.pong where payload.count == 8:
            let sent = RelayFrame.get64(payload, 0)
            if now >= sent { counters.rttMilliseconds = Double(now - sent) / 1_000_000 }
        default: counters.malformed += 1
        }
    }

    func receiveMedia(_ payload: UnsafeRawBufferPointer) {
        guard let (read, range) = RelayFrame.readMedia(payload), let route = inbound.byLinkTag[read.tag] else {
            counters.malformed += 1
            return
        }
        counters.packetsIn += 1
        counters.bytesIn += payload.count
        counters.streamPackets.count(read.stream)
        var header = read
        header.tag = route.local
        let pushed = route.link.with { link -> Bool in
            guard link.packets.push(UnsafeRawBufferPointer(rebasing: payload[range]), header) else { return false }
            link.farPending = true
            return true
        }
        if !pushed { counters.ringFull += 1 }
    }

    func receiveFeedback(_ payload: UnsafeRawBufferPointer) {
        guard var f = RelayFrame.readFeedback(payload), let route = outbound.byLinkTag[f.tag] else {
            counters.malformed += 1
            return
        }
        counters.feedbackIn += 1
        f.tag = route.local
        let pushed = route.link.with { link -> Bool in
            guard link.feedback.push(f) else { return false }
            link.homePending = true
            return true
        }
        if !pushed { counters.ringFull += 1 }
    }

    func handshake(_ datagram: [UInt8]) {
        guard counters.state != .failed else { return }
        do {
            let out = try dtls.receive(datagram)
            for d in out.datagrams { queue(d) }
            for case .connected(let keys) in out.events {
                srtpIn = try keys.inboundSession()
                srtpOut = try keys.outboundSession()
                counters.state = .connected
            }
        } catch { fail("DTLS: \(error)") }
    }

    func timers(now: UInt64) {
        if counters.state != .failed && now > lastHeard && now - lastHeard > silence {
            fail(
                "nothing heard from the other node for \(Double(silence) / 1e9) s (dropped: \(counters.strangers) "
                    + "from other addresses, \(counters.unauthenticated) unauthenticated, \(counters.malformed) malformed)"
            )
        }
        if counters.state == .handshaking, let t = dtls.nextTimeout, t < .milliseconds(1) {
            do { for d in try dtls.timeout() { queue(d) } } catch { fail("DTLS: \(error)") }
        }
        if counters.state == .connected && now >= nextPing {
            nextPing = now + 1_000_000_000
            send(RelayFrame.ping) { out, at in
                RelayFrame.put64(now, out, at)
                return 8
            }
        }
    }

    /// The packets this node's home workers piped (outbound), then the feedback its pipe producers'
    /// viewers asked (inbound), each under its tag on the link.
    func pump() {
        // By index: a `for ... in` over the array allocates its iterator in a debug build.
        var k = 0
        while k < outbound.links.count {
            let link = outbound.links[k]
            k += 1
            var n = 0
            while n < link.packets.capacity,
                link.packets.pop({ h, bytes in
                    // This node's tag to the link's; a route added since this pass began is still
                    // among the changes (its worker may push as soon as the route is asked for).
                    guard let tag = outbound.linkTags[h.tag] ?? pendingOutboundTag(h.tag) else {
                        counters.malformed += 1
                        return
                    }
                    var header = h
                    header.tag = tag
                    send(RelayFrame.media) { out, at in
                        guard bytes.count + RelayFrame.mediaHeaderSize <= out.count - at else { return -1 }
                        RelayFrame.writeMedia(header, into: out, at: at)
                        if let base = bytes.baseAddress, let dst = out.baseAddress, bytes.count > 0 {
                            (dst + at + RelayFrame.mediaHeaderSize).copyMemory(from: base, byteCount: bytes.count)
                        }
                        return RelayFrame.mediaHeaderSize + bytes.count
                    }
                    counters.packetsOut += 1
                    counters.bytesOut += bytes.count
                    counters.streamPackets.count(h.stream)
                })
            {
                n += 1
            }
        }
        k = 0
        while k < inbound.links.count {
            let link = inbound.links[k]
            k += 1
            while var f = link.feedback.pop() {
                guard let tag = inbound.linkTags[f.tag] else { continue }
                f.tag = tag
                send(RelayFrame.feedback) { out, at in
                    RelayFrame.writeFeedback(f, into: out, at: at)
                    return RelayFrame.feedbackSize
                }
                counters.feedbackOut += 1
            }
        }
    }

    /// The link tag of an outbound route asked for but not applied yet (rare: looked up only on a miss).
    func pendingOutboundTag(_ local: UInt32) -> UInt32? {
        shared.withLock { s -> UInt32? in
            var i = s.changes.count - 1
            while i >= 0 {
                let c = s.changes[i]
                if c.direction == .outbound && c.local == local { return c.link == nil ? nil : c.tag }
                i -= 1
            }
            return nil
        }
    }

    /// A DTLS record to send as it is.
    func queue(_ d: [UInt8]) {
        if count == tx.count { flush() }
        tx[count].address = remote
        tx[count].payload.removeAll(keepingCapacity: true)
        tx[count].payload.append(contentsOf: d)
        count += 1
    }

    /// An SRTP packet of the link: its RTP header, the payload `fill` writes at the offset it is
    /// given (returning its length, or -1 to drop it), then SRTP in place.
    func send(_ payloadType: UInt8, _ fill: (UnsafeMutableRawBufferPointer, Int) -> Int) {
        guard let srtpOutRef else { return }
        if count == tx.count { flush() }
        let i = count
        tx[i].address = remote
        // The slot's full size, in place: the bytes are overwritten below.
        let room = Self.maxDatagram
        if tx[i].payload.count < room {
            // From a buffer made once: a `repeatElement` goes through a generic iterator, which a
            // debug build allocates for per element.
            tx[i].payload.append(contentsOf: UnsafeRawBufferPointer(rebasing: zeros[0..<(room - tx[i].payload.count)]))
        }
        sequence &+= 1
        let seq = sequence
        let ok = tx[i].payload.withUnsafeMutableBytes { out -> Int in
            out[0] = 0x80
            out[1] = payloadType
            out[2] = UInt8(truncatingIfNeeded: seq >> 8)
            out[3] = UInt8(truncatingIfNeeded: seq)
            RelayFrame.put32(0, out, 4)
            RelayFrame.put32(ssrc, out, 8)
            // Room for the SRTP tag after the payload.
            let body = fill(UnsafeMutableRawBufferPointer(rebasing: out[0..<(room - 32)]), 12)
            guard body >= 0 else { return -1 }
            return srtpOutRef.with { session in (try? session.protect(rtp: out, length: 12 + body)) ?? -1 }
        }
        guard ok > 0 else {
            counters.malformed += 1
            return
        }
        tx[i].payload.removeLast(room - ok)
        count += 1
    }

    func flush() {
        guard count > 0 else { return }
        _ = try? socket.send(tx[0..<count])
        count = 0
    }
}

/// The monotonic clock in nanoseconds.
enum MonotonicNanoseconds {
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
