import AtriumAuth
import AtriumJSON
import AtriumModel
import Testing

@testable import AtriumRecording
@testable import AtriumRooms

/// A room driven through its public functions, with deterministic ids.
private struct StreamRoom {
    var state: RoomState
    var n = 0

    init(_ configure: (inout SharePolicy) -> Void = { _ in }) {
        var room = Room(id: RoomID("rm_0000000000000000"), name: "r", createdAt: 0)
        configure(&room.sharePolicy)
        state = RoomState(room: room)
    }

    mutating func join(_ identity: String) throws -> ParticipantID {
        var g = Grants()
        g.canPublish = true
        g.canSubscribe = true
        let id = ParticipantID("pa_" + identity)
        _ = try state.join(
            id: id, identity: identity, name: identity, metadata: "", grants: g, autoSubscribe: true, now: 0)
        return id
    }

    mutating func publish(_ owner: ParticipantID, _ source: TrackSource) throws -> (TrackID, ShareID) {
        n += 1
        let tid = TrackID("tr_\(n)")
        let sid = ShareID("sh_\(n)")
        _ = try state.publish(Track(id: tid, owner: owner, source: source, name: ""), now: Int64(n), newShareID: sid)
        return (tid, sid)
    }
}

/// Live streams' pure parts: the request body, what a source follows in a room, and the ffmpeg command.
@Suite struct LiveStreamTests {
    @Test(arguments: [
        (["hls": .bool(true)] as JSONObject, StreamRequest(source: .share, output: .hls)),
        (
            ["source": .string("speaker"), "rtmpUrl": .string("rtmps://live.example.com/app/KEY")] as JSONObject,
            StreamRequest(source: .speaker, output: .rtmp("rtmps://live.example.com/app/KEY"))
        ),
        (
            ["source": .string("participant"), "participantId": .string("ann"), "hls": .bool(true)] as JSONObject,
            StreamRequest(source: .participant("ann"), output: .hls)
        ),
    ])
    func requestsThatParse(_ body: JSONObject, _ expected: StreamRequest) throws {
        #expect(try StreamRequest(json: body) == expected)
    }

    static let refusals: [(JSONObject, String)] = [
        (["rtmpUrl": .string("http://x/y")], "rtmpUrl"), ([:], "rtmpUrl"),
        (["rtmpUrl": .string("rtmp://h/a/k"), "hls": .bool(true)], "rtmpUrl"),
        (["rtmpUrl": .string("rtmp:///nohost")], "rtmpUrl"), (["rtmpUrl": .string("rtmp://h/a/k\n-i x")], "rtmpUrl"),
        (["rtmpUrl": .string("rtmp://h/" + String(repeating: "k", count: 2048))], "rtmpUrl"),
        (["source": .string("moon"), "hls": .bool(true)], "source"),
        (["source": .string("participant"), "hls": .bool(true)], "participantId"),
        (["participantId": .string("ann"), "hls": .bool(true)], "participantId"),
        (["hls": .string("yes")], "hls"), (["hls": .bool(true), "extra": .int(1)], "extra"),
    ]

    @Test(arguments: refusals)
    func requestsRefusedByField(_ body: JSONObject, _ field: String) {
        #expect {
            try StreamRequest(json: body)
        } throws: { e in
            guard case .invalidField(let f, _) = e as? StreamError else { return false }
            return f == field
        }
    }

    @Test func theShareSourceFollowsTheNewestRunningShareWithItsAudio() throws {
        var h = StreamRoom {
            $0.shareMode = .multi
            $0.maxConcurrentShares = 2
        }
        let a = try h.join("a")
        let b = try h.join("b")
        let all: (TrackID) -> Bool = { _ in true }
        #expect(StreamSource.share.tracks(in: h.state, speaker: nil, hasMedia: all) == (nil, nil))
        let (aMic, _) = try h.publish(a, .microphone)
        let (aScreen, _) = try h.publish(a, .screenShare)
        #expect(StreamSource.share.tracks(in: h.state, speaker: nil, hasMedia: all) == (aScreen, aMic))
        let (bScreen, bShare) = try h.publish(b, .screenShare)
        let (bAudio, _) = try h.publish(b, .screenShareAudio)
        #expect(StreamSource.share.tracks(in: h.state, speaker: nil, hasMedia: all) == (bScreen, bAudio))
        _ = try h.state.pause(bShare, by: b)
        #expect(StreamSource.share.tracks(in: h.state, speaker: nil, hasMedia: all) == (aScreen, aMic))
        // Only tracks with media count.
        #expect(StreamSource.share.tracks(in: h.state, speaker: nil) { $0 != aScreen } == (bScreen, bAudio))
    }

    @Test func participantAndSpeakerSources() throws {
        var h = StreamRoom()
        let a = try h.join("a")
        let all: (TrackID) -> Bool = { _ in true }
        let (screen, _) = try h.publish(a, .screenShare)
        #expect(StreamSource.participant("a").tracks(in: h.state, speaker: nil, hasMedia: all) == (screen, nil))
        let (camera, _) = try h.publish(a, .camera)
        let (mic, _) = try h.publish(a, .microphone)
        #expect(StreamSource.participant("a").tracks(in: h.state, speaker: nil, hasMedia: all) == (camera, mic))
        #expect(StreamSource.participant("zed").tracks(in: h.state, speaker: nil, hasMedia: all) == (nil, nil))
        #expect(StreamSource.speaker.tracks(in: h.state, speaker: nil, hasMedia: all) == (nil, nil))
        #expect(StreamSource.speaker.tracks(in: h.state, speaker: a, hasMedia: all) == (camera, mic))
    }

    @Test func ffmpegKeepsH264AndTranscodesTheRest() {
        let copy = StreamCommand.arguments(
            ffmpeg: "ffmpeg", sdp: "/d/in.sdp", videoCodec: "H264", output: .rtmp("rtmp://h/app/k"), hlsDirectory: "/d")
        #expect(copy.contains("copy") && !copy.contains("libx264"))
        #expect(Array(copy.suffix(5)) == ["-f", "flv", "-flvflags", "no_duration_filesize", "rtmp://h/app/k"])
        let vp8 = StreamCommand.arguments(
            ffmpeg: "ffmpeg", sdp: "/d/in.sdp", videoCodec: "VP8", output: .hls, hlsDirectory: "/d")
        #expect(vp8.contains("libx264") && vp8.contains("aac") && !vp8.contains("copy"))
        #expect(vp8.last == "/d/index.m3u8")
        let whitelist = vp8.firstIndex(of: "-protocol_whitelist").map { vp8[$0 + 1] }
        #expect(whitelist == "file,udp,rtp")
    }

    @Test func theStreamKeyIsNotShown() {
        var s = LiveStream(
            id: "str_1", room: RoomID("rm_1"), source: .share, output: .rtmp("rtmp://live.example.com/app/SECRET"),
            state: .live, startedAt: 0)
        #expect(s.json["rtmpUrl"]?.stringValue == "rtmp://live.example.com/app/***")
        s.output = .hls
        #expect(s.json["hls"] == .bool(true))
    }
}
