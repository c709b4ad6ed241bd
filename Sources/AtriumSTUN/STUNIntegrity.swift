import AtriumBytes
internal import AtriumCrypto

/// MESSAGE-INTEGRITY (RFC 8489 section 14.5) and FINGERPRINT (section 14.7).
///
/// Both cover the message up to the attribute's header, with the header's length field set as if the
/// message ended right after the attribute: a receiver can check them without knowing what follows.
public enum STUNIntegrity {
    /// FINGERPRINT is the CRC-32 of the covered bytes XOR-ed with this, so that it differs from CRCs other
    /// protocols sharing the port may carry (RFC 8489 section 14.7).
    public static let fingerprintXOR: UInt32 = 0x5354_554E
    public static let messageIntegritySize = HMACSHA1.outputSize
    public static let fingerprintSize = 4

    /// The short-term credential key (RFC 8489 section 9.1.1): the password itself. ICE passwords are
    /// limited to ASCII `ice-char`s (RFC 8839 section 5.4), which OpaqueString processing leaves unchanged.
    public static func shortTermKey(password: String) -> [UInt8] { Array(password.utf8) }

    /// The HMAC-SHA1 value of a MESSAGE-INTEGRITY attribute whose header starts at `offset` in `bytes`.
    public static func messageIntegrity(_ bytes: [UInt8], attributeOffset offset: Int, key: [UInt8]) -> [UInt8] {
        let covered = coveredBytes(bytes, upTo: offset, attributeSize: STUNAttribute.headerSize + messageIntegritySize)
        return HMACSHA1.authenticate(covered, key: key)
    }

    /// The value of a FINGERPRINT attribute whose header starts at `offset` in `bytes`.
    public static func fingerprint(_ bytes: [UInt8], attributeOffset offset: Int) -> UInt32 {
        let covered = coveredBytes(bytes, upTo: offset, attributeSize: STUNAttribute.headerSize + fingerprintSize)
        return CRC32.checksum(covered) ^ fingerprintXOR
    }

    private static func coveredBytes(_ bytes: [UInt8], upTo offset: Int, attributeSize: Int) -> [UInt8] {
        var covered = Array(bytes.prefix(max(offset, 0)))
        let length = max(offset - STUNMessage.headerSize, 0) + attributeSize
        covered.setBigEndian(UInt16(truncatingIfNeeded: length), at: STUNMessage.lengthOffset)
        return covered
    }
}

extension STUNMessage {
    /// Checks MESSAGE-INTEGRITY against `key` (compared in constant time).
    public func verifyMessageIntegrity(key: [UInt8]) throws(STUNError) {
        guard let mi = attribute(.messageIntegrity) else { throw .missingMessageIntegrity }
        guard mi.value.count == STUNIntegrity.messageIntegritySize else {
            throw .malformedAttribute(type: STUNAttributeType.messageIntegrity.rawValue)
        }
        let expected = STUNIntegrity.messageIntegrity(bytes, attributeOffset: mi.offset, key: key)
        guard constantTimeEquals(expected, mi.value) else { throw .messageIntegrityMismatch }
    }

    /// Checks FINGERPRINT against the bytes before it.
    public func verifyFingerprint() throws(STUNError) {
        guard let fp = attribute(.fingerprint) else { throw .missingFingerprint }
        guard fp.value.count == STUNIntegrity.fingerprintSize, let received = fp.value.uint32(at: 0) else {
            throw .malformedAttribute(type: STUNAttributeType.fingerprint.rawValue)
        }
        guard STUNIntegrity.fingerprint(bytes, attributeOffset: fp.offset) == received else {
            throw .fingerprintMismatch
        }
    }
}
