import Testing

@testable import AtriumCrypto
@testable import AtriumSFrame

@Suite struct KDFAndAEADTests {
    /// RFC 5869 appendix A.1.
    @Test func hkdfMatchesTheRFCVector() {
        let okm = HKDFSHA256.derive(
            ikm: hex(String(repeating: "0b", count: 22)), salt: hex("000102030405060708090a0b0c"),
            info: hex("f0f1f2f3f4f5f6f7f8f9"), length: 42)
        #expect(okm == hex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"))
        #expect(HKDFSHA256.derive(ikm: [], salt: [], info: [], length: 16) == nil)
        #expect(HKDFSHA256.derive(ikm: [1], salt: [], info: [], length: 0) == nil)
    }

    /// PBKDF2-HMAC-SHA256 ("password", "salt", 1 iteration), the widely published vector.
    @Test func pbkdf2MatchesTheVector() {
        let dk = PBKDF2SHA256.derive(
            password: Array("password".utf8), salt: Array("salt".utf8), iterations: 1, length: 32)
        #expect(dk == hex("120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b"))
        #expect(PBKDF2SHA256.derive(password: [], salt: [], iterations: 0, length: 32) == nil)
    }

    /// The GCM specification's test case 3 (AES-128, no associated data); a flipped bit fails.
    @Test func aesGCMMatchesTheSpecificationVector() throws {
        let key = hex("feffe9928665731c6d6a8f9467308308")
        let iv = hex("cafebabefacedbaddecaf888")
        let plain = hex(
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255"
        )
        let sealed = try #require(AESGCM.seal(key: key, nonce: iv, aad: [], plaintext: plain))
        #expect(
            sealed
                == hex(
                    "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985"
                ) + hex("4d5c2af327cd64a62cf35abd2ba6fab4"))
        #expect(AESGCM.open(key: key, nonce: iv, aad: [], sealed: sealed) == plain)
        var bad = sealed
        bad[3] ^= 1
        #expect(AESGCM.open(key: key, nonce: iv, aad: [], sealed: bad) == nil)
        #expect(AESGCM.open(key: key, nonce: iv, aad: [1], sealed: sealed) == nil)
        #expect(AESGCM.open(key: key, nonce: iv, aad: [], sealed: Array(sealed.prefix(15))) == nil)
        #expect(AESGCM.seal(key: [1, 2], nonce: iv, aad: [], plaintext: plain) == nil)
    }
}

@Suite struct ECDHTests {
    /// Two pairs agree on a 32-byte secret; their public keys are uncompressed points (WebCrypto's raw);
    /// what is not a point of P-256 agrees on nothing.
    @Test func twoPairsAgreeAndABadPointIsRefused() throws {
        let a = try #require(ECDHP256())
        let b = try #require(ECDHP256())
        #expect(a.publicKey.count == 65 && a.publicKey[0] == 4)
        let ab = try #require(a.sharedSecret(with: b.publicKey))
        #expect(ab.count == 32 && ab == b.sharedSecret(with: a.publicKey))
        var off = b.publicKey
        off[40] ^= 1
        #expect(a.sharedSecret(with: off) == nil)
        #expect(a.sharedSecret(with: Array(b.publicKey.prefix(33))) == nil)
        #expect(a.sharedSecret(with: [UInt8](repeating: 0, count: 65)) == nil)
    }

    @Test func base64DecodesWhatItEncodes() {
        for n in 0..<20 {
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: $0 * 37 + 250) }
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        }
        #expect(Base64.decode("a$b=") == nil)
    }
}

@Suite struct SFrameTests {
    /// RFC 9605 4.3: KID and CTR in the config byte under 8, else in bytes after it.
    @Test(arguments: [
        (UInt64(0), UInt64(0), "00"), (7, 7, "77"), (8, 8, "880808"), (255, 300, "89ff012c"), (3, 70000, "3a011170"),
    ])
    func headers(kid: UInt64, ctr: UInt64, bytes: String) throws {
        #expect(SFrame.header(kid: kid, ctr: ctr) == hex(bytes))
        let parsed = try #require(SFrame.parseHeader(hex(bytes) + [9, 9], at: 0))
        #expect(parsed.kid == kid && parsed.ctr == ctr && parsed.length == hex(bytes).count)
    }

    @Test func aTruncatedHeaderDoesNotParse() {
        #expect(SFrame.parseHeader(hex("89ff01"), at: 0) == nil)
        #expect(SFrame.parseHeader([], at: 0) == nil)
        #expect(SFrame.parseHeader([0], at: 1) == nil)
    }

    /// The same bytes as the JavaScript SDK's worker (clients/js/e2ee-worker.js, run under Node with
    /// these inputs): a page and a native client read each other's frames.
    @Test func framesMatchTheJavaScriptWorker() throws {
        let secret = try #require(SFrame.secret(passphrase: "correct horse", roomID: "rm_vector"))
        let ring = SFrameKeyring(secret: secret, counter: 0)
        let key = hex("1002009d012a80026801aabbccdd")
        let vp8 = try #require(ring.encrypt(key, .vp8(keyFrame: true), sender: "pa_vector"))
        #expect(vp8 == hex("1002009d012a8002680100bbcc006772d91f9488a362da11aef12df9275558"))
        let opus = try #require(ring.encrypt(hex("78010203"), .opus, sender: "pa_vector"))
        #expect(opus == hex("7801b383299a82477a5b78d6c51da95f7edf23d462"))
        ring.add(secret: [UInt8](repeating: 7, count: 32), index: 3, send: true)
        let delta = try #require(ring.encrypt(hex("310100090909"), .vp8(keyFrame: false), sender: "pa_vector"))
        #expect(delta == hex("31010032ae6eed39b8bbcdbca00300dab2322d4a80273d"))
        // A receiver holding both indexes reads all three.
        #expect(ring.decrypt(vp8, .vp8(keyFrame: true), sender: "pa_vector") == key)
        #expect(ring.decrypt(opus, .opus, sender: "pa_vector") == hex("78010203"))
        #expect(ring.decrypt(delta, .vp8(keyFrame: false), sender: "pa_vector") == hex("310100090909"))
    }

    /// What does not decrypt: another sender's key, a changed clear byte (authenticated), a cut frame,
    /// an index not held, another passphrase.
    @Test func framesThatDoNotDecrypt() throws {
        let ring = SFrameKeyring(secret: [UInt8](repeating: 1, count: 32))
        let frame = try #require(
            ring.encrypt(hex("1002009d012a800268010102030405"), .vp8(keyFrame: true), sender: "pa_a"))
        #expect(ring.decrypt(frame, .vp8(keyFrame: true), sender: "pa_b") == nil)
        var changed = frame
        changed[0] ^= 0x01
        #expect(ring.decrypt(changed, .vp8(keyFrame: true), sender: "pa_a") == nil)
        #expect(ring.decrypt(Array(frame.prefix(frame.count - 1)), .vp8(keyFrame: true), sender: "pa_a") == nil)
        #expect(ring.decrypt(Array(frame.prefix(10)), .vp8(keyFrame: true), sender: "pa_a") == nil)
        let other = SFrameKeyring(secret: [UInt8](repeating: 2, count: 32))
        #expect(other.decrypt(frame, .vp8(keyFrame: true), sender: "pa_a") == nil)
        let rolled = SFrameKeyring(secret: [UInt8](repeating: 1, count: 32))
        rolled.add(secret: [UInt8](repeating: 9, count: 32), index: 5, send: true)
        let later = try #require(rolled.encrypt([0x78, 1], .opus, sender: "pa_a"))
        #expect(ring.decrypt(later, .opus, sender: "pa_a") == nil)
        #expect(rolled.decrypt(frame, .vp8(keyFrame: true), sender: "pa_a") != nil)
    }
}
