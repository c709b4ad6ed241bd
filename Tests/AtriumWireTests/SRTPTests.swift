import Testing

@testable import AtriumSRTP

private let b3MasterKey = hex("E1F97A0D3E018BE0D64FA32C06DE4139")
private let b3MasterSalt = hex("0EC675AD498AFEEBB6960B3AABE6")
private let gcmMasterKey = hex("000102030405060708090a0b0c0d0e0f")
private let gcmMasterSalt = hex("a0a1a2a3a4a5a6a7a8a9aaab")
/// libsrtp's reference RTP packet (test/srtp_driver.c): SSRC 0xcafebabe, seq 0x1234, 16 x 0xab.
private let referenceRTP = hex("800f1234decafbadcafebabe") + [UInt8](repeating: 0xab, count: 16)
private let referenceRTCP = hex("81c8000bcafebabe") + [UInt8](repeating: 0xab, count: 16)

private func outbound(_ profile: SRTPProfile, _ key: [UInt8], _ salt: [UInt8], _ backend: SRTPBackend) throws
    -> SRTPSession
{
    try SRTPSession(profile: profile, masterKey: key, masterSalt: salt, direction: .outbound, backend: backend)
}

private func inbound(_ profile: SRTPProfile, _ key: [UInt8], _ salt: [UInt8], _ backend: SRTPBackend) throws
    -> SRTPSession
{
    try SRTPSession(profile: profile, masterKey: key, masterSalt: salt, direction: .inbound, backend: backend)
}

private let cases: [(UInt32, UInt16)] = [(0xcafe_babe, 0x1234), (0, 0), (0xffff_ffff, 0xfffe), (0x1234_5678, 7)]

/// RFC 3711 Appendix B and RFC 7714 section 16 vectors: first the reference implementation against
/// the RFC, then both backends of `SRTPSession` (OpenSSL and libsrtp) against the reference and
/// libsrtp's own vectors.
@Suite struct SRTPVectorTests {
    /// RFC 3711 B.2: the AES-CM keystream for session key 2B7E..., counter F0F1...FD0000.
    @Test func rfc3711AppendixB2Keystream() {
        let stream = SRTPReference.keystream(
            key: hex("2B7E151628AED2A6ABF7158809CF4F3C"), iv: hex("F0F1F2F3F4F5F6F7F8F9FAFBFCFD0000"), count: 48)
        #expect(
            stream
                == hex(
                    "E03EAD0935C95E80E166B16DD92B4EB4D23513162B02D0F72A43A2FE4A5F97AB41E95B3BB0A2E8DD477901E4FCA894C0"))
    }

    /// RFC 3711 B.3: session keys derived from the master key and salt.
    @Test func rfc3711AppendixB3KeyDerivation() {
        func derive(_ label: UInt8, _ n: Int) -> [UInt8] {
            SRTPReference.derive(masterKey: b3MasterKey, masterSalt: b3MasterSalt, label: label, count: n)
        }
        #expect(derive(0, 16) == hex("C61E7A93744F39EE10734AFE3FF7A087"))
        #expect(derive(2, 14) == hex("30CBBC08863D8C85D49DB34A9AE1"))
        #expect(derive(1, 20) == hex("CEBE321F6FF7716B6FD4AB49AF256A156D38BAA4"))
    }

    /// Each backend with the B.3 master key produces exactly what RFC 3711's transform predicts from
    /// the B.3 session keys, for several SSRCs and sequence numbers.
    @Test(arguments: SRTPBackend.allCases, cases)
    func rfc3711AESCMThroughSession(_ backend: SRTPBackend, _ c: (UInt32, UInt16)) throws {
        let (ssrc, seq) = c
        var packet: [UInt8] = [0x80, 0x60, UInt8(seq >> 8), UInt8(seq & 0xff), 0, 0, 0x0b, 0xb8]
        packet += (0..<4).map { UInt8(truncatingIfNeeded: ssrc >> (24 - 8 * UInt32($0))) }
        packet += (0..<37).map { UInt8($0) }
        let expected = SRTPReference.protectCM(
            packet, cipherKey: hex("C61E7A93744F39EE10734AFE3FF7A087"), salt: hex("30CBBC08863D8C85D49DB34A9AE1"),
            authKey: hex("CEBE321F6FF7716B6FD4AB49AF256A156D38BAA4"))
        var protected = packet
        try outbound(.aesCM128HMACSHA1_80, b3MasterKey, b3MasterSalt, backend).protect(rtp: &protected)
        #expect(protected == expected)
    }

    /// libsrtp's own AES_CM_128_HMAC_SHA1_80 vector (srtp_validate), which uses the B.3 master key.
    @Test(arguments: SRTPBackend.allCases)
    func libsrtpValidateAESCM(_ backend: SRTPBackend) throws {
        let expected = hex("800f1234decafbadcafebabe4e55dc4ce79978d88ca4d215949d2402b78d6acc99ea179b8dbb")
        var packet = referenceRTP
        try outbound(.aesCM128HMACSHA1_80, b3MasterKey, b3MasterSalt, backend).protect(rtp: &packet)
        #expect(packet == expected)
        let reference = SRTPReference.protectCM(
            referenceRTP, cipherKey: hex("C61E7A93744F39EE10734AFE3FF7A087"),
            salt: hex("30CBBC08863D8C85D49DB34A9AE1"), authKey: hex("CEBE321F6FF7716B6FD4AB49AF256A156D38BAA4"))
        #expect(reference == expected)
        try inbound(.aesCM128HMACSHA1_80, b3MasterKey, b3MasterSalt, backend).unprotect(srtp: &packet)
        #expect(packet == referenceRTP)
    }

    /// RFC 7714 section 16.1.1: the AEAD_AES_128_GCM encryption of the "Gallia est omnis" packet.
    @Test func rfc7714Section16RTPEncryption() {
        let packet = hex("8040f17b8041f8d35501a0b2") + Array("Gallia est omnis divisa in partes tres".utf8)
        let expected = hex(
            "8040f17b8041f8d35501a0b2f24de3a3fb34de6cacba861c9d7e4bcabe633bd50d294e6f42a5f47a51c7d19b36de3adf"
                + "8833899d7f27beb16a9152cf765ee4390cce")
        let encrypted = SRTPReference.protectGCM(
            packet, key: hex("000102030405060708090a0b0c0d0e0f"), salt: hex("517569642070726f2071756f"))
        #expect(encrypted == expected)
    }

    /// Each backend's AEAD_AES_128_GCM output equals RFC 7714's transform (checked above against section
    /// 16) applied to session keys from the RFC 3711 KDF (RFC 7714 section 11).
    @Test(arguments: SRTPBackend.allCases, [(UInt32(0xcafe_babe), UInt16(0x1234)), (0x5501_a0b2, 0xf17b), (1, 0)])
    func rfc7714GCMThroughSession(_ backend: SRTPBackend, _ c: (UInt32, UInt16)) throws {
        let (ssrc, seq) = c
        var packet: [UInt8] = [0x80, 0x40, UInt8(seq >> 8), UInt8(seq & 0xff), 0x80, 0x41, 0xf8, 0xd3]
        packet += (0..<4).map { UInt8(truncatingIfNeeded: ssrc >> (24 - 8 * UInt32($0))) }
        packet += Array("Gallia est omnis divisa in partes tres".utf8)
        let key = SRTPReference.derive(masterKey: gcmMasterKey, masterSalt: gcmMasterSalt, label: 0, count: 16)
        let salt = SRTPReference.derive(masterKey: gcmMasterKey, masterSalt: gcmMasterSalt, label: 2, count: 12)
        var protected = packet
        try outbound(.aeadAES128GCM, gcmMasterKey, gcmMasterSalt, backend).protect(rtp: &protected)
        #expect(protected == SRTPReference.protectGCM(packet, key: key, salt: salt))
    }

    /// libsrtp's own GCM vectors (srtp_validate_gcm): RTP, and RTCP with SRTCP index 1.
    @Test(arguments: SRTPBackend.allCases)
    func libsrtpValidateGCM(_ backend: SRTPBackend) throws {
        let sender = try outbound(.aeadAES128GCM, gcmMasterKey, gcmMasterSalt, backend)
        var rtp = referenceRTP
        try sender.protect(rtp: &rtp)
        #expect(rtp == hex("800f1234decafbadcafebabec5002ede04cfdd2eb91159e0880aa06ed2976826f796b201df3131a127e8a392"))
        var rtcp = referenceRTCP
        try sender.protectRTCP(&rtcp)
        #expect(
            rtcp
                == hex(
                    "81c8000bcafebabec98b8b5df0392a55852b6c21ac8e7025c52c6fbea2b3b446ea31123ba88ce61e80000001"))
        let receiver = try inbound(.aeadAES128GCM, gcmMasterKey, gcmMasterSalt, backend)
        try receiver.unprotect(srtp: &rtp)
        try receiver.unprotectRTCP(&rtcp)
        #expect(rtp == referenceRTP && rtcp == referenceRTCP)
    }
}
