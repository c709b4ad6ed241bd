import AtriumForwarding
import AtriumRTP

/// One subscriber's copy of a producer (mediasoup's Consumer): its own SSRC, gap-free sequence numbers
/// and timeline, a start on a key frame, and the map from its sequence numbers back to the producer's
/// for answering NACKs. What it forwards is decided by its kind (`Layering`): a single stream
/// (mediasoup's SimpleConsumer), simulcast streams (SimulcastConsumer) or SVC layers (SvcConsumer).
/// Owned by the worker thread.
final class Consumer {
    let spec: ConsumerSpec
    /// Strong: a `let` class reference is read without reference counting, an `unowned` one is not.
    /// The engine's `close` functions and its `deinit` break the cycles (`Transport.detach`).
    let producer: Producer
    let transport: Transport
    var seq: SeqManager
    var timestamps: TimestampMapper
    /// Video waits for a key frame before its first packet and after a pause (single stream).
    var waitingForKeyFrame: Bool
    /// Audio after a pause: the next packet re-syncs the sequence numbers.
    var needsSync = false
    /// The first input sequence number forwarded since the last sync: older inputs are not forwarded.
    var syncSequence: UInt16 = 0
    var rtxSequence: UInt16
    /// What each output packet was, by output sequence number (the low bits index it; the tag checks
    /// it), for answering NACKs: only a consumer that negotiated NACK has one, allocated at its
    /// first packet.
    var outputs: [OutputRecord] = []
    var packetsOut = 0
    var bytesOut = 0
    var lastTimestamp: UInt32 = 0
    var lastSentAt: Double = 0
    var closed = false
    /// How the consumer picks what it forwards, by the producer's kind.
    enum Layering: Equatable {
        /// One stream: starts, and starts again after a pause, on a key frame (`waitingForKeyFrame`).
        case simple
        /// Several streams: the per-packet stream and temporal layer decision, and (VP8) the
        /// picture-ID rewrite across streams.
        case simulcast(LayerSelector, vp8: VP8Rewriter?)
        /// One stream of spatial and temporal layers: the per-packet layer decision, and whether the
        /// last packet admitted ends the forwarded picture (it gets the marker bit).
        case svc(SVCSelector, endsPicture: Bool)
    }

    var layering: Layering
    /// The viewer's wish (quality, tile size).
    var preference: LayerPreference
    /// The allocator's ceiling for this viewer's link (nil: none yet), and whether it paused the
    /// consumer for bandwidth (`MediaCommand.allocate`).
    var ceiling: VideoLayer?
    var bandwidthPaused = false
    /// The stream forwarded now (0 for a single stream), and the switches between streams since the
    /// first packet, up and down (a metric: what each viewer gets and how often it changed).
    var currentStream = 0
    var switchesUp = 0
    var switchesDown = 0
    /// A start from the producer's key-frame cache in progress: the stream, the next cached packet,
    /// and the cache's generation it began in. Live packets wait in the cache meanwhile.
    var replay: Replay?
    /// A start that asked the publisher for a fresh key frame of this stream, and when the cache is
    /// replayed instead if none came (`ViewerStart`).
    var freshStart: (stream: Int, fallbackAt: Double)?
    /// When the consumer was created and when it sent its first packet (engine seconds).
    var createdAt: Double = 0
    var firstSentAt: Double?

    struct Replay {
        var stream: Int
        var index: Int
        var generation: Int
        /// The cache's packets when the replay began: their frames were captured over seconds and are
        /// sent within moments, so they get consecutive timestamps (one tick apart) ending now, and the
        /// packets after them continue from there at their own spacing. A receiver's clock then never
        /// sees seconds of media arrive at once.
        var snapshotEnd: Int
    }

    /// While replaying the cache's snapshot: the output timestamp of its first frame, the frames
    /// counted so far and the last input timestamp seen.
    var compressedBase: UInt32 = 0
    var compressedRank: UInt32 = 0
    var compressedInput: UInt32?
    /// The next packet is sent with this consumer's timestamp mapping again.
    var compressing = false

    /// Output packets remembered for NACKs: those of the transport's hold, in a table that starts at
    /// `firstMapSize` and doubles (`SequenceTable`) up to as many as the retransmission buffer can hold.
    var nackHold: Double { transport.nackHold }
    static let mapSize = RetransmissionBuffer.maximumEntries
    static let firstMapSize = RetransmissionBuffer.minimumEntries
    static let floorLag: UInt16 = 0x4000
    /// VP8 and VP9 carry at most four and eight temporal layers (TID is two or three bits): a viewer
    /// gets all of them unless the allocator's ceiling names fewer.
    static let allTemporalLayers = 7

    init(spec: ConsumerSpec, producer: Producer, transport: Transport, random: inout MediaRandom) {
        self.spec = spec
        self.producer = producer
        self.transport = transport
        seq = SeqManager(initialOutput: UInt16(truncatingIfNeeded: random.next()) & 0x7FFF)
        rtxSequence = UInt16(truncatingIfNeeded: random.next()) & 0x7FFF
        timestamps = TimestampMapper(clockRate: producer.spec.clockRate)
        waitingForKeyFrame = producer.isVideo
        // Audio syncs on its first packet (video on its first key frame): `syncSequence` is where the
        // consumer's run starts, wherever the publisher's numbers stand.
        needsSync = !producer.isVideo
        preference = spec.preference
        layering = .simple
        if producer.isSimulcast {
            layering = .simulcast(
                LayerSelector(target: desiredLayer), vp8: producer.codec == .vp8 ? VP8Rewriter() : nil)
        } else if producer.isSVC {
            layering = .svc(SVCSelector(target: desiredLayer), endsPicture: false)
        }
    }

    /// Where this consumer's output stands, for the next consumer of its SSRC.
    var continuation: Transport.Continuation {
        Transport.Continuation(sequence: seq.nextOutput, rtxSequence: rtxSequence, timestamps: timestamps)
    }

    /// Goes on where the SSRC's last consumer stopped: the next sequence numbers, and a timeline that
    /// continues by the time elapsed (a receiver sees one stream whose source changed).
    func continueOutput(_ k: Transport.Continuation) {
        seq = SeqManager(initialOutput: k.sequence)
        rtxSequence = k.rtxSequence
        if k.timestamps.clockRate == timestamps.clockRate { timestamps = k.timestamps }
    }

    /// The simulcast layer decision (nil for another kind).
    var selector: LayerSelector? { if case .simulcast(let s, _) = layering { s } else { nil } }
    /// The SVC layer decision (nil for another kind).
    var svc: SVCSelector? { if case .svc(let v, _) = layering { v } else { nil } }
    /// The VP8 picture-ID rewrite of a simulcast VP8 consumer.
    var vp8: VP8Rewriter? { if case .simulcast(_, let r) = layering { r } else { nil } }
    /// Whether the last SVC packet admitted ends the forwarded picture (it gets the marker bit).
    var endsPicture: Bool { if case .svc(_, let ends) = layering { ends } else { false } }

    /// Rewrites a simulcast VP8 packet's picture ID and TL0PICIDX for the stream forwarded now;
    /// returns the shifts applied (picture << 8 | tl0), nil for another kind.
    func rewriteVP8(_ media: UnsafeMutableRawBufferPointer, _ d: VP8Descriptor) -> UInt32? {
        guard case .simulcast(let s, var r?) = layering else { return nil }
        r.rewrite(media, d)
        layering = .simulcast(s, vp8: r)
        return UInt32(r.pictureOffset) << 8 | UInt32(r.tl0Offset)
    }

    /// The layer the viewer's preference (quality, tile) asks for among the producer's, before any
    /// bandwidth ceiling: what the publisher is told is wanted (`reportWanted`), so that a layer the
    /// viewer's link holds back keeps arriving and is measured.
    var preferredLayer: VideoLayer {
        // SVC layers are known from the first key picture; until then quality alone picks among three.
        let sizes = producer.layerSizes
        let layers =
            sizes.isEmpty ? [LayerChoice.Size](repeating: LayerChoice.Size(width: 0, height: 0), count: 3) : sizes
        let spatial = LayerChoice.spatial(
            quality: preference.quality, viewport: preference.viewport, layers: layers,
            screenShare: producer.isScreenShare)
        return VideoLayer(spatial: spatial, temporal: Self.allTemporalLayers)
    }

    /// The layer the viewer gets at most: its preference under the allocation's ceiling, before
    /// clamping to what arrives.
    var desiredLayer: VideoLayer {
        let p = preferredLayer
        guard let ceiling else { return p }
        return VideoLayer(
            spatial: min(p.spatial, ceiling.spatial), temporal: min(Self.allTemporalLayers, ceiling.temporal))
    }

    /// The stream a key frame is needed from: the one to start on or to switch to; nil when none.
    var keyFrameStream: Int? {
        if bandwidthPaused { return nil }
        if let v = svc {
            guard let c = v.current else { return 0 }
            return v.target.spatial > c.spatial ? 0 : nil
        }
        guard let s = selector else { return waitingForKeyFrame ? 0 : nil }
        guard let c = s.current else { return s.target.spatial }
        return c.spatial == s.target.spatial ? nil : s.target.spatial
    }

    /// Points the selector at the preferred layer among the streams that arrive (`mask`, bit k:
    /// stream k). Returns the stream a key frame is needed from, if a switch is pending.
    @discardableResult
    func reselect(available mask: UInt8) -> Int? {
        switch layering {
        case .simple:
            return nil
        case .svc(var v, let ends):
            let needsKey = v.select(desired: desiredLayer, spatialLayers: producer.svcLayers.count)
            layering = .svc(v, endsPicture: ends)
            return needsKey && v.current != nil ? 0 : nil
        case .simulcast(var s, let r):
            var available = Set<Int>()
            for k in producer.streams.indices where mask & (1 << k) != 0 { available.insert(k) }
            // An allocation's ceiling holds even while the stream under it is missing for a moment.
            let need = s.select(desired: desiredLayer, available: available, bounded: ceiling != nil)
            layering = .simulcast(s, vp8: r)
            return need
        }
    }

    enum Admission {
        case send(sequence: UInt16, timestamp: UInt32)
        case drop(DropReason)

        /// The output sequence number and timestamp, when sent.
        var output: (UInt16, UInt32)? {
            if case .send(let s, let t) = self { return (s, t) }
            return nil
        }
    }

    /// Decides whether a producer packet goes to this consumer and with which sequence number and
    /// timestamp. `keyFrame` says whether the payload starts a key frame.
    func admit(sequence: UInt16, timestamp: UInt32, keyFrame: Bool, now: Double) -> Admission {
        if waitingForKeyFrame {
            guard keyFrame else { return .drop(.waitingKeyFrame) }
            waitingForKeyFrame = false
            sync(sequence, timestamp, now)
        } else if needsSync {
            needsSync = false
            sync(sequence, timestamp, now)
        }
        return map(sequence, timestamp, stream: 0, now: now)
    }

    /// The same for a packet of stream `k` of a simulcast producer, with what its payload descriptor
    /// says (temporal layer, frame start, layer sync; VP8's whole descriptor, whose picture ID a
    /// dropped temporal layer moves back).
    func admit(
        stream k: Int, sequence: UInt16, timestamp: UInt32, keyFrame: Bool, frameStart: Bool, temporal: Int?,
        layerSync: Bool, vp8 descriptor: VP8Descriptor? = nil, now: Double
    ) -> Admission {
        guard case .simulcast(var s, var r) = layering else { return .drop(.otherLayer) }
        let decision = s.decide(
            spatial: k, temporal: temporal, keyFrame: keyFrame, frameStart: frameStart, layerSync: layerSync)
        layering = .simulcast(s, vp8: r)
        switch decision {
        case .forward(switched: true):
            switchStream(to: k, sequence: sequence, timestamp: timestamp, now: now)
        case .forward(switched: false):
            break
        case .drop(.temporalAboveTarget):
            seq.drop(sequence)
            if let descriptor, r != nil {
                r?.drop(descriptor)
                layering = .simulcast(s, vp8: r)
            }
            return .drop(.otherLayer)
        case .drop(.waitingKeyFrame):
            return .drop(.waitingKeyFrame)
        case .drop(.otherStream):
            return .drop(.otherLayer)
        }
        guard k == currentStream else { return .drop(.otherLayer) }
        return map(sequence, timestamp, stream: k, now: now)
    }

    /// The same for a packet of an SVC stream, with what its VP9 descriptor says. Layers above the
    /// viewer's are dropped (and the output stays gap-free); `endsPicture` tells whether this packet
    /// must carry the marker bit.
    func admit(
        svcSpatial spatial: Int, temporal: Int, pictureStart: Bool, keyPicture: Bool, switchingUp: Bool,
        endOfFrame: Bool, sequence: UInt16, timestamp: UInt32, now: Double
    ) -> Admission {
        guard case .svc(var v, let ends) = layering else { return .drop(.otherLayer) }
        let started = v.current != nil
        let decision = v.decide(
            spatial: spatial, temporal: temporal, pictureStart: pictureStart, keyPicture: keyPicture,
            switchingUp: switchingUp, endOfFrame: endOfFrame)
        layering = .svc(v, endsPicture: ends)
        switch decision {
        case .drop(.waitingKeyFrame):
            return .drop(.waitingKeyFrame)
        case .drop(.aboveTarget):
            if started { seq.drop(sequence) }
            return .drop(.otherLayer)
        case .forward(let ends):
            if !started { sync(sequence, timestamp, now) }
            layering = .svc(v, endsPicture: ends)
            return map(sequence, timestamp, stream: 0, now: now)
        }
    }

    /// The output continues across a switch: sequence numbers right after the last one sent, the
    /// timeline aligned through both streams' sender reports (mediasoup's way: the same capture time
    /// keeps the same output timestamp), else by the time elapsed since the last packet.
    private func switchStream(to k: Int, sequence: UInt16, timestamp: UInt32, now: Double) {
        let clockRate = producer.spec.clockRate
        let from = currentStream
        var aligned = false
        if packetsOut > 0, from != k, producer.streams.indices.contains(from),
            let wall = producer.streams[k].wallClock(of: timestamp, clockRate: clockRate),
            let equivalent = producer.streams[from].timestamp(at: wall, clockRate: clockRate)
        {
            aligned = timestamps.align(timestamp, as: equivalent, now: now)
        }
        if !aligned { timestamps.sync(timestamp, now: now) }
        seq.sync(sequence)
        syncSequence = sequence
        if case .simulcast(let s, var r?) = layering {
            r.sync()
            layering = .simulcast(s, vp8: r)
        }
        if packetsOut > 0 && k > from { switchesUp &+= 1 }
        if packetsOut > 0 && k < from { switchesDown &+= 1 }
        currentStream = k
    }

    private func sync(_ sequence: UInt16, _ timestamp: UInt32, _ now: Double) {
        seq.sync(sequence)
        timestamps.sync(timestamp, now: now)
        syncSequence = sequence
    }

    private func map(_ sequence: UInt16, _ timestamp: UInt32, stream k: Int, now: Double) -> Admission {
        // Older than the start of this run: part of a frame the consumer never began.
        if SequenceNumber.isNewer(syncSequence, than: sequence) { return .drop(.waitingKeyFrame) }
        // The floor follows the stream a quarter of the range behind: compared once the run passed
        // half the range, a fixed start would look newer than every packet and stop the consumer.
        if SequenceNumber.isNewer(sequence, than: syncSequence &+ Self.floorLag) {
            syncSequence = sequence &- Self.floorLag
        }
        guard let out = seq.map(sequence) else { return .drop(.waitingKeyFrame) }
        let ts: UInt32
        if compressing {
            if let last = compressedInput {
                if last != timestamp { compressedRank &+= 1 }
            } else {
                compressedBase = timestamps.map(timestamp, now: now)
                compressedRank = 0
            }
            compressedInput = timestamp
            ts = compressedBase &+ compressedRank
            timestamps.note(ts, now: now)
        } else {
            if compressedInput != nil {
                // Past the snapshot: the stream's own spacing again, right after its last frame.
                compressedInput = nil
                timestamps.sync(timestamp, now: now)
            }
            ts = timestamps.map(timestamp, now: now)
        }
        if spec.nack {
            if outputs.isEmpty { outputs = [OutputRecord](repeating: OutputRecord(), count: Self.firstMapSize) }
            let i = SequenceTable.slot(
                out, in: &outputs, now: now, hold: nackHold, maximum: Self.mapSize)
            outputs[i] = OutputRecord(
                tag: Int32(out), input: sequence, stream: UInt8(truncatingIfNeeded: k), timestamp: ts, at: now)
        }
        return .send(sequence: out, timestamp: ts)
    }

    /// The producer sequence number and stream behind an output one, if still known.
    func input(for output: UInt16) -> (UInt16, Int)? {
        guard let r = record(output) else { return nil }
        return (r.input, Int(r.stream))
    }

    /// The record of an output sequence number, if still held.
    func record(_ output: UInt16) -> OutputRecord? { SequenceTable.find(output, in: outputs) }

    /// Changes the record of an output sequence number (if held): how it was rewritten, or when it
    /// was resent.
    func amend(_ output: UInt16, _ body: (inout OutputRecord) -> Void) {
        guard !outputs.isEmpty else { return }
        let i = Int(output) & (outputs.count - 1)
        if outputs[i].tag == Int32(output) { body(&outputs[i]) }
    }

    /// Leaves the simulcast stream forwarded when the bandwidth ceiling fell below it
    /// (`LayerSelector.leave`); true when it did.
    func leaveAboveCeiling() -> Bool {
        guard let ceiling, case .simulcast(var s, let r) = layering else { return false }
        let left = s.leave(above: ceiling.spatial)
        layering = .simulcast(s, vp8: r)
        return left
    }

    /// After a pause: start again on a key frame (video) or re-sync (audio).
    func restart() {
        switch layering {
        case .svc(var v, let ends):
            v.restart()
            layering = .svc(v, endsPicture: ends)
        case .simulcast(var s, let r):
            s.restart()
            layering = .simulcast(s, vp8: r)
        case .simple:
            if producer.isVideo { waitingForKeyFrame = true } else { needsSync = true }
        }
    }
}

/// One output packet of a consumer, for answering a NACK for it: the input sequence number and
/// stream behind it, how it was rewritten (the VP8 picture-ID and TL0PICIDX shifts, picture << 8 |
/// tl0, and whether its marker bit was set) and its timestamp, so that a retransmission goes out as
/// the packet did; when it was last resent (-1: never), answered again only after a round trip; and
/// when it was first sent. 32 bytes.
struct OutputRecord: TimedSequenceRecord {
    var tag: Int32 = -1
    var input: UInt16 = 0
    var stream: UInt8 = 0
    var marked = false
    var shifts: UInt32 = 0
    var timestamp: UInt32 = 0
    var retransmittedAt: Double = -1
    /// When it was sent first (the table keeps what a NACK may still ask for: `nackHold`).
    var at: Double = 0
}
