import AtriumTestSupport
import Testing

@testable import AtriumSDP

/// A small seeded generator (SplitMix64) so every mutation run is reproducible.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

private let header = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"
private let audio = "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=mid:0\r\n"

private let malformedCases: [(String, SDPError)] = [
    ("", .missingVersion),
    ("o=- 1 1 IN IP4 1.2.3.4\r\n", .missingVersion),
    ("v=1\r\n", .unsupportedVersion(line: 1)),
    ("v=0\r\nhello\r\n", .malformedLine(line: 2)),
    ("v=0\r\nA=x\r\n", .malformedLine(line: 2)),
    ("v=0\r\no=x\u{0}y\r\n", .malformedLine(line: 2)),
    ("v=0\r\ns=-\r\nt=0 0\r\n", .missingLine(type: "o")),
    ("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\nt=0 0\r\n", .missingLine(type: "s")),
    ("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\n", .missingLine(type: "t")),
    ("v=0\r\no=- 1 1 IN IP4\r\n", .invalidOrigin(line: 2)),
    ("v=0\r\no=- 99999999999999999999999 1 IN IP4 127.0.0.1\r\n", .invalidOrigin(line: 2)),
    ("v=0\r\no=- -1 1 IN IP4 127.0.0.1\r\n", .invalidOrigin(line: 2)),
    (header + "t=now 0\r\n", .invalidTiming(line: 5)),
    (header + "c=IN IP4\r\n", .invalidConnection(line: 5)),
    (header + "b=AS\r\n", .invalidBandwidth(line: 5)),
    (header + "m=audio\r\n", .invalidMedia(line: 5)),
    (header + "m=audio 70000 UDP/TLS/RTP/SAVPF 111\r\n", .invalidMedia(line: 5)),
    (header + "m=audio 9 UDP/TLS/RTP/SAVPF\r\n", .invalidMedia(line: 5)),
    (header + "m=audio 9/x RTP/AVP 0\r\n", .invalidMedia(line: 5)),
    (header + "m=audio 9 UDP/TLS/RTP/SAVPF opus\r\n", .invalidPayloadType(line: 5, value: "opus")),
    (header + "m=audio 9 UDP/TLS/RTP/SAVPF 128\r\n", .invalidPayloadType(line: 5, value: "128")),
    (header + audio + "a=rtpmap:x opus/48000/2\r\n", .invalidPayloadType(line: 8, value: "x")),
    (header + audio + "a=rtpmap:111 opus\r\n", .invalidAttribute(line: 8, name: "rtpmap")),
    (header + audio + "a=rtpmap:111 opus/99999999999\r\n", .invalidAttribute(line: 8, name: "rtpmap")),
    (header + audio + "a=fmtp:-1 apt=96\r\n", .invalidPayloadType(line: 8, value: "-1")),
    (header + audio + "a=rtcp-fb:1000 nack\r\n", .invalidPayloadType(line: 8, value: "1000")),
    (header + audio + "a=rtcp-fb:*\r\n", .invalidAttribute(line: 8, name: "rtcp-fb")),
    (header + audio + "a=extmap:x urn:a\r\n", .invalidAttribute(line: 8, name: "extmap")),
    (header + audio + "a=extmap:2/sideways urn:a\r\n", .invalidAttribute(line: 8, name: "extmap")),
    (header + audio + "a=fingerprint:sha-256 AB:CD:G1\r\n", .invalidAttribute(line: 8, name: "fingerprint")),
    (header + audio + "a=fingerprint:sha-256\r\n", .invalidAttribute(line: 8, name: "fingerprint")),
    (header + audio + "a=setup:sometimes\r\n", .invalidAttribute(line: 8, name: "setup")),
    (header + audio + "a=mid:\r\n", .invalidAttribute(line: 8, name: "mid")),
    (header + audio + "a=ssrc:4294967296 cname:x\r\n", .invalidAttribute(line: 8, name: "ssrc")),
    (header + audio + "a=ssrc-group:FID 1 x\r\n", .invalidAttribute(line: 8, name: "ssrc-group")),
    (header + audio + "a=rid:q sideways\r\n", .invalidAttribute(line: 8, name: "rid")),
    (header + audio + "a=rid:q send pt=x\r\n", .invalidAttribute(line: 8, name: "rid")),
    (header + audio + "a=simulcast:send q;;h\r\n", .invalidAttribute(line: 8, name: "simulcast")),
    (header + audio + "a=simulcast:send q send h\r\n", .invalidAttribute(line: 8, name: "simulcast")),
    (header + audio + "a=candidate:1 1 udp 1 127.0.0.1 9 typ\r\n", .invalidAttribute(line: 8, name: "candidate")),
    (
        header + audio + "a=candidate:1 1 udp 99999999999 127.0.0.1 9 typ host\r\n",
        .invalidAttribute(line: 8, name: "candidate")
    ),
    (
        header + audio + "a=candidate:1 1 udp 1 127.0.0.1 9 typ host generation\r\n",
        .invalidAttribute(line: 8, name: "candidate")
    ),
    (header + audio + "a=rtcp:port\r\n", .invalidAttribute(line: 8, name: "rtcp")),
    (header + audio + "o=- 1 1 IN IP4 127.0.0.1\r\n", .unexpectedLine(line: 8, type: "o")),
    (header + audio + "c=IN IP4 1.1.1.1\r\n", .unexpectedLine(line: 8, type: "c")),
    ("v=0\r\nv=0\r\n", .unexpectedLine(line: 2, type: "v")),
]

/// Malformed input gives a typed error naming the line, never a trap.
@Suite struct SDPMalformedTests {
    @Test(arguments: malformedCases)
    func refused(_ text: String, expected: SDPError) {
        #expect(throws: expected) { try SessionDescription.parse(text) }
        #expect(expected.description.count > 10)
    }

    @Test func refusesHugeInput() {
        let text = header + String(repeating: "a=x\r\n", count: 300_000)
        #expect(throws: SDPError.tooLarge(bytes: text.utf8.count)) { try SessionDescription.parse(text) }
    }

    @Test func unknownLinesAndAttributesAreKept() throws {
        let text =
            header + "a=x-custom:some value\r\na=flag\r\nm=audio 9 RTP/AVP 0\r\ni=info\r\nc=IN IP4 0.0.0.0\r\n"
            + "b=AS:300\r\na=rtcp-xr:rcvr-rtt=all\r\n"
        let sdp = try SessionDescription.parse(text)
        #expect(sdp.attributes == [.other(name: "x-custom", value: "some value"), .other(name: "flag", value: nil)])
        #expect(sdp.media[0].otherAttributes(named: "rtcp-xr") == ["rcvr-rtt=all"])
        #expect(sdp.media[0].bandwidths == [Bandwidth(type: "AS", value: 300)])
        #expect(sdp.serialized() == text)
    }

    /// Truncating a real SDP at every byte gives an error or a value, and values round-trip.
    @Test func everyTruncationIsHandled() {
        let bytes = SDPFixtures.bytes("janus-1.1.2-offer-to-subscriber.sdp")
        for n in 0...bytes.count { checkNoTrap(Array(bytes.prefix(n))) }
    }

    /// 10,000 seeded random mutations of a real Chrome offer: bytes flipped, deleted, inserted,
    /// numbers blown up, lines duplicated or cut. None may trap; accepted ones must round-trip.
    @Test func randomMutationsNeverTrap() {
        let base = SDPFixtures.bytes("chrome-156-offer-simulcast-camera-mic.sdp")
        var rng = SeededRandom(state: 0xA7_1C_0DE)
        let tokens: [[UInt8]] = [
            " ", ":", "/", "=", ";", ",", "~", "*", "\r", "\n", "\0", "a=", "m=", "99999999999999999999999", "-1",
            "128", "typ", "\u{FF}",
        ].map { Array($0.utf8) }
        var accepted = 0
        for _ in 0..<10_000 {
            var b = base
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                guard !b.isEmpty else { break }
                let at = Int.random(in: 0..<b.count, using: &rng)
                switch Int.random(in: 0..<5, using: &rng) {
                case 0: b[at] = UInt8.random(in: 0...255, using: &rng)
                case 1: b.removeSubrange(at..<min(b.count, at + Int.random(in: 1...40, using: &rng)))
                case 2: b.insert(contentsOf: tokens[Int.random(in: 0..<tokens.count, using: &rng)], at: at)
                case 3: b = Array(b.prefix(at))
                default:
                    let end = min(b.count, at + Int.random(in: 1...200, using: &rng))
                    b.insert(contentsOf: b[at..<end], at: at)
                }
            }
            if checkNoTrap(b) { accepted += 1 }
        }
        // Both paths are exercised.
        #expect(accepted > 100 && accepted < 9_900)
    }

    @discardableResult
    private func checkNoTrap(_ bytes: [UInt8]) -> Bool {
        guard let sdp = try? SessionDescription.parse(bytes) else { return false }
        let again = try? SessionDescription.parse(sdp.serialized())
        #expect(again == sdp)
        return true
    }
}
