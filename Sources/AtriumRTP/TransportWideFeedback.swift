import AtriumBytes

/// Transport-wide congestion control feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01
/// section 3.1): transport-layer feedback, PT 205, FMT 15. It reports, for a run of transport-wide
/// sequence numbers, which packets arrived and when.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|  FMT=15 |    PT=205     |           length              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                     SSRC of packet sender                     |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                      SSRC of media source                     |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |      base sequence number     |      packet status count      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                 reference time                | fb pkt. count |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |          packet chunk         |         packet chunk          |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// .                                                               .
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |         packet chunk          |  recv delta   |  recv delta   |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// .                                                               .
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |           recv delta          |  recv delta   | zero padding  |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// The reference time is a signed 24-bit count of 64 ms; receive deltas count 250 us, the first relative
/// to the reference time and each next to the previous received packet.
public struct TransportWideFeedback: Equatable, Sendable {
    public static let format: UInt8 = 15
    /// Reference time unit, in microseconds.
    public static let referenceTimeUnitMicroseconds = 64_000
    /// Receive delta unit, in microseconds.
    public static let deltaUnitMicroseconds = 250

    public var sources: FeedbackSources
    public var baseSequenceNumber: UInt16
    /// Signed 24-bit, in units of 64 ms.
    public var referenceTime: Int32
    public var feedbackPacketCount: UInt8
    /// One status per packet, starting at the base sequence number.
    public var statuses: [TransportWideStatus]
    /// One delta (in 250 us units) per status that carries one, in order.
    public var receiveDeltas: [Int16]

    public init(
        senderSSRC: UInt32, mediaSSRC: UInt32, baseSequenceNumber: UInt16, referenceTime: Int32,
        feedbackPacketCount: UInt8, statuses: [TransportWideStatus], receiveDeltas: [Int16]
    ) {
        sources = FeedbackSources(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC)
        self.baseSequenceNumber = baseSequenceNumber
        self.referenceTime = referenceTime
        self.feedbackPacketCount = feedbackPacketCount
        self.statuses = statuses
        self.receiveDeltas = receiveDeltas
    }

    /// Each reported packet: its transport-wide sequence number, and its arrival delta when it has one.
    public var packets: [(sequenceNumber: UInt16, status: TransportWideStatus, delta: Int16?)] {
        var deltas = receiveDeltas.makeIterator()
        return statuses.enumerated().map { i, status in
            let seq = baseSequenceNumber &+ UInt16(truncatingIfNeeded: i)
            return (seq, status, status.hasDelta ? deltas.next() : nil)
        }
    }

    init(_ r: inout ByteReader) throws(RTPError) {
        sources = try FeedbackSources(&r)
        baseSequenceNumber = try r.readUInt16()
        let count = Int(try r.readUInt16())
        let reference = try r.readUInt24()
        referenceTime = Int32(bitPattern: reference << 8) >> 8
        feedbackPacketCount = try r.readUInt8()

        statuses = []
        statuses.reserveCapacity(count)
        while statuses.count < count {
            let chunk = TransportWideChunk(rawValue: try r.readUInt16())
            // A run may be longer than the packets left; extra symbols are not part of this feedback.
            guard chunk.count > 0 else { throw .malformed(packetType: r.packetType) }
            chunk.appendStatuses(to: &statuses, limit: count)
        }
        receiveDeltas = []
        for status in statuses {
            switch status {
            case .receivedSmallDelta: receiveDeltas.append(Int16(try r.readUInt8()))
            case .receivedLargeDelta: receiveDeltas.append(Int16(bitPattern: try r.readUInt16()))
            case .notReceived, .reserved: break
            }
        }
        // What remains is zero padding.
    }

    func write(into out: inout [UInt8]) throws(RTPError) -> Int {
        guard statuses.count <= Int(UInt16.max) else { throw .tooManyItems(statuses.count) }
        guard (-0x80_0000...0x7F_FFFF).contains(referenceTime) else { throw .valueOutOfRange }
        let withDelta = statuses.filter(\.hasDelta)
        guard withDelta.count == receiveDeltas.count else { throw .valueOutOfRange }
        for (status, delta) in zip(withDelta, receiveDeltas) where status == .receivedSmallDelta {
            guard (0...255).contains(delta) else { throw .valueOutOfRange }
        }
        sources.write(into: &out)
        out.appendBigEndian(baseSequenceNumber)
        out.appendBigEndian(UInt16(statuses.count))
        out.appendBigEndian(UInt32(bitPattern: referenceTime) << 8 | UInt32(feedbackPacketCount))
        for chunk in TransportWideChunk.encode(statuses) { out.appendBigEndian(chunk.rawValue) }
        for (status, delta) in zip(withDelta, receiveDeltas) {
            if status == .receivedSmallDelta {
                out.append(UInt8(truncatingIfNeeded: delta))
            } else {
                out.appendBigEndian(UInt16(bitPattern: delta))
            }
        }
        out.padToWord()
        return Int(Self.format)
    }
}
