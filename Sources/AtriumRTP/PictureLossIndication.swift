/// PLI: picture loss indication (RFC 4585 section 6.3.1), PT 206, FMT 1. No FCI: the whole packet is
/// 12 bytes, `81 ce 00 02` and the two SSRCs.
public struct PictureLossIndication: Equatable, Sendable {
    public static let format: UInt8 = 1

    public var sources: FeedbackSources

    public init(senderSSRC: UInt32, mediaSSRC: UInt32) {
        sources = FeedbackSources(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC)
    }

    init(_ r: inout ByteReader) throws(RTPError) {
        sources = try FeedbackSources(&r)
    }

    func write(into out: inout [UInt8]) -> Int {
        sources.write(into: &out)
        return Int(Self.format)
    }
}
