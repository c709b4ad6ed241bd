import AtriumRTP

/// Arrival times of a publisher transport's packets by transport-wide sequence number, turned into
/// transport-wide feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01) every 50 ms, so that the
/// browser's send-side bandwidth estimation (GoogCC) can raise the bitrate. Fixed-size storage, from
/// the first packet recorded (a transport that only receives media never holds it).
struct TransportWideRecorder {
    static let size = 1024
    static let maxPerFeedback = 400
    private var arrivals: [Int64] = []
    private var tags: [Int32] = []
    /// The next sequence number to report, and the newest seen.
    private(set) var next: UInt16?
    private(set) var highest: UInt16 = 0
    private var feedbackCount: UInt8 = 0

    var hasPending: Bool {
        guard let next else { return false }
        return !SequenceNumber.isNewer(next, than: highest)
    }

    /// Records a packet's arrival, in microseconds of the worker's clock.
    mutating func record(_ sequence: UInt16, at micros: Int64) {
        if tags.isEmpty {
            arrivals = [Int64](repeating: -1, count: Self.size)
            tags = [Int32](repeating: -1, count: Self.size)
        }
        if next == nil {
            next = sequence
            highest = sequence
        }
        guard let n = next, !SequenceNumber.isNewer(n, than: sequence) else { return }  // already reported
        // Too far ahead to report in one window: skip what would not fit.
        if SequenceNumber.distance(from: n, to: sequence) >= Self.size { next = sequence &- UInt16(Self.size / 2) }
        let i = Int(sequence) & (Self.size - 1)
        arrivals[i] = micros
        tags[i] = Int32(sequence)
        if SequenceNumber.isNewer(sequence, than: highest) { highest = sequence }
    }

    private func arrival(_ sequence: UInt16) -> Int64? {
        guard !tags.isEmpty else { return nil }
        let i = Int(sequence) & (Self.size - 1)
        return tags[i] == Int32(sequence) ? arrivals[i] : nil
    }

    /// Feedback for everything from `next` to the newest packet (at most `maxPerFeedback`), or nil.
    mutating func feedback(senderSSRC: UInt32, mediaSSRC: UInt32) -> TransportWideFeedback? {
        guard hasPending, let base = next else { return nil }
        let count = min(Self.maxPerFeedback, SequenceNumber.distance(from: base, to: highest) + 1)
        // The first packet reported must have arrived: start at the first one that did.
        var start = base
        var skipped = 0
        while arrival(start) == nil && skipped < count {
            start &+= 1
            skipped += 1
        }
        guard skipped < count, let first = arrival(start) else {
            next = base &+ UInt16(count)
            return nil
        }
        let reference = first / Int64(TransportWideFeedback.referenceTimeUnitMicroseconds)
        var previous =
            reference
            * Int64(TransportWideFeedback.referenceTimeUnitMicroseconds / TransportWideFeedback.deltaUnitMicroseconds)
        var statuses: [TransportWideStatus] = []
        var deltas: [Int16] = []
        var s = start
        for _ in skipped..<count {
            if let t = arrival(s) {
                let ticks = t / Int64(TransportWideFeedback.deltaUnitMicroseconds)
                let delta = ticks - previous
                if (0...255).contains(delta) {
                    statuses.append(.receivedSmallDelta)
                } else if delta >= Int64(Int16.min) && delta <= Int64(Int16.max) {
                    statuses.append(.receivedLargeDelta)
                } else {
                    break  // cannot be expressed: the rest goes in the next feedback
                }
                deltas.append(Int16(delta))
                previous = ticks
            } else {
                statuses.append(.notReceived)
            }
            s &+= 1
        }
        next = s
        feedbackCount &+= 1
        return TransportWideFeedback(
            senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, baseSequenceNumber: start,
            referenceTime: Int32(truncatingIfNeeded: reference) & 0x7F_FFFF, feedbackPacketCount: feedbackCount &- 1,
            statuses: statuses, receiveDeltas: deltas)
    }
}
