internal import COpenSSL

/// An ECDH key pair on P-256 through OpenSSL (EVP_PKEY): the public key as an uncompressed point
/// (65 bytes, what WebCrypto's "raw" export gives), the shared secret as the x coordinate (32 bytes,
/// WebCrypto's `deriveBits`).
public final class ECDHP256: @unchecked Sendable {
    // Immutable after init: OpenSSL only reads it.
    private let key: OpaquePointer

    public init?() {
        guard let k = atrium_evp_ec_gen("P-256") else { return nil }
        key = k
    }

    deinit { EVP_PKEY_free(key) }

    /// The public key as an uncompressed point.
    public var publicKey: [UInt8] {
        var p: UnsafeMutablePointer<UInt8>?
        let n = EVP_PKEY_get1_encoded_public_key(key, &p)
        guard n > 0, let p else { return [] }
        defer { atrium_openssl_free(p) }
        return Array(UnsafeBufferPointer(start: p, count: n))
    }

    /// The secret shared with the holder of `peer` (an uncompressed point on P-256), or nil when it
    /// is not a point of the curve.
    public func sharedSecret(with peer: [UInt8]) -> [UInt8]? {
        guard peer.count == 65, peer[0] == 4, let other = EVP_PKEY_new() else { return nil }
        defer { EVP_PKEY_free(other) }
        guard EVP_PKEY_copy_parameters(other, key) == 1,
            EVP_PKEY_set1_encoded_public_key(other, peer, peer.count) == 1,
            let ctx = EVP_PKEY_CTX_new(key, nil)
        else { return nil }
        defer { EVP_PKEY_CTX_free(ctx) }
        var n = 0
        guard EVP_PKEY_derive_init(ctx) == 1, EVP_PKEY_derive_set_peer(ctx, other) == 1,
            EVP_PKEY_derive(ctx, nil, &n) == 1, n > 0
        else { return nil }
        var out = [UInt8](repeating: 0, count: n)
        guard EVP_PKEY_derive(ctx, &out, &n) == 1 else { return nil }
        return Array(out.prefix(n))
    }
}
