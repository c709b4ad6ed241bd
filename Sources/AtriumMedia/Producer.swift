import AtriumForwarding
import AtriumRTP

/// A track received from a publisher transport (mediasoup's Producer): one receive stream per
/// encoding (one, or a simulcast's two or three), the consumers it feeds, and what the track reports
/// as a whole. Owned by the worker thread.
final class Producer {
    let spec: ProducerSpec
    /// Strong, as a consumer's (`Consumer.producer`): `close` and `Transport.detach` break the cycle.
    let transport: Transport
    let codec: VideoCodec?
    /// Bottom layer first; a single-stream track has one, without a rid.
    var streams: [ReceiveStream]
    var paused: Bool
    var consumers: [Consumer] = [] { didSet { consumerRefs = consumers.map(Borrowed.init) } }
    /// The consumers for the packet path (`Borrowed`), rebuilt when one comes or goes.
    private(set) var consumerRefs: [Borrowed<Consumer>] = []
    /// Recording outputs fed with its packets.
    var sinks: [RecordingSink] = []
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
    /// The streams that sent an RTCP BYE (bit k: stream k).
    var byes: UInt8 = 0
    /// The streams that arrive (bit k: stream k), as last handed to the consumers' selectors.
    var availableMask: UInt8 = 0
    /// SVC (VP9 in one stream): the spatial layers' sizes from the stream's scalability structure,
    /// bottom first; empty until the first key picture.
    var svcLayers: [LayerChoice.Size] = []
    /// AV1: the last template dependency structure (sent with key frames).
    var structure: DependencyStructure?
    /// The streams some consumer or pipe wants (bit k: stream k), as `reportWanted` last found them;
    /// all until then. A camera's stream outside it is not cached.
    var wantedMask: UInt8 = .max
    /// The rids last reported as wanted (`MediaEvent.layersWanted`); nil before the first report.
    var reportedWanted: [String]?
    /// The layers last reported to the coordinator (`MediaEvent.layers`).
    var reportedLayers: [LayerStats] = []
    /// On its home worker: the pipes to the other workers with viewers of it.
    var pipes: [PipeOutput] = []
    /// On a far worker, a pipe producer: the link its packets come through (nil: a publisher's track).
    var pipeInput: PipeInput?
    /// A pipe producer's wanted streams as last sent home.
    var pipeWanted: UInt8 = 0

    static let keyFrameRequestInterval = 0.3
    /// A stream without a packet for this long has stopped arriving: its viewers move down a layer.
    static let streamTimeout = 1.0

    init(spec: ProducerSpec, transport: Transport, cache: KeyFrameCache.Limits = .disabled) {
        self.spec = spec
        self.transport = transport
        codec = spec.videoCodec.flatMap { VideoCodec(encodingName: $0) }
        let video = spec.kind == .video
        if spec.encodings.count > 1 {
            streams = spec.encodings.map {
                ReceiveStream(
                    rid: $0.rid, size: LayerChoice.Size(width: $0.width, height: $0.height), ssrc: nil, rtxSSRC: nil,
                    video: video, cache: cache)
            }
        } else {
            streams = [
                ReceiveStream(
                    rid: spec.encodings.first?.rid, size: LayerChoice.Size(width: 0, height: 0), ssrc: spec.ssrc,
                    rtxSSRC: spec.rtxSSRC, video: video, cache: cache)
            ]
        }
        paused = spec.paused
    }

    var isVideo: Bool { spec.kind == .video }
    var isSimulcast: Bool { streams.count > 1 }
    /// One VP9 stream, or one AV1 stream with the dependency descriptor, that may carry spatial and
    /// temporal layers: its consumers select layers.
    var isSVC: Bool {
        !isSimulcast && (codec == .vp9 || (codec == .av1 && spec.dependencyDescriptorID != nil))
    }
    /// The sizes a viewer's preference is mapped onto: the simulcast streams', or the SVC layers'.
    var layerSizes: [LayerChoice.Size] { isSimulcast ? streams.map(\.size) : svcLayers }
    var isScreenShare: Bool { spec.source == "screen_share" }

    /// Whether a consumer waits for a key frame (by index: the generic `contains(where:)` allocates
    /// per element in a debug build).
    var hasConsumerWaitingForKeyFrame: Bool {
        var j = 0
        while j < consumers.count {
            if consumers[j].waitingForKeyFrame { return true }
            j += 1
        }
        return false
    }

    /// The stream an SSRC belongs to, and whether it is that stream's RTX.
    func stream(ssrc: UInt32) -> (Int, Bool)? {
        for k in streams.indices {
            if streams[k].ssrc == ssrc { return (k, false) }
            if streams[k].rtxSSRC == ssrc { return (k, true) }
        }
        return nil
    }

    /// The stream a rid names (RFC 8852 `rtp-stream-id` or `repaired-rtp-stream-id`).
    func stream(rid: ArraySlice<UInt8>) -> Int? {
        streams.firstIndex { s in s.rid.map { $0.utf8.elementsEqual(rid) } ?? false }
    }

    /// Asks for a key frame of stream `k` at the next tick (throttled there).
    func requestKeyFrame(stream k: Int = 0) {
        if isVideo, streams.indices.contains(k) { streams[k].keyFrameWanted = true }
    }
}

/// A piped producer's way to one far worker: the link, its tag there, and the streams that worker's
/// viewers want (bit k: stream k; the bottom one until it says).
struct PipeOutput {
    let link: PipeLink
    let tag: UInt32
    var wanted: UInt8 = 1
}

/// Where a pipe producer's packets come from.
struct PipeInput {
    let link: PipeLink
    let tag: UInt32
}

/// One encoding a producer receives (mediasoup's RtpStreamRecv): its SSRCs (from the offer, or learned
/// from the first packet naming its mid and rid), reception statistics, NACK list and retransmission
/// buffer, and its last sender report for aligning timelines when a viewer switches streams.
struct ReceiveStream {
    let rid: String?
    /// The size the publisher declared for this layer; 0 by 0 when unknown.
    let size: LayerChoice.Size
    var ssrc: UInt32?
    var rtxSSRC: UInt32?
    var stats = ReceiveStatistics()
    var nacks = NackList()
    var buffer: RetransmissionBuffer?
    /// Last PLI sent for this stream (engine seconds); PLIs are throttled to one per 300 ms.
    var lastKeyFrameRequest: Double = -10
    var keyFrameWanted = false
    /// The first key-frame request since the last key frame (engine seconds), and what the publisher's
    /// answers to such requests said lately (`ViewerStart`).
    var pendingRequestAt: Double?
    var answers = ViewerStart.Answers.unknown
    /// Whether a key frame came yet (requests before the first are not answers' to wait for).
    var hadKeyFrame = false
    /// Whether a request ever went unanswered: its pictures are kept whole from then on (a camera
    /// whose periodic key frames can look like answers to the requests repeated while a viewer waits).
    var ignoredRequests = false
    var packetsIn = 0
    /// A pipe producer's stream: the pipe carried some of it since it was last wanted.
    var pipeCarried = false
    /// The last packet of this stream (engine seconds); nil before the first.
    var lastPacketAt: Double?
    /// The last sender report: its NTP time in seconds and the RTP timestamp it maps to.
    var reportNTP: Double?
    var reportRTP: UInt32 = 0
    /// The octet count of the last sender report (payload octets, RFC 3550 section 6.4.1: no headers,
    /// no padding): a report whose count has not moved since is not activity. A sender can outlive
    /// its track and go on reporting (aiortc's), and Chromium's goes on sending padding for its
    /// bandwidth estimation after `track.stop()`, which moves its packet count but not its octets.
    var reportOctets: UInt32?
    /// The current picture, for starting new viewers at once (video only).
    var cache: KeyFrameCache
    /// The picture size the last key frame gave (VP8's frame header); 0 when unknown.
    var width = 0
    var height = 0
    /// Frames (packets with the marker bit) since the last once-a-second count, and that count.
    var frames = 0
    var framesPerSecond = 0
    /// Bytes since the last once-a-second count, the rate that count gave (bits per second) and the
    /// last nonzero one (a stream the publisher turned off keeps what it cost).
    var bytes = 0
    var bitrate = 0.0
    var lastBitrate = 0.0
    /// The same counts per temporal layer (VP8's TID, two bits), since the last once-a-second count:
    /// bytes and frames (packets with the marker bit) of each; and the highest TID seen in that
    /// second (-1: none, or no TID in the payload).
    var temporalBytes = [Int](repeating: 0, count: ReceiveStream.temporalLayers)
    var temporalFrames = [Int](repeating: 0, count: ReceiveStream.temporalLayers)
    var topTemporal = -1
    static let temporalLayers = 4
    /// The size in bytes of the last key frame (its packets: those with its RTP timestamp), for the
    /// allocator's cost of a step up to this layer; 0 before one was complete.
    var keyFrameBytes = 0
    private var keyFrameTimestamp: UInt32 = 0
    /// The bytes of the key frame arriving so far; -1 when none is.
    private var keyFrameSoFar = -1

    init(
        rid: String?, size: LayerChoice.Size, ssrc: UInt32?, rtxSSRC: UInt32?, video: Bool,
        cache: KeyFrameCache.Limits = .disabled
    ) {
        self.rid = rid
        self.size = size
        self.ssrc = ssrc
        self.rtxSSRC = rtxSSRC
        self.cache = KeyFrameCache(limits: video ? cache : .disabled)
        if video { buffer = RetransmissionBuffer() }
    }

    /// Counts a packet of temporal layer `tid` (nil: the payload names none).
    mutating func countTemporal(_ tid: UInt8?, bytes: Int, marker: Bool) {
        guard let tid, Int(tid) < Self.temporalLayers else { return }
        let t = Int(tid)
        temporalBytes[t] &+= bytes
        if marker { temporalFrames[t] &+= 1 }
        if t > topTemporal { topTemporal = t }
    }

    /// The last second's temporal layers (each with those below it), and a new count begun. Empty
    /// when only the base layer arrived.
    mutating func takeTemporal(elapsed: Double) -> [TemporalLayerStats] {
        defer {
            for t in 0..<Self.temporalLayers {
                temporalBytes[t] = 0
                temporalFrames[t] = 0
            }
            topTemporal = -1
        }
        guard topTemporal > 0 else { return [] }
        var out: [TemporalLayerStats] = []
        var bytes = 0
        var frames = 0
        for t in 0...topTemporal {
            bytes &+= temporalBytes[t]
            frames &+= temporalFrames[t]
            let seconds = max(elapsed, 0.001)
            out.append(
                TemporalLayerStats(
                    bitrate: Double(bytes * 8) / seconds, framesPerSecond: Int((Double(frames) / seconds).rounded())))
        }
        return out
    }

    /// Measures key frames: a packet that starts one opens the count, those with its timestamp add to
    /// it, the first of another frame closes it.
    mutating func measureKeyFrame(bytes: Int, timestamp: UInt32, starts: Bool) {
        if starts {
            keyFrameTimestamp = timestamp
            keyFrameSoFar = bytes
            return
        }
        guard keyFrameSoFar >= 0 else { return }
        if timestamp == keyFrameTimestamp {
            keyFrameSoFar = min(keyFrameSoFar + bytes, 1 << 30)
            return
        }
        keyFrameBytes = keyFrameSoFar
        keyFrameSoFar = -1
    }

    /// Reads the picture size from a key frame's first packet (RFC 6386 section 9.1: after VP8's
    /// 3-byte frame tag and start code, 14-bit width and height, little-endian).
    /// A key-frame request was sent. Only once the stream has had a key frame: its first one (a sender
    /// starting) answers nothing.
    mutating func keyFrameRequested(now: Double) {
        if pendingRequestAt == nil, hadKeyFrame { pendingRequestAt = now }
    }

    /// A key frame arrived: the answer to the pending request, if any.
    mutating func keyFrameArrived(now: Double) {
        hadKeyFrame = true
        guard let at = pendingRequestAt else { return }
        answers = .within(now - at)
        pendingRequestAt = nil
    }

    /// A request unanswered past `ViewerStart.answerBound`: this publisher does not answer (for now).
    mutating func checkAnswer(now: Double) {
        guard let at = pendingRequestAt, now - at > ViewerStart.answerBound else { return }
        answers = .never
        ignoredRequests = true
        pendingRequestAt = nil
    }

    mutating func noteKeyFrame(_ packet: UnsafeRawBufferPointer, media: Range<Int>, codec: VideoCodec?, now: Double) {
        guard codec == .vp8, media.lowerBound >= 0, media.upperBound <= packet.count else { return }
        let p = UnsafeRawBufferPointer(rebasing: packet[media])
        guard let d = VP8Descriptor(p), d.length + 10 <= p.count else { return }
        let h = d.length
        guard p[h + 3] == 0x9D, p[h + 4] == 0x01, p[h + 5] == 0x2A else { return }
        width = (Int(p[h + 6]) | Int(p[h + 7]) << 8) & 0x3FFF
        height = (Int(p[h + 8]) | Int(p[h + 9]) << 8) & 0x3FFF
    }

    /// The capture time of an RTP timestamp of this stream, by its last sender report.
    func wallClock(of timestamp: UInt32, clockRate: UInt32) -> Double? {
        guard let ntp = reportNTP, clockRate > 0 else { return nil }
        return ntp + Double(Int32(bitPattern: timestamp &- reportRTP)) / Double(clockRate)
    }

    /// The RTP timestamp of this stream for a capture time, by its last sender report.
    func timestamp(at wall: Double, clockRate: UInt32) -> UInt32? {
        guard let ntp = reportNTP, clockRate > 0 else { return nil }
        let ticks = ((wall - ntp) * Double(clockRate)).rounded()
        guard ticks.isFinite, abs(ticks) < Double(Int32.max) else { return nil }
        return reportRTP &+ UInt32(bitPattern: Int32(ticks))
    }
}
