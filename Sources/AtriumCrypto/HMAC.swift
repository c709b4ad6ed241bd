internal import COpenSSL

/// HMAC-SHA256 (RFC 2104) through OpenSSL's one-shot HMAC.
public enum HMACSHA256 {
    public static let outputSize = 32

    public static func authenticate(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: outputSize)
        var outLen: UInt32 = 0
        key.withUnsafeBufferPointer { k in
            message.withUnsafeBufferPointer { m in
                // A null key pointer is refused by OpenSSL even with length 0; point at a dummy byte instead.
                var dummy: UInt8 = 0
                let keyPtr = k.baseAddress.map(UnsafeRawPointer.init) ?? withUnsafePointer(to: &dummy) {
                    UnsafeRawPointer($0)
                }
                _ = HMAC(EVP_sha256(), keyPtr, Int32(k.count), m.baseAddress ?? UnsafePointer([0]), m.count,
                         &out, &outLen)
            }
        }
        return out
    }
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
        if count > 0 { _ = RAND_bytes(&out, Int32(count)) }
        return out
    }

    public static func uint64() -> UInt64 {
        bytes(8).reduce(0) { ($0 << 8) | UInt64($1) }
    }
}
