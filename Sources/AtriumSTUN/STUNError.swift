/// Why bytes were refused as a STUN message (RFC 8489), or why a message failed its checks.
///
/// Parsing never traps: every malformed input ends in one of these cases, so one bad datagram costs one
/// dropped packet and a counter, never a process.
public enum STUNError: Error, Equatable, Sendable {
    /// Fewer than the 20 bytes of the fixed header (RFC 8489 section 5).
    case truncatedHeader(count: Int)
    /// The two most significant bits are not zero, so this is not STUN (RFC 8489 section 5).
    case notSTUN(firstByte: UInt8)
    /// The magic cookie is not 0x2112A442 (RFC 8489 section 5): a classic RFC 3489 message or noise.
    case badMagicCookie(UInt32)
    /// The message length is not a multiple of 4 (RFC 8489 section 5).
    case lengthNotMultipleOfFour(Int)
    /// The header's length disagrees with the bytes received after the header.
    case lengthMismatch(declared: Int, actual: Int)
    /// Fewer than 4 bytes left where an attribute header must start.
    case truncatedAttribute(offset: Int)
    /// An attribute's value (with its padding) runs past the end of the message.
    case attributeOverrun(type: UInt16, length: Int)
    /// An attribute follows FINGERPRINT, which must be last (RFC 8489 section 14.7).
    case attributeAfterFingerprint(type: UInt16)
    /// An attribute's value has the wrong size or an impossible content for its type.
    case malformedAttribute(type: UInt16)
    /// The message carries no MESSAGE-INTEGRITY to check.
    case missingMessageIntegrity
    /// MESSAGE-INTEGRITY does not match the key (RFC 8489 section 14.5).
    case messageIntegrityMismatch
    /// The message carries no FINGERPRINT to check.
    case missingFingerprint
    /// FINGERPRINT does not match the message (RFC 8489 section 14.7).
    case fingerprintMismatch
    /// A value handed to the builder does not fit the 16-bit length field.
    case valueTooLong(type: UInt16, length: Int)
    /// A built message would exceed the 16-bit message length.
    case messageTooLong(Int)
}
