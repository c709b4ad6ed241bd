import AtriumCongestion
import AtriumDTLS
import AtriumForwarding
import AtriumICE
import AtriumSRTP
import AtriumUDP

/// One WebRTC transport (mediasoup's WebRtcTransport), by its parts: the session with the peer (ICE,
/// DTLS, SRTP: `PeerSession`), the producers it receives (`RtpListener`), the consumers it sends,
/// the path toward a subscriber (`Downlink`) and the retransmission budget. Owned by the worker thread.
final class Transport {
    let id: String
    let label: String
    unowned let router: Router
    /// The ICE, DTLS and SRTP state with the peer (`PeerSession`).
    let session: PeerSession
    var midExtensionID: UInt8?
    var twccExtensionID: UInt8?
    var twcc = TransportWideRecorder()
    /// Its producers by SSRC, mid and rid (`RtpListener`).
    let listener = RtpListener()
    var consumers: [Consumer] = []
    var consumersBySSRC: [UInt32: Consumer] = [:]
    /// Where each continuous SSRC's output stands since its last consumer ended
    /// (`ConsumerSpec.continuous`): its next consumer goes on from there.
    var continuations: [UInt32: Continuation] = [:]

    struct Continuation {
        var sequence: UInt16
        var rtxSequence: UInt16
        var timestamps: TimestampMapper
    }
    /// The SSRC this side writes as the sender of its RTCP feedback and reports.
    let rtcpSSRC: UInt32
    var packetsIn = 0
    var bytesIn = 0
    var packetsOut = 0
    var bytesOut = 0
    var sendErrors = 0
    /// What retransmission toward the transport may still spend, and what it refused.
    var retransmission = RetransmissionBudget()
    var rtt: Double?
    /// How long the viewer may still ask for a packet it was sent (`RetransmissionBuffer.hold`), from
    /// its round trip and pacer queue, once a second.
    var nackHold = RetransmissionBuffer.unmeasuredHold
    /// The latest fraction of media lost on this transport (0 to 1): from the subscriber's receiver
    /// reports toward a subscriber, from our own reception statistics from a publisher.
    var loss: Double?
    /// Bandwidth estimation, probing, allocation and pacing toward a subscriber (`Downlink`).
    let downlink = Downlink()
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
        session = PeerSession(ice: ice, remote: spec.remote)
        midExtensionID = spec.remote?.midExtensionID
        twccExtensionID = spec.remote?.transportWideCCExtensionID
        self.rtcpSSRC = rtcpSSRC
    }

    var isSecure: Bool { (session.srtpIn != nil && session.srtpOut != nil) || pipe != nil }
    /// A pipe transport (mediasoup's PipeTransport inside one process): it carries a far worker's
    /// pipe producers, fed through this link from the room's home worker, and has no peer.
    var pipe: PipeLink?
    /// Its data channels, once DTLS is up and the peer negotiated them.
    var data: DataSession?

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
        listener.detach()
        consumers.removeAll()
        consumersBySSRC.removeAll()
    }
}
