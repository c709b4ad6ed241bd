import AtriumBytes

/// A parsed STUN message (RFC 8489 section 5): the header, the attributes in wire order, and the bytes it
/// came from, which MESSAGE-INTEGRITY and FINGERPRINT verification need.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |0 0|     STUN Message Type     |         Message Length        |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                         Magic Cookie                          |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                                                               |
/// |                     Transaction ID (96 bits)                  |
/// |                                                               |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public struct STUNMessage: Equatable, Sendable {
    public static let headerSize = 20
    public static let magicCookie: UInt32 = 0x2112_A442

    static let typeOffset = 0
    static let lengthOffset = 2
    static let cookieOffset = 4
    static let transactionIDOffset = 8

    public var type: STUNMessageType
    public var transactionID: STUNTransactionID
    /// Attributes in wire order. Attributes after MESSAGE-INTEGRITY other than MESSAGE-INTEGRITY-SHA256 and
    /// FINGERPRINT are dropped, as RFC 8489 section 14.5 tells receivers to ignore them.
    public var attributes: [STUNAttribute]
    /// The message exactly as received.
    public var bytes: [UInt8]

    /// Parses one STUN message that fills `bytes` exactly (one UDP datagram).
    public init(parsing bytes: [UInt8]) throws(STUNError) {
        guard bytes.count >= Self.headerSize,
            let rawType = bytes.uint16(at: Self.typeOffset),
            let length = bytes.uint16(at: Self.lengthOffset),
            let cookie = bytes.uint32(at: Self.cookieOffset),
            let id = STUNTransactionID(bytes: bytes[Self.transactionIDOffset..<Self.headerSize])
        else { throw .truncatedHeader(count: bytes.count) }
        guard rawType & 0xC000 == 0 else { throw .notSTUN(firstByte: UInt8(truncatingIfNeeded: rawType >> 8)) }
        guard cookie == Self.magicCookie else { throw .badMagicCookie(cookie) }
        guard length % 4 == 0 else { throw .lengthNotMultipleOfFour(Int(length)) }
        guard Int(length) == bytes.count - Self.headerSize else {
            throw .lengthMismatch(declared: Int(length), actual: bytes.count - Self.headerSize)
        }
        type = STUNMessageType(rawValue: rawType)
        transactionID = id
        attributes = try Self.parseAttributes(bytes)
        self.bytes = bytes
    }

    private static func parseAttributes(_ bytes: [UInt8]) throws(STUNError) -> [STUNAttribute] {
        var out: [STUNAttribute] = []
        var offset = headerSize
        var afterIntegrity = false
        var sawFingerprint = false
        while offset < bytes.count {
            guard let rawType = bytes.uint16(at: offset), let rawLength = bytes.uint16(at: offset + 2) else {
                throw .truncatedAttribute(offset: offset)
            }
            let type = STUNAttributeType(rawValue: rawType)
            let length = Int(rawLength)
            let valueStart = offset + STUNAttribute.headerSize
            let next = valueStart + length + STUNAttribute.padding(for: length)
            guard next <= bytes.count else { throw .attributeOverrun(type: rawType, length: length) }
            guard !sawFingerprint else { throw .attributeAfterFingerprint(type: rawType) }
            let kept = !afterIntegrity || type == .fingerprint || type == .messageIntegritySHA256
            if kept {
                let value = Array(bytes[valueStart..<valueStart + length])
                out.append(STUNAttribute(type: type, value: value, offset: offset))
            }
            if type == .messageIntegrity { afterIntegrity = true }
            if type == .fingerprint { sawFingerprint = true }
            offset = next
        }
        return out
    }

    /// The first attribute of `type`, if any.
    public func attribute(_ type: STUNAttributeType) -> STUNAttribute? {
        attributes.first { $0.type == type }
    }

    /// Comprehension-required attributes this code has no accessor for; a request carrying any must be
    /// answered with a 420 error listing them (RFC 8489 section 6.3.1.1).
    public var unknownComprehensionRequired: [STUNAttributeType] {
        let known: Set<STUNAttributeType> = [
            .mappedAddress, .username, .messageIntegrity, .errorCode, .unknownAttributes, .realm, .nonce,
            .messageIntegritySHA256, .xorMappedAddress, .priority, .useCandidate,
        ]
        return attributes.map(\.type).filter { $0.isComprehensionRequired && !known.contains($0) }
    }
}
