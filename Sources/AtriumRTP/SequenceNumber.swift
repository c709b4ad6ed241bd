/// 16-bit RTP sequence number arithmetic: serial-number comparison across the wrap (RFC 1982 section 3.2,
/// as RFC 3550 appendix A.1 uses it) and extension to 64 bits.
public enum SequenceNumber {
    /// Half the sequence space: a difference below it means "ahead", above it "behind".
    static let half: UInt16 = 0x8000

    /// Whether `a` comes after `b`, treating differences under 2^15 as forward across the wrap.
    /// A difference of exactly 2^15 is undefined in RFC 1982; it counts as not newer here.
    public static func isNewer(_ a: UInt16, than b: UInt16) -> Bool {
        a != b && (a &- b) < half
    }

    /// The signed shortest distance from `a` to `b` (positive when `b` is newer), in -32768...32767.
    public static func distance(from a: UInt16, to b: UInt16) -> Int {
        Int(Int16(bitPattern: b &- a))
    }

    /// Extends `sequence` to 64 bits, choosing the value nearest to `reference` (an already extended
    /// sequence number, usually the highest seen). Values before the first cycle clamp to the sequence
    /// itself rather than going negative.
    public static func extend(_ sequence: UInt16, reference: UInt64) -> UInt64 {
        let delta = Int64(distance(from: UInt16(truncatingIfNeeded: reference), to: sequence))
        if delta < 0 && UInt64(-delta) > reference { return UInt64(sequence) }
        return delta >= 0 ? reference &+ UInt64(delta) : reference &- UInt64(-delta)
    }
}
