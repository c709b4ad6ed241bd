import AtriumForwarding
import AtriumJSON
import AtriumMedia
import Testing

@testable import AtriumMediaControl

/// The media commands and events that cross between an owner node and an edge node: each reads back
/// as it was written (the pipe found by its tag and room), a command that stays on the owner is not written, and a
/// message that is not one is refused by name, never trapped on.
@Suite struct RemoteMediaCodingTests {
    static let link = PipeLink(from: 0, to: 1, wakeFar: nil, wakeHome: nil, capacity: 4)

    static let producer = ProducerSpec(
        id: "pr_1", transport: "pub", mid: "0", source: "screen_share", kind: .video, videoCodec: "VP8",
        clockRate: 90_000,
        payloadType: 96, rtxPayloadType: 97, ssrc: nil, rtxSSRC: nil, audioLevelID: nil, absSendTimeID: 3,
        paused: false,
        encodings: [EncodingSpec(rid: "q", width: 320, height: 180), EncodingSpec(rid: "f", width: 1280, height: 720)],
        ridExtensionID: 4, repairedRidExtensionID: 5)

    static let commands: [MediaCommand] = [
        .openTransport(
            TransportSpec(
                id: "t1", router: "room", label: "pa_1/sub", localUfrag: "u", localPassword: "p",
                remote: RemoteSpec(
                    ufrag: "ru", password: "rp", fingerprint: (0..<32).map { UInt8($0 * 7) }, dtlsClient: false,
                    transportWideCCExtensionID: 6, sctpPort: 5000), role: .subscriber)),
        .openTransport(
            TransportSpec(id: "t2", router: "room", label: "l", localUfrag: "u", localPassword: "p", remote: nil)),
        .updateTransport(
            id: "t1",
            remote: RemoteSpec(
                ufrag: "a", password: "b", fingerprint: Array(repeating: 255, count: 32), dtlsClient: true),
            localUfrag: "c", localPassword: "d"),
        .closeTransport(id: "t1"), .closeRouter(id: "room"),
        .allocate(
            transport: "t1",
            TransportAllocation(
                allocated: 1_500_000, wanted: 2_000_000, needed: 2_500_000,
                entries: [
                    .init(consumer: "c1", ceiling: VideoLayer(spatial: 2, temporal: 1), paused: false),
                    .init(consumer: "c2", ceiling: nil, paused: true),
                ])),
        .addConsumer(
            ConsumerSpec(
                id: "c1", producer: "pr_1", transport: "t1", ssrc: 4_000_000_000, rtxSSRC: 12, payloadType: 96,
                rtxPayloadType: 97, nack: true, audioLevelID: nil, absSendTimeID: 2,
                preference: LayerPreference(quality: .medium, viewport: LayerChoice.Size(width: 640, height: 360)),
                continuous: true)),
        .setPreference(consumer: "c1", LayerPreference(quality: .low)), .closeConsumer(id: "c1"),
        .sendData(transport: "t1", lossy: true, payload: Array("{\"x\":1}".utf8)),
        .addPipeProducer(producer, router: "room", link: link, tag: 77),
        .pauseProducer(id: "pr_1", paused: true), .closeProducer(id: "pr_1"),
    ]

    static func encode(_ c: MediaCommand) -> JSONValue? { RemoteMediaCoding.encode(c, relayed: { $0 === link }) }

    @Test func commandsReadBackAsTheyWereWritten() throws {
        for c in Self.commands {
            let written = try #require(Self.encode(c), "\(c)")
            // Through text, as it crosses.
            let read = try RemoteMediaCoding.decode(
                try JSONParser.parse(written.serialized()),
                link: { tag, room in tag == 77 && room == "room" ? Self.link : nil })
            #expect(Self.encode(read) == written, "\(c)")
        }
        // The pipe is the edge's own, found by the tag and room.
        let read = try RemoteMediaCoding.decode(
            try #require(Self.encode(Self.commands[10])), link: { _, _ in Self.link })
        guard case .addPipeProducer(let spec, "room", let link, 77) = read else {
            Issue.record("\(read)")
            return
        }
        #expect(spec == Self.producer && link === Self.link)
    }

    @Test func commandsOfTheOwnersOwnDoNotCross() {
        let stays: [MediaCommand] = [
            .pipeProducer(id: "pr_1", link: Self.link, tag: 1),
            .addPipeProducer(
                Self.producer, router: "r", link: PipeLink(from: 0, to: 1, wakeFar: nil, wakeHome: nil), tag: 1),
        ]
        #expect(stays.allSatisfy { Self.encode($0) == nil })
    }

    @Test func eventsReadBackAsTheyWereWritten() throws {
        let events: [MediaEvent] = [
            .transportState(id: "t1", state: .connected), .estimate(transport: "t1", bitrate: 1_234_567),
            .bottleneck(transport: "t1", suspected: true),
            .dataChannel(transport: "t1", label: "atrium-lossy", lossy: true, open: true),
            .dataMessage(transport: "t1", lossy: false, payload: Array("hello".utf8)),
            .layersWanted(producer: "p", rids: ["q"]), .producerEnded(id: "p", reason: .inactive),
        ]
        for e in events {
            let written = try #require(RemoteMediaCoding.encode(e))
            #expect(try RemoteMediaCoding.decodeEvent(try JSONParser.parse(written.serialized())) == e)
        }
        #expect(RemoteMediaCoding.encode(.estimate(transport: "t", bitrate: .infinity)) == nil)
    }

    @Test(arguments: [
        ("not an object", "[1]"),
        ("no op", #"{"id":"t"}"#),
        ("an unknown op", #"{"op":"format"}"#),
        ("a field of the wrong type", #"{"op":"closeTransport","id":7}"#),
        (
            "an SSRC out of range",
            #"{"op":"allocate","transport":"t","allocation":{"allocated":1,"wanted":1,"needed":1,"entries":[{"consumer":"c","paused":false,"ceiling":{"spatial":300,"temporal":0}}]}}"#
        ),
        (
            "a negative rate",
            #"{"op":"allocate","transport":"t","allocation":{"allocated":-1,"wanted":1,"needed":1,"entries":[]}}"#
        ),
        (
            "a rate past any link",
            #"{"op":"allocate","transport":"t","allocation":{"allocated":1e300,"wanted":1,"needed":1,"entries":[]}}"#
        ),
        ("no id", #"{"op":"closeProducer"}"#),
        ("a pipe the edge cannot make", #"{"op":"addPipeProducer","tag":1,"router":"r","producer":{}}"#),
        (
            "a short fingerprint",
            #"{"op":"updateTransport","id":"t","ufrag":"u","password":"p","remote":{"ufrag":"a","password":"b","fingerprint":"abcd","dtlsClient":true}}"#
        ),
        (
            "an unknown quality",
            #"{"op":"setPreference","consumer":"c","preference":{"quality":"ultra","viewport":null}}"#
        ),
    ])
    func aCommandThatIsNotOneIsRefused(_ name: String, _ text: String) throws {
        #expect(throws: RemoteMediaCoding.DecodeError.self, "\(name)") {
            try RemoteMediaCoding.decode(try JSONParser.parse(text), link: { _, _ in nil })
        }
    }

    @Test func anEventThatIsNotOneIsRefused() throws {
        for text in [
            #"{"op":"transportState","id":"t","state":"melted"}"#, #"{"op":"estimate","transport":"t","bitrate":-5}"#,
            #"{"op":"layers"}"#, #"{"op":"estimate","transport":"t","bitrate":"fast"}"#,
        ] {
            #expect(throws: RemoteMediaCoding.DecodeError.self, "\(text)") {
                try RemoteMediaCoding.decodeEvent(try JSONParser.parse(text))
            }
        }
    }
}
