internal import CAtriumSRTP

/// AES-128 in counter mode (RFC 3711 section 4.1.1) under one session key: one OpenSSL cipher context,
/// keyed once, re-initialised with only the counter block for each packet.
final class AESCounterMode {
    private let context: OpaquePointer

    init(key: UnsafeRawBufferPointer) throws(SRTPError) {
        guard key.count == 16, let base = key.baseAddress,
            let context = atrium_aes_ctr_new(base.assumingMemoryBound(to: UInt8.self))
        else { throw .initializationFailed(code: -1) }
        self.context = context
    }

    deinit { atrium_aes_ctr_free(context) }

    /// XORs `data[0..<length]` with the keystream that starts at the 16-byte counter block `iv`.
    @inline(__always)
    func xor(iv: UnsafePointer<UInt8>, _ data: UnsafeMutablePointer<UInt8>, length: Int) throws(SRTPError) {
        guard atrium_aes_ctr_xor(context, iv, data, length) == 1 else { throw .cipherFailed }
    }
}

/// AES-128-GCM (RFC 7714 section 9) under one session key, for one direction: sealing for an outbound
/// session, opening for an inbound one. The IV length is set once; each packet re-inits only the IV.
final class AESGCM {
    private let context: OpaquePointer

    init(key: UnsafeRawBufferPointer, sealing: Bool) throws(SRTPError) {
        guard key.count == 16, let base = key.baseAddress,
            let context = atrium_aes_gcm_new(base.assumingMemoryBound(to: UInt8.self), sealing ? 1 : 0)
        else { throw .initializationFailed(code: -1) }
        self.context = context
    }

    deinit { atrium_aes_gcm_free(context) }

    /// Encrypts `data` in place, authenticating `aad` then `aad2` with it, and writes the 16-byte tag.
    @inline(__always)
    func seal(
        iv: UnsafePointer<UInt8>, aad: UnsafePointer<UInt8>, _ aadLength: Int, _ aad2: UnsafePointer<UInt8>,
        _ aad2Length: Int, _ data: UnsafeMutablePointer<UInt8>, length: Int, tag: UnsafeMutablePointer<UInt8>
    ) throws(SRTPError) {
        guard atrium_aes_gcm_seal(context, iv, aad, aadLength, aad2, aad2Length, data, length, tag) == 1 else {
            throw .cipherFailed
        }
    }

    /// Decrypts in place and verifies the tag; the data is garbage when it throws.
    @inline(__always)
    func open(
        iv: UnsafePointer<UInt8>, aad: UnsafePointer<UInt8>, _ aadLength: Int, _ aad2: UnsafePointer<UInt8>,
        _ aad2Length: Int, _ data: UnsafeMutablePointer<UInt8>, length: Int, tag: UnsafePointer<UInt8>
    ) throws(SRTPError) {
        switch atrium_aes_gcm_open(context, iv, aad, aadLength, aad2, aad2Length, data, length, tag) {
        case 1: return
        case 0: throw .authenticationFailed
        default: throw .cipherFailed
        }
    }
}

/// HMAC-SHA1 (RFC 2104) under one session authentication key, its padded inner and outer states
/// computed once, so a packet's MAC costs two SHA-1 passes and no allocation.
final class HMACSHA1 {
    private let context: OpaquePointer

    init(key: UnsafeRawBufferPointer) throws(SRTPError) {
        guard let base = key.baseAddress,
            let context = atrium_hmac_sha1_new(base.assumingMemoryBound(to: UInt8.self), key.count)
        else { throw .initializationFailed(code: -1) }
        self.context = context
    }

    deinit { atrium_hmac_sha1_free(context) }

    /// The 20-byte MAC of `first[0..<firstLength]` followed by `second[0..<secondLength]`.
    @inline(__always)
    func mac(
        _ first: UnsafePointer<UInt8>, _ firstLength: Int, _ second: UnsafePointer<UInt8>, _ secondLength: Int,
        into out: UnsafeMutablePointer<UInt8>
    ) {
        atrium_hmac_sha1_mac(context, first, firstLength, second, secondLength, out)
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

/// `bytes.withUnsafeBytes` for a body that throws `SRTPError` (the standard one rethrows untyped).
func withBytes<T>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(SRTPError) -> T) throws(SRTPError) -> T {
    let result: Result<T, SRTPError> = bytes.withUnsafeBytes { b in
        do throws(SRTPError) {
            return .success(try body(b))
        } catch {
            return .failure(error)
        }
    }
    return try result.get()
}
