internal import COpenSSL

/// HKDF-SHA256 (RFC 5869) through OpenSSL's EVP_PKEY HKDF. An empty salt is HashLen zeros.
public enum HKDFSHA256 {
    /// `length` bytes (1 to 8160) of output keying material; nil when OpenSSL refuses.
    public static func derive(ikm: [UInt8], salt: [UInt8], info: [UInt8], length: Int) -> [UInt8]? {
        guard (1...8160).contains(length), !ikm.isEmpty, let ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nil) else {
            return nil
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_derive_init(ctx) > 0, EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()) > 0,
            EVP_PKEY_CTX_set1_hkdf_key(ctx, ikm, Int32(ikm.count)) > 0,
            salt.isEmpty || EVP_PKEY_CTX_set1_hkdf_salt(ctx, salt, Int32(salt.count)) > 0,
            info.isEmpty || EVP_PKEY_CTX_add1_hkdf_info(ctx, info, Int32(info.count)) > 0
        else { return nil }
        var out = [UInt8](repeating: 0, count: length)
        var n = length
        guard EVP_PKEY_derive(ctx, &out, &n) > 0, n == length else { return nil }
        return out
    }
}

/// PBKDF2-HMAC-SHA256 (RFC 8018) through OpenSSL.
public enum PBKDF2SHA256 {
    public static func derive(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) -> [UInt8]? {
        guard (1...10_000_000).contains(iterations), (1...1024).contains(length) else { return nil }
        var out = [UInt8](repeating: 0, count: length)
        // OpenSSL refuses null pointers even with length 0: empty inputs get a one-byte buffer.
        let p = password.isEmpty ? [CChar(0)] : password.map { CChar(bitPattern: $0) }
        let s = salt.isEmpty ? [0] : salt
        let ok = PKCS5_PBKDF2_HMAC(
            p, Int32(password.count), s, Int32(salt.count), Int32(iterations), EVP_sha256(), Int32(length), &out)
        return ok == 1 ? out : nil
    }
}

/// AES-GCM with a 128-bit tag (NIST SP 800-38D) through OpenSSL's EVP interface: 16- or 32-byte keys,
/// 12-byte nonces.
public enum AESGCM {
    public static let tagSize = 16

    /// The ciphertext followed by its tag; nil for a key or nonce of the wrong size.
    public static func seal(key: [UInt8], nonce: [UInt8], aad: [UInt8], plaintext: [UInt8]) -> [UInt8]? {
        run(encrypt: true, key: key, nonce: nonce, aad: aad, input: plaintext)
    }

    /// The plaintext of `sealed` (ciphertext and tag), or nil when it does not authenticate.
    public static func open(key: [UInt8], nonce: [UInt8], aad: [UInt8], sealed: [UInt8]) -> [UInt8]? {
        guard sealed.count >= tagSize else { return nil }
        return run(encrypt: false, key: key, nonce: nonce, aad: aad, input: sealed)
    }

    private static func run(encrypt: Bool, key: [UInt8], nonce: [UInt8], aad: [UInt8], input: [UInt8]) -> [UInt8]? {
        let cipher: OpaquePointer? =
            switch key.count {
            case 16: EVP_aes_128_gcm()
            case 32: EVP_aes_256_gcm()
            default: nil
            }
        guard let cipher, nonce.count == 12, let ctx = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(ctx) }
        let body = encrypt ? input : Array(input.dropLast(tagSize))
        var tag = encrypt ? [UInt8](repeating: 0, count: tagSize) : Array(input.suffix(tagSize))
        var out = [UInt8](repeating: 0, count: body.count + 16)
        var n: Int32 = 0
        var total = 0
        let initOK =
            encrypt
            ? EVP_EncryptInit_ex(ctx, cipher, nil, key, nonce) == 1
            : EVP_DecryptInit_ex(ctx, cipher, nil, key, nonce) == 1
        guard initOK else { return nil }
        let update = encrypt ? EVP_EncryptUpdate : EVP_DecryptUpdate
        if !aad.isEmpty { guard update(ctx, nil, &n, aad, Int32(aad.count)) == 1 else { return nil } }
        if !body.isEmpty {
            guard update(ctx, &out, &n, body, Int32(body.count)) == 1 else { return nil }
            total = Int(n)
        }
        // GCM's final call writes nothing: it checks or makes the tag.
        var tail = [UInt8](repeating: 0, count: 32)
        if encrypt {
            guard EVP_EncryptFinal_ex(ctx, &tail, &n) == 1,
                EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, Int32(tagSize), &tag) == 1
            else { return nil }
            return Array(out[0..<total]) + tail[0..<Int(n)] + tag
        }
        guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, Int32(tagSize), &tag) == 1,
            EVP_DecryptFinal_ex(ctx, &tail, &n) == 1
        else { return nil }
        return Array(out[0..<total]) + tail[0..<Int(n)]
    }
}
