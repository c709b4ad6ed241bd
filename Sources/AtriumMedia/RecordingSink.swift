import AtriumForwarding

/// One recorder of a producer (`RecorderSpec`): like a consumer without a transport. It starts, and
/// starts again after a pause, on a key frame, and keeps its own sequence numbers and timeline so the
/// recording process sees one unbroken stream. Owned by the worker thread.
final class RecordingSink {
    let spec: RecorderSpec
    unowned let producer: Producer
    var seq: SeqManager
    var timestamps: TimestampMapper
    var waitingForKeyFrame: Bool
    var needsSync: Bool
    var packetsOut = 0

    init(spec: RecorderSpec, producer: Producer) {
        self.spec = spec
        self.producer = producer
        seq = SeqManager(initialOutput: 1)
        timestamps = TimestampMapper(clockRate: producer.spec.clockRate)
        waitingForKeyFrame = producer.isVideo
        needsSync = !producer.isVideo
    }

    /// The output sequence number and timestamp of a packet of the recorded stream, or nil to drop it.
    func admit(sequence: UInt16, timestamp: UInt32, keyFrame: Bool, now: Double) -> (UInt16, UInt32)? {
        if waitingForKeyFrame {
            guard keyFrame else { return nil }
            waitingForKeyFrame = false
            seq.sync(sequence)
            timestamps.sync(timestamp, now: now)
        } else if needsSync {
            needsSync = false
            seq.sync(sequence)
            timestamps.sync(timestamp, now: now)
        }
        guard let out = seq.map(sequence) else { return nil }
        return (out, timestamps.map(timestamp, now: now))
    }

    /// After a pause: a key frame again (video) or a re-sync (audio).
    func restart() {
        if producer.isVideo { waitingForKeyFrame = true } else { needsSync = true }
    }
}
