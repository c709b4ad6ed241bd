import AtriumBytes

/// RR: receiver report (RFC 3550 section 6.4.2), PT 201: the sender's SSRC and RC report blocks.
public struct ReceiverReport: Equatable, Sendable {
    public var ssrc: UInt32
    public var reports: [ReceptionReport]
    public var profileExtension: [UInt8]

    public init(ssrc: UInt32, reports: [ReceptionReport] = [], profileExtension: [UInt8] = []) {
        self.ssrc = ssrc
        self.reports = reports
        self.profileExtension = profileExtension
    }

    init(count: UInt8, _ r: inout ByteReader) throws(RTPError) {
        ssrc = try r.readUInt32()
        reports = try ReceptionReport.readBlocks(count, &r)
        profileExtension = try r.readBytes(r.remaining)
    }

    func write(into out: inout [UInt8]) throws(RTPError) -> Int {
        out.appendBigEndian(ssrc)
        for block in reports { block.write(into: &out) }
        out += profileExtension
        out.padToWord()
        return reports.count
    }
}
