/// Where an RTP packet's payload lies (RFC 3550 section 5.1): after the fixed header, the CSRC list
/// and the header extension, before the padding. Nil for a packet too short for what its header says.
public enum RTPPayload {
    public static func bounds(_ p: [UInt8]) -> (start: Int, end: Int)? { p.withUnsafeBytes { bounds($0) } }

    /// The same, read where the packet lies (the viewers' receive path: no copy).
    public static func bounds(_ p: UnsafeRawBufferPointer) -> (start: Int, end: Int)? {
        guard p.count >= 12, p[0] >> 6 == 2 else { return nil }
        var start = 12 + 4 * Int(p[0] & 0x0F)
        if p[0] & 0x10 != 0 {
            guard p.count >= start + 4 else { return nil }
            start += 4 + 4 * (Int(p[start + 2]) << 8 | Int(p[start + 3]))
        }
        var end = p.count
        if p[0] & 0x20 != 0 { end -= Int(p[p.count - 1]) }
        guard start <= end else { return nil }
        return (start, end)
    }

    /// The SSRC of an RTP packet of at least 12 bytes.
    public static func ssrc(_ p: [UInt8]) -> UInt32 {
        UInt32(p[8]) << 24 | UInt32(p[9]) << 16 | UInt32(p[10]) << 8 | UInt32(p[11])
    }
}
