import AtriumDTLS
import AtriumJSON
import AtriumMedia
import AtriumUDP
import Foundation
import Testing

@testable import AtriumMediaControl

/// A publisher placed on an edge, on the plane's fakes: the owner places it beside its subscriber,
/// makes its pipe producer (fed from the link) before asking the edge for the track and its pipe,
/// consumes it here, pipes it on to another edge, not back to its own; the edge's reports about it
/// come back, those of another node do not; its edge lost, it ends everywhere. As the edge: the
/// track piped up under the owner's tag, its events sent to the owner, a stranger's request refused.
@Suite(.serialized) struct ClusterPublisherTests {
    typealias World = ClusterMediaPlaneTests.World

    static let camera = ProducerSpec(
        id: "tr_cam", transport: "p9pub", mid: "0", source: "camera", kind: .video, videoCodec: "VP8",
        clockRate: 90_000, payloadType: 96, rtxPayloadType: nil, ssrc: 5, rtxSSRC: nil, audioLevelID: nil,
        absSendTimeID: nil, paused: false)

    static func open(_ id: String, label: String, _ role: TransportRole) -> MediaCommand {
        .openTransport(
            TransportSpec(
                id: id, router: "room", label: label, localUfrag: "u", localPassword: "p", remote: nil, role: role))
    }

    static func consumer(_ id: String, on transport: String) -> MediaCommand {
        .addConsumer(
            ConsumerSpec(
                id: id, producer: "tr_cam", transport: transport, ssrc: 9, rtxSSRC: nil, payloadType: 96,
                rtxPayloadType: nil, nack: true, audioLevelID: nil, absSendTimeID: nil))
    }

    static func event(_ e: MediaEvent) -> JSONValue {
        .object(["op": "event", "event": RemoteMediaCoding.encode(e) ?? .null])
    }

    @Test func aPublisherOnAnEdgeIsPipedUpConsumedHereAndPipedOnToTheOtherEdges() throws {
        let w = try World()
        defer { w.plane.stop() }
        w.live.append(ClusterMediaPlaneTests.n3)
        w.plane.submit(Self.open("pub", label: "p1/pub", .publisher))
        w.plane.submit(Self.open("sub-1", label: "p1/sub", .subscriber))
        // Past two transports here: p9's subscriber goes to n2, and its publisher beside it.
        w.plane.submit(Self.open("p9sub", label: "p9/sub", .subscriber))
        w.plane.submit(Self.open("p9pub", label: "p9/pub", .publisher))
        #expect(w.ops() == ["n2 link", "n2 cmd openTransport", "n2 cmd openTransport"])
        #expect(w.plane.candidateAddresses(room: "room", transport: "p9pub") == [.loopbackV4(port: 41_000)])
        _ = w.worker.take()
        w.plane.submit(.addProducer(Self.camera))
        // Its pipe producer here first, then the track there and its pipe asked for.
        let here = w.worker.take()
        #expect(here.count == 1)
        guard case .addPipeProducer(let spec, "room", _, let local) = here.first else {
            Issue.record("no pipe producer here: \(here)")
            return
        }
        #expect(spec.id == "tr_cam" && local >= 0xC000_0000)
        let up = w.sent.last { $0.body["op"]?.stringValue == "pipe_up" }?.body
        #expect(w.ops() == ["n2 cmd addProducer", "n2 pipe_up"])
        #expect(up?["producer"]?.stringValue == "tr_cam" && (up?["tag"]?.int64Value ?? 0) >= 0x8000_0000)
        // A viewer here consumes the pipe producer as a local track.
        w.plane.submit(Self.consumer("c1", on: "sub-1"))
        #expect(w.worker.take().count == 1 && w.ops().isEmpty)
        // A viewer on n2 consumes the track where it is: nothing piped there.
        w.plane.submit(Self.consumer("c2", on: "p9sub"))
        #expect(w.ops() == ["n2 cmd addConsumer"])
        // A viewer on n3: the pipe producer here is piped on once n3 says its own is in place.
        w.plane.random = { n in n - 1 }
        w.plane.submit(Self.open("sub-3", label: "p3/sub", .subscriber))
        w.plane.submit(Self.consumer("c3", on: "sub-3"))
        let tag = try #require(w.sentTag)
        #expect(w.ops() == ["n3 link", "n3 cmd openTransport", "n3 cmd addPipeProducer", "n3 cmd addConsumer"])
        w.plane.receive(from: "n3", .object(["op": "piped", "tag": .int(Int64(tag))]))
        #expect(
            w.worker.take().contains { if case .pipeProducer("tr_cam", _, tag) = $0 { true } else { false } })
        // What n2 measures of the track comes back; the same from n3, or of another track, does not.
        w.plane.receive(from: "n2", Self.event(.layersWanted(producer: "tr_cam", rids: ["q"])))
        w.plane.receive(from: "n3", Self.event(.layersWanted(producer: "tr_cam", rids: ["f"])))
        w.plane.receive(from: "n2", Self.event(.layersWanted(producer: "tr_other", rids: ["h"])))
        w.plane.receive(
            from: "n2",
            Self.event(
                .audioLevels(
                    [AudioLevel(producer: "tr_cam", dBov: 30), AudioLevel(producer: "x", dBov: 20)], worker: 1)))
        #expect(
            w.plane.events() == [
                .layersWanted(producer: "tr_cam", rids: ["q"]),
                .audioLevels([AudioLevel(producer: "tr_cam", dBov: 30)], worker: ClusterMediaPlane.levelKeyStride + 1),
            ])
        // Paused: on its edge, here and on n3.
        _ = w.worker.take()
        w.plane.submit(.pauseProducer(id: "tr_cam", paused: true))
        #expect(Set(w.ops()) == ["n2 cmd pauseProducer", "n3 cmd pauseProducer"])
        #expect(w.worker.take().count == 1)
        // n2 lost: its viewers' and publisher's transports fail, the track ends here and on n3, and
        // n2's audio level report speaks for nobody any more.
        w.live.removeFirst()
        let events = w.plane.events()
        #expect(events.contains(.producerEnded(id: "tr_cam", reason: .nodeLost)))
        #expect(events.contains(.transportState(id: "p9pub", state: .failed)))
        #expect(events.contains(.audioLevels([], worker: ClusterMediaPlane.levelKeyStride + 1)))
        #expect(w.worker.take().compactMap(\.closedProducer) == ["tr_cam"])
        #expect(w.ops() == ["n3 cmd closeProducer"])
    }

    /// A track published on an edge closed by its publisher: closed there, here (its pipe producer)
    /// and on every edge it was piped on to; the same for its transport closing.
    @Test func aTrackPublishedOnAnEdgeClosesEverywhere() throws {
        let w = try World()
        defer { w.plane.stop() }
        w.live.append(ClusterMediaPlaneTests.n3)
        w.plane.submit(Self.open("pub", label: "p1/pub", .publisher))
        w.plane.submit(Self.open("sub-1", label: "p1/sub", .subscriber))
        w.plane.submit(Self.open("p9sub", label: "p9/sub", .subscriber))
        w.plane.submit(Self.open("p9pub", label: "p9/pub", .publisher))
        w.plane.submit(.addProducer(Self.camera))
        var mic = Self.camera
        (mic.id, mic.kind) = ("tr_mic", .audio)
        w.plane.submit(.addProducer(mic))
        w.plane.random = { n in n - 1 }
        w.plane.submit(Self.open("sub-3", label: "p3/sub", .subscriber))
        w.plane.submit(Self.consumer("c3", on: "sub-3"))
        _ = (w.ops(), w.worker.take())
        w.plane.submit(.closeProducer(id: "tr_cam"))
        #expect(Set(w.ops()) == ["n2 cmd closeProducer", "n3 cmd closeProducer"])
        #expect(w.worker.take().compactMap(\.closedProducer) == ["tr_cam"])
        #expect(w.plane.relayedFrom["tr_cam"] == nil && w.plane.piped["tr_cam"] == nil)
        #expect(w.plane.relayedFrom["tr_mic"] != nil)
        // Its transport closed: the other track goes with it here.
        w.plane.submit(.closeTransport(id: "p9pub"))
        #expect(w.ops() == ["n2 cmd closeTransport"])
        #expect(w.worker.take().compactMap(\.closedProducer) == ["tr_mic"])
        #expect(w.plane.relayedFrom.isEmpty && w.plane.remotePublishers.isEmpty)
    }

    /// A publisher whose edge was lost offers again (a new connection, or an ICE restart): its
    /// transport opens again, beside its renewed subscriber on a live node, with the new credentials,
    /// and its new tracks are piped up from there.
    @Test func aPublisherWhoseEdgeWasLostOpensAgainOnItsNextOffer() throws {
        let w = try World()
        defer { w.plane.stop() }
        w.live.append(ClusterMediaPlaneTests.n3)
        w.plane.submit(Self.open("pub", label: "p1/pub", .publisher))
        w.plane.submit(Self.open("sub-1", label: "p1/sub", .subscriber))
        w.plane.submit(Self.open("p9sub", label: "p9/sub", .subscriber))
        w.plane.submit(Self.open("p9pub", label: "p9/pub", .publisher))
        w.plane.submit(.addProducer(Self.camera))
        w.live.removeFirst()
        #expect(w.plane.events().contains(.producerEnded(id: "tr_cam", reason: .nodeLost)))
        _ = w.ops()
        // Its offer before anything else: the transport opens by the rule (n3, the one edge left).
        w.plane.submit(Self.open("p9sub2", label: "p9/sub", .subscriber))
        w.plane.submit(
            .updateTransport(id: "p9pub", remote: ClusterMediaPlaneTests.remote, localUfrag: "u2", localPassword: "p2"))
        let opened = w.sent.compactMap { $0.body["command"] }.filter { $0["op"]?.stringValue == "openTransport" }
        #expect(w.ops() == ["n3 link", "n3 cmd openTransport", "n3 cmd openTransport"])
        #expect(opened.last?["transport"]?["id"]?.stringValue == "p9pub")
        #expect(opened.last?["transport"]?["ufrag"]?.stringValue == "u2")
        #expect(opened.last?["transport"]?["remote"]?["ufrag"]?.stringValue == "ru")
        #expect(w.plane.candidateAddresses(room: "room", transport: "p9pub") == [.loopbackV4(port: 42_000)])
        var again = Self.camera
        again.id = "tr_cam2"
        w.plane.submit(.addProducer(again))
        #expect(w.ops() == ["n3 cmd addProducer", "n3 pipe_up"])
        // Once open, a later offer updates it as any transport.
        w.plane.submit(
            .updateTransport(id: "p9pub", remote: ClusterMediaPlaneTests.remote, localUfrag: "u3", localPassword: "p3"))
        #expect(w.ops() == ["n3 cmd updateTransport"])
    }

    @Test func anEdgePipesAnOwnersPublisherUpAndSendsItsReportsToThatOwner() throws {
        let w = try World()
        defer { w.plane.stop() }
        try ClusterMediaPlaneTests.linkFrom(w, "n9")
        try ClusterMediaPlaneTests.command(w, Self.open("p9pub", label: "p9/pub", .publisher), from: "n9")
        try ClusterMediaPlaneTests.command(w, .addProducer(Self.camera), from: "n9")
        // Another owner may not add a track to n9's transport.
        var other = Self.camera
        other.id = "tr_x"
        try ClusterMediaPlaneTests.command(w, .addProducer(other), from: "n8")
        let made = w.worker.take()
        #expect(made.compactMap(\.openedTransport).map(\.id) == ["n9/p9pub"])
        #expect(made.compactMap(\.addedProducer).map(\.id) == ["n9/tr_cam"])
        w.sent.removeAll()
        // A pipe asked for by another owner, or for a track not here, is refused.
        w.plane.receive(from: "n8", .object(["op": "pipe_up", "producer": "tr_cam", "tag": .int(5)]))
        w.plane.receive(from: "n9", .object(["op": "pipe_up", "producer": "tr_none", "tag": .int(5)]))
        w.plane.receive(from: "n9", .object(["op": "pipe_up", "producer": "tr_cam", "tag": .int(-1)]))
        #expect(w.worker.take().isEmpty)
        w.plane.receive(from: "n9", .object(["op": "pipe_up", "producer": "tr_cam", "tag": .int(5)]))
        let piped = w.worker.take()
        #expect(
            piped.count == 1
                && piped.contains {
                    if case .pipeProducer("n9/tr_cam", _, let t) = $0 { t >= 0x8000_0000 } else { false }
                })
        // The link routes it outbound (up to the owner).
        let deadline = ContinuousClock.now + .seconds(15)
        while w.plane.links.first?.figures.tracks != 1 {
            guard ContinuousClock.now < deadline else { throw ClusterMediaPlaneTests.RelayTestTimeout() }
            usleep(5000)
        }
        #expect(w.plane.owners["n9"]?.up["n9/tr_cam"]?.link == 5)
        // The track's reports go to n9 under its own id; the node's own stay here.
        w.worker.queued = [
            .layersWanted(producer: "n9/tr_cam", rids: ["q", "f"]),
            .audioLevels([AudioLevel(producer: "n9/tr_cam", dBov: 30), AudioLevel(producer: "mine", dBov: 40)]),
            .layersWanted(producer: "mine", rids: ["q"]),
        ]
        #expect(
            w.plane.events() == [
                .audioLevels([AudioLevel(producer: "mine", dBov: 40)], worker: 0),
                .layersWanted(producer: "mine", rids: ["q"]),
            ])
        let toOwner = w.sent.filter { $0.node == "n9" }.compactMap { $0.body["event"] }
            .compactMap { try? RemoteMediaCoding.decodeEvent($0) }
        #expect(
            toOwner == [
                .layersWanted(producer: "tr_cam", rids: ["q", "f"]),
                .audioLevels([AudioLevel(producer: "tr_cam", dBov: 30)], worker: 0),
            ])
        // The next report without it still tells n9 (its speaker stopped).
        w.sent.removeAll()
        w.worker.queued = [.audioLevels([])]
        _ = w.plane.events()
        #expect(w.sent.compactMap { $0.body["event"]?["op"]?.stringValue } == ["audioLevels"])
        // The track closed by its owner: its route goes, and its reports stay here from now on.
        try ClusterMediaPlaneTests.command(w, .closeProducer(id: "tr_cam"), from: "n9")
        #expect(w.worker.take().compactMap(\.closedProducer) == ["n9/tr_cam"])
        #expect(w.plane.owners["n9"]?.up.isEmpty == true && w.plane.hostedProducers.isEmpty)
        w.sent.removeAll()
        w.worker.queued = [.layersWanted(producer: "n9/tr_cam", rids: ["q"])]
        #expect(w.plane.events() == [.layersWanted(producer: "n9/tr_cam", rids: ["q"])])
        #expect(w.sent.isEmpty)
    }

    @Test func producerEventsCrossAndOutOfRangeOnesAreRefused() throws {
        let layers = LayerStats(
            bitrate: 1e6, lastBitrate: 9e5, width: 1280, height: 720, framesPerSecond: 30, arriving: true,
            keyFrameBytes: 40_000, temporal: [TemporalLayerStats(bitrate: 5e5, framesPerSecond: 15)])
        for e: MediaEvent in [
            .layers(producer: "p", [layers]), .producerEnded(id: "p", reason: .bye),
            .layersWanted(producer: "p", rids: ["q", "h"]),
            .audioLevels([AudioLevel(producer: "p", dBov: 127)], worker: 3),
        ] {
            let body = try #require(RemoteMediaCoding.encode(e))
            #expect(try RemoteMediaCoding.decodeEvent(body) == e)
        }
        let bad: [JSONValue] = [
            .object(["op": "producerEnded", "id": "p", "reason": "gone"]),
            .object(["op": "audioLevels", "worker": .int(-1), "levels": .array([])]),
            .object([
                "op": "audioLevels", "worker": .int(0),
                "levels": .array([.object(["producer": "p", "dBov": .int(300)])]),
            ]),
            .object(["op": "layersWanted", "producer": "p", "rids": .array([.int(1)])]),
        ]
        for b in bad { #expect(throws: RemoteMediaCoding.DecodeError.self) { try RemoteMediaCoding.decodeEvent(b) } }
        var nan = layers
        nan.bitrate = .nan
        #expect(RemoteMediaCoding.encode(.layers(producer: "p", [nan])) == nil)
        let reject = MediaCommand.reject(transport: "t", mids: ["1", "0"], ssrcs: [7, 3])
        let body = try #require(RemoteMediaCoding.encode(reject, relayed: { _ in true }))
        guard case .reject("t", let mids, let ssrcs) = try RemoteMediaCoding.decode(body, link: { _, _ in nil }) else {
            Issue.record("not a reject")
            return
        }
        #expect(mids == ["0", "1"] && ssrcs == [3, 7])
    }
}
