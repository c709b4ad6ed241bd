import AtriumTestSupport
import Testing

@testable import AtriumSTUN

/// Malformed STUN must end in a `STUNError`, never a trap: one bad datagram must not take the server down.
@Suite struct STUNMalformedTests {
    static let header = hex("00010000" + "2112a442" + "b7e7a701bc34d686fa87dfae")

    /// A header announcing `length` bytes, followed by `body`.
    static func message(length: UInt16, _ body: String) -> [UInt8] {
        var b = hex("0001") + [UInt8(length >> 8), UInt8(length & 0xFF)] + hex("2112a442b7e7a701bc34d686fa87dfae")
        b += hex(body)
        return b
    }

    @Test(
        arguments: [
            ("empty", [], STUNError.truncatedHeader(count: 0)),
            ("one byte", [0x00], .truncatedHeader(count: 1)),
            ("19 bytes", Array(header.prefix(19)), .truncatedHeader(count: 19)),
            ("top bits set", hex("c0010000") + Array(header.dropFirst(4)), .notSTUN(firstByte: 0xc0)),
            ("RTP-looking", hex("80010000") + Array(header.dropFirst(4)), .notSTUN(firstByte: 0x80)),
            ("wrong cookie", hex("00010000" + "2112a443") + Array(header.dropFirst(8)), .badMagicCookie(0x2112_a443)),
            ("RFC 3489 zero cookie", hex("00010000" + "00000000") + Array(header.dropFirst(8)), .badMagicCookie(0)),
            ("length 2", message(length: 2, "0000"), .lengthNotMultipleOfFour(2)),
            ("length 7", message(length: 7, "00000000000000"), .lengthNotMultipleOfFour(7)),
            ("length past end", message(length: 8, "00060000"), .lengthMismatch(declared: 8, actual: 4)),
            ("trailing bytes", message(length: 0, "00000000"), .lengthMismatch(declared: 0, actual: 4)),
            (
                "RFC vector cut short", Array(RFC5769.sampleRequest.dropLast(4)),
                .lengthMismatch(declared: 88, actual: 84)
            ),
            (
                "value past end", message(length: 8, "0006000901020304"),
                .attributeOverrun(type: 0x0006, length: 9)
            ),
            ("huge attribute", message(length: 4, "0006ffff"), .attributeOverrun(type: 0x0006, length: 0xffff)),
            ("padding past end", message(length: 8, "0006000561626364"), .attributeOverrun(type: 0x0006, length: 5)),
            (
                "attribute after fingerprint", message(length: 16, "80280004000000000024000400000000"),
                .attributeAfterFingerprint(type: 0x0024)
            ),
        ] as [(String, [UInt8], STUNError)])
    func refused(name: String, bytes: [UInt8], error: STUNError) {
        #expect(throws: error, "\(name)") { try STUNMessage(parsing: bytes) }
    }

    /// Values of the wrong shape parse as raw attributes and fail only in their typed accessor.
    @Test(arguments: [
        ("short priority", "0024000200010000", STUNAttributeType.priority),
        ("long tie-breaker", "8029000c000000000000000000000000", .iceControlled),
        ("short tie-breaker", "802a000400000000", .iceControlling),
        ("xor-address family 3", "00200008000301020304050600000000", .xorMappedAddress),
        ("xor-address v4 with 16 bytes", "002000140001a147" + "00000000000000000000000000000000", .xorMappedAddress),
        ("xor-address v6 with 4 bytes", "002000080002a14700000000", .xorMappedAddress),
        ("xor-address too short", "0020000200010000", .xorMappedAddress),
        ("error class 2", "0009000400000200", .errorCode),
        ("error number 100", "0009000400000464", .errorCode),
        ("error too short", "0009000300000400", .errorCode),
        ("username not UTF-8", "00060002fffe0000", .username),
    ])
    func typedAccessorRefuses(name: String, body: String, type: STUNAttributeType) throws {
        let bytes = Self.message(length: UInt16(hex(body).count), body)
        let m = try STUNMessage(parsing: bytes)
        let error = STUNError.malformedAttribute(type: type.rawValue)
        #expect(throws: error, "\(name)") {
            _ = try m.priority()
            _ = try m.iceControlled()
            _ = try m.iceControlling()
            _ = try m.xorMappedAddress()
            _ = try m.errorCode()
            _ = try m.username()
        }
    }

    @Test func malformedIntegrityAndFingerprintValues() throws {
        let m = try STUNMessage(parsing: Self.message(length: 16, "000800040000000080280004000000ff"))
        #expect(throws: STUNError.malformedAttribute(type: 0x0008)) { try m.verifyMessageIntegrity(key: [1]) }
        #expect(throws: STUNError.fingerprintMismatch) { try m.verifyFingerprint() }
        let bare = try STUNMessage(parsing: Self.message(length: 0, ""))
        #expect(throws: STUNError.missingFingerprint) { try bare.verifyFingerprint() }
    }

    /// 10,000 seeded random strings, half of them behind a valid-looking header so the attribute walk is
    /// exercised too. Every one must either parse or throw; a trap would end the test process.
    @Test func randomInputsNeverTrap() {
        var rng = SeededGenerator(seed: 0x5354_554E)
        var parsed = 0
        let raw = rng.byteStrings(count: 5_000, maxLength: 96)
        var framed = rng.byteStrings(count: 5_000, maxLength: 120, prefix: Self.header)
        for i in framed.indices where framed[i].count >= STUNMessage.headerSize {
            let length = framed[i].count - STUNMessage.headerSize
            framed[i][2] = UInt8(length >> 8)
            framed[i][3] = UInt8(length & 0xFF)
        }
        for bytes in raw + framed {
            guard let m = try? STUNMessage(parsing: bytes) else { continue }
            parsed += 1
            _ = try? m.username()
            _ = try? m.xorMappedAddress()
            _ = try? m.priority()
            _ = try? m.errorCode()
            _ = try? m.iceControlled()
            _ = try? m.verifyFingerprint()
            _ = try? m.verifyMessageIntegrity(key: [1, 2, 3])
        }
        #expect(parsed < 10_000)
    }
}
