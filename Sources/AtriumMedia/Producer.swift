import AtriumForwarding
import AtriumRTP

/// A track received from a publisher transport (mediasoup's Producer): its SSRCs, the packets kept for
/// retransmission, reception statistics and the consumers it feeds. Owned by the worker thread.
final class Producer {
    let spec: ProducerSpec
    unowned let transport: Transport
    let codec: VideoCodec?
    var ssrc: UInt32?
    var rtxSSRC: UInt32?
    var paused: Bool
    var consumers: [Consumer] = []
    var buffer: RetransmissionBuffer?
    var stats = ReceiveStatistics()
    var nacks = NackList()
    /// Last PLI sent to the publisher (monotonic seconds); PLIs are throttled to one per 300 ms.
    var lastKeyFrameRequest: Double = -10
    var keyFrameWanted = false
    var packetsIn = 0
    var bytesIn = 0
    var packetsOut = 0
    var bytesOut = 0
    var nacksSent = 0
    /// RFC 6464 levels summed since the last report.
    var levelSum = 0
    var levelCount = 0
    var plisSent = 0
    /// The last RTP packet or sender report from the publisher (engine seconds); nil before the first.
    var lastActivity: Double?
    /// Reported as ended (BYE or inactivity): reported once.
    var endReported = false

    static let keyFrameRequestInterval = 0.3

    init(spec: ProducerSpec, transport: Transport) {
        self.spec = spec
        self.transport = transport
        codec = spec.videoCodec.flatMap { VideoCodec(encodingName: $0) }
        ssrc = spec.ssrc
        rtxSSRC = spec.rtxSSRC
        paused = spec.paused
        if spec.kind == .video { buffer = RetransmissionBuffer(capacity: 512) }
    }

    var isVideo: Bool { spec.kind == .video }

    /// Asks for a key frame at the next tick (throttled there).
    func requestKeyFrame() {
        if isVideo { keyFrameWanted = true }
    }
}
