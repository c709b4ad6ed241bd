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
    /// The line it writes into, if any (`RecorderSpec.line`).
    var line: RecorderLine?

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

/// A recorder line (`RecorderLineSpec`): where its output stands, the recorder writing into it now,
/// and the picture it shows while none does. Owned by the worker thread.
final class RecorderLine {
    let spec: RecorderLineSpec
    /// The next output sequence number and the output timeline.
    var nextSequence: UInt16 = 1
    var timestamps: TimestampMapper
    /// The recorder attached now.
    var sink: RecordingSink?
    /// The last picture of the last recorder's producer (its key-frame cache's packets), sent again
    /// once a second while no recorder feeds the line (video).
    var picture: [[UInt8]] = []
    var lastFill: Double = -.infinity
    var packetsFilled = 0

    /// Opus's 20 ms of silence (RFC 6716: a CELT-only, fullband, 20 ms frame code with an empty body).
    static let opusSilence: [UInt8] = [0xF8, 0xFF, 0xFE]
    static let pictureInterval = 1.0
    static let silenceInterval = 0.02

    init(spec: RecorderLineSpec) {
        self.spec = spec
        timestamps = TimestampMapper(clockRate: spec.clockRate)
    }

    /// Whether the line fills in now: no recorder, or its producer is paused.
    var filling: Bool { sink.map { $0.producer.paused } ?? true }

    /// Takes the output state of the recorder attached (before filling in, and when it leaves).
    func takeOutput(from s: RecordingSink) {
        nextSequence = s.seq.nextOutput
        timestamps = s.timestamps
    }

    /// The recorder continues the line's output, from its next key frame (video) or packet (audio).
    func giveOutput(to s: RecordingSink) {
        s.seq = SeqManager(initialOutput: nextSequence)
        if s.timestamps.clockRate == timestamps.clockRate { s.timestamps = timestamps }
        s.restart()
    }
}
