import AtriumBytes

/// SR: sender report (RFC 3550 section 6.4.1), PT 200, RC report blocks.
///
/// ```
/// |V=2|P|    RC   |   PT=SR=200   |             length            |
/// |                         SSRC of sender                        |
/// |              NTP timestamp, most significant word             |
/// |             NTP timestamp, least significant word             |
/// |                         RTP timestamp                         |
/// |                     sender's packet count                     |
/// |                      sender's octet count                     |
/// |                 report blocks and profile-specific extensions |
/// ```
public struct SenderReport: Equatable, Sendable {
    public var ssrc: UInt32
    public var ntpTimestamp: UInt64
    public var rtpTimestamp: UInt32
    public var packetCount: UInt32
    public var octetCount: UInt32
    public var reports: [ReceptionReport]
    /// Profile-specific extension bytes after the report blocks, kept as received.
    public var profileExtension: [UInt8]

    public init(
        ssrc: UInt32, ntpTimestamp: UInt64, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32,
        reports: [ReceptionReport] = [], profileExtension: [UInt8] = []
    ) {
        self.ssrc = ssrc
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
        self.reports = reports
        self.profileExtension = profileExtension
    }

    init(count: UInt8, _ r: inout ByteReader) throws(RTPError) {
        ssrc = try r.readUInt32()
        ntpTimestamp = UInt64(try r.readUInt32()) << 32 | UInt64(try r.readUInt32())
        rtpTimestamp = try r.readUInt32()
        packetCount = try r.readUInt32()
        octetCount = try r.readUInt32()
        reports = try ReceptionReport.readBlocks(count, &r)
        profileExtension = try r.readBytes(r.remaining)
    }

    /// Writes the body; returns the report count.
    func write(into out: inout [UInt8]) throws(RTPError) -> Int {
        out.appendBigEndian(ssrc)
        out.appendBigEndian(UInt32(truncatingIfNeeded: ntpTimestamp >> 32))
        out.appendBigEndian(UInt32(truncatingIfNeeded: ntpTimestamp))
        out.appendBigEndian(rtpTimestamp)
        out.appendBigEndian(packetCount)
        out.appendBigEndian(octetCount)
        for block in reports { block.write(into: &out) }
        out += profileExtension
        out.padToWord()
        return reports.count
    }
}
