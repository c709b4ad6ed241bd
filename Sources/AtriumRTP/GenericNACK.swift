import AtriumBytes

/// Generic NACK (RFC 4585 section 6.2.1): transport-layer feedback, PT 205, FMT 1.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |            PID                |             BLP               |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// Each FCI entry names a lost packet (PID) and, in BLP, which of the 16 packets after it were lost too:
/// bit i (least significant first) set means PID + i + 1 was lost.
public struct GenericNACK: Equatable, Sendable {
    public static let format: UInt8 = 1

    public struct Entry: Equatable, Sendable {
        public var packetID: UInt16
        public var lostBitmask: UInt16

        public init(packetID: UInt16, lostBitmask: UInt16) {
            self.packetID = packetID
            self.lostBitmask = lostBitmask
        }

        /// The lost sequence numbers this entry names, in order (wrapping past 65535).
        public var sequenceNumbers: [UInt16] {
            var out = [packetID]
            for bit in 0..<16 where lostBitmask & (1 << bit) != 0 {
                out.append(packetID &+ UInt16(bit + 1))
            }
            return out
        }
    }

    public var sources: FeedbackSources
    public var entries: [Entry]

    public init(senderSSRC: UInt32, mediaSSRC: UInt32, entries: [Entry]) {
        sources = FeedbackSources(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC)
        self.entries = entries
    }

    /// A NACK for `lost` sequence numbers, given oldest first: each entry takes a packet ID and the lost
    /// packets within the 16 after it.
    public init(senderSSRC: UInt32, mediaSSRC: UInt32, lost: [UInt16]) {
        self.init(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, entries: Self.entries(for: lost))
    }

    /// Packs sequence numbers (oldest first) into PID/BLP entries.
    public static func entries(for lost: [UInt16]) -> [Entry] {
        var out: [Entry] = []
        for seq in lost {
            if var last = out.last {
                let d = SequenceNumber.distance(from: last.packetID, to: seq)
                if d == 0 { continue }
                if (1...16).contains(d) {
                    last.lostBitmask |= 1 << (d - 1)
                    out[out.count - 1] = last
                    continue
                }
            }
            out.append(Entry(packetID: seq, lostBitmask: 0))
        }
        return out
    }

    /// Every sequence number this NACK names, in entry order.
    public var sequenceNumbers: [UInt16] { entries.flatMap(\.sequenceNumbers) }

    init(_ r: inout ByteReader) throws(RTPError) {
        sources = try FeedbackSources(&r)
        guard r.remaining % 4 == 0 else { throw .malformed(packetType: r.packetType) }
        entries = []
        while r.remaining > 0 {
            entries.append(Entry(packetID: try r.readUInt16(), lostBitmask: try r.readUInt16()))
        }
    }

    func write(into out: inout [UInt8]) throws(RTPError) -> Int {
        sources.write(into: &out)
        for e in entries {
            out.appendBigEndian(e.packetID)
            out.appendBigEndian(e.lostBitmask)
        }
        return Int(Self.format)
    }
}
