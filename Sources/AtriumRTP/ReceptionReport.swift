import AtriumBytes

/// A report block (RFC 3550 section 6.4.1): reception statistics about one source.
///
/// ```
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |                 SSRC_1 (SSRC of first source)                 |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// | fraction lost |       cumulative number of packets lost       |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |           extended highest sequence number received           |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                      interarrival jitter                      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                         last SR (LSR)                         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                   delay since last SR (DLSR)                  |
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// ```
public struct ReceptionReport: Equatable, Sendable {
    public static let size = 24
    /// The cumulative loss is a signed 24-bit field (duplicates can make it negative).
    static let cumulativeLostRange: ClosedRange<Int32> = -0x80_0000...0x7F_FFFF

    public var ssrc: UInt32
    /// Fraction lost since the previous report, as a fixed-point number with the point at the left edge.
    public var fractionLost: UInt8
    /// Cumulative packets lost; clamped to the 24-bit signed range when written.
    public var cumulativeLost: Int32
    public var extendedHighestSequence: UInt32
    public var jitter: UInt32
    /// The middle 32 bits of the NTP timestamp of the last SR received from this source.
    public var lastSenderReport: UInt32
    /// In units of 1/65536 seconds.
    public var delaySinceLastSenderReport: UInt32

    public init(
        ssrc: UInt32, fractionLost: UInt8, cumulativeLost: Int32, extendedHighestSequence: UInt32, jitter: UInt32,
        lastSenderReport: UInt32, delaySinceLastSenderReport: UInt32
    ) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.extendedHighestSequence = extendedHighestSequence
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    init(_ r: inout ByteReader) throws(RTPError) {
        ssrc = try r.readUInt32()
        fractionLost = try r.readUInt8()
        let lost = try r.readUInt24()
        // Sign-extend the 24-bit two's complement value.
        cumulativeLost = Int32(bitPattern: lost << 8) >> 8
        extendedHighestSequence = try r.readUInt32()
        jitter = try r.readUInt32()
        lastSenderReport = try r.readUInt32()
        delaySinceLastSenderReport = try r.readUInt32()
    }

    func write(into out: inout [UInt8]) {
        out.appendBigEndian(ssrc)
        let lost = min(max(cumulativeLost, Self.cumulativeLostRange.lowerBound), Self.cumulativeLostRange.upperBound)
        out.appendBigEndian(UInt32(fractionLost) << 24 | UInt32(bitPattern: lost) & 0x00FF_FFFF)
        out.appendBigEndian(extendedHighestSequence)
        out.appendBigEndian(jitter)
        out.appendBigEndian(lastSenderReport)
        out.appendBigEndian(delaySinceLastSenderReport)
    }

    static func readBlocks(_ count: UInt8, _ r: inout ByteReader) throws(RTPError) -> [ReceptionReport] {
        guard r.remaining >= Int(count) * size else { throw .truncated(packetType: r.packetType) }
        var out: [ReceptionReport] = []
        for _ in 0..<count { out.append(try ReceptionReport(&r)) }
        return out
    }
}
