import AtriumBytes

/// Typed readers for the attributes ICE uses. Each returns nil when the attribute is absent and throws
/// `.malformedAttribute` when it is present with a value of the wrong shape.
extension STUNMessage {
    /// USERNAME (RFC 8489 section 14.3) as bytes; for ICE it is "remote-ufrag:local-ufrag" (RFC 8445
    /// section 7.2.2), compared byte for byte.
    public var usernameBytes: [UInt8]? { attribute(.username)?.value }

    /// USERNAME as UTF-8 text; throws if it is not valid UTF-8 or longer than the 513 bytes RFC 8489 allows.
    public func username() throws(STUNError) -> String? {
        guard let value = usernameBytes else { return nil }
        guard value.count <= 513, let text = String(validating: value, as: UTF8.self) else {
            throw .malformedAttribute(type: STUNAttributeType.username.rawValue)
        }
        return text
    }

    /// XOR-MAPPED-ADDRESS (RFC 8489 section 14.2), un-XOR-ed.
    public func xorMappedAddress() throws(STUNError) -> STUNTransportAddress? {
        guard let a = attribute(.xorMappedAddress) else { return nil }
        return try XORMappedAddress.decode(a.value, transactionID: transactionID)
    }

    /// PRIORITY (RFC 8445 section 7.1.1): the priority a peer-reflexive candidate would get.
    public func priority() throws(STUNError) -> UInt32? {
        guard let a = attribute(.priority) else { return nil }
        guard a.value.count == 4, let v = a.value.uint32(at: 0) else {
            throw .malformedAttribute(type: STUNAttributeType.priority.rawValue)
        }
        return v
    }

    /// USE-CANDIDATE (RFC 8445 section 7.1.2): the controlling agent nominates this pair. It has no value.
    public var useCandidate: Bool { attribute(.useCandidate) != nil }

    /// ICE-CONTROLLED's tie-breaker (RFC 8445 section 7.1.3).
    public func iceControlled() throws(STUNError) -> UInt64? { try tieBreaker(.iceControlled) }

    /// ICE-CONTROLLING's tie-breaker (RFC 8445 section 7.1.3).
    public func iceControlling() throws(STUNError) -> UInt64? { try tieBreaker(.iceControlling) }

    private func tieBreaker(_ type: STUNAttributeType) throws(STUNError) -> UInt64? {
        guard let a = attribute(type) else { return nil }
        guard a.value.count == 8, let v = a.value.uint64(at: 0) else {
            throw .malformedAttribute(type: type.rawValue)
        }
        return v
    }

    /// ERROR-CODE (RFC 8489 section 14.8).
    public func errorCode() throws(STUNError) -> STUNErrorCode? {
        guard let a = attribute(.errorCode) else { return nil }
        return try STUNErrorCode(value: a.value)
    }
}

/// ERROR-CODE (RFC 8489 section 14.8): a code 300-699 and a UTF-8 reason phrase.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |           Reserved, should be 0         |Class|     Number    |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |      Reason Phrase (variable)                                ..
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public struct STUNErrorCode: Hashable, Sendable {
    static let classOffset = 2
    static let numberOffset = 3
    static let reasonOffset = 4
    /// RFC 8489: fewer than 128 characters.
    static let maxReasonCharacters = 127

    public var code: Int
    public var reason: String

    public init(code: Int, reason: String) {
        self.code = code
        self.reason = reason
    }

    public static let badRequest = STUNErrorCode(code: 400, reason: "Bad Request")
    public static let unauthenticated = STUNErrorCode(code: 401, reason: "Unauthenticated")
    public static let unknownAttribute = STUNErrorCode(code: 420, reason: "Unknown Attribute")
    /// RFC 8445 section 7.3.1.1.
    public static let roleConflict = STUNErrorCode(code: 487, reason: "Role Conflict")
    public static let serverError = STUNErrorCode(code: 500, reason: "Server Error")

    init(value: [UInt8]) throws(STUNError) {
        let malformed = STUNError.malformedAttribute(type: STUNAttributeType.errorCode.rawValue)
        guard value.count >= Self.reasonOffset else { throw malformed }
        let cls = Int(value[Self.classOffset] & 0x07)
        let number = Int(value[Self.numberOffset])
        guard (3...6).contains(cls), number < 100,
            let text = String(validating: value[Self.reasonOffset...], as: UTF8.self)
        else { throw malformed }
        code = cls * 100 + number
        reason = text
    }

    /// The attribute value; codes outside 300-699 are clamped into it, and the reason is cut to 127
    /// characters.
    var value: [UInt8] {
        let c = min(max(code, 300), 699)
        return [0, 0, UInt8(c / 100), UInt8(c % 100)] + Array(String(reason.prefix(Self.maxReasonCharacters)).utf8)
    }
}
