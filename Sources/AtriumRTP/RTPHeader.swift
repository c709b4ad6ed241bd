/// The RTP fixed header, CSRC list and header extension location (RFC 3550 section 5.1 and 5.3.1).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|X|  CC   |M|     PT      |       sequence number         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                           timestamp                           |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |           synchronization source (SSRC) identifier            |
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |            contributing source (CSRC) identifiers             |
/// |                             ....                              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |      defined by profile       |           length              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                        header extension                       |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// The header keeps offsets into the packet rather than copies, so parsing allocates nothing and the
/// payload stays where it is for forwarding.
public struct RTPHeader: Equatable, Sendable {
    public static let version: UInt8 = 2
    public static let fixedSize = 12
    static let sequenceOffset = 2
    static let timestampOffset = 4
    static let ssrcOffset = 8
    static let extensionHeaderSize = 4

    public var padding: Bool
    public var marker: Bool
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    /// How many CSRCs follow the fixed header (`csrcs(in:)` reads them).
    public var csrcCount: Int
    /// The header extension's profile field (0xBEDE, 0x100X, or another profile's), when X is set.
    public var extensionProfile: UInt16?
    /// Where the extension data (after its 4-byte header) lies in the packet; empty without one.
    public var extensionRange: Range<Int>
    /// Where the payload lies in the packet, padding excluded.
    public var payloadRange: Range<Int>

    /// The size of everything before the payload.
    public var headerSize: Int { payloadRange.lowerBound }

    /// Parses the header. A plain value of offsets (no array, no reference): copying a header counts
    /// no reference, and the packet is borrowed (an initializer's parameters are otherwise taken
    /// owned: a retain by the caller and a release here, per packet).
    public init(parsing packet: borrowing [UInt8]) throws(RTPError) {
        // Through a result: a typed-throwing closure through the stdlib's generic `withUnsafeBytes`
        // takes a heap context in a debug build.
        switch packet.withUnsafeBytes({ Self.parse($0) }) {
        case .success(let header): self = header
        case .failure(let error): throw error
        }
    }

    /// Parses the header of the packet in `packet`, read in place: the packet path reads a received
    /// packet where it lies, since copying its array out of its slot is a retain and a release. Every
    /// byte read is checked against the count first (an unsafe buffer's subscript is not in a release
    /// build).
    public init(parsing packet: UnsafeRawBufferPointer) throws(RTPError) {
        let count = packet.count
        guard count >= Self.fixedSize else { throw .packetTooShort(count) }
        let b0 = packet[0]
        let b1 = packet[1]
        guard b0 >> 6 == Self.version else { throw .badVersion(b0 >> 6) }
        padding = b0 & 0x20 != 0
        let hasExtension = b0 & 0x10 != 0
        csrcCount = Int(b0 & 0x0F)
        marker = b1 & 0x80 != 0
        payloadType = b1 & 0x7F
        // The fixed header is present (checked above).
        sequenceNumber = UInt16(packet[2]) << 8 | UInt16(packet[3])
        timestamp = Self.word(packet, at: Self.timestampOffset)
        ssrc = Self.word(packet, at: Self.ssrcOffset)

        var position = Self.fixedSize
        guard count - position >= csrcCount * 4 else { throw .csrcPastEnd(count: csrcCount) }
        position += csrcCount * 4

        extensionProfile = nil
        extensionRange = position..<position
        if hasExtension {
            guard count - position >= Self.extensionHeaderSize else {
                throw .extensionPastEnd(length: count - position)
            }
            let profile = UInt16(packet[position]) << 8 | UInt16(packet[position + 1])
            let length = (Int(packet[position + 2]) << 8 | Int(packet[position + 3])) * 4
            position += Self.extensionHeaderSize
            guard count - position >= length else { throw .extensionPastEnd(length: length) }
            extensionProfile = profile
            extensionRange = position..<position + length
            position += length
        }

        var end = count
        if padding {
            let padded = Int(packet[count - 1])
            guard padded >= 1, padded <= count - position else { throw .badPadding(padded) }
            end -= padded
        }
        payloadRange = position..<end
    }

    /// `init(parsing:)` as a value, for the array's `withUnsafeBytes`.
    private static func parse(_ packet: UnsafeRawBufferPointer) -> Result<RTPHeader, RTPError> {
        do throws(RTPError) {
            return .success(try RTPHeader(parsing: packet))
        } catch {
            return .failure(error)
        }
    }

    @inline(__always) static func word(_ packet: UnsafeRawBufferPointer, at i: Int) -> UInt32 {
        UInt32(packet[i]) << 24 | UInt32(packet[i + 1]) << 16 | UInt32(packet[i + 2]) << 8 | UInt32(packet[i + 3])
    }

    /// The CSRC identifiers, read from the packet the header was parsed from.
    /// None when `packet` is too short to hold them (not the packet the header came from).
    public func csrcs(in packet: [UInt8]) -> [UInt32] {
        guard packet.count >= Self.fixedSize + csrcCount * 4 else { return [] }
        return packet.withUnsafeBytes { bytes in (0..<csrcCount).map { Self.word(bytes, at: Self.fixedSize + $0 * 4) } }
    }

    /// The header extension's elements (RFC 8285), or none when the packet has no extension or one of
    /// another profile.
    public func extensionElements(in packet: [UInt8]) throws(RTPError) -> [RTPHeaderExtensionElement] {
        guard let extensionProfile else { return [] }
        return try RTPHeaderExtension.elements(in: packet, range: extensionRange, profile: extensionProfile)
    }

    /// Where the value of extension element `id` lies in the packet, without allocating; nil when absent.
    public func extensionValueRange(id: UInt8, in packet: [UInt8]) -> Range<Int>? {
        packet.withUnsafeBytes { extensionValueRange(id: id, in: $0) }
    }

    /// `extensionValueRange(id:in:)` on the packet's bytes in place (`init(parsing:)` says why).
    public func extensionValueRange(id: UInt8, in packet: UnsafeRawBufferPointer) -> Range<Int>? {
        guard let extensionProfile else { return nil }
        var found: Range<Int>?
        _ = RTPHeaderExtension.forEachElement(in: packet, range: extensionRange, profile: extensionProfile) {
            elementID,
            value in
            if elementID == id { found = value }
            return found == nil
        }
        return found
    }
}
