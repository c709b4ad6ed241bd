import Testing

@testable import AtriumSDP

/// One `a=rid` value and what it says.
struct RIDVector: Sendable, CustomTestStringConvertible {
    var text: String
    var id: String
    var direction: RID.Direction
    var payloadTypes: [UInt8] = []
    var maxWidth: UInt32? = nil
    var maxHeight: UInt32? = nil
    var maxFPS: UInt32? = nil
    var maxBitrate: UInt64? = nil
    /// The restriction names kept besides `pt`, in order.
    var restrictionNames: [String] = []

    var testDescription: String { "a=rid:\(text)" }
}

/// One `a=simulcast` value: streams as `~`-marked rid lists, and how it is written back.
struct SimulcastVector: Sendable, CustomTestStringConvertible {
    var text: String
    var send: [[String]]
    var receive: [[String]]
    var serialized: String

    var testDescription: String { "a=simulcast:\(text)" }
}

private let header = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"
private let video = "m=video 9 UDP/TLS/RTP/SAVPF 96\r\nc=IN IP4 0.0.0.0\r\na=mid:0\r\n"

/// RFC 8851 (`a=rid`) and RFC 8853 (`a=simulcast`): the RFCs' examples, the grammar's other forms and
/// what the captured browsers write, parsed, read as typed values and written back.
@Suite struct SDPSimulcastTests {
    static let rids: [RIDVector] = [
        // RFC 8851 section 4: the attribute's example.
        RIDVector(
            text: "5 send pt=99,102;max-br=64000;max-width=1280;max-height=720;max-fps=30", id: "5", direction: .send,
            payloadTypes: [99, 102], maxWidth: 1280, maxHeight: 720, maxFPS: 30, maxBitrate: 64000,
            restrictionNames: ["max-br", "max-width", "max-height", "max-fps"]),
        // RFC 8853 section 5.2: the simulcast offer's rids (two H264 formats and VP8; one received).
        RIDVector(
            text: "1 send pt=97;max-width=1280;max-height=720", id: "1", direction: .send, payloadTypes: [97],
            maxWidth: 1280, maxHeight: 720, restrictionNames: ["max-width", "max-height"]),
        RIDVector(
            text: "2 send pt=98;max-width=320;max-height=180", id: "2", direction: .send, payloadTypes: [98],
            maxWidth: 320, maxHeight: 180, restrictionNames: ["max-width", "max-height"]),
        RIDVector(
            text: "3 send pt=99;max-width=320;max-height=180", id: "3", direction: .send, payloadTypes: [99],
            maxWidth: 320, maxHeight: 180, restrictionNames: ["max-width", "max-height"]),
        RIDVector(text: "4 recv pt=97", id: "4", direction: .recv, payloadTypes: [97]),
        // RFC 8851 section 10: rid-param-list without pt=, depend, max-fs/max-pps/max-bpp, bare names.
        RIDVector(
            text: "hi send max-width=1280;max-height=720;max-fps=30", id: "hi", direction: .send, maxWidth: 1280,
            maxHeight: 720, maxFPS: 30, restrictionNames: ["max-width", "max-height", "max-fps"]),
        RIDVector(
            text: "t1 send pt=96;depend=t0", id: "t1", direction: .send, payloadTypes: [96],
            restrictionNames: ["depend"]),
        RIDVector(
            text: "lo_res-1 recv max-fs=3600;max-pps=108000;max-bpp=0.5", id: "lo_res-1", direction: .recv,
            restrictionNames: ["max-fs", "max-pps", "max-bpp"]),
        RIDVector(text: "f send max-width", id: "f", direction: .send, restrictionNames: ["max-width"]),
        // rid-param-other: an unknown restriction is kept, in place.
        RIDVector(
            text: "q send max-width=320;x-vendor-hint=a:b=c;x-flag", id: "q", direction: .send, maxWidth: 320,
            restrictionNames: ["max-width", "x-vendor-hint", "x-flag"]),
        // What Chrome 156 and Firefox 153 write.
        RIDVector(text: "q send", id: "q", direction: .send),
    ]

    @Test(arguments: rids)
    func rfc8851RID(_ v: RIDVector) throws {
        let rid = try #require(RID(sdp: Substring(v.text)))
        #expect(rid.id == v.id && rid.direction == v.direction && rid.payloadTypes == v.payloadTypes)
        #expect(rid.maxWidth == v.maxWidth && rid.maxHeight == v.maxHeight && rid.maxFPS == v.maxFPS)
        #expect(rid.maxBitrate == v.maxBitrate)
        #expect(rid.restrictions.map(\.name) == v.restrictionNames)
        #expect(rid.sdpValue == v.text)
        // Through a whole description too: the typed attribute, then the same line written back.
        let sdp = try SessionDescription.parse(header + video + "a=rid:\(v.text)\r\n")
        #expect(sdp.media.first?.rids == [rid])
        #expect(sdp.serialized().contains("\r\na=rid:\(v.text)\r\n"))
    }

    @Test func ridRestrictionsReadAsNumbers() throws {
        let rid = try #require(RID(sdp: "t2 send max-fs=3600;max-pps=108000;depend=t0,t1"))
        #expect(rid.maxFrameSize == 3600 && rid.maxPixelRate == 108000 && rid.depend == ["t0", "t1"])
        // A value that is digits but does not fit the accessor's type reads as absent, never traps.
        let big = try #require(RID(sdp: "x send max-width=99999999999"))
        #expect(big.maxWidth == nil && big.restrictions.count == 1)
    }

    static let simulcasts: [SimulcastVector] = [
        // RFC 8853 section 5.1: three sent streams, the first with a paused alternative; one received.
        SimulcastVector(
            text: "send 1,~4;2;3 recv c", send: [["1", "~4"], ["2"], ["3"]], receive: [["c"]],
            serialized: "send 1,~4;2;3 recv c"),
        // RFC 8853 section 5.2: the offer's line (stream 2 has two alternative formats) ...
        SimulcastVector(
            text: "send 1;2,3 recv 4", send: [["1"], ["2", "3"]], receive: [["4"]], serialized: "send 1;2,3 recv 4"),
        // ... and the answer RFC 8853 section 5.3.2's rules give to it (recv first: either order parses).
        SimulcastVector(
            text: "recv 1;2 send 4", send: [["4"]], receive: [["1"], ["2"]], serialized: "send 4 recv 1;2"),
        // What Chrome 156 and Firefox 153 offer, and what the server answers with a paused layer.
        SimulcastVector(text: "send q;h;f", send: [["q"], ["h"], ["f"]], receive: [], serialized: "send q;h;f"),
        SimulcastVector(text: "recv q;~h;f", send: [], receive: [["q"], ["~h"], ["f"]], serialized: "recv q;~h;f"),
        SimulcastVector(
            text: "recv ~lo_1,hi-2", send: [], receive: [["~lo_1", "hi-2"]], serialized: "recv ~lo_1,hi-2"),
    ]

    @Test(arguments: simulcasts)
    func rfc8853Simulcast(_ v: SimulcastVector) throws {
        func ids(_ streams: [[Simulcast.Alternative]]) -> [[String]] {
            streams.map { $0.map { ($0.paused ? "~" : "") + $0.rid } }
        }
        let s = try #require(Simulcast(sdp: Substring(v.text)))
        #expect(ids(s.send) == v.send && ids(s.receive) == v.receive)
        #expect(s.sdpValue == v.serialized)
        #expect(Simulcast(sdp: Substring(s.sdpValue)) == s)
        #expect(s.sendRIDs == v.send.compactMap { $0.first.map { String($0.drop { $0 == "~" }) } })
        #expect(s.receiveRIDs == v.receive.compactMap { $0.first.map { String($0.drop { $0 == "~" }) } })
        let sdp = try SessionDescription.parse(header + video + "a=simulcast:\(v.text)\r\n")
        #expect(sdp.media.first?.simulcast == s)
    }

    /// Lines that break RFC 8851 section 10 or RFC 8853 section 5.1: a typed error naming line 8,
    /// never a trap and never a silently kept value.
    @Test(arguments: [
        ("a=rid:q", "rid"),
        ("a=rid:q send pt=96 extra", "rid"),
        ("a=rid:q@x send", "rid"),
        ("a=rid:~q send", "rid"),
        ("a=rid:q send pt=", "rid"),
        ("a=rid:q send pt=96,,97", "rid"),
        ("a=rid:q send pt=300", "rid"),
        ("a=rid:q send max-width=wide", "rid"),
        ("a=rid:q send max-height=-1", "rid"),
        ("a=rid:q send max-fps=30.5", "rid"),
        ("a=rid:q send max-br=99999999999999999999999", "rid"),
        ("a=rid:q send max-bpp=1", "rid"),
        ("a=rid:q send depend=", "rid"),
        ("a=rid:q send depend=a,b@c", "rid"),
        ("a=rid:q send bad_name=1", "rid"),
        ("a=rid:q SEND", "rid"),
        ("a=simulcast:send", "simulcast"),
        ("a=simulcast:send ~", "simulcast"),
        ("a=simulcast:send q,", "simulcast"),
        ("a=simulcast:send q;h;", "simulcast"),
        ("a=simulcast:send q;h$", "simulcast"),
        ("a=simulcast:recv q recv h", "simulcast"),
        ("a=simulcast:both q", "simulcast"),
        ("a=simulcast:send q recv", "simulcast"),
        ("a=simulcast:send ~~q", "simulcast"),
    ])
    func malformed(_ line: String, name: String) {
        #expect(throws: SDPError.invalidAttribute(line: 8, name: name)) {
            try SessionDescription.parse(header + video + line + "\r\n")
        }
    }
}
