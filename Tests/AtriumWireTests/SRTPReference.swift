import COpenSSL

/// An independent SRTP reference built from OpenSSL primitives, following RFC 3711 and RFC 7714
/// step by step. It is checked against the RFCs' own vectors first, then used to predict libsrtp's
/// output byte for byte: so libsrtp is held to the RFC text, not only to itself.
enum SRTPReference {
    static func aesBlock(_ key: [UInt8], _ block: [UInt8]) -> [UInt8] {
        let ctx = EVP_CIPHER_CTX_new()
        defer { EVP_CIPHER_CTX_free(ctx) }
        let cipher = key.count == 32 ? EVP_aes_256_ecb() : EVP_aes_128_ecb()
        EVP_EncryptInit_ex(ctx, cipher, nil, key, nil)
        EVP_CIPHER_CTX_set_padding(ctx, 0)
        var out = [UInt8](repeating: 0, count: 32)
        var n: Int32 = 0
        EVP_EncryptUpdate(ctx, &out, &n, block, Int32(block.count))
        return Array(out.prefix(16))
    }

    /// AES in counter mode (RFC 3711 section 4.1.1): block i is E(k, IV + i), a 128-bit addition.
    static func keystream(key: [UInt8], iv: [UInt8], count: Int) -> [UInt8] {
        var out: [UInt8] = []
        var counter = iv
        while out.count < count {
            out += aesBlock(key, counter)
            for i in stride(from: 15, through: 0, by: -1) {
                counter[i] &+= 1
                if counter[i] != 0 { break }
            }
        }
        return Array(out.prefix(count))
    }

    /// The SRTP key derivation (RFC 3711 section 4.3.1) with key_derivation_rate 0:
    /// x = (label << 48) XOR master_salt, IV = x * 2^16. A 96-bit GCM salt is padded to 112 bits
    /// with zeros (RFC 7714 section 11).
    static func derive(masterKey: [UInt8], masterSalt: [UInt8], label: UInt8, count: Int) -> [UInt8] {
        var x = masterSalt + [UInt8](repeating: 0, count: max(0, 14 - masterSalt.count))
        x[7] ^= label
        return keystream(key: masterKey, iv: x + [0, 0], count: count)
    }

    static func hmacSHA1(key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 20)
        var n: UInt32 = 0
        HMAC(EVP_sha1(), key, Int32(key.count), data, data.count, &out, &n)
        return out
    }

    /// AES-GCM encryption with a 16-octet tag appended (RFC 7714 section 9.1's AEAD output).
    static func gcm(key: [UInt8], iv: [UInt8], aad: [UInt8], plaintext: [UInt8]) -> [UInt8] {
        let ctx = EVP_CIPHER_CTX_new()
        defer { EVP_CIPHER_CTX_free(ctx) }
        EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), nil, nil, nil)
        EVP_CIPHER_CTX_ctrl(ctx, 0x9, Int32(iv.count), nil)  // EVP_CTRL_AEAD_SET_IVLEN
        EVP_EncryptInit_ex(ctx, nil, nil, key, iv)
        var n: Int32 = 0
        EVP_EncryptUpdate(ctx, nil, &n, aad, Int32(aad.count))
        var out = [UInt8](repeating: 0, count: plaintext.count + 16)
        EVP_EncryptUpdate(ctx, &out, &n, plaintext, Int32(plaintext.count))
        var tail = [UInt8](repeating: 0, count: 16)
        EVP_EncryptFinal_ex(ctx, &tail, &n)
        var tag = [UInt8](repeating: 0, count: 16)
        EVP_CIPHER_CTX_ctrl(ctx, 0x10, 16, &tag)  // EVP_CTRL_AEAD_GET_TAG
        return Array(out.prefix(plaintext.count)) + tag
    }

    /// SRTP with AES_CM_128_HMAC_SHA1_80 (RFC 3711 sections 3.3, 4.1.1, 4.2) for a packet with a
    /// 12-octet header, from session keys; `roc` is the rollover counter.
    static func protectCM(
        _ packet: [UInt8], cipherKey: [UInt8], salt: [UInt8], authKey: [UInt8], roc: UInt32 = 0
    ) -> [UInt8] {
        let header = Array(packet.prefix(12))
        let seq = UInt64(packet[2]) << 8 | UInt64(packet[3])
        let index = UInt64(roc) << 16 | seq
        var iv = salt + [0, 0]
        for i in 0..<4 { iv[4 + i] ^= packet[8 + i] }  // SSRC * 2^64
        for i in 0..<6 { iv[8 + i] ^= UInt8(truncatingIfNeeded: index >> (40 - 8 * UInt64(i))) }  // i * 2^16
        let payload = Array(packet.dropFirst(12))
        let stream = keystream(key: cipherKey, iv: iv, count: payload.count)
        let encrypted = header + zip(payload, stream).map { $0 ^ $1 }
        let rocBytes = (0..<4).map { UInt8(truncatingIfNeeded: roc >> (24 - 8 * UInt32($0))) }
        return encrypted + hmacSHA1(key: authKey, encrypted + rocBytes).prefix(10)
    }

    /// SRTP with AEAD_AES_128_GCM (RFC 7714 sections 8.1 and 9.1): IV = (00 00 || SSRC || ROC || SEQ)
    /// XOR salt, the 12-octet header as associated data.
    static func protectGCM(_ packet: [UInt8], key: [UInt8], salt: [UInt8], roc: UInt32 = 0) -> [UInt8] {
        let header = Array(packet.prefix(12))
        var iv: [UInt8] = [0, 0] + packet[8..<12]
        iv += (0..<4).map { UInt8(truncatingIfNeeded: roc >> (24 - 8 * UInt32($0))) }
        iv += packet[2..<4]
        for i in 0..<12 { iv[i] ^= salt[i] }
        return header + gcm(key: key, iv: iv, aad: header, plaintext: Array(packet.dropFirst(12)))
    }
}
