import Testing

@testable import AtriumCrypto

func hex(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    var it = s.makeIterator()
    while let a = it.next(), let b = it.next() { out.append(UInt8(String([a, b]), radix: 16)!) }
    return out
}

@Suite struct HMACTests {
    /// RFC 4231 section 4.2 and 4.3: HMAC-SHA256 test cases 1 and 2.
    @Test(arguments: [
        (
            hex(String(repeating: "0b", count: 20)), Array("Hi There".utf8),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        ),
        (
            Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        ),
    ])
    func rfc4231(key: [UInt8], data: [UInt8], expected: String) {
        #expect(HMACSHA256.authenticate(data, key: key) == hex(expected))
    }

    /// RFC 2202 section 3: HMAC-SHA1 test cases 1 and 2.
    @Test(arguments: [
        (hex(String(repeating: "0b", count: 20)), Array("Hi There".utf8), "b617318655057264e28bc0b6fb378c8ef146be00"),
        (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8), "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
    ])
    func rfc2202(key: [UInt8], data: [UInt8], expected: String) {
        #expect(HMACSHA1.authenticate(data, key: key) == hex(expected))
    }

    @Test func constantTimeEqualsComparesContentAndLength() {
        #expect(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEquals([1, 2], [1, 2, 3]))
        #expect(constantTimeEquals([], []))
    }
}

@Suite struct Base64URLTests {
    /// RFC 4648 section 10 vectors, in the URL alphabet without padding.
    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"),
        ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
    ])
    func rfc4648(plain: String, encoded: String) {
        #expect(Base64URL.encode(plain) == encoded)
        #expect(Base64URL.decode(encoded) == Array(plain.utf8))
    }

    @Test func urlAlphabet() {
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        #expect(Base64URL.decode("-_8") == [0xfb, 0xff])
    }

    @Test(arguments: ["Zg==", "Z", "Zm9v!", "Zh", "a b", "+/8"])
    func refusesNonCanonicalOrForeignInput(_ text: String) {
        #expect(Base64URL.decode(text) == nil)
    }
}

@Suite struct CRC32Tests {
    /// The CRC-32/ISO-HDLC check value ("123456789" -> 0xCBF43926) and a few values zlib agrees with.
    @Test(arguments: [
        ("", 0x0000_0000 as UInt32), ("123456789", 0xCBF4_3926), ("a", 0xE8B7_BE43),
        ("The quick brown fox jumps over the lazy dog", 0x414F_A339),
    ])
    func checkValues(text: String, expected: UInt32) {
        #expect(CRC32.checksum(Array(text.utf8)) == expected)
    }

    @Test func updateContinuesAChecksum() {
        let a = Array("12345".utf8)
        let b = Array("6789".utf8)
        #expect(CRC32.update(CRC32.checksum(a), b) == CRC32.checksum(a + b))
    }
}
