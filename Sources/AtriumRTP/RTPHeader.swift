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
/// The header keeps offsets into the packet rather than copies, so parsing allocates nothing unless the
/// packet carries CSRCs; the payload stays where it is for forwarding.
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
    public var csrcs: [UInt32]
    /// The header extension's profile field (0xBEDE, 0x100X, or another profile's), when X is set.
    public var extensionProfile: UInt16?
    /// Where the extension data (after its 4-byte header) lies in the packet; empty without one.
    public var extensionRange: Range<Int>
    /// Where the payload lies in the packet, padding excluded.
    public var payloadRange: Range<Int>

    /// The size of everything before the payload.
    public var headerSize: Int { payloadRange.lowerBound }

    public init(parsing packet: [UInt8]) throws(RTPError) {
        guard packet.count >= Self.fixedSize else { throw .packetTooShort(packet.count) }
        let b0 = packet[0]
        let b1 = packet[1]
        guard b0 >> 6 == Self.version else { throw .badVersion(b0 >> 6) }
        padding = b0 & 0x20 != 0
        let hasExtension = b0 & 0x10 != 0
        let csrcCount = Int(b0 & 0x0F)
        marker = b1 & 0x80 != 0
        payloadType = b1 & 0x7F
        var r = ByteReader(packet, from: Self.sequenceOffset, to: packet.count, packetType: 0)
        // The fixed header is present (checked above), so these reads cannot fail.
        sequenceNumber = (try? r.readUInt16()) ?? 0
        timestamp = (try? r.readUInt32()) ?? 0
        ssrc = (try? r.readUInt32()) ?? 0

        guard r.remaining >= csrcCount * 4 else { throw .csrcPastEnd(count: csrcCount) }
        csrcs = []
        for _ in 0..<csrcCount { csrcs.append((try? r.readUInt32()) ?? 0) }

        extensionProfile = nil
        extensionRange = r.position..<r.position
        if hasExtension {
            guard r.remaining >= Self.extensionHeaderSize, let profile = try? r.readUInt16(),
                let words = try? r.readUInt16()
            else { throw .extensionPastEnd(length: r.remaining) }
            let length = Int(words) * 4
            guard r.remaining >= length else { throw .extensionPastEnd(length: length) }
            extensionProfile = profile
            extensionRange = r.position..<r.position + length
            try? r.skip(length)
        }

        var end = packet.count
        if padding {
            let count = Int(packet[packet.count - 1])
            guard count >= 1, count <= packet.count - r.position else { throw .badPadding(count) }
            end -= count
        }
        payloadRange = r.position..<end
    }

    /// The header extension's elements (RFC 8285), or none when the packet has no extension or one of
    /// another profile.
    public func extensionElements(in packet: [UInt8]) throws(RTPError) -> [RTPHeaderExtensionElement] {
        guard let extensionProfile else { return [] }
        return try RTPHeaderExtension.elements(in: packet, range: extensionRange, profile: extensionProfile)
    }

    /// Where the value of extension element `id` lies in the packet, without allocating; nil when absent.
    public func extensionValueRange(id: UInt8, in packet: [UInt8]) -> Range<Int>? {
        guard let extensionProfile else { return nil }
        var found: Range<Int>?
        try? RTPHeaderExtension.forEachElement(in: packet, range: extensionRange, profile: extensionProfile) {
            elementID,
            value in
            if elementID == id { found = value }
            return found == nil
        }
        return found
    }
}
