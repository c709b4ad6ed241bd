/// Maps one source's RTP sequence numbers to a consumer's, as mediasoup's `SeqManager` does: the output is
/// gap-free across packets the consumer drops on purpose (a layer it does not forward, a paused share) and
/// continues without a jump when the consumer switches to another source (`sync`). Handles 16-bit
/// wrap-around (RFC 3550 appendix A.1). Pure value; one per consumer stream, owned by the media worker.
public struct SeqManager: Equatable, Sendable {
    /// Dropped inputs remembered; older ones fall out of the window, and inputs older than the window
    /// are refused rather than mapped wrongly.
    public static let window: UInt16 = 0x1000

    private var offset: UInt16
    private var started = false
    private var maxInput: UInt16 = 0
    private var maxOutput: UInt16
    /// Dropped input numbers from `head` on, oldest first, all within `window` of `maxInput` (the
    /// entries before `head` have left it and are folded into `offset`; they are cut off now and then,
    /// so pruning is a step of `head`, not a shift of the array).
    private var dropped: [UInt16] = []
    private var head = 0
    /// Entries of `dropped` looked at by the last `map` or `drop`: none for a packet newer than every
    /// input (the forwarding case), a binary search's for an older one. What the tests count.
    private(set) var probes = 0

    /// - Parameter initialOutput: the first sequence number this consumer sends (random per RFC 3550).
    public init(initialOutput: UInt16) {
        offset = 0
        maxOutput = initialOutput &- 1
    }

    public static func == (a: SeqManager, b: SeqManager) -> Bool {
        a.offset == b.offset && a.started == b.started && a.maxInput == b.maxInput && a.maxOutput == b.maxOutput
            && a.dropped[a.head...] == b.dropped[b.head...]
    }

    /// `a` comes after `b` in sequence-number order (half-range rule).
    @inline(__always)
    static func isNewer(_ a: UInt16, than b: UInt16) -> Bool {
        a != b && (a &- b) < 0x8000
    }

    /// The sequence number the next output continues from (the first one before any output).
    public var nextOutput: UInt16 { maxOutput &+ 1 }

    /// The next input continues right after the last output (a new source, a resumed share).
    public mutating func sync(_ input: UInt16) {
        offset = input &- (maxOutput &+ 1)
        maxInput = input &- 1
        dropped.removeAll(keepingCapacity: true)
        head = 0
        started = true
    }

    /// The consumer does not forward `input`: later inputs shift down so the output stays gap-free.
    public mutating func drop(_ input: UInt16) {
        if !started { sync(input) }
        probes = 0
        guard Self.isNewer(input, than: maxInput) else { return }
        maxInput = input
        dropped.append(input)
        prune()
    }

    /// The output number for `input`, or nil when it was dropped or is too old to map.
    public mutating func map(_ input: UInt16) -> UInt16? {
        if !started { sync(input) }
        probes = 0
        let droppedBefore: Int
        if Self.isNewer(input, than: maxInput) {
            // Newer than every input: every dropped one is before it.
            droppedBefore = dropped.count - head
        } else {
            if (maxInput &- input) >= Self.window { return nil }
            let (before, found) = search(input)
            if found { return nil }
            droppedBefore = before
        }
        let output = input &- offset &- UInt16(truncatingIfNeeded: droppedBefore)
        if Self.isNewer(input, than: maxInput) {
            maxInput = input
            prune()
        }
        if Self.isNewer(output, than: maxOutput) { maxOutput = output }
        return output
    }

    /// How many dropped entries come before `input` (within the window, not newer than `maxInput`),
    /// and whether `input` is one of them: a binary search on their age behind `maxInput`, which falls
    /// from the oldest entry to the newest.
    private mutating func search(_ input: UInt16) -> (before: Int, found: Bool) {
        let age = maxInput &- input
        var low = head
        var high = dropped.count
        // The first entry no older than `input`.
        while low < high {
            let mid = low + (high - low) / 2
            probes += 1
            if maxInput &- dropped[mid] > age { low = mid + 1 } else { high = mid }
        }
        return (low - head, low < dropped.count && dropped[low] == input)
    }

    /// Folds dropped entries that left the window into the offset, keeping later mappings unchanged.
    private mutating func prune() {
        while head < dropped.count, (maxInput &- dropped[head]) >= Self.window {
            head += 1
            probes += 1
            offset = offset &+ 1
        }
        // Cut the folded entries off once they are most of the array: amortized constant, no allocation.
        if head > 0 && head >= dropped.count - head {
            dropped.removeSubrange(0..<head)
            head = 0
        }
    }
}
