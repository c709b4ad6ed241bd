import Testing

@testable import AtriumSDP

/// Attribute grammars one value at a time, including forms the captured stacks do not write.
@Suite struct SDPAttributeTests {
    /// RFC 8839 section 5.1 examples and the trickled form signaling carries (RFC 8840 section 4.1).
    @Test func candidates() throws {
        let srflx = try #require(
            Candidate(
                parsing: "candidate:2 1 UDP 1694498815 192.0.2.3 45664 typ srflx raddr 10.0.1.1 rport 8998 ufrag x"))
        #expect(srflx.kind == .serverReflexive && srflx.relatedAddress == "10.0.1.1" && srflx.relatedPort == 8998)
        #expect(srflx.extensions == [.init(name: "ufrag", value: "x")])
        #expect(srflx.sdpValue == "2 1 UDP 1694498815 192.0.2.3 45664 typ srflx raddr 10.0.1.1 rport 8998 ufrag x")
        #expect(Candidate(parsing: "a=candidate:1 1 udp 1 ::1 9 typ relay")?.kind == .relay)
        #expect(Candidate(parsing: "candidate:1 1 udp 1 h 9 typ host odd") == nil)
        #expect(Candidate(parsing: "candidate:1 1 udp 1 h 70000 typ host") == nil)
    }

    @Test(arguments: [
        ("q send", RID(id: "q", direction: .send)),
        ("1 recv pt=96,97", RID(id: "1", direction: .recv, payloadTypes: [96, 97])),
        (
            "h send max-width=640;pt=96;max-fps=15",
            RID(
                id: "h", direction: .send, payloadTypes: [96],
                restrictions: [.init(name: "max-width", value: "640"), .init(name: "max-fps", value: "15")])
        ),
    ])
    func rids(_ text: String, expected: RID) throws {
        #expect(RID(sdp: Substring(text)) == expected)
        #expect(RID(sdp: Substring(expected.sdpValue)) == expected)
    }

    /// RFC 8853 section 5.1: alternatives, paused streams, both directions.
    @Test func simulcast() throws {
        let s = try #require(Simulcast(sdp: "recv 1;~2,3 send a"))
        #expect(s.receive == [[.init(rid: "1")], [.init(rid: "2", paused: true), .init(rid: "3")]])
        #expect(s.sendRIDs == ["a"])
        #expect(s.sdpValue == "send a recv 1;~2,3")
        #expect(Simulcast(sdp: "sideways a") == nil)
    }

    @Test(arguments: [
        ("42e01f", 0x42, 0xe0, 0x1f, true), ("42001f", 0x42, 0x00, 0x1f, false), ("4d001f", 0x4d, 0x00, 0x1f, false),
        ("f4001f", 0xf4, 0x00, 0x1f, false), ("640c34", 0x64, 0x0c, 0x34, false),
    ])
    func h264ProfileLevelIDs(_ hex: String, profile: UInt8, iop: UInt8, level: UInt8, constrainedBaseline: Bool) {
        let id = H264ProfileLevelID(hex: hex)
        #expect(id == H264ProfileLevelID(profileIDC: profile, profileIOP: iop, levelIDC: level))
        #expect(id?.isConstrainedBaseline == constrainedBaseline)
        #expect(id?.hex == hex)
    }

    @Test(arguments: ["", "42e01", "42e01fa", "+2e01f", "zzzzzz"])
    func badProfileLevelIDs(_ hex: String) {
        #expect(H264ProfileLevelID(hex: hex) == nil)
    }

    /// RFC 6184 section 8.1 defaults: no profile-level-id means 420010, no packetization-mode means 0.
    @Test func h264Defaults() {
        let codec = Codec(payloadType: 100, name: "h264", clockRate: 90000)
        #expect(codec.h264ProfileLevelID == H264ProfileLevelID(profileIDC: 0x42, profileIOP: 0, levelIDC: 0x10))
        #expect(codec.h264PacketizationMode == 0)
    }

    @Test func codecsFallBackToStaticPayloadTypesAndWildcardFeedback() throws {
        let sdp = try SessionDescription.parse(
            "v=0\no=- 1 1 IN IP4 0.0.0.0\ns=-\nt=0 0\nm=video 9 RTP/AVPF 0 96 97 98\n"
                + "a=rtpmap:96 VP8/90000\na=rtpmap:97 rtx/90000\na=fmtp:97 apt=96\na=rtcp-fb:* nack\n")
        let m = try #require(sdp.media.first)
        #expect(m.codecs.map(\.payloadType) == [0, 96, 97])
        #expect(m.codec(payloadType: 96)?.feedback == [RTCPFeedback(payloadType: nil, type: "nack")])
        #expect(m.rtxPayloadType(for: 96) == 97)
        #expect(m.direction == .sendrecv)
        #expect(MediaDirection.sendonly.reversed == .recvonly)
    }
}
