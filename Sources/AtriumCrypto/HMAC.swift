internal import COpenSSL

/// HMAC-SHA256 (RFC 2104) through OpenSSL's one-shot HMAC.
public enum HMACSHA256 {
    public static let outputSize = 32

    public static func authenticate(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        oneShotHMAC(EVP_sha256(), outputSize: outputSize, message: message, key: key)
    }
}

/// HMAC-SHA1 (RFC 2104) through OpenSSL's one-shot HMAC. STUN's MESSAGE-INTEGRITY (RFC 8489 section 14.5)
/// still uses it, and ICE short-term credentials are keyed with it.
public enum HMACSHA1 {
    public static let outputSize = 20

    public static func authenticate(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        oneShotHMAC(EVP_sha1(), outputSize: outputSize, message: message, key: key)
    }
}

private func oneShotHMAC(
    _ digest: OpaquePointer?, outputSize: Int, message: [UInt8], key: [UInt8]
) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: outputSize)
    var outLen: UInt32 = 0
    // OpenSSL refuses null pointers even with length 0: give empty inputs a one-byte buffer.
    let k = key.isEmpty ? [0] : key
    let m = message.isEmpty ? [0] : message
    k.withUnsafeBufferPointer { kb in
        m.withUnsafeBufferPointer { mb in
            _ = HMAC(digest, kb.baseAddress, Int32(key.count), mb.baseAddress, message.count, &out, &outLen)
        }
    }
    return out
}

/// Compares two byte strings in time that depends only on their lengths (OpenSSL's CRYPTO_memcmp).
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    return a.withUnsafeBytes { pa in
        b.withUnsafeBytes { pb in CRYPTO_memcmp(pa.baseAddress, pb.baseAddress, a.count) == 0 }
    }
}

/// Cryptographically secure random bytes from OpenSSL's DRBG.
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        // Keys and nonces come from here: a DRBG that fails must not hand out zeros.
        if count > 0 { precondition(RAND_bytes(&out, Int32(count)) == 1, "OpenSSL's RAND_bytes failed") }
        return out
    }

    public static func uint64() -> UInt64 {
        bytes(8).reduce(0) { ($0 << 8) | UInt64($1) }
    }
}
