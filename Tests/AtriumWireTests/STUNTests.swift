import Testing

@testable import AtriumSTUN

/// The RFC 5769 vectors, byte for byte as the RFC prints them (sections 2.1-2.3). The password is the
/// short-term credential key for all three.
enum RFC5769 {
    static let password = "VOkJxbRl1RmTxUk/WvJxBt"
    static let transactionID = hex("b7e7a701bc34d686fa87dfae")

    /// Section 2.1: software "STUN test client", username "evtj:h6vY" padded with spaces.
    static let sampleRequest = hex(
        "00010058" + "2112a442" + "b7e7a701bc34d686fa87dfae"
            + "80220010" + "5354554e207465737420636c69656e74"
            + "00240004" + "6e0001ff"
            + "80290008" + "932ff9b151263b36"
            + "00060009" + "6576746a3a68367659202020"
            + "00080014" + "9aeaa70cbfd8cb56781ef2b5b2d3f249c1b571a2"
            + "80280004" + "e57a3bcf")

    /// Section 2.2: software "test vector", mapped address 192.0.2.1 port 32853.
    static let ipv4Response = hex(
        "0101003c" + "2112a442" + "b7e7a701bc34d686fa87dfae"
            + "8022000b" + "7465737420766563746f7220"
            + "00200008" + "0001a147e112a643"
            + "00080014" + "2b91f599fd9e90c38c7489f92af9ba53f06be7d7"
            + "80280004" + "c07d4c96")

    /// Section 2.3: mapped address 2001:db8:1234:5678:11:2233:4455:6677 port 32853.
    static let ipv6Response = hex(
        "01010048" + "2112a442" + "b7e7a701bc34d686fa87dfae"
            + "8022000b" + "7465737420766563746f7220"
            + "00200014" + "0002a1470113a9faa5d3f179bc25f4b5bed2b9d9"
            + "00080014" + "a382954e4be67bf11784c97c8292c275bfe3ed41"
            + "80280004" + "c8fb0b4c")
}

@Suite struct STUNRFC5769Tests {
    let key = STUNIntegrity.shortTermKey(password: RFC5769.password)

    @Test func rfc5769SampleRequest() throws {
        let m = try STUNMessage(parsing: RFC5769.sampleRequest)
        #expect(m.type == .bindingRequest)
        #expect(m.transactionID.bytes == RFC5769.transactionID)
        #expect(
            m.attributes.map(\.type) == [
                .software, .priority, .iceControlled, .username, .messageIntegrity, .fingerprint,
            ])
        #expect(m.attribute(.software)?.value == Array("STUN test client".utf8))
        #expect(try m.username() == "evtj:h6vY")
        #expect(try m.priority() == 0x6e00_01ff)
        #expect(try m.iceControlled() == 0x932f_f9b1_5126_3b36)
        #expect(try m.iceControlling() == nil)
        #expect(!m.useCandidate)
        try m.verifyMessageIntegrity(key: key)
        try m.verifyFingerprint()
        #expect(throws: STUNError.messageIntegrityMismatch) { try m.verifyMessageIntegrity(key: Array("wrong".utf8)) }
    }

    @Test func rfc5769IPv4Response() throws {
        let m = try STUNMessage(parsing: RFC5769.ipv4Response)
        #expect(m.type == .bindingSuccess)
        let mapped = try #require(try m.xorMappedAddress())
        #expect(mapped == STUNTransportAddress(address: .v4(0xC000_0201), port: 32853))
        #expect(mapped.description == "192.0.2.1:32853")
        try m.verifyMessageIntegrity(key: key)
        try m.verifyFingerprint()
    }

    @Test func rfc5769IPv6Response() throws {
        let m = try STUNMessage(parsing: RFC5769.ipv6Response)
        #expect(m.type == .bindingSuccess)
        let mapped = try #require(try m.xorMappedAddress())
        let expected = try #require(STUNIPAddress(bytes: hex("20010db8123456780011223344556677")))
        #expect(mapped == STUNTransportAddress(address: expected, port: 32853))
        #expect(mapped.description == "[2001:db8:1234:5678:11:2233:4455:6677]:32853")
        try m.verifyMessageIntegrity(key: key)
        try m.verifyFingerprint()
    }

    /// Changing any byte of a vector breaks its FINGERPRINT (or the parse itself).
    @Test(arguments: [RFC5769.sampleRequest, RFC5769.ipv4Response, RFC5769.ipv6Response])
    func everyFlippedByteIsCaught(vector: [UInt8]) {
        for i in 0..<vector.count {
            var b = vector
            b[i] ^= 0x01
            guard let m = try? STUNMessage(parsing: b) else { continue }
            let intact = (try? m.verifyFingerprint()) != nil && (try? m.verifyMessageIntegrity(key: key)) != nil
            #expect(!intact, "byte \(i)")
        }
    }
}

@Suite struct STUNCodecTests {
    let id = STUNTransactionID(high: 0x0102_0304, low: 0x0506_0708_090A_0B0C)
    let key = Array("local-password-1234567".utf8)

    /// RFC 8489 section 5, figure 3: the class bits sit at 4 and 8 of the type.
    @Test(
        arguments: [
            (STUNMessageType.bindingRequest, 0x0001), (.bindingIndication, 0x0011), (.bindingSuccess, 0x0101),
            (.bindingError, 0x0111),
            (STUNMessageType(method: STUNMethod(rawValue: 0xFFF), messageClass: .request), 0x3EEF),
            (STUNMessageType(method: STUNMethod(rawValue: 0x003), messageClass: .successResponse), 0x0103),
        ] as [(STUNMessageType, UInt16)])
    func messageTypeBits(type: STUNMessageType, raw: UInt16) {
        #expect(type.rawValue == raw)
        #expect(STUNMessageType(rawValue: raw) == type)
    }

    @Test(arguments: [
        STUNTransportAddress(address: .v4(0x7F00_0001), port: 5000),
        STUNTransportAddress(address: .v6(high: 0x2001_0db8_0000_0000, low: 0x0000_0000_0000_0001), port: 65535),
    ])
    func bindingSuccessRoundTrip(address: STUNTransportAddress) throws {
        let bytes = STUNMessageBuilder.bindingSuccess(transactionID: id, mappedAddress: address, key: key)
        let m = try STUNMessage(parsing: bytes)
        #expect(m.type == .bindingSuccess)
        #expect(m.transactionID == id)
        #expect(try m.xorMappedAddress() == address)
        #expect(m.attributes.map(\.type) == [.xorMappedAddress, .messageIntegrity, .fingerprint])
        try m.verifyMessageIntegrity(key: key)
        try m.verifyFingerprint()
    }

    @Test func requestRoundTrip() throws {
        var b = STUNMessageBuilder(type: .bindingRequest, transactionID: id)
        try b.appendUsername("remote:local")
        try b.appendPriority(0x6E7F_1EFF)
        try b.appendUseCandidate()
        try b.appendICEControlling(tieBreaker: 0xFEDC_BA98_7654_3210)
        try b.appendMessageIntegrity(key: key)
        try b.appendFingerprint()
        let m = try STUNMessage(parsing: b.bytes)
        #expect(try m.username() == "remote:local")
        #expect(m.usernameBytes == Array("remote:local".utf8))
        #expect(try m.priority() == 0x6E7F_1EFF)
        #expect(m.useCandidate)
        #expect(try m.iceControlling() == 0xFEDC_BA98_7654_3210)
        #expect(m.unknownComprehensionRequired.isEmpty)
        try m.verifyMessageIntegrity(key: key)
        try m.verifyFingerprint()
        #expect(b.bytes.count % 4 == 0)
    }

    @Test(arguments: [
        (STUNErrorCode.roleConflict, Optional(Array("k".utf8))), (.badRequest, nil), (.unauthenticated, nil),
    ])
    func errorResponseRoundTrip(error: STUNErrorCode, key: [UInt8]?) throws {
        let bytes = STUNMessageBuilder.errorResponse(method: .binding, transactionID: id, error: error, key: key)
        let m = try STUNMessage(parsing: bytes)
        #expect(m.type == .bindingError)
        #expect(try m.errorCode() == error)
        try m.verifyFingerprint()
        if let key {
            try m.verifyMessageIntegrity(key: key)
        } else {
            #expect(throws: STUNError.missingMessageIntegrity) { try m.verifyMessageIntegrity(key: []) }
        }
    }

    /// RFC 8489 section 14.5: attributes after MESSAGE-INTEGRITY, other than FINGERPRINT, are ignored.
    @Test func attributesAfterIntegrityAreIgnored() throws {
        var b = STUNMessageBuilder(type: .bindingRequest, transactionID: id)
        try b.appendMessageIntegrity(key: key)
        try b.appendPriority(7)
        try b.appendFingerprint()
        let m = try STUNMessage(parsing: b.bytes)
        #expect(try m.priority() == nil)
        #expect(m.attributes.map(\.type) == [.messageIntegrity, .fingerprint])
        try m.verifyMessageIntegrity(key: key)
        try m.verifyFingerprint()
    }

    @Test func unknownComprehensionRequiredAttributesAreListed() throws {
        var b = STUNMessageBuilder(type: .bindingRequest, transactionID: id)
        try b.append(STUNAttributeType(rawValue: 0x7777), value: [1, 2, 3])
        try b.append(STUNAttributeType(rawValue: 0x8777), value: [1])
        let m = try STUNMessage(parsing: b.bytes)
        #expect(m.unknownComprehensionRequired == [STUNAttributeType(rawValue: 0x7777)])
        #expect(m.attribute(STUNAttributeType(rawValue: 0x7777))?.value == [1, 2, 3])
    }

    /// RFC 5952 section 4: lower case, no leading zeros, the longest zero run (of two or more) as `::`.
    @Test(arguments: [
        ("20010db8000000000000000000000001", "2001:db8::1"), ("00000000000000000000000000000000", "::"),
        ("20010db8000000010000000000000001", "2001:db8:0:1::1"),
        ("20010db8000000000001000000000001", "2001:db8::1:0:0:1"),
        ("00000000000000000000000000000001", "::1"), ("fe800000000000000000000000000000", "fe80::"),
    ])
    func ipv6Text(bytes: String, text: String) throws {
        #expect(try #require(STUNIPAddress(bytes: hex(bytes))).description == text)
    }

    /// RFC 7983 section 7 by first byte, RFC 5761 section 4 by second.
    @Test(
        arguments: [
            ([0x00, 0x01], MuxedPacketKind.stun), ([0x03], .stun), ([0x10], .zrtp), ([0x16, 0xfe], .dtls),
            ([0x3f], .dtls),
            ([0x40], .turnChannel), ([0x80, 0x60], .rtp), ([0x80, 0xe0], .rtp), ([0x81, 0xc8], .rtcp),
            ([0x8f, 0xcd], .rtcp),
            ([0x80, 0xdf], .rtcp), ([0x80, 0xbf], .rtp), ([0xbf, 0x00], .rtp), ([0xc0, 0x00], .unknown),
            ([0x04], .unknown),
            ([0x50], .unknown), ([0x80], .unknown), ([], .unknown),
        ] as [([UInt8], MuxedPacketKind)])
    func demultiplexing(packet: [UInt8], kind: MuxedPacketKind) {
        #expect(PacketDemultiplexer.classify(packet) == kind)
    }
}
