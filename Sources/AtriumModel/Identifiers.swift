/// Typed identifiers, so that a room id is never passed where an identity is expected (LiveKit's model).

/// A room's server-assigned id, `rm_` followed by 16 Crockford base32 characters whose first ten encode the
/// creation time in milliseconds, so that ids sort in creation order.
public struct RoomID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    public static func < (a: RoomID, b: RoomID) -> Bool { a.rawValue < b.rawValue }

    /// Whether the string has the shape of a room id (used to tell ids from names in a token's room scope).
    public static func isWellFormed(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.count == 19, s.hasPrefix("rm_") else { return false }
        return u[3...].allSatisfy { Base32.alphabet.contains($0) }
    }
}

/// A participant's identity as the token's `sub` claim states it; unique within a room.
public struct ParticipantIdentity: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let maxLength = 256

    /// Identities appear in URLs of the admin API and in logs: 1 to 256 characters, no control
    /// characters, no `/`, and not `.` or `..` (which URL normalisation would resolve).
    public static func isValid(_ s: String) -> Bool {
        let scalars = s.unicodeScalars
        guard !scalars.isEmpty, scalars.count <= maxLength, s != ".", s != ".." else { return false }
        return !scalars.contains { $0.value < 0x20 || $0.value == 0x7F || $0 == "/" }
    }
}

/// Crockford base32 (no I, L, O, U), lower-cased, as used in Atrium ids.
public enum Base32 {
    public static let alphabet: [UInt8] = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)

    /// Encodes the low `5 * count` bits of `value`, most significant first.
    public static func encode(_ value: UInt64, count: Int) -> String {
        var out = [UInt8](repeating: 0, count: count)
        var v = value
        for i in stride(from: count - 1, through: 0, by: -1) {
            out[i] = alphabet[Int(v & 31)]
            v >>= 5
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension RoomID {
    /// A new id from the creation time and 30 random bits.
    public static func make(millis: UInt64, random: UInt64) -> RoomID {
        RoomID("rm_" + Base32.encode(millis, count: 10) + Base32.encode(random, count: 6))
    }
}
