public import AtriumDTLS
internal import AtriumRTP
internal import AtriumSRTP
internal import AtriumSTUN
public import AtriumUDP

/// One WebRTC peer connection of the load clients, reduced to what an SFU needs to see: ICE
/// connectivity checks with short-term credentials (RFC 8445 section 7.2, as the controlling agent
/// with USE-CANDIDATE or as the controlled one answering the server's checks), the DTLS-SRTP
/// handshake (RFC 5764) in either role, then SRTP both ways. It decodes nothing: received RTP is
/// decrypted, its `PayloadStamp` counted and its latency recorded.
///
/// Not thread-safe: the process's one loop owns every peer. Each peer has its own UDP socket.
public final class LoadPeer {
    public enum State: String, Sendable {
        case new, checking, handshaking, connected, failed
    }

    /// What the remote SDP said.
    public struct Remote: Sendable {
        public var ufrag: String
        public var password: String
        public var fingerprint: DTLSFingerprint
        /// This peer's DTLS role (from the answer's or the offer's `a=setup`).
        public var dtlsRole: DTLSRole
        /// Whether this peer is the controlling ICE agent (it nominates with USE-CANDIDATE).
        public var controlling: Bool
        public var candidates: [SocketAddress]

        public init(
            ufrag: String, password: String, fingerprint: DTLSFingerprint, dtlsRole: DTLSRole, controlling: Bool,
            candidates: [SocketAddress]
        ) {
            self.ufrag = ufrag
            self.password = password
            self.fingerprint = fingerprint
            self.dtlsRole = dtlsRole
            self.controlling = controlling
            self.candidates = candidates
        }
    }

    public let socket: UDPSocket
    public let localUfrag: String
    public let localPassword: String
    public let certificate: DTLSCertificate
    public private(set) var state: State = .new
    public private(set) var failure: String?
    public var counters = ReceiveCounters()
    /// Sequence numbers the remote asked to have again (Generic NACK), by media SSRC, until taken.
    public var nacked: [(ssrc: UInt32, sequence: UInt16)] = []
    /// SSRCs the server asked key frames for (PLI, FIR) since the owner last took them.
    public var keyFrameRequests: [UInt32] = []
    /// What to send at the next `flush`.
    public private(set) var outbox: [Datagram] = []
    /// Packets SRTP could not protect (none expected; counted rather than trapped).
    public private(set) var sendFailures = 0
    /// For an owner that reads the media (a native viewer): decrypted RTP packets are kept here until
    /// taken. Off for the load clients, which only count.
    public var keepsReceived = false
    public var received: [[UInt8]] = []
    /// When the first RTP packet that decrypted arrived (CLOCK_MONOTONIC nanoseconds, the kernel's
    /// receive time): a benchmark's join latency ends there.
    public private(set) var firstMediaNanoseconds: UInt64?

    private var remote: Remote?
    private var selected: SocketAddress?
    private var iceSucceeded = false
    private var dtls: DTLSEndpoint?
    private var srtpIn: SRTPSession?
    private var srtpOut: SRTPSession?
    private let transactionHigh: UInt32
    private var transactionCounter: UInt64 = 0
    private var nextCheck: UInt64 = 0
    private let tieBreaker: UInt64
    /// The last sender report of each SSRC the server sends (the middle 32 bits of its NTP time, and
    /// when it arrived), answered once a second by a receiver report as a browser's are (RFC 3550
    /// section 6.4.2): the server measures the round trip from them. At most 31, one report's blocks: the
    /// least recently heard gives way.
    private var senderReports: [(ssrc: UInt32, middle: UInt32, at: UInt64)] = []
    private var nextReport: UInt64 = 0
    static let reportInterval: UInt64 = 1_000_000_000

    /// Checks every 50 ms until one succeeds, then every 2 s (consent freshness, RFC 7675).
    static let checkInterval: UInt64 = 50_000_000
    static let consentInterval: UInt64 = 2_000_000_000

    /// `bind`: the socket's address (the load clients stay on 127.0.0.1; a native client takes any).
    public init(
        certificate: DTLSCertificate, ufrag: String, password: String, seed: UInt64,
        bind: SocketAddress = .loopbackV4(port: 0)
    ) throws(UDPError) {
        socket = try UDPSocket(bindingTo: bind, batchSize: UDPSocket.maxBatchSize, maxDatagramSize: 1500)
        _ = try? socket.setBufferSizes(receive: 4 << 20, send: 1 << 20)
        // The latency counts from when a datagram reached the socket, however long it waited there.
        try? socket.enableReceiveTimestamps()
        self.certificate = certificate
        localUfrag = ufrag
        localPassword = password
        transactionHigh = UInt32(truncatingIfNeeded: seed &* 0x9E37_79B9_7F4A_7C15 >> 17)
        tieBreaker = seed &* 0xBF58_476D_1CE4_E5B9
    }

    /// Starts connecting to the remote side described by its SDP.
    public func connect(_ remote: Remote, now: UInt64) throws(DTLSError) {
        self.remote = remote
        dtls = try DTLSEndpoint(
            role: remote.dtlsRole, certificate: certificate, remoteFingerprint: remote.fingerprint,
            options: DTLSOptions(initialRetransmitTimeout: .milliseconds(200)))
        state = .checking
        nextCheck = now
    }

    /// Sends an RTP packet (protected here) once connected; before that it is dropped.
    public func send(rtp packet: inout [UInt8]) {
        guard state == .connected, let srtpOut, let selected else { return }
        do {
            try srtpOut.protect(rtp: &packet)
            outbox.append(Datagram(address: selected, payload: packet))
        } catch { sendFailures += 1 }
    }

    /// Sends an RTCP compound packet (protected here) once connected.
    public func send(rtcp packet: inout [UInt8]) {
        guard state == .connected, let srtpOut, let selected else { return }
        do {
            try srtpOut.protectRTCP(&packet)
            outbox.append(Datagram(address: selected, payload: packet))
        } catch { sendFailures += 1 }
    }

    /// Sends what is queued; what the socket does not take is dropped (a load client does not retry).
    public func flush() {
        guard !outbox.isEmpty else { return }
        _ = try? socket.send(outbox)
        outbox.removeAll(keepingCapacity: true)
    }

    /// Timers: connectivity checks and consent, DTLS retransmissions.
    public func tick(now: UInt64) {
        guard let remote, state != .failed else { return }
        if now >= nextCheck {
            for address in selected.map({ [$0] }) ?? remote.candidates { sendCheck(to: address, remote) }
            nextCheck = now + (iceSucceeded ? Self.consentInterval : Self.checkInterval)
        }
        if state == .connected && !senderReports.isEmpty && now >= nextReport {
            nextReport = now + Self.reportInterval
            sendReceiverReport(now: now)
        }
        if let dtls, state == .handshaking, let selected, let t = dtls.nextTimeout, t == .zero || t < .milliseconds(1) {
            do {
                for d in try dtls.timeout() { outbox.append(Datagram(address: selected, payload: d)) }
            } catch { fail("DTLS: \(error)") }
        }
    }

    /// The DTLS retransmission timer may be due before the next check: the loop calls `tick` at
    /// least every 20 ms, which is enough for a load client.
    public func receive(
        _ datagram: inout [UInt8], from address: SocketAddress, now: UInt64, latency: inout LatencyHistogram
    ) {
        guard datagram.count > 1 else { return }
        switch PacketDemultiplexer.classify(datagram) {
        case .rtp: receiveRTP(&datagram, now: now, latency: &latency)
        case .rtcp: receiveRTCP(&datagram, now: now)
        case .stun: receiveSTUN(datagram, from: address)
        case .dtls: receiveDTLS(datagram, from: address)
        default: break
        }
    }

    /// Receives everything waiting on the socket, `batchSize` datagrams per system call, each
    /// handled where the kernel put it (`receive(inPlace:)`) and timed from when it reached the
    /// socket (the kernel's receive timestamp); returns how many datagrams arrived. The latency
    /// histogram is borrowed once for the whole drain, not once per packet.
    public func receiveWaiting(latency: inout LatencyHistogram) -> Int {
        var total = 0
        while true {
            var now: UInt64 = 0
            var offset: UInt64 = 0
            let received = try? socket.receiveInPlace { index, bytes in
                if index == 0 {
                    now = MonotonicClock.nanoseconds()
                    offset = MonotonicClock.realtimeOffset()
                }
                // When it reached the socket (the kernel's stamp on CLOCK_REALTIME, moved to
                // CLOCK_MONOTONIC), else when it was read.
                let arrived = socket.receivedTimestamp(index).map { $0 &- offset } ?? now
                receive(
                    inPlace: bytes, source: { socket.receivedSource(index) }, now: min(arrived, now), latency: &latency)
            }
            guard let n = received else { return total }
            total += n
            if n < socket.batchSize { return total }
        }
    }

    /// `receive` for a datagram where the socket received it (`UDPSocket.receiveInPlace`): RTP is
    /// decrypted and counted in place, without a copy or an allocation; anything else (RTCP, STUN,
    /// DTLS: a few a second) is copied out and takes the general path, with the source `source` reads.
    public func receive(
        inPlace datagram: UnsafeMutableRawBufferPointer, source: () -> SocketAddress?, now: UInt64,
        latency: inout LatencyHistogram
    ) {
        guard datagram.count > 1 else { return }
        // RTP by its first two bytes (RFC 7983: 128-191, then not an RTCP packet type), read directly.
        if datagram[0] >= 128 && datagram[0] <= 191 && !PacketDemultiplexer.isRTCP(secondByte: datagram[1]) {
            receiveRTP(datagram, now: now, latency: &latency)
            return
        }
        guard let address = source() else { return }
        var copy = Array(datagram)
        receive(&copy, from: address, now: now, latency: &latency)
    }

    private func receiveRTP(_ p: inout [UInt8], now: UInt64, latency: inout LatencyHistogram) {
        p.withUnsafeMutableBytes { receiveRTP($0, now: now, latency: &latency) }
    }

    /// Decrypts in place, then counts the stamp read where it lies: one access to `counters` per packet.
    private func receiveRTP(_ p: UnsafeMutableRawBufferPointer, now: UInt64, latency: inout LatencyHistogram) {
        guard let srtpIn else { return }
        let length: Int
        do { length = try srtpIn.unprotect(srtp: p, length: p.count) } catch {
            counters.undecryptable += 1
            return
        }
        if firstMediaNanoseconds == nil { firstMediaNanoseconds = now }
        let plain = UnsafeRawBufferPointer(rebasing: p[0..<min(length, p.count)])
        // At most 4096 waiting: an owner that stopped taking them does not grow without bound.
        if keepsReceived && received.count < 4096 { received.append(Array(plain)) }
        let stamp = RTPPayload.bounds(plain).flatMap { PayloadStamp(plain, payloadStart: $0.start, end: $0.end) }
        counters.countDecrypted(stamp, bytes: length)
        if let stamp, now > stamp.sentNanoseconds { latency.record(nanoseconds: now - stamp.sentNanoseconds) }
    }

    /// A report block for each sender report heard: its time and how long ago it came (the loss
    /// fields are left at zero: a load client counts what it lost itself).
    private func sendReceiverReport(now: UInt64) {
        let blocks = senderReports.map { r in
            let since = min(now >= r.at ? now - r.at : 0, 60_000_000_000)
            return ReceptionReport(
                ssrc: r.ssrc, fractionLost: 0, cumulativeLost: 0, extendedHighestSequence: 0, jitter: 0,
                lastSenderReport: r.middle,
                delaySinceLastSenderReport: UInt32(truncatingIfNeeded: since * 65536 / 1_000_000_000))
        }
        let ssrc = transactionHigh | 1
        guard var bytes = try? RTCPCompound.serialize([.receiverReport(ReceiverReport(ssrc: ssrc, reports: blocks))])
        else { return }
        send(rtcp: &bytes)
    }

    private func receiveRTCP(_ p: inout [UInt8], now: UInt64) {
        guard let srtpIn else { return }
        do { try srtpIn.unprotectRTCP(&p) } catch { return }
        counters.rtcp += 1
        guard let packets = try? RTCPCompound.parse(p) else { return }
        for packet in packets {
            switch packet {
            case .senderReport(let sr):
                let middle = UInt32(truncatingIfNeeded: sr.ntpTimestamp >> 16)
                if let i = senderReports.firstIndex(where: { $0.ssrc == sr.ssrc }) {
                    senderReports[i] = (sr.ssrc, middle, now)
                } else {
                    // The least recently heard gives way (an SSRC that stopped).
                    if senderReports.count == 31,
                        let i = senderReports.indices.min(by: { senderReports[$0].at < senderReports[$1].at })
                    {
                        senderReports.remove(at: i)
                    }
                    senderReports.append((sr.ssrc, middle, now))
                }
            case .pictureLossIndication(let pli): keyFrameRequests.append(pli.sources.mediaSSRC)
            case .nack(let n):
                // Kept until the owner takes them; an owner that never does (a load client) keeps
                // at most 4096.
                for s in n.sequenceNumbers where nacked.count < 4096 { nacked.append((n.sources.mediaSSRC, s)) }
            case .fullIntraRequest(let fir): keyFrameRequests += fir.entries.map(\.ssrc)
            default: break
            }
        }
    }

    private func receiveSTUN(_ bytes: [UInt8], from address: SocketAddress) {
        guard let remote, let message = try? STUNMessage(parsing: bytes) else { return }
        if message.type == .bindingRequest {
            let key = STUNIntegrity.shortTermKey(password: localPassword)
            guard (try? message.verifyMessageIntegrity(key: key)) != nil, case .v4(let ip, let port) = address
            else { return }
            outbox.append(
                Datagram(
                    address: address,
                    payload: STUNMessageBuilder.bindingSuccess(
                        transactionID: message.transactionID,
                        mappedAddress: STUNTransportAddress(address: .v4(ip), port: port), key: key)))
            // The controlled side follows the controlling agent's nomination; a valid check also
            // proves the path for a server that checks first.
            if selected == nil || message.useCandidate { selected = address }
            if !remote.controlling && message.useCandidate { iceDone() }
        } else if message.type == .bindingSuccess, message.transactionID.high == transactionHigh {
            let key = STUNIntegrity.shortTermKey(password: remote.password)
            guard (try? message.verifyMessageIntegrity(key: key)) != nil else { return }
            if selected == nil || remote.controlling { selected = address }
            iceDone()
        }
    }

    private func iceDone() {
        let first = !iceSucceeded
        iceSucceeded = true
        guard first, state == .checking, let dtls, let selected else { return }
        state = .handshaking
        guard dtls.state == .idle else { return }
        do {
            for d in try dtls.start() { outbox.append(Datagram(address: selected, payload: d)) }
        } catch { fail("DTLS start: \(error)") }
    }

    private func receiveDTLS(_ bytes: [UInt8], from address: SocketAddress) {
        guard let dtls else { return }
        if selected == nil { selected = address }
        guard let selected else { return }
        if state == .checking {
            // A server's ClientHello can come before our check's answer.
            state = .handshaking
        }
        do {
            let out = try dtls.receive(bytes)
            for d in out.datagrams { outbox.append(Datagram(address: selected, payload: d)) }
            for case .connected(let keys) in out.events {
                srtpIn = try keys.inboundSession()
                srtpOut = try keys.outboundSession()
                state = .connected
            }
        } catch { fail("DTLS: \(error)") }
    }

    private func sendCheck(to address: SocketAddress, _ remote: Remote) {
        transactionCounter += 1
        var b = STUNMessageBuilder(
            type: .bindingRequest, transactionID: STUNTransactionID(high: transactionHigh, low: transactionCounter))
        do {
            try b.appendUsername("\(remote.ufrag):\(localUfrag)")
            try b.appendPriority(2_130_706_431)
            if remote.controlling {
                try b.appendICEControlling(tieBreaker: tieBreaker)
                try b.appendUseCandidate()
            } else {
                try b.appendICEControlled(tieBreaker: tieBreaker)
            }
            try b.appendMessageIntegrity(key: STUNIntegrity.shortTermKey(password: remote.password))
            try b.appendFingerprint()
        } catch {
            fail("STUN: \(error)")
            return
        }
        outbox.append(Datagram(address: address, payload: b.bytes))
    }

    private func fail(_ why: String) {
        state = .failed
        failure = why
    }
}
