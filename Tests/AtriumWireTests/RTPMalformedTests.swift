import AtriumTestSupport
import Testing

@testable import AtriumRTP

/// Malformed RTP and RTCP must end in an `RTPError`, never a trap: one bad datagram must not take the server down.
@Suite struct RTPMalformedTests {
    static let fixed = "80600001" + "00000064" + "12345678"

    @Test(
        arguments: [
            ("empty", [], RTPError.packetTooShort(0)),
            ("11 bytes", hex("8060000100000064123456"), .packetTooShort(11)),
            ("version 0", hex("00600001000000641234567800"), .badVersion(0)),
            ("version 3", hex("c0600001000000641234567800"), .badVersion(3)),
            ("15 CSRCs, none present", hex("8f60000100000064123456780000000000000000"), .csrcPastEnd(count: 15)),
            ("extension bit, no extension header", hex("9060000100000064123456780000"), .extensionPastEnd(length: 2)),
            (
                "extension length past end", hex("906000010000006412345678" + "bede0002" + "10aa0000"),
                .extensionPastEnd(length: 8)
            ),
            ("padding count 0", hex(fixed + "aabb00").withPaddingBit(), .badPadding(0)),
            ("padding past header", hex(fixed + "0010").withPaddingBit(), .badPadding(16)),
            ("padding eats the header", hex(fixed).withPaddingBit(), .badPadding(0x78)),
        ] as [(String, [UInt8], RTPError)])
    func rtpRefused(name: String, bytes: [UInt8], error: RTPError) {
        #expect(throws: error, "\(name)") { try RTPHeader(parsing: bytes) }
    }

    /// Elements that overrun their block parse as a header but fail when the elements are read.
    @Test(arguments: [
        ("one-byte element of 16 in 4 bytes", "bede0001" + "1faa0000"),
        ("two-byte element of 200 in 4 bytes", "10000001" + "01c8aabb"),
        ("two-byte header cut", "10000001" + "000000" + "05"),
    ])
    func extensionElementsRefused(name: String, ext: String) throws {
        let p = hex("90600001" + "00000064" + "12345678" + ext)
        let h = try RTPHeader(parsing: p)
        #expect(throws: RTPError.malformedHeaderExtension(profile: h.extensionProfile ?? 0), "\(name)") {
            try h.extensionElements(in: p)
        }
        #expect(h.extensionValueRange(id: 1, in: p) == nil)
    }

    @Test(
        arguments: [
            ("empty", "", RTPError.emptyCompound),
            ("three bytes", "81c900", .rtcpHeaderTruncated(remaining: 3)),
            ("trailing bytes after a packet", "80c90001" + "00000001" + "8000", .rtcpHeaderTruncated(remaining: 2)),
            ("version 1", "41c90001" + "00000001", .badVersion(1)),
            ("version 0", "00c90001" + "00000001", .badVersion(0)),
            ("length past end", "81c90007" + "00000001", .lengthPastEnd(declared: 32, available: 8)),
            ("zero-length PLI", "81ce0000", .truncated(packetType: 206)),
            ("zero-length RR", "80c90000", .truncated(packetType: 201)),
            ("zero-length SR", "80c80000", .truncated(packetType: 200)),
            ("RR promising a block", "81c90001" + "00000001", .truncated(packetType: 201)),
            ("SDES item past end", "81ca0002" + "00000001" + "01086162", .truncated(packetType: 202)),
            ("SDES without terminator", "81ca0002" + "00000001" + "01026162", .truncated(packetType: 202)),
            ("BYE reason past end", "81cb0002" + "00000001" + "09616263", .truncated(packetType: 203)),
            (
                "NACK with half an entry", "a1cd0003" + "00000001" + "00000002" + "0064" + "0002",
                .malformed(packetType: 205)
            ),
            ("FIR with half an entry", "84ce0003" + "00000001" + "00000000" + "aabbccdd", .malformed(packetType: 206)),
            (
                "REMB promising 2 SSRCs", "8fce0005" + "00000001" + "00000000" + "52454d42" + "02000001" + "00000001",
                .truncated(packetType: 206)
            ),
            (
                "TWCC without chunks", "8fcd0004" + "00000001" + "00000002" + "00000005" + "00000000",
                .truncated(packetType: 205)
            ),
            (
                "TWCC zero-length run", "8fcd0005" + "00000001" + "00000002" + "00000005" + "00000000" + "00000000",
                .malformed(packetType: 205)
            ),
            (
                "TWCC missing deltas", "8fcd0005" + "00000001" + "00000002" + "00000003" + "00000000" + "20030000",
                .truncated(packetType: 205)
            ),
            ("padding count 0", "a1ce0002" + "00000001" + "00000000", .badPadding(0)),
            ("padding larger than the packet", "a1ce0002" + "00000001" + "000000ff", .badPadding(255)),
        ] as [(String, String, RTPError)])
    func rtcpRefused(name: String, bytes: String, error: RTPError) {
        #expect(throws: error, "\(name)") { try RTCPCompound.parse(hex(bytes)) }
    }

    /// 10,000 seeded random strings each for RTP and RTCP, half behind a valid-looking first byte.
    @Test func randomInputsNeverTrap() {
        var rng = SeededGenerator(seed: 0x5254_5030)
        let rtp =
            rng.byteStrings(count: 5_000, maxLength: 80) + rng.byteStrings(count: 5_000, maxLength: 80, prefix: [0x90])
        for bytes in rtp {
            guard let h = try? RTPHeader(parsing: bytes) else { continue }
            _ = try? h.extensionElements(in: bytes)
            _ = h.extensionValueRange(id: 1, in: bytes)
            #expect(h.payloadRange.upperBound <= bytes.count)
        }
        var rtcp = rng.byteStrings(count: 5_000, maxLength: 80)
        for prefix: [UInt8] in [[0x81, 0xc9], [0x81, 0xcd], [0x8f, 0xcd], [0x8f, 0xce], [0x81, 0xca]] {
            var framed = rng.byteStrings(count: 1_000, maxLength: 80, prefix: prefix)
            // Make the length field agree with the bytes often enough to reach the bodies.
            for i in framed.indices where framed[i].count >= 4 && framed[i].count % 4 == 0 {
                framed[i][2] = 0
                framed[i][3] = UInt8(framed[i].count / 4 - 1)
            }
            rtcp += framed
        }
        var parsed = 0
        for bytes in rtcp where (try? RTCPCompound.parse(bytes)) != nil { parsed += 1 }
        #expect(parsed < rtcp.count)
    }
}

extension Array where Element == UInt8 {
    fileprivate func withPaddingBit() -> [UInt8] {
        var b = self
        if !b.isEmpty { b[0] |= 0x20 }
        return b
    }
}
