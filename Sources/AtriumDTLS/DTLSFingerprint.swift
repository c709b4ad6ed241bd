internal import COpenSSL

/// A certificate fingerprint as signaled in SDP's `a=fingerprint` (RFC 8122 section 5): a hash
/// function name and the digest of the DER certificate, written as colon-separated upper-case hex.
/// WebRTC endpoints authenticate each other's self-signed certificates only through it (RFC 8827
/// section 6.5), so it is compared byte for byte after the handshake.
public struct DTLSFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// The hash function's SDP name in lower case: `sha-256` and friends (RFC 8122 section 5).
    public let hashFunction: String
    public let digest: [UInt8]

    public init(hashFunction: String, digest: [UInt8]) {
        self.hashFunction = hashFunction.lowercased()
        self.digest = digest
    }

    /// Parses the value of `a=fingerprint`, for example `sha-256 AB:CD:...`. Hex digits are accepted
    /// in either case, as RFC 8122 allows.
    public init(sdp value: String) throws(DTLSError) {
        let parts = value.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2 else { throw .invalidFingerprint(value) }
        let name = parts[0].lowercased()
        guard let length = Self.digestLength(name) else { throw .unsupportedHashFunction(name) }
        var digest: [UInt8] = []
        for pair in parts[1].split(separator: ":", omittingEmptySubsequences: false) {
            guard pair.count == 2, let byte = UInt8(pair, radix: 16) else { throw .invalidFingerprint(value) }
            digest.append(byte)
        }
        guard digest.count == length else { throw .invalidFingerprint(value) }
        self.init(hashFunction: name, digest: digest)
    }

    /// The SDP form: `sha-256 AB:CD:...`.
    public var description: String {
        hashFunction + " " + digest.map { hex($0) }.joined(separator: ":")
    }

    /// Hashes a certificate with this fingerprint's hash function.
    static func of(_ certificate: OpaquePointer, hashFunction: String) throws(DTLSError) -> DTLSFingerprint {
        guard let md = messageDigest(hashFunction) else { throw .unsupportedHashFunction(hashFunction) }
        var buffer = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, md, &buffer, &length) == 1 else { throw .openSSL("X509_digest") }
        return DTLSFingerprint(hashFunction: hashFunction, digest: Array(buffer.prefix(Int(length))))
    }

    private static func digestLength(_ name: String) -> Int? {
        switch name {
        case "sha-1": return 20
        case "sha-256": return 32
        case "sha-384": return 48
        case "sha-512": return 64
        default: return nil
        }
    }

    private static func messageDigest(_ name: String) -> OpaquePointer? {
        switch name {
        case "sha-1": return EVP_sha1()
        case "sha-256": return EVP_sha256()
        case "sha-384": return EVP_sha384()
        case "sha-512": return EVP_sha512()
        default: return nil
        }
    }
}

private func hex(_ byte: UInt8) -> String {
    let digits: [Character] = Array("0123456789ABCDEF")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
}
