/// The packets of one stream a NACK may still ask for, sized by need: those of the last `hold` (what
/// its viewers on the worker may still ask for, from their round trips: `hold(rtt:queued:)`), in a
/// ring of bytes and a table of entries that each start small and grow (by half, and double) when
/// they wrap within `hold` (the ring at once to the hold at a measured rate, when that is more than
/// half as much again, up to four times). The ring halves when a wrap took over four holds (a layer
/// whose rate fell), and is refit to a fifth more than the hold at the first wraps after the hold fell
/// a quarter below what the ring was made or grown for, when it lasts over one and a half holds
/// (viewers nearer, a round trip measured after the 0.5 s assumed before it); both are returned when
/// the stream has sent nothing for `idle` (a paused or stopped layer). So a 1.44 Mbit/s layer holds
/// about 60 KiB for viewers a few milliseconds away and 400 KiB for one 450 ms away. Storing copies
/// into the ring; only a resize allocates (a few times at a stream's start, and when its rate or its
/// viewers' round trips change).
struct RetransmissionBuffer {
    /// The longest and shortest hold, and the hold until a viewer's round trip is measured.
    static let longestHold = 2.0
    static let shortestHold = 0.3
    static let unmeasuredHold = 0.5
    static let idle = 5.0
    /// The shortest cycle a ring grows to fit the hold from at once.
    static let measuredCycle = 0.05
    static let minimumBytes = 16 * 1024
    static let maximumBytes = 2 << 20
    static let minimumEntries = 64
    static let maximumEntries = 1024
    /// How far the hold must fall below what the ring was sized for to refit it.
    static let refitBelow = 0.75

    struct Entry: TimedSequenceRecord {
        var tag: Int32 = -1
        var length: Int32 = 0
        /// Where the packet starts, counted in bytes written since the ring began.
        var position = 0
        var at: Double = 0
    }

    /// How long a packet is kept at least (seconds): set from the viewers' round trips once a second.
    var hold = Self.unmeasuredHold

    /// How long a viewer may still ask for a packet it was sent: a browser asks again every round
    /// trip (Chromium's `NackRequester`, up to 10 times), so four round trips, plus 150 ms for the gap
    /// to show and the first request to leave, plus what the packet waits in the viewer's pacer
    /// (`queued`); `unmeasuredHold` before a receiver report gave the round trip; within
    /// `shortestHold` and `longestHold`. mediasoup and Janus size theirs by the round trip likewise
    /// (within 200 ms and 2 s, 200 ms and 1 s).
    static func hold(rtt: Double?, queued: Double) -> Double {
        guard let rtt, rtt.isFinite, queued.isFinite else { return unmeasuredHold }
        return min(longestHold, max(shortestHold, 0.15 + 4 * max(0, rtt) + max(0, queued)))
    }

    private var ring: [UInt8] = []
    private var entries: [Entry] = []
    /// Bytes written since the ring began (wasted tail bytes included), and the first still held.
    private var written = 0
    private var heldFrom = 0
    /// When the ring last came round to its start and what had been written then, and when a packet
    /// was last stored.
    private var wrappedAt: Double = 0
    private var wrappedWritten = 0
    private var lastStore: Double = -.infinity
    /// The hold the ring was made, grown or refit for: a hold `refitBelow` of it refits the ring.
    private var sizedFor: Double = 0

    init() {}

    /// The bytes the ring and the entries take (0 until the first packet and after `trim`).
    var bytesHeld: Int { ring.count + entries.count * MemoryLayout<Entry>.stride }
    var ringBytes: Int { ring.count }
    var entryCount: Int { entries.count }

    /// Copies `packet` (a received one, read in place) into the ring.
    mutating func store(_ packet: UnsafeRawBufferPointer, sequence: UInt16, now: Double) {
        let length = packet.count
        guard length > 0, length <= Self.minimumBytes else { return }
        lastStore = now
        if ring.isEmpty {
            ring = [UInt8](repeating: 0, count: Self.minimumBytes)
            entries = [Entry](repeating: Entry(), count: Self.minimumEntries)
            written = 0
            heldFrom = 0
            wrappedAt = now
            wrappedWritten = 0
            sizedFor = hold
        }
        var offset = written % ring.count
        if offset + length > ring.count {
            // Packets never straddle the end: the tail is skipped, and the ring came round.
            written += ring.count - offset
            offset = 0
        }
        if offset == 0 && written > 0 {
            // How long the whole ring lasts at the rate since the last wrap (after a resize, less
            // than the ring was written since).
            let cycle = (now - wrappedAt) * Double(ring.count) / Double(max(1, written - wrappedWritten))
            wrappedAt = now
            wrappedWritten = written
            // The bytes that last a fifth more than the hold at that rate (infinite for a cycle of 0:
            // a burst stored at one instant, which the growth below does not fit to).
            let fit = Double(ring.count) * 1.2 * hold / cycle
            if cycle < hold && ring.count < Self.maximumBytes {
                // By half; or, over a cycle long enough to give a rate (a burst stored at one instant
                // gives none), at once to a fifth more than the hold at that rate (a hold that rose),
                // at most four times the ring; in whole KiB.
                var kib = ring.count / 1024 * 3 / 2
                if cycle >= Self.measuredCycle {
                    kib = max(kib, Int(min(Double(4 * ring.count), fit)) / 1024)
                }
                resize(min(Self.maximumBytes, kib * 1024))
                sizedFor = hold
            } else if hold < Self.refitBelow * sizedFor && cycle > 1.5 * hold && ring.count > Self.minimumBytes {
                // The hold fell by a quarter or more (once: not with the rate's swings nor the round
                // trip's jitter, which a refit would follow back and forth): down to a fifth more than
                // it at the last cycle's rate, in whole KiB; at most to a quarter per wrap (a cycle
                // that spanned a pause leaves no ring far too small), the rest at the next wraps.
                let fitted = Int(fit) / 1024 * 1024
                let quarter = ring.count / 4096 * 1024
                resize(max(Self.minimumBytes, quarter, fitted))
                if fitted >= quarter { sizedFor = hold }
            } else if cycle > 4 * hold && ring.count > Self.minimumBytes {
                // Halved: it still lasts two holds at the last cycle's rate.
                resize(max(Self.minimumBytes, ring.count / 2048 * 1024))
            }
            offset = written % ring.count
            if offset + length > ring.count {
                written += ring.count - offset
                offset = 0
            }
        }
        let e = SequenceTable.slot(sequence, in: &entries, now: now, hold: hold, maximum: Self.maximumEntries)
        ring.withUnsafeMutableBytes { raw in
            if let base = raw.baseAddress, let source = packet.baseAddress {
                (base + offset).copyMemory(from: source, byteCount: length)
            }
        }
        entries[e] = Entry(tag: Int32(sequence), length: Int32(length), position: written, at: now)
        written += length
        heldFrom = max(heldFrom, written - ring.count)
    }

    /// Whether the packet `sequence` is held.
    func contains(_ sequence: UInt16) -> Bool { entry(sequence) != nil }

    /// Calls `body` with the stored packet for `sequence`, if it is still there.
    func withPacket<R>(_ sequence: UInt16, _ body: (UnsafeRawBufferPointer) -> R) -> R? {
        guard let e = entry(sequence) else { return nil }
        let start = e.position % ring.count
        return ring.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<start + Int(e.length)])) }
    }

    /// Returns the memory of a stream that has stored nothing for `idle`.
    mutating func trim(now: Double) {
        guard !ring.isEmpty, now - lastStore > Self.idle else { return }
        ring = []
        entries = []
    }

    private func entry(_ sequence: UInt16) -> Entry? {
        guard let e = SequenceTable.find(sequence, in: entries) else { return nil }
        // A packet a resize left across the ring's end is not held (rare and short-lived).
        let held = e.position >= heldFrom && e.position % ring.count + Int(e.length) <= ring.count
        return held ? e : nil
    }

    /// A ring of `size` bytes holding the newest of what this one held, at the same positions.
    private mutating func resize(_ size: Int) {
        var next = [UInt8](repeating: 0, count: size)
        let from = max(heldFrom, written - min(size, ring.count))
        var p = from
        next.withUnsafeMutableBytes { dst in
            ring.withUnsafeBytes { src in
                guard let d = dst.baseAddress, let s = src.baseAddress else { return }
                while p < written {
                    let a = p % src.count
                    let b = p % size
                    let n = min(written - p, src.count - a, size - b)
                    (d + b).copyMemory(from: s + a, byteCount: n)
                    p += n
                }
            }
        }
        ring = next
        heldFrom = from
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
    static let keepAge = 2.0
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

    /// Whether `sequence` is missing and still asked for.
    func awaits(_ sequence: UInt16) -> Bool { entries.contains { $0.sequence == sequence } }

    mutating func arrived(_ sequence: UInt16) {
        if let i = entries.firstIndex(where: { $0.sequence == sequence }) { entries.remove(at: i) }
    }

    /// The sequence numbers to ask for now: not asked within `interval`, fewer than `maxTries` times,
    /// missed within `maxAge`. One given up on is still awaited (`awaits`) until `keepAge`: the repair
    /// of its last request may be on its way.
    mutating func due(now: Double, interval: Double) -> [UInt16] {
        entries.removeAll { now - $0.firstMissed > Self.keepAge }
        var out: [UInt16] = []
        for i in entries.indices
        where now - entries[i].lastSent >= interval && now - entries[i].firstMissed <= Self.maxAge
            && entries[i].tries < Self.maxTries
        {
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
