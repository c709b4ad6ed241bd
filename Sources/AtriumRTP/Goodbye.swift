import AtriumBytes

/// BYE: goodbye (RFC 3550 section 6.6), PT 203: SC sources leaving, and an optional reason.
///
/// ```
/// |V=2|P|    SC   |   PT=BYE=203  |             length            |
/// |                           SSRC/CSRC                           |
/// :                              ...                              :
/// |     length    |               reason for leaving            ...
/// ```
public struct Goodbye: Equatable, Sendable {
    public var sources: [UInt32]
    public var reason: [UInt8]

    public init(sources: [UInt32], reason: [UInt8] = []) {
        self.sources = sources
        self.reason = reason
    }

    init(count: UInt8, _ r: inout ByteReader) throws(RTPError) {
        sources = []
        for _ in 0..<count { sources.append(try r.readUInt32()) }
        reason = []
        if r.remaining > 0 {
            let length = Int(try r.readUInt8())
            reason = try r.readBytes(length)
        }
    }

    func write(into out: inout [UInt8]) throws(RTPError) -> Int {
        for s in sources { out.appendBigEndian(s) }
        if !reason.isEmpty {
            guard reason.count <= 255 else { throw .valueOutOfRange }
            out.append(UInt8(reason.count))
            out += reason
            out.padToWord()
        }
        return sources.count
    }
}
