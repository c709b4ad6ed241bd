/// The last `capacity` packets of one stream, by sequence number, for answering NACKs. Slots are
/// allocated once; storing copies into a slot without allocating.
struct RetransmissionBuffer {
    let capacity: Int
    private var slots: [[UInt8]]
    private var tags: [Int32]

    init(capacity: Int, slotSize: Int = 1500) {
        self.capacity = capacity
        slots = (0..<capacity).map { _ in
            var a: [UInt8] = []
            a.reserveCapacity(slotSize)
            return a
        }
        tags = [Int32](repeating: -1, count: capacity)
    }

    /// Copies `packet` (a received one, read in place) into its slot.
    mutating func store(_ packet: UnsafeRawBufferPointer, sequence: UInt16) {
        let i = Int(sequence) % capacity
        slots[i].removeAll(keepingCapacity: true)
        slots[i].append(contentsOf: packet)
        tags[i] = Int32(sequence)
    }

    /// Whether the packet `sequence` is held (it arrived, and fewer than `capacity` packets since).
    func contains(_ sequence: UInt16) -> Bool { tags[Int(sequence) % capacity] == Int32(sequence) }

    /// Calls `body` with the stored packet for `sequence`, if it is still there.
    func withPacket<R>(_ sequence: UInt16, _ body: ([UInt8]) -> R) -> R? {
        let i = Int(sequence) % capacity
        guard tags[i] == Int32(sequence) else { return nil }
        return body(slots[i])
    }
}

/// Sequence numbers missing from a publisher's stream, and when each was last asked for (RFC 4585
/// generic NACK). Fixed capacity; the oldest entries give way.
struct NackList {
    struct Entry {
        var sequence: UInt16
        var firstMissed: Double
        var lastSent: Double
        var tries: Int
    }

    static let capacity = 256
    static let maxTries = 8
    static let maxAge = 1.0
    private(set) var entries: [Entry] = []

    init() { entries.reserveCapacity(Self.capacity) }

    /// `from` through `to` (inclusive) were skipped.
    mutating func missed(from: UInt16, to: UInt16, now: Double) {
        var s = from
        var n = 0
        while n < 100 {
            if entries.count == Self.capacity { entries.removeFirst() }
            entries.append(Entry(sequence: s, firstMissed: now, lastSent: -.infinity, tries: 0))
            if s == to { break }
            s &+= 1
            n += 1
        }
    }

    mutating func arrived(_ sequence: UInt16) {
        if let i = entries.firstIndex(where: { $0.sequence == sequence }) { entries.remove(at: i) }
    }

    /// The sequence numbers to ask for now: not asked within `interval`, fewer than `maxTries` times.
    mutating func due(now: Double, interval: Double) -> [UInt16] {
        entries.removeAll { now - $0.firstMissed > Self.maxAge || $0.tries >= Self.maxTries }
        var out: [UInt16] = []
        for i in entries.indices where now - entries[i].lastSent >= interval {
            entries[i].lastSent = now
            entries[i].tries += 1
            out.append(entries[i].sequence)
        }
        return out
    }

    mutating func removeAll() { entries.removeAll(keepingCapacity: true) }
}

/// Reception statistics of one publisher stream, for receiver reports (RFC 3550 appendix A.3 and A.8).
struct ReceiveStatistics {
    var started = false
    var baseSequence: UInt32 = 0
    var maxSequence: UInt16 = 0
    var cycles: UInt32 = 0
    var received: UInt32 = 0
    var expectedPrior: UInt32 = 0
    var receivedPrior: UInt32 = 0
    var jitter: Double = 0
    var lastTransit: Double?
    /// Middle 32 bits of the last sender report's NTP time, and when it arrived (seconds, monotonic).
    var lastSR: UInt32 = 0
    var lastSRArrival: Double = 0
    var lost: Int = 0

    var extendedMax: UInt32 { cycles | UInt32(maxSequence) }

    /// Returns the skipped range when the packet opens a gap.
    mutating func update(sequence: UInt16, timestamp: UInt32, clockRate: UInt32, now: Double) -> (UInt16, UInt16)? {
        received &+= 1
        let transit = now * Double(clockRate) - Double(timestamp)
        if let last = lastTransit {
            var d = transit - last
            if d < 0 { d = -d }
            // A huge jump is a timestamp discontinuity, not jitter.
            if d < Double(clockRate) { jitter += (d - jitter) / 16 }
        }
        lastTransit = transit
        guard started else {
            started = true
            baseSequence = UInt32(sequence)
            maxSequence = sequence
            return nil
        }
        let delta = sequence &- maxSequence
        guard delta != 0, delta < 0x8000 else { return nil }
        if sequence < maxSequence { cycles &+= 0x1_0000 }
        let gap: (UInt16, UInt16)? = delta > 1 ? (maxSequence &+ 1, sequence &- 1) : nil
        maxSequence = sequence
        return gap
    }

    /// A reception report block; updates the interval counters.
    mutating func report(ssrc: UInt32, now: Double) -> (fraction: UInt8, lost: Int32, jitter: UInt32, dlsr: UInt32) {
        let expected = extendedMax &- baseSequence &+ 1
        let lostTotal = Int64(expected) - Int64(received)
        lost = Int(max(0, lostTotal))
        let expectedInterval = expected &- expectedPrior
        let receivedInterval = received &- receivedPrior
        expectedPrior = expected
        receivedPrior = received
        let lostInterval = Int64(expectedInterval) - Int64(receivedInterval)
        let fraction: UInt8 =
            expectedInterval == 0 || lostInterval <= 0
            ? 0 : UInt8(min(255, (lostInterval << 8) / Int64(expectedInterval)))
        let dlsr: UInt32 = lastSR == 0 ? 0 : UInt32(max(0, (now - lastSRArrival) * 65536))
        return (fraction, Int32(clamping: max(-0x80_0000, min(0x7F_FFFF, lostTotal))), UInt32(jitter), dlsr)
    }
}
