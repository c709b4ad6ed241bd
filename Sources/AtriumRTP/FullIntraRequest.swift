import AtriumBytes

/// FIR: full intra request (RFC 5104 section 4.3.1), PT 206, FMT 4. The media source SSRC is unused
/// (zero); each FCI entry names the stream and a command sequence number the sender increments per
/// new request.
///
/// ```
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                              SSRC                             |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// | Seq nr.       |    Reserved                                   |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public struct FullIntraRequest: Equatable, Sendable {
    public static let format: UInt8 = 4
    static let entrySize = 8

    public struct Entry: Equatable, Sendable {
        public var ssrc: UInt32
        public var sequenceNumber: UInt8

        public init(ssrc: UInt32, sequenceNumber: UInt8) {
            self.ssrc = ssrc
            self.sequenceNumber = sequenceNumber
        }
    }

    public var senderSSRC: UInt32
    public var entries: [Entry]

    public init(senderSSRC: UInt32, entries: [Entry]) {
        self.senderSSRC = senderSSRC
        self.entries = entries
    }

    init(_ r: inout ByteReader) throws(RTPError) {
        let sources = try FeedbackSources(&r)
        senderSSRC = sources.senderSSRC
        guard r.remaining % Self.entrySize == 0 else { throw .malformed(packetType: r.packetType) }
        entries = []
        while r.remaining > 0 {
            entries.append(Entry(ssrc: try r.readUInt32(), sequenceNumber: try r.readUInt8()))
            try r.skip(3)
        }
    }

    func write(into out: inout [UInt8]) -> Int {
        FeedbackSources(senderSSRC: senderSSRC, mediaSSRC: 0).write(into: &out)
        for e in entries {
            out.appendBigEndian(e.ssrc)
            out += [e.sequenceNumber, 0, 0, 0]
        }
        return Int(Self.format)
    }
}
