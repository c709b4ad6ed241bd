import Testing

@testable import AtriumRTP

@Suite struct RTPHeaderTests {
    /// V=2, PT 96, seq 1, ts 100, SSRC 0x12345678, then a 3-byte payload.
    static let simple = hex("80600001" + "00000064" + "12345678" + "aabbcc")

    @Test func fixedHeader() throws {
        let h = try RTPHeader(parsing: Self.simple)
        #expect(!h.marker && !h.padding)
        #expect(h.payloadType == 96)
        #expect(h.sequenceNumber == 1)
        #expect(h.timestamp == 100)
        #expect(h.ssrc == 0x1234_5678)
        #expect(h.csrcCount == 0 && h.csrcs(in: Self.simple).isEmpty)
        #expect(h.extensionProfile == nil)
        #expect(h.payloadRange == 12..<15)
    }

    @Test func csrcsMarkerAndPadding() throws {
        // V=2 P=1 CC=2, M=1 PT=111; two CSRCs; payload "01 02"; 3 bytes of padding, the last one counting.
        let p = hex("a2ef" + "ffff" + "00000001" + "0000000a" + "11111111" + "22222222" + "0102" + "000003")
        let h = try RTPHeader(parsing: p)
        #expect(h.marker && h.padding)
        #expect(h.payloadType == 111)
        #expect(h.sequenceNumber == 0xFFFF)
        #expect(h.csrcs(in: p) == [0x1111_1111, 0x2222_2222])
        #expect(Array(p[h.payloadRange]) == [1, 2])
    }

    /// RFC 8285 section 4.2's figure: one-byte elements of 1, 2 and 4 bytes with two padding bytes.
    @Test func rfc8285OneByteExample() throws {
        let p = hex(
            "90600001" + "00000064" + "12345678" + "bede0003" + "10aa" + "21bbcc" + "0000" + "33ddeeff11" + "cafe")
        let h = try RTPHeader(parsing: p)
        #expect(h.extensionProfile == 0xBEDE)
        #expect(
            try h.extensionElements(in: p) == [
                RTPHeaderExtensionElement(id: 1, value: [0xaa]), RTPHeaderExtensionElement(id: 2, value: [0xbb, 0xcc]),
                RTPHeaderExtensionElement(id: 3, value: [0xdd, 0xee, 0xff, 0x11]),
            ])
        #expect(Array(p[h.payloadRange]) == [0xca, 0xfe])
        #expect(h.extensionValueRange(id: 2, in: p).map { Array(p[$0]) } == [0xbb, 0xcc])
        #expect(h.extensionValueRange(id: 9, in: p) == nil)
    }

    /// RFC 8285 section 4.3's figure: two-byte elements of 0, 1 and 4 bytes with one padding byte.
    @Test func rfc8285TwoByteExample() throws {
        let p = hex("90600001" + "00000064" + "12345678" + "10000003" + "0100" + "0201aa" + "00" + "0304bbccddee")
        let h = try RTPHeader(parsing: p)
        #expect(h.extensionProfile == 0x1000)
        #expect(
            try h.extensionElements(in: p) == [
                RTPHeaderExtensionElement(id: 1, value: []), RTPHeaderExtensionElement(id: 2, value: [0xaa]),
                RTPHeaderExtensionElement(id: 3, value: [0xbb, 0xcc, 0xdd, 0xee]),
            ])
        #expect(h.payloadRange.isEmpty)
    }

    /// RFC 8285 section 4.2: ID 15 stops processing; other profiles have no elements.
    @Test func oneByteID15StopsAndForeignProfilesAreOpaque() throws {
        let stop = hex("90600001" + "00000064" + "12345678" + "bede0002" + "10aa" + "f0" + "21bbcc00" + "00")
        #expect(
            try RTPHeader(parsing: stop).extensionElements(in: stop) == [
                RTPHeaderExtensionElement(id: 1, value: [0xaa])
            ])
        let other = hex("90600001" + "00000064" + "12345678" + "abcd0001" + "10aa0000")
        let h = try RTPHeader(parsing: other)
        #expect(h.extensionProfile == 0xABCD)
        #expect(try h.extensionElements(in: other) == [])
    }

    @Test(
        arguments: [
            (
                [
                    RTPHeaderExtensionElement(id: 1, value: [1]),
                    RTPHeaderExtensionElement(id: 14, value: Array(repeating: 7, count: 16)),
                ], 0xBEDE
            ),
            ([RTPHeaderExtensionElement(id: 15, value: [1])], 0x1000),
            ([RTPHeaderExtensionElement(id: 3, value: [])], 0x1000),
            ([RTPHeaderExtensionElement(id: 200, value: Array(repeating: 9, count: 255))], 0x1000),
        ] as [([RTPHeaderExtensionElement], UInt16)])
    func writerRoundTrip(elements: [RTPHeaderExtensionElement], profile: UInt16) throws {
        let p = try RTPPacketWriter.packet(
            payloadType: 100, sequenceNumber: 65535, timestamp: 0xDEAD_BEEF, ssrc: 42, marker: true, csrcs: [7],
            extensions: elements, payload: [9, 8, 7])
        let h = try RTPHeader(parsing: p)
        #expect(h.extensionProfile == profile)
        #expect(try h.extensionElements(in: p) == elements)
        #expect(h.marker && h.payloadType == 100 && h.sequenceNumber == 65535 && h.timestamp == 0xDEAD_BEEF)
        #expect(h.ssrc == 42 && h.csrcs(in: p) == [7])
        #expect(Array(p[h.payloadRange]) == [9, 8, 7])
    }

    @Test(arguments: [
        RTPHeaderExtensionElement(id: 0, value: [1]),
        RTPHeaderExtensionElement(id: 5, value: Array(repeating: 0, count: 256)),
    ])
    func writerRefusesImpossibleElements(element: RTPHeaderExtensionElement) {
        #expect(throws: RTPError.invalidExtensionElement(id: element.id, length: element.value.count)) {
            try RTPHeaderExtension.encode([element])
        }
    }

    /// The forwarding rewrite touches exactly the named fields, keeps the marker and the payload, and works
    /// on arrays, slices of a larger buffer and unsafe buffers alike.
    @Test func rewriteInPlace() throws {
        var p = Self.simple
        p[1] |= 0x80  // marker set
        try RTPPacketWriter.rewrite(
            &p, .init(ssrc: 0xCAFE_BABE, sequenceNumber: 0xBEEF, timestamp: 7, payloadType: 111))
        #expect(p == hex("80ef" + "beef" + "00000007" + "cafebabe" + "aabbcc"))

        var slab = [UInt8](repeating: 0xEE, count: 4) + Self.simple
        var slice = slab[4...]
        try RTPPacketWriter.rewrite(&slice, .init(sequenceNumber: 2, marker: true))
        slab[4...] = slice
        #expect(Array(slab[4...]) == hex("80e0" + "0002" + "00000064" + "12345678" + "aabbcc"))

        var raw = Self.simple
        try raw.withUnsafeMutableBufferPointer { buffer in
            var b = buffer
            try RTPPacketWriter.rewrite(&b, .init(ssrc: 1))
        }
        #expect(Array(raw[8..<12]) == [0, 0, 0, 1])
    }

    @Test(arguments: [
        ([UInt8](repeating: 0x80, count: 11), RTPError.packetTooShort(11)),
        (hex("40600001000000641234567800"), .badVersion(1)),
    ])
    func rewriteRefuses(packet: [UInt8], error: RTPError) {
        var p = packet
        #expect(throws: error) { try RTPPacketWriter.rewrite(&p, .init(ssrc: 1)) }
        #expect(p == packet)
        var q = Self.simple
        #expect(throws: RTPError.valueOutOfRange) { try RTPPacketWriter.rewrite(&q, .init(payloadType: 128)) }
    }
}

@Suite struct SequenceNumberTests {
    @Test(
        arguments: [
            (1, 0, true), (0, 1, false), (0, 65535, true), (65535, 0, false), (100, 100, false),
            (0x7FFF, 0, true), (0x8000, 0, false), (0x8001, 0, false), (10, 65000, true),
        ] as [(UInt16, UInt16, Bool)])
    func isNewer(a: UInt16, b: UInt16, newer: Bool) {
        #expect(SequenceNumber.isNewer(a, than: b) == newer)
    }

    @Test(
        arguments: [
            (0, 1, 1), (1, 0, -1), (65535, 0, 1), (0, 65535, -1), (65000, 10, 546), (0, 0x8000, -32768), (5, 5, 0),
        ] as [(UInt16, UInt16, Int)])
    func distance(from: UInt16, to: UInt16, expected: Int) {
        #expect(SequenceNumber.distance(from: from, to: to) == expected)
    }

    @Test(
        arguments: [
            (5, 0, 5), (65535, 65534, 65535), (0, 65535, 65536), (3, 65535, 65539), (65530, 65536 + 2, 65530),
            (100, 3 * 65536 + 90, 3 * 65536 + 100), (65500, 3 * 65536 + 10, 2 * 65536 + 65500), (65530, 5, 65530),
        ] as [(UInt16, UInt64, UInt64)])
    func extend(sequence: UInt16, reference: UInt64, extended: UInt64) {
        #expect(SequenceNumber.extend(sequence, reference: reference) == extended)
    }
}
