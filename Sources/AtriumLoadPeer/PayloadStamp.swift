/// What the load publisher writes at the end of every RTP payload it sends, and what the load viewers
/// read back: who sent the packet (a publisher id and one of its sources), the publisher's own
/// sequence number for that source (gap-free, so a viewer counts losses without trusting the
/// server's rewritten RTP sequence numbers), and when it was sent on CLOCK_MONOTONIC, so that a
/// viewer on the same machine measures the time through the server.
///
/// ```
///  0                   1                   2                   3
/// +-------+-------+-------+-------+-------+-------+-------+-------+
/// |  magic "ATB1" (4)             |  publisher id (4)             |
/// +-------+-------+-------+-------+-------+-------+-------+-------+
/// |source | reserved (3)          |  sequence (4)                 |
/// +-------+-------+-------+-------+-------+-------+-------+-------+
/// |  send time, nanoseconds of CLOCK_MONOTONIC (8)                |
/// +-------+-------+-------+-------+-------+-------+-------+-------+
/// ```
/// All fields big-endian. Placed at the end of the payload so that a server rewriting the codec's
/// payload descriptor (a VP8 picture id) at the front leaves it alone.
public struct PayloadStamp: Equatable, Sendable {
    public static let size = 24
    public static let magic: UInt32 = 0x4154_4231

    public var publisher: UInt32
    public var source: UInt8
    public var sequence: UInt32
    public var sentNanoseconds: UInt64

    public init(publisher: UInt32, source: UInt8, sequence: UInt32, sentNanoseconds: UInt64) {
        self.publisher = publisher
        self.source = source
        self.sequence = sequence
        self.sentNanoseconds = sentNanoseconds
    }

    /// Writes the stamp into `bytes[offset ..< offset + size]`, which must exist.
    public func write(into bytes: inout [UInt8], at offset: Int) {
        precondition(offset >= 0 && offset + Self.size <= bytes.count, "stamp outside the packet")
        Self.put(Self.magic, into: &bytes, at: offset)
        Self.put(publisher, into: &bytes, at: offset + 4)
        bytes[offset + 8] = source
        bytes[offset + 9] = 0
        bytes[offset + 10] = 0
        bytes[offset + 11] = 0
        Self.put(sequence, into: &bytes, at: offset + 12)
        Self.put(UInt32(truncatingIfNeeded: sentNanoseconds >> 32), into: &bytes, at: offset + 16)
        Self.put(UInt32(truncatingIfNeeded: sentNanoseconds), into: &bytes, at: offset + 20)
    }

    /// Reads the stamp ending at `end` (the end of an RTP payload); nil when there is none there
    /// (too short, or no magic).
    public init?(_ bytes: [UInt8], payloadStart: Int, end: Int) {
        guard let stamp = bytes.withUnsafeBytes({ Self($0, payloadStart: payloadStart, end: end) }) else { return nil }
        self = stamp
    }

    /// The same, read where the packet lies (the viewers' receive path: no copy).
    public init?(_ bytes: UnsafeRawBufferPointer, payloadStart: Int, end: Int) {
        let offset = end - Self.size
        guard payloadStart >= 0, offset >= payloadStart, end <= bytes.count, Self.get(bytes, offset) == Self.magic
        else { return nil }
        publisher = Self.get(bytes, offset + 4)
        source = bytes[offset + 8]
        sequence = Self.get(bytes, offset + 12)
        sentNanoseconds = UInt64(Self.get(bytes, offset + 16)) << 32 | UInt64(Self.get(bytes, offset + 20))
    }

    static func put(_ value: UInt32, into bytes: inout [UInt8], at offset: Int) {
        bytes[offset] = UInt8(truncatingIfNeeded: value >> 24)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
        bytes[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[offset + 3] = UInt8(truncatingIfNeeded: value)
    }

    /// The big-endian word at `offset`, which the caller has checked lies inside `bytes`.
    static func get(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
}
