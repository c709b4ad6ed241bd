import Testing

@testable import AtriumSRTP

/// The OpenSSL backend's pieces held to the RFCs' own vectors: RFC 3711 appendix B.2 (the AES-CM
/// keystream) and B.3 (key derivation), RFC 7714 sections 16 and 17 (AEAD_AES_128_GCM SRTP and SRTCP,
/// stated on session keys, so applied below the key derivation).
@Suite struct SRTPOpenSSLVectorTests {
    /// RFC 3711 B.2: session key 2B7E..., counter block F0F1...FD0000, three keystream blocks.
    @Test func rfc3711AppendixB2Keystream() throws {
        let stream = try SRTPKeyDerivation.keystream(
            key: hex("2B7E151628AED2A6ABF7158809CF4F3C"), counter: hex("F0F1F2F3F4F5F6F7F8F9FAFBFCFD0000"), count: 48)
        #expect(
            stream
                == hex(
                    "E03EAD0935C95E80E166B16DD92B4EB4D23513162B02D0F72A43A2FE4A5F97AB41E95B3BB0A2E8DD477901E4FCA894C0"))
    }

    /// RFC 3711 B.3: the session encryption, salt and authentication keys of master key E1F9...
    @Test func rfc3711AppendixB3KeyDerivation() throws {
        let keys = try SRTPSessionKeys(
            profile: .aesCM128HMACSHA1_80, masterKey: hex("E1F97A0D3E018BE0D64FA32C06DE4139"),
            masterSalt: hex("0EC675AD498AFEEBB6960B3AABE6"))
        #expect(keys.rtpKey == hex("C61E7A93744F39EE10734AFE3FF7A087"))
        #expect(keys.rtpSalt == hex("30CBBC08863D8C85D49DB34A9AE1"))
        #expect(keys.rtpAuthentication == hex("CEBE321F6FF7716B6FD4AB49AF256A156D38BAA4"))
        // The RTCP labels (3, 4, 5) give other keys from the same master.
        #expect(keys.rtcpKey != keys.rtpKey && keys.rtcpSalt != keys.rtpSalt)
    }

    private static let gcmKeys = SRTPSessionKeys(
        rtpKey: hex("000102030405060708090a0b0c0d0e0f"), rtpSalt: hex("517569642070726f2071756f"),
        rtcpKey: hex("000102030405060708090a0b0c0d0e0f"), rtcpSalt: hex("517569642070726f2071756f"))

    private static func gcm(outbound: Bool) throws -> OpenSSLSRTP {
        try OpenSSLSRTP(
            profile: .aeadAES128GCM, keys: gcmKeys, outbound: outbound, replayWindow: 1024,
            allowRepeatTransmission: false)
    }

    private static let gallia = hex("8040f17b8041f8d35501a0b2") + Array("Gallia est omnis divisa in partes tres".utf8)

    /// RFC 7714 sections 16.1.1 (encryption) and 16.1.2 (decryption) of the "Gallia est omnis" packet.
    @Test func rfc7714Section16SRTP() throws {
        let expected = hex(
            "8040f17b8041f8d35501a0b2f24de3a3fb34de6cacba861c9d7e4bcabe633bd50d294e6f42a5f47a51c7d19b36de3adf"
                + "8833899d7f27beb16a9152cf765ee4390cce")
        var packet = Self.gallia + [UInt8](repeating: 0, count: 16)
        let n = try packet.withUnsafeMutableBytes {
            try Self.gcm(outbound: true).protect(rtp: $0.baseAddress!, length: 50)
        }
        #expect(n == expected.count && Array(packet.prefix(n)) == expected)
        var back = expected
        let m = try back.withUnsafeMutableBytes {
            try Self.gcm(outbound: false).unprotect(srtp: $0.baseAddress!, length: expected.count)
        }
        #expect(Array(back.prefix(m)) == Self.gallia)
    }

    /// RFC 7714 section 17's SRTCP packet (sender SSRC "Mars").
    private static let mars = hex(
        "81c8000d4d6172734e5450314e545032525450200000042a0000e9304c756e61deadbeefdeadbeefdeadbeefdeadbeefdeadbeef")

    /// RFC 7714 section 17.1: SRTCP index 0x5d4, encrypted (E = 1), the tag before the index.
    @Test func rfc7714Section17SRTCP() throws {
        let expected = hex(
            "81c8000d4d61727363e94885dcdab67ca727d7662f6b7e997ff5c0f76c06f32dc676a5f1730d6fda4ce09b4686303ded0bb9275b"
                + "c84aa45896cf4d2fc5abf87245d9eade800005d4")
        let sender = try Self.gcm(outbound: true)
        var packet: [UInt8] = []
        // The sender counts from 1: protect up to the vector's index.
        for _ in 1...0x5d4 {
            packet = Self.mars + [UInt8](repeating: 0, count: 20)
            let n = try packet.withUnsafeMutableBytes {
                try sender.protectRTCP($0.baseAddress!, length: Self.mars.count)
            }
            packet.removeLast(packet.count - n)
        }
        #expect(packet == expected)
        var back = expected
        let m = try back.withUnsafeMutableBytes {
            try Self.gcm(outbound: false).unprotectRTCP($0.baseAddress!, length: expected.count)
        }
        #expect(Array(back.prefix(m)) == Self.mars)
    }

    /// RFC 7714 section 17.3: authenticated but not encrypted (E = 0); the whole packet is associated data.
    @Test func rfc7714Section17UnencryptedSRTCP() throws {
        let tagged = Self.mars + hex("841dd9683dd78ec92ae58790125f62b3000005d4")
        var packet = tagged
        let receiver = try Self.gcm(outbound: false)
        let m = try packet.withUnsafeMutableBytes { try receiver.unprotectRTCP($0.baseAddress!, length: tagged.count) }
        #expect(Array(packet.prefix(m)) == Self.mars)
        var forged = tagged
        forged[20] ^= 1
        #expect(throws: SRTPError.authenticationFailed) {
            try forged.withUnsafeMutableBytes {
                try Self.gcm(outbound: false).unprotectRTCP($0.baseAddress!, length: tagged.count)
            }
        }
    }

    /// RFC 3711 appendix A: the index estimate picks the rollover counter closest to s_l.
    @Test(arguments: [
        // (highest index, sequence number, estimated index)
        (Int64(0), UInt16(5), Int64(5)),
        (0, 0xFFFF, 0xFFFF),  // early on the ROC is taken as 0, never -1
        (0xFFF0, 0x0005, 0x1_0005),  // across the wrap
        (0x1_0005, 0xFFF0, 0xFFF0),  // a late packet from before the wrap
        (0x1_8000, 0x0000, 0x1_0000),
        (0x1_8001, 0x0000, 0x2_0000),
        (0x2_0010, 0x8011, 0x1_8011),
        (0x2_0010, 0x8010, 0x2_8010),
    ])
    func rfc3711AppendixAIndexEstimate(highest: Int64, sequence: UInt16, expected: Int64) {
        #expect(RTPReplayWindow.estimate(sequence, highest: highest).index == expected)
    }

    @Test func replayWindowTracksSeenIndices() {
        let w = RTPReplayWindow(packets: 100)
        defer { w.deallocate() }
        #expect(w.size == 128)
        w.add(10)
        #expect(w.check(0) == .repeated && w.check(-3) == .fresh && w.check(1) == .fresh)
        w.add(-3)
        #expect(w.check(-3) == .repeated)
        w.add(200)
        #expect(w.highest == 210 && w.check(-127) == .fresh && w.check(-128) == .tooOld && w.check(-200) == .tooOld)
        var rtcp = RTCPReplayWindow()
        #expect(rtcp.check(1) == .fresh)
        rtcp.add(1)
        #expect(rtcp.check(1) == .repeated)
        rtcp.add(500)
        #expect(rtcp.check(1) == .tooOld && rtcp.check(500) == .repeated && rtcp.check(499) == .fresh)
    }
}
