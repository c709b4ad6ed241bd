import AtriumBytes

/// Writes a STUN message attribute by attribute (RFC 8489 sections 5 and 14), keeping the header's length
/// field current so MESSAGE-INTEGRITY and FINGERPRINT can be appended last over what came before.
public struct STUNMessageBuilder: Sendable {
    /// The message length field is 16 bits.
    static let maxBodyLength = Int(UInt16.max)

    public private(set) var bytes: [UInt8]
    public let transactionID: STUNTransactionID

    public init(type: STUNMessageType, transactionID: STUNTransactionID) {
        self.transactionID = transactionID
        bytes = []
        bytes.reserveCapacity(128)
        bytes.appendBigEndian(type.rawValue)
        bytes.appendBigEndian(UInt16(0))
        bytes.appendBigEndian(STUNMessage.magicCookie)
        bytes += transactionID.bytes
    }

    /// Appends one attribute with zero padding to a multiple of 4 bytes.
    public mutating func append(_ type: STUNAttributeType, value: [UInt8]) throws(STUNError) {
        guard value.count <= Int(UInt16.max) else { throw .valueTooLong(type: type.rawValue, length: value.count) }
        let padding = STUNAttribute.padding(for: value.count)
        let body = bytes.count - STUNMessage.headerSize + STUNAttribute.headerSize + value.count + padding
        guard body <= Self.maxBodyLength else { throw .messageTooLong(body) }
        bytes.appendBigEndian(type.rawValue)
        bytes.appendBigEndian(UInt16(truncatingIfNeeded: value.count))
        bytes += value
        bytes += [UInt8](repeating: 0, count: padding)
        bytes.setBigEndian(UInt16(truncatingIfNeeded: body), at: STUNMessage.lengthOffset)
    }

    public mutating func appendUsername(_ username: String) throws(STUNError) {
        try append(.username, value: Array(username.utf8))
    }

    public mutating func appendXORMappedAddress(_ address: STUNTransportAddress) throws(STUNError) {
        try append(.xorMappedAddress, value: XORMappedAddress.encode(address, transactionID: transactionID))
    }

    public mutating func appendPriority(_ priority: UInt32) throws(STUNError) {
        var v: [UInt8] = []
        v.appendBigEndian(priority)
        try append(.priority, value: v)
    }

    public mutating func appendUseCandidate() throws(STUNError) { try append(.useCandidate, value: []) }

    public mutating func appendICEControlled(tieBreaker: UInt64) throws(STUNError) {
        var v: [UInt8] = []
        v.appendBigEndian(tieBreaker)
        try append(.iceControlled, value: v)
    }

    public mutating func appendICEControlling(tieBreaker: UInt64) throws(STUNError) {
        var v: [UInt8] = []
        v.appendBigEndian(tieBreaker)
        try append(.iceControlling, value: v)
    }

    public mutating func appendErrorCode(_ error: STUNErrorCode) throws(STUNError) {
        try append(.errorCode, value: error.value)
    }

    /// Appends MESSAGE-INTEGRITY over everything so far (RFC 8489 section 14.5).
    public mutating func appendMessageIntegrity(key: [UInt8]) throws(STUNError) {
        let offset = bytes.count
        let placeholder = [UInt8](repeating: 0, count: STUNIntegrity.messageIntegritySize)
        try append(.messageIntegrity, value: placeholder)
        let mac = STUNIntegrity.messageIntegrity(bytes, attributeOffset: offset, key: key)
        bytes.replaceSubrange((offset + STUNAttribute.headerSize)..<bytes.count, with: mac)
    }

    /// Appends FINGERPRINT over everything so far (RFC 8489 section 14.7); it must be the last attribute.
    public mutating func appendFingerprint() throws(STUNError) {
        let offset = bytes.count
        try append(.fingerprint, value: [0, 0, 0, 0])
        var crc: [UInt8] = []
        crc.appendBigEndian(STUNIntegrity.fingerprint(bytes, attributeOffset: offset))
        bytes.replaceSubrange((offset + STUNAttribute.headerSize)..<bytes.count, with: crc)
    }

    /// A Binding success response (RFC 8489 section 6.3.1.1, RFC 8445 section 7.3.1): the source address
    /// of the request as XOR-MAPPED-ADDRESS, then MESSAGE-INTEGRITY with the local password, then
    /// FINGERPRINT.
    public static func bindingSuccess(
        transactionID: STUNTransactionID, mappedAddress: STUNTransportAddress, key: [UInt8]
    ) -> [UInt8] {
        var b = STUNMessageBuilder(type: .bindingSuccess, transactionID: transactionID)
        // Fixed-size attributes cannot exceed the length limits, so these appends do not fail.
        try? b.appendXORMappedAddress(mappedAddress)
        try? b.appendMessageIntegrity(key: key)
        try? b.appendFingerprint()
        return b.bytes
    }

    /// An error response to a request of `method` (RFC 8489 section 6.3.1.1): ERROR-CODE, then
    /// MESSAGE-INTEGRITY when a key is given (not for 400 or 401, where the request could not be
    /// authenticated), then FINGERPRINT.
    public static func errorResponse(
        method: STUNMethod, transactionID: STUNTransactionID, error: STUNErrorCode, key: [UInt8]? = nil
    ) -> [UInt8] {
        var b = STUNMessageBuilder(
            type: STUNMessageType(method: method, messageClass: .errorResponse), transactionID: transactionID)
        // The reason phrase is cut to 127 characters, so the attribute fits.
        try? b.appendErrorCode(error)
        if let key { try? b.appendMessageIntegrity(key: key) }
        try? b.appendFingerprint()
        return b.bytes
    }
}
