import AtriumCongestion
import AtriumDTLS
import AtriumICE
import AtriumSRTP
import AtriumUDP

/// One WebRTC transport (mediasoup's WebRtcTransport): the ICE-lite agent, the DTLS association, the
/// SRTP contexts, the peer's address and the producers or consumers carried over it. Owned by the
/// worker thread.
final class Transport {
    let id: String
    let label: String
    unowned let router: Router
    var ice: ICELiteAgent
    var remote: RemoteSpec?
    var dtls: DTLSEndpoint?
    /// The address whose datagrams drive the DTLS association's handshake.
    var dtlsAddress: SocketAddress?
    var srtpIn: SRTPSession? { didSet { srtpInRef = srtpIn.map(Borrowed.init) } }
    var srtpOut: SRTPSession? { didSet { srtpOutRef = srtpOut.map(Borrowed.init) } }
    /// The same sessions for the packet path, which reaches them without reference counting.
    private(set) var srtpInRef: Borrowed<SRTPSession>?
    private(set) var srtpOutRef: Borrowed<SRTPSession>?
    /// Where media goes: the nominated pair, else the first valid one.
    var peer: SocketAddress?
    var addresses: Set<SocketAddress> = []
    var midExtensionID: UInt8?
    var twccExtensionID: UInt8?
    var twcc = TransportWideRecorder()
    var producers: [Producer] = []
    var producersBySSRC: [UInt32: Producer] = [:] { didSet { producerRefs = producersBySSRC.mapValues(Borrowed.init) } }
    var producersByRTXSSRC: [UInt32: Producer] = [:] {
        didSet { rtxProducerRefs = producersByRTXSSRC.mapValues(Borrowed.init) }
    }
    /// The two maps above for the packet path (`Borrowed`), rebuilt when they change (a new SSRC).
    private(set) var producerRefs: [UInt32: Borrowed<Producer>] = [:]
    private(set) var rtxProducerRefs: [UInt32: Borrowed<Producer>] = [:]
    var producersByMid: [String: Producer] = [:]
    var rejectedMids: Set<String> = []
    var rejectedSSRCs: Set<UInt32> = []
    var endedMids: Set<String> = []
    var endedSSRCs: Set<UInt32> = []
    /// The streams (rid, SSRC, RTX SSRC) the last ended producer of each mid had learned, for its successor.
    var endedStreamsByMid: [String: [(rid: String?, ssrc: UInt32?, rtx: UInt32?)]] = [:]
    var consumers: [Consumer] = []
    var consumersBySSRC: [UInt32: Consumer] = [:]
    /// The SSRC this side writes as the sender of its RTCP feedback and reports.
    let rtcpSSRC: UInt32
    var connected = false
    /// Counts ICE restarts; a DTLS association records the one it began in. A peer's new ClientHello
    /// is taken as a new association only after an ICE restart (a browser's new BUNDLE transport).
    var iceGeneration = 0
    var dtlsGeneration = 0
    var packetsIn = 0
    var bytesIn = 0
    var packetsOut = 0
    var bytesOut = 0
    var sendErrors = 0
    var retransmissionsRefused = 0
    /// Bytes of retransmission the transport may still send: refilled by a share of the media it is
    /// sent, capped (`MediaEngine.retransmissionBudget`).
    var retransmissionAllowance = MediaEngine.retransmissionBurst
    var rtt: Double?
    /// The latest fraction of media lost on this transport (0 to 1): from the subscriber's receiver
    /// reports toward a subscriber, from our own reception statistics from a publisher.
    var loss: Double?
    /// Toward a subscriber that negotiated transport-wide feedback: the next transport-wide sequence
    /// number, when each one went and how big it was (ring of 4096), and the estimate built from the
    /// feedback (`MediaEngine+Estimation`).
    var sendSequence: UInt16 = 0
    var sentAt: [Double] = []
    var sentSize: [Int32] = []
    var sentTag: [Int32] = []
    var trend = TrendlineEstimator()
    var rate = RateController()
    var estimating = false
    var ackedBytes = 0
    var lastRateUpdate: Double?
    var feedbackReceived = 0
    var feedbackLost = 0
    var lastLossUpdate: Double = 0
    /// The probe cluster each sent sequence number belonged to (same ring; -1 none), the estimator
    /// of their results, when to probe, and the cluster being sent (`MediaEngine+Probing`).
    var sentCluster: [Int16] = []
    var probeEstimator = ProbeBitrateEstimator()
    var probes = ProbeController()
    var probing: ProbeInProgress?
    /// Since when the pacer has held packets, as the ticks saw it (nil: empty at the last tick).
    var queuedSince: Double?
    /// The last cluster started and the bytes it was to send (judged once 95 % of them are reported,
    /// received or lost).
    var probeCluster: (cluster: Int, bytes: Int) = (-1, 0)
    var probeBytes = 0
    /// A subscriber without transport-wide feedback that sends REMB: its REMBs (`REMBEstimate`) are
    /// its estimate.
    var rembEstimate = false
    var rembs = REMBEstimate()
    /// The estimate last reported to the coordinator (`MediaEvent.estimate`).
    var reportedEstimate: Double?
    var reportedBottleneck = false
    /// The allocator's last word (`MediaCommand.allocate`): nil before the first.
    var allocated: Double?
    var wanted: Double?
    /// The estimate at which every track could step up to its top (`Allocator.Result.needed`).
    var needed: Double?
    var pausedTracks = 0
    /// The pacer: a token bucket at the rate controller's pacing rate and the packets it holds back
    /// (`MediaEngine+Pacer`), with what it did.
    var bucket: TokenBucket?
    var paced = PacerQueue()
    var pacerDelayed = 0
    var pacerDropped = 0
    /// Receive-side bandwidth estimate for REMB, bits per second, and the bytes counted since the last.
    var estimate: Double = 1_000_000
    var bytesSinceReport = 0
    var lastTransportFeedback: Double = 0
    /// The last STUN, DTLS, RTP or RTCP datagram from the peer (engine seconds): a transport heard
    /// from lately is alive, so one of its SSRCs falling silent means that sender stopped.
    var lastHeard: Double = 0

    init(spec: TransportSpec, router: Router, ice: ICELiteAgent, rtcpSSRC: UInt32) {
        id = spec.id
        self.router = router
        label = spec.label
        self.ice = ice
        remote = spec.remote
        midExtensionID = spec.remote?.midExtensionID
        twccExtensionID = spec.remote?.transportWideCCExtensionID
        self.rtcpSSRC = rtcpSSRC
    }

    var isSecure: Bool { (srtpIn != nil && srtpOut != nil) || pipe != nil }
    /// A pipe transport (mediasoup's PipeTransport inside one process): it carries a far worker's
    /// pipe producers, fed through this link from the room's home worker, and has no peer.
    var pipe: PipeLink?
    /// Whether something estimates the bandwidth toward this subscriber.
    var hasEstimate: Bool { estimating || rembEstimate }

    func add(_ p: Producer) {
        // A transceiver given a new track (RTCRtpSender.replaceTrack) keeps its SSRCs, and Chromium no
        // longer sends the mid extension on them. When the offer does not list them (simulcast: rids
        // instead of a=ssrc), the new producer of the mid takes over the ended one's.
        // Streams match by rid (a single stream: the one of the ended producer).
        if p.streams.allSatisfy({ $0.ssrc == nil && $0.rtxSSRC == nil }),
            let old = endedStreamsByMid.removeValue(forKey: p.spec.mid)
        {
            for k in p.streams.indices {
                guard
                    let o = p.streams.count == 1 && old.count == 1
                        ? old.first : old.first(where: { $0.rid == p.streams[k].rid })
                else { continue }
                p.streams[k].ssrc = o.ssrc
                p.streams[k].rtxSSRC = o.rtx
                for s in [o.ssrc, o.rtx].compactMap({ $0 }) { endedSSRCs.remove(s) }
            }
        }
        producers.append(p)
        producersByMid[p.spec.mid] = p
        for stream in p.streams {
            if let s = stream.ssrc { producersBySSRC[s] = p }
            if let s = stream.rtxSSRC { producersByRTXSSRC[s] = p }
        }
        rejectedMids.remove(p.spec.mid)
        endedMids.remove(p.spec.mid)
    }

    func remove(_ p: Producer) {
        producers.removeAll { $0 === p }
        if producersByMid[p.spec.mid] === p { producersByMid[p.spec.mid] = nil }
        producersBySSRC = producersBySSRC.filter { $0.value !== p }
        producersByRTXSSRC = producersByRTXSSRC.filter { $0.value !== p }
        endedMids.insert(p.spec.mid)
        for stream in p.streams {
            if let s = stream.ssrc { endedSSRCs.insert(s) }
            if let s = stream.rtxSSRC { endedSSRCs.insert(s) }
        }
        let learned = p.streams.filter { $0.ssrc != nil || $0.rtxSSRC != nil }
        if !learned.isEmpty { endedStreamsByMid[p.spec.mid] = learned.map { ($0.rid, $0.ssrc, $0.rtxSSRC) } }
    }

    func add(_ c: Consumer) {
        consumers.append(c)
        consumersBySSRC[c.spec.ssrc] = c
        if let r = c.spec.rtxSSRC { consumersBySSRC[r] = c }
    }

    func remove(_ c: Consumer) {
        consumers.removeAll { $0 === c }
        consumersBySSRC = consumersBySSRC.filter { $0.value !== c }
    }

    /// Lets go of every producer and consumer. They hold their transport strongly (a `let` the packet
    /// path reads without reference counting), so the engine's `deinit` breaks these cycles.
    func detach() {
        producers.removeAll()
        producersBySSRC.removeAll()
        producersByRTXSSRC.removeAll()
        producersByMid.removeAll()
        consumers.removeAll()
        consumersBySSRC.removeAll()
    }
}
