import AtriumAuth
import AtriumJSON
import AtriumModel
import AtriumRecording
import Testing

@testable import AtriumRooms

/// Recordings' pure parts: the request body, its target in a room, the SDP and the ffmpeg command,
/// containers, and reading which ports ffmpeg bound.
@Suite struct RecordingTests {
    @Test func theSDPffmpegReads() {
        let sdp = RecordingSDP.write(
            [
                RecordedStream(
                    kind: .video, codec: "H264", clockRate: 90_000, channels: nil, payloadType: 96, port: 40_000),
                RecordedStream(
                    kind: .audio, codec: "opus", clockRate: 48_000, channels: 2, payloadType: 111, port: 40_002),
            ], name: "Atrium recording rec_1")
        #expect(
            sdp
                == [
                    "v=0", "o=- 0 0 IN IP4 127.0.0.1", "s=Atrium recording rec_1", "c=IN IP4 127.0.0.1", "t=0 0",
                    "m=video 40000 RTP/AVP 96", "a=rtpmap:96 H264/90000", "a=fmtp:96 packetization-mode=1",
                    "a=recvonly",
                    "m=audio 40002 RTP/AVP 111", "a=rtpmap:111 opus/48000/2", "a=recvonly", "",
                ].joined(separator: "\r\n"))
    }

    @Test func theCommandCopiesWithoutReencoding() {
        let args = FFmpegCommand.arguments(ffmpeg: "ffmpeg", sdp: "/d/r.sdp", output: "/d/r.mp4", container: .mp4)
        #expect(args.first == "ffmpeg" && args.last == "/d/r.mp4")
        #expect(args.joined(separator: " ").contains("-protocol_whitelist file,udp,rtp"))
        #expect(args.joined(separator: " ").contains("-i /d/r.sdp -map 0 -c copy -f mp4 -y"))
        #expect(args.joined(separator: " ").contains("-listen_timeout \(FFmpegCommand.listenTimeout)"))
    }

    @Test(arguments: [
        (RecordingContainer.webm, "VP8", true), (.webm, "opus", true), (.webm, "H264", false), (.mp4, "H264", true),
        (.mp4, "VP8", false), (.mkv, "H264", true), (.mkv, "VP8", true),
    ])
    func containers(container: RecordingContainer, codec: String, accepted: Bool) {
        #expect(container.accepts(codec) == accepted)
    }

    @Test(
        arguments: [
            (#"{"what":"room","container":"mkv"}"#, nil),
            (#"{"what":"share","shareId":"sh_1"}"#, nil),
            (#"{"what":"participant","participantId":"alice"}"#, nil),
            (#"{"what":"participant"}"#, "participantId"),
            (#"{"what":"all"}"#, "what"),
            (#"{}"#, "what"),
            (#"{"what":"room","container":"avi"}"#, "container"),
            (#"{"what":"room","extra":1}"#, "extra"),
            (#"{"what":"share","shareId":""}"#, "shareId"),
            (#"{"what":"share","shareId":5}"#, "shareId"),
        ] as [(String, String?)])
    func requestBodies(body: String, badField: String?) throws {
        let json = try #require(try JSONParser.parse(body).objectValue)
        do throws(RecordingError) {
            _ = try RecordingRequest(json: json)
            #expect(badField == nil)
        } catch {
            guard case .invalidField(let f, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(f == badField)
        }
    }

    @Test func targetsInARoom() throws {
        var state = RoomState(room: Room(id: RoomID("rm_1"), name: "demo", createdAt: 0))
        var g = Grants()
        g.roomJoin = true
        g.canPublish = true
        _ = try state.join(
            id: ParticipantID("pa_1"), identity: "alice", name: "Alice", metadata: "", grants: g, autoSubscribe: true,
            now: 0)
        let req = RecordingRequest(what: "participant", participant: "alice")
        #expect(try req.target(in: state) == .participant(ParticipantID("pa_1")))
        #expect(throws: RecordingError.participantNotFound("bob")) {
            try RecordingRequest(what: "participant", participant: "bob").target(in: state)
        }
        #expect(throws: RecordingError.shareNotFound("sh_x")) {
            try RecordingRequest(what: "share", shareID: "sh_x").target(in: state)
        }
        #expect(try RecordingRequest(what: "room").target(in: state) == .room)
        #expect(RecordingRequest.tracks(of: .room, in: state).isEmpty)
    }

    @Test func portsBoundFromProcNetUDP() {
        let text = """
              sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
             1: 0100007F:9C40 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 1 2 0 0
             2: 00000000:9C42 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 1 2 0 0
             3: 0201A8C0:9C44 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 1 2 0 0
            """
        #expect(LocalPorts.boundUDPPorts(text) == [40_000, 40_002])
        #expect(LocalPorts.boundUDPPorts("") == [])
        let pair = LocalPorts.freePair()
        #expect(pair.map { $0 % 2 == 0 } == true)
    }
}
