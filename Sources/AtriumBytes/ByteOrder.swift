/// Big-endian helpers for network byte order. Reads are checked: they return nil rather than index past
/// the end, so parsers turn a short buffer into an error instead of a trap.
extension Array where Element == UInt8 {
    public mutating func appendBigEndian(_ v: UInt16) {
        append(UInt8(truncatingIfNeeded: v >> 8))
        append(UInt8(truncatingIfNeeded: v))
    }

    public mutating func appendBigEndian(_ v: UInt32) {
        appendBigEndian(UInt16(truncatingIfNeeded: v >> 16))
        appendBigEndian(UInt16(truncatingIfNeeded: v))
    }

    public mutating func appendBigEndian(_ v: UInt64) {
        appendBigEndian(UInt32(truncatingIfNeeded: v >> 32))
        appendBigEndian(UInt32(truncatingIfNeeded: v))
    }

    /// Appends zeros up to the next multiple of 4 bytes (RTCP and STUN align to 32-bit words).
    public mutating func padToWord() {
        append(contentsOf: repeatElement(0, count: (4 - count % 4) % 4))
    }

    public mutating func setBigEndian(_ v: UInt16, at i: Int) {
        guard i >= 0, i + 2 <= count else { return }
        self[i] = UInt8(truncatingIfNeeded: v >> 8)
        self[i + 1] = UInt8(truncatingIfNeeded: v)
    }
}

extension Collection where Element == UInt8, Index == Int {
    /// The big-endian integer in `self[i..<i+2]`, or nil when those bytes are not all there.
    public func uint16(at i: Int) -> UInt16? {
        guard i >= startIndex, i <= endIndex - 2 else { return nil }
        return UInt16(self[i]) << 8 | UInt16(self[i + 1])
    }

    /// The big-endian integer in `self[i..<i+4]`, or nil when those bytes are not all there.
    public func uint32(at i: Int) -> UInt32? {
        guard let hi = uint16(at: i), let lo = uint16(at: i + 2) else { return nil }
        return UInt32(hi) << 16 | UInt32(lo)
    }

    /// The big-endian integer in `self[i..<i+8]`, or nil when those bytes are not all there.
    public func uint64(at i: Int) -> UInt64? {
        guard let hi = uint32(at: i), let lo = uint32(at: i + 4) else { return nil }
        return UInt64(hi) << 32 | UInt64(lo)
    }
}
