/// A bounds-checked big-endian cursor over received bytes: every read either succeeds or throws
/// `.truncated`, so a parser cannot index past the end of its packet.
struct ByteReader {
    private let bytes: [UInt8]
    private(set) var position: Int
    let end: Int
    /// The RTCP packet type named in errors.
    let packetType: UInt8

    init(_ bytes: [UInt8], from start: Int, to end: Int, packetType: UInt8) {
        self.bytes = bytes
        self.end = min(max(end, 0), bytes.count)
        position = min(max(start, 0), self.end)
        self.packetType = packetType
    }

    var remaining: Int { end - position }

    mutating func readUInt8() throws(RTPError) -> UInt8 {
        guard position < end else { throw .truncated(packetType: packetType) }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func readUInt16() throws(RTPError) -> UInt16 {
        UInt16(try readUInt8()) << 8 | UInt16(try readUInt8())
    }

    mutating func readUInt24() throws(RTPError) -> UInt32 {
        UInt32(try readUInt16()) << 8 | UInt32(try readUInt8())
    }

    mutating func readUInt32() throws(RTPError) -> UInt32 {
        UInt32(try readUInt16()) << 16 | UInt32(try readUInt16())
    }

    mutating func readBytes(_ count: Int) throws(RTPError) -> [UInt8] {
        guard count >= 0, count <= remaining else { throw .truncated(packetType: packetType) }
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    mutating func skip(_ count: Int) throws(RTPError) {
        guard count >= 0, count <= remaining else { throw .truncated(packetType: packetType) }
        position += count
    }
}
