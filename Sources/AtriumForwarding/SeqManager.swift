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
    /// Dropped input numbers, oldest first, all within `window` of `maxInput`.
    private var dropped: [UInt16] = []

    /// - Parameter initialOutput: the first sequence number this consumer sends (random per RFC 3550).
    public init(initialOutput: UInt16) {
        offset = 0
        maxOutput = initialOutput &- 1
    }

    /// `a` comes after `b` in sequence-number order (half-range rule).
    @inline(__always)
    static func isNewer(_ a: UInt16, than b: UInt16) -> Bool {
        a != b && (a &- b) < 0x8000
    }

    /// The next input continues right after the last output (a new source, a resumed share).
    public mutating func sync(_ input: UInt16) {
        offset = input &- (maxOutput &+ 1)
        maxInput = input &- 1
        dropped.removeAll(keepingCapacity: true)
        started = true
    }

    /// The consumer does not forward `input`: later inputs shift down so the output stays gap-free.
    public mutating func drop(_ input: UInt16) {
        if !started { sync(input) }
        guard Self.isNewer(input, than: maxInput) else { return }
        maxInput = input
        dropped.append(input)
        prune()
    }

    /// The output number for `input`, or nil when it was dropped or is too old to map.
    public mutating func map(_ input: UInt16) -> UInt16? {
        if !started { sync(input) }
        if dropped.contains(input) { return nil }
        if !Self.isNewer(input, than: maxInput) && (maxInput &- input) >= Self.window { return nil }
        let droppedBefore = dropped.reduce(0) { $0 + (Self.isNewer(input, than: $1) ? 1 : 0) }
        let output = input &- offset &- UInt16(truncatingIfNeeded: droppedBefore)
        if Self.isNewer(input, than: maxInput) {
            maxInput = input
            prune()
        }
        if Self.isNewer(output, than: maxOutput) { maxOutput = output }
        return output
    }

    /// Folds dropped entries that left the window into the offset, keeping later mappings unchanged.
    private mutating func prune() {
        while !dropped.isEmpty, (maxInput &- dropped[0]) >= Self.window {
            dropped.removeFirst()
            offset = offset &+ 1
        }
    }
}
