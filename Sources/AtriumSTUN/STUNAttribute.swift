/// A STUN attribute type (RFC 8489 section 14 and 18.3; RFC 8445 section 16.1 for the ICE ones).
///
/// Types below 0x8000 are comprehension-required: an agent that does not understand one must refuse
/// the message (RFC 8489 section 14); the ones above may be ignored.
public struct STUNAttributeType: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let mappedAddress = STUNAttributeType(rawValue: 0x0001)
    public static let username = STUNAttributeType(rawValue: 0x0006)
    public static let messageIntegrity = STUNAttributeType(rawValue: 0x0008)
    public static let errorCode = STUNAttributeType(rawValue: 0x0009)
    public static let unknownAttributes = STUNAttributeType(rawValue: 0x000A)
    public static let realm = STUNAttributeType(rawValue: 0x0014)
    public static let nonce = STUNAttributeType(rawValue: 0x0015)
    public static let messageIntegritySHA256 = STUNAttributeType(rawValue: 0x001C)
    public static let xorMappedAddress = STUNAttributeType(rawValue: 0x0020)
    /// RFC 8445 section 16.1.
    public static let priority = STUNAttributeType(rawValue: 0x0024)
    /// RFC 8445 section 16.1.
    public static let useCandidate = STUNAttributeType(rawValue: 0x0025)
    public static let software = STUNAttributeType(rawValue: 0x8022)
    public static let fingerprint = STUNAttributeType(rawValue: 0x8028)
    /// RFC 8445 section 16.1.
    public static let iceControlled = STUNAttributeType(rawValue: 0x8029)
    /// RFC 8445 section 16.1.
    public static let iceControlling = STUNAttributeType(rawValue: 0x802A)

    /// Comprehension-required types are 0x0000-0x7FFF (RFC 8489 section 14).
    public var isComprehensionRequired: Bool { rawValue < 0x8000 }
}

/// One attribute as it appeared on the wire: its type, its value without padding, and where its header
/// starts in the message (MESSAGE-INTEGRITY and FINGERPRINT are computed over everything before it).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |         Type                  |            Length             |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                         Value (variable)                ....
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// RFC 8489 section 14: the value is padded to a multiple of 4 bytes; the length excludes the padding,
/// and the padding's content is ignored.
public struct STUNAttribute: Equatable, Sendable {
    public static let headerSize = 4

    public var type: STUNAttributeType
    public var value: [UInt8]
    /// Offset of the attribute header from the start of the message.
    public var offset: Int

    public init(type: STUNAttributeType, value: [UInt8], offset: Int) {
        self.type = type
        self.value = value
        self.offset = offset
    }

    /// The number of padding bytes that follow a value of `length` bytes.
    static func padding(for length: Int) -> Int { (4 - length % 4) % 4 }
}
