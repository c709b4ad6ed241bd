/// Why bytes were refused as RTP (RFC 3550 section 5.1, RFC 8285) or RTCP (RFC 3550 section 6, RFC 4585,
/// RFC 5104, REMB, transport-wide CC), or why a value could not be written.
///
/// Parsing never traps: every malformed input ends in one of these cases, so one bad datagram costs one
/// dropped packet and a counter, never a process.
public enum RTPError: Error, Equatable, Sendable {
    /// Fewer than the 12 bytes of the fixed RTP header.
    case packetTooShort(Int)
    /// The version field is not 2.
    case badVersion(UInt8)
    /// The CSRC count names more identifiers than the packet holds.
    case csrcPastEnd(count: Int)
    /// The header extension's length runs past the end of the packet.
    case extensionPastEnd(length: Int)
    /// The padding count is zero or larger than the bytes after the header.
    case badPadding(Int)
    /// A header extension element runs past the extension block (RFC 8285 section 4).
    case malformedHeaderExtension(profile: UInt16)
    /// An RTCP datagram with no bytes at all.
    case emptyCompound
    /// Fewer than the 4 bytes of an RTCP common header left in the compound packet.
    case rtcpHeaderTruncated(remaining: Int)
    /// An RTCP packet's length field runs past the end of the compound packet.
    case lengthPastEnd(declared: Int, available: Int)
    /// An RTCP packet is too short for the fields its type and counts require.
    case truncated(packetType: UInt8)
    /// An RTCP packet has an impossible field (a zero SDES length where text is required, a wrong REMB
    /// identifier, a status count its chunks do not cover).
    case malformed(packetType: UInt8)
    /// A header extension element cannot be written: id 0 or 15 in the one-byte form, id 0 in the two-byte
    /// form, or a value longer than 16 or 255 bytes respectively.
    case invalidExtensionElement(id: UInt8, length: Int)
    /// More items than a 5-bit count (31), or than a 16-bit field, can carry.
    case tooManyItems(Int)
    /// A value does not fit its field (a transport-wide CC delta outside its symbol's range, a reason
    /// phrase over 255 bytes).
    case valueOutOfRange
}
