internal import CAtriumSRTP

/// The OpenSSL contexts of one SRTP or SRTCP session key set, made once per session and reused for
/// every packet: for AES_CM_128_HMAC_SHA1_80 an AES-128-CTR context (RFC 3711 section 4.1.1) and an
/// HMAC-SHA1 with its padded states precomputed (section 4.2); for AEAD_AES_128_GCM one AES-128-GCM
/// context for sealing or opening (RFC 7714 section 9), its IV length set once. An AES-CM packet
/// re-inits only the IV; a GCM packet does not re-init, it passes its IV (and, opening, its tag) in one
/// `set_params` over parameter arrays built once (see atrium_srtp_crypto.c). One final class frees them
/// all in deinit; the packet path holds it through a `let`, so calling it costs no reference count.
final class PacketCrypto {
    private let counter: OpaquePointer?
    private let hmac: OpaquePointer?
    private let gcm: OpaquePointer?

    /// AES-CM with HMAC-SHA1: `key` (16 octets) and `authenticationKey` (20).
    init(counterKey key: [UInt8], authenticationKey: [UInt8]) throws(SRTPError) {
        counter = key.count == 16 ? key.withUnsafeBufferPointer { k in k.baseAddress.flatMap(atrium_aes_ctr_new) } : nil
        hmac = authenticationKey.withUnsafeBufferPointer { k in
            k.baseAddress.flatMap { atrium_hmac_sha1_new($0, k.count) }
        }
        gcm = nil
        guard counter != nil, hmac != nil else { throw .initializationFailed(code: -1) }
    }

    /// AES-GCM under `key` (16 octets), sealing (outbound) or opening (inbound).
    init(gcmKey key: [UInt8], sealing: Bool) throws(SRTPError) {
        gcm =
            key.count == 16
            ? key.withUnsafeBufferPointer { k in k.baseAddress.flatMap { atrium_aes_gcm_new($0, sealing ? 1 : 0) } }
            : nil
        counter = nil
        hmac = nil
        guard gcm != nil else { throw .initializationFailed(code: -1) }
    }

    deinit {
        if let counter { atrium_aes_ctr_free(counter) }
        if let hmac { atrium_hmac_sha1_free(hmac) }
        if let gcm { atrium_aes_gcm_free(gcm) }
    }

    /// XORs `data[0..<length]` with the AES-CM keystream that starts at the 16-octet counter block `iv`.
    @inline(__always)
    func xor(iv: UnsafePointer<UInt8>, _ data: UnsafeMutablePointer<UInt8>, length: Int) throws(SRTPError) {
        guard let counter, atrium_aes_ctr_xor(counter, iv, data, length) == 1 else { throw .cipherFailed }
    }

    /// The 20-octet HMAC-SHA1 of `first[0..<firstLength]` followed by `second[0..<secondLength]`.
    @inline(__always)
    func mac(
        _ first: UnsafePointer<UInt8>, _ firstLength: Int, _ second: UnsafePointer<UInt8>, _ secondLength: Int,
        into out: UnsafeMutablePointer<UInt8>
    ) throws(SRTPError) {
        guard let hmac else { throw .cipherFailed }
        atrium_hmac_sha1_mac(hmac, first, firstLength, second, secondLength, out)
    }

    /// Encrypts `data` in place, authenticating `aad` then `aad2` with it, and writes the 16-octet tag.
    @inline(__always)
    func seal(
        iv: UnsafePointer<UInt8>, aad: UnsafePointer<UInt8>, _ aadLength: Int, _ aad2: UnsafePointer<UInt8>,
        _ aad2Length: Int, _ data: UnsafeMutablePointer<UInt8>, length: Int, tag: UnsafeMutablePointer<UInt8>
    ) throws(SRTPError) {
        guard let gcm, atrium_aes_gcm_seal(gcm, iv, aad, aadLength, aad2, aad2Length, data, length, tag) == 1 else {
            throw .cipherFailed
        }
    }

    /// Decrypts `data` in place and verifies the tag; the data is garbage when it throws.
    @inline(__always)
    func open(
        iv: UnsafePointer<UInt8>, aad: UnsafePointer<UInt8>, _ aadLength: Int, _ aad2: UnsafePointer<UInt8>,
        _ aad2Length: Int, _ data: UnsafeMutablePointer<UInt8>, length: Int, tag: UnsafePointer<UInt8>
    ) throws(SRTPError) {
        guard let gcm else { throw .cipherFailed }
        switch atrium_aes_gcm_open(gcm, iv, aad, aadLength, aad2, aad2Length, data, length, tag) {
        case 1: return
        case 0: throw .authenticationFailed
        default: throw .cipherFailed
        }
    }
}

/// Constant-time comparison of two tags (a timing difference would let a forger guess a tag byte by byte).
@inline(__always)
func constantTimeEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, count: Int) -> Bool {
    atrium_constant_time_equal(a, b, count) == 1
}

/// Zeroes key material in a way the optimizer keeps.
func cleanse(_ bytes: UnsafeMutableRawBufferPointer) {
    guard let base = bytes.baseAddress else { return }
    atrium_cleanse(base, bytes.count)
}
