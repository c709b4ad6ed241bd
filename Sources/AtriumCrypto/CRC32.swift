/// CRC-32 as ISO-HDLC, Ethernet and zlib define it (reflected polynomial 0xEDB88320, initial value and final
/// XOR 0xFFFFFFFF). STUN's FINGERPRINT (RFC 8489 section 14.7) is this CRC XOR-ed with 0x5354554e, and
/// RFC 8489 points to ITU V.42 / RFC 1952 section 8 for it.
///
/// Table-driven, one byte at a time: STUN messages are short, so the 1 KB table is the whole cost.
public enum CRC32 {
    /// The reflected form of the generator polynomial 0x04C11DB7.
    public static let polynomial: UInt32 = 0xEDB8_8320

    private static let table: [UInt32] = (0..<256).map { (n: UInt32) -> UInt32 in
        var c = n
        for _ in 0..<8 { c = (c & 1) != 0 ? polynomial ^ (c >> 1) : c >> 1 }
        return c
    }

    /// The CRC of `bytes`.
    public static func checksum<C: Collection>(_ bytes: C) -> UInt32 where C.Element == UInt8 {
        update(0, bytes)
    }

    /// Continues a CRC over more bytes: `update(checksum(a), b) == checksum(a + b)`.
    public static func update<C: Collection>(_ crc: UInt32, _ bytes: C) -> UInt32 where C.Element == UInt8 {
        var c = ~crc
        for byte in bytes {
            // The index is masked to 0...255, so it is always inside the 256-entry table.
            c = table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8)
        }
        return ~c
    }
}
