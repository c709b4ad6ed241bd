import AtriumForwarding
import AtriumRTP

/// One subscriber's copy of a producer (mediasoup's Consumer): its own SSRC, gap-free sequence numbers
/// and timeline, a start on a key frame, and the map from its sequence numbers back to the producer's
/// for answering NACKs. Owned by the worker thread.
final class Consumer {
    let spec: ConsumerSpec
    unowned let producer: Producer
    unowned let transport: Transport
    var seq: SeqManager
    var timestamps: TimestampMapper
    /// Video waits for a key frame before its first packet and after a pause.
    var waitingForKeyFrame: Bool
    /// Audio after a pause: the next packet re-syncs the sequence numbers.
    var needsSync = false
    /// The first input sequence number forwarded since the last sync: older inputs are not forwarded.
    var syncSequence: UInt16 = 0
    var rtxSequence: UInt16
    /// Output sequence number -> input, for NACKs (the low 10 bits index it; the tag checks it).
    var outputTags: [Int32]
    var outputInputs: [UInt16]
    /// When each output sequence number was last retransmitted (same index), -1 never: a NACK for it
    /// is answered again only after a round trip.
    var retransmittedAt: [Double]
    var packetsOut = 0
    var bytesOut = 0
    var lastTimestamp: UInt32 = 0
    var lastSentAt: Double = 0
    var closed = false

    static let mapSize = 1024
    static let floorLag: UInt16 = 0x4000

    init(spec: ConsumerSpec, producer: Producer, transport: Transport) {
        self.spec = spec
        self.producer = producer
        self.transport = transport
        var rng = SystemRandomNumberGenerator()
        seq = SeqManager(initialOutput: UInt16.random(in: 0...0x7FFF, using: &rng))
        rtxSequence = UInt16.random(in: 0...0x7FFF, using: &rng)
        timestamps = TimestampMapper(clockRate: producer.spec.clockRate)
        waitingForKeyFrame = producer.isVideo
        // Audio syncs on its first packet (video on its first key frame): `syncSequence` is where the
        // consumer's run starts, wherever the publisher's numbers stand.
        needsSync = !producer.isVideo
        outputTags = [Int32](repeating: -1, count: Self.mapSize)
        outputInputs = [UInt16](repeating: 0, count: Self.mapSize)
        retransmittedAt = [Double](repeating: -1, count: Self.mapSize)
    }

    /// Decides whether a producer packet goes to this consumer and with which sequence number and
    /// timestamp. `keyFrame` says whether the payload starts a key frame.
    func admit(sequence: UInt16, timestamp: UInt32, keyFrame: Bool, now: Double) -> (UInt16, UInt32)? {
        if waitingForKeyFrame {
            guard keyFrame else { return nil }
            waitingForKeyFrame = false
            sync(sequence, timestamp, now)
        } else if needsSync {
            needsSync = false
            sync(sequence, timestamp, now)
        }
        // Older than the start of this run: part of a frame the consumer never began.
        if SequenceNumber.isNewer(syncSequence, than: sequence) { return nil }
        // The floor follows the stream a quarter of the range behind: compared once the run passed
        // half the range, a fixed start would look newer than every packet and stop the consumer.
        if SequenceNumber.isNewer(sequence, than: syncSequence &+ Self.floorLag) {
            syncSequence = sequence &- Self.floorLag
        }
        guard let out = seq.map(sequence) else { return nil }
        let ts = timestamps.map(timestamp, now: now)
        let slot = Int(out) & (Self.mapSize - 1)
        outputTags[slot] = Int32(out)
        outputInputs[slot] = sequence
        retransmittedAt[slot] = -1
        return (out, ts)
    }

    private func sync(_ sequence: UInt16, _ timestamp: UInt32, _ now: Double) {
        seq.sync(sequence)
        timestamps.sync(timestamp, now: now)
        syncSequence = sequence
    }

    /// The producer sequence number behind an output one, if still known.
    func input(for output: UInt16) -> UInt16? {
        let slot = Int(output) & (Self.mapSize - 1)
        return outputTags[slot] == Int32(output) ? outputInputs[slot] : nil
    }

    /// After a pause: start again on a key frame (video) or re-sync (audio).
    func restart() {
        if producer.isVideo { waitingForKeyFrame = true } else { needsSync = true }
    }
}
