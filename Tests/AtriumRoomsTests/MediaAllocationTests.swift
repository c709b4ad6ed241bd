import AtriumCongestion
import AtriumForwarding
import AtriumJSON
import AtriumMedia
import AtriumSDP
import AtriumTestSupport
import Testing

@testable import AtriumMediaControl
@testable import AtriumSignal

/// The allocation wired through the coordinator, against the fake media plane: a viewer's estimate
/// and the camera's measured layers in (worker events), the consumer's ceiling or pause out
/// (`allocate`), and the viewer told of a pause and a resume.
@Suite struct MediaAllocationTests {
    /// Alice publishes a simulcast camera, Bob subscribes; the clock is the test's.
    final class Viewer {
        let w = MediaCoordinatorTests.World()
        let a: FakeConnection
        let b: FakeConnection
        let camera: String
        let consumer: ConsumerSpec
        nonisolated(unsafe) var now = 0.0

        init() throws {
            a = w.connect("alice")
            b = w.connect("bob")
            let ids = try w.publish(
                a, fixture: "chrome-156-offer-simulcast-camera-mic.sdp", tracks: MediaCoordinatorTests.simulcastTracks)
            camera = try #require(ids["1"])
            let offer = try #require(b.sent.last { $0["type"] == .string("subscriber_offer") })
            let sdp = try SessionDescription.parse(try #require(offer["sdp"]?.stringValue))
            _ = try w.request(
                b,
                [
                    "type": "subscriber_answer", "id": .int(3), "revision": try #require(offer["revision"]),
                    "sdp": .string(SDPFixtures.answer(to: sdp)),
                ])
            let camera = camera
            consumer = try #require(
                w.plane.take().compactMap { c -> ConsumerSpec? in
                    if case .addConsumer(let spec) = c { spec } else { nil }
                }.first { $0.producer == camera })
            w.endpoint.media?.clock = { [unowned self] in self.now }
        }

        func layer(_ kbits: Double, _ width: Int) -> LayerStats {
            LayerStats(
                bitrate: kbits * 1000, lastBitrate: kbits * 1000, width: width, height: width * 9 / 16,
                framesPerSecond: 30, arriving: true)
        }

        /// The camera's three layers (320, 640 and 1280 wide; the lowest at 150 kbit/s) as measured.
        func cameraLayers(middle: Double, top: Double) -> MediaEvent {
            .layers(producer: camera, [layer(150, 320), layer(middle, 640), layer(top, 1280)])
        }

        func estimate(_ bitrate: Double) -> MediaEvent { .estimate(transport: consumer.transport, bitrate: bitrate) }
        func bottleneck(_ suspected: Bool) -> MediaEvent {
            .bottleneck(transport: consumer.transport, suspected: suspected)
        }

        func allocation(after events: [MediaEvent]) -> TransportAllocation.Entry? {
            w.plane.queued = events
            w.endpoint.drainMedia()
            let given = w.plane.take().compactMap { c -> TransportAllocation? in
                if case .allocate(let t, let a) = c, t == consumer.transport { a } else { nil }
            }
            return given.last?.entries.first { $0.consumer == consumer.id }
        }

        func entry(_ spatial: Int) -> TransportAllocation.Entry {
            TransportAllocation.Entry(
                consumer: consumer.id, ceiling: VideoLayer(spatial: spatial, temporal: 7), paused: false)
        }
    }

    @Test func theEstimateSetsCeilingsPausesAndResumes() throws {
        let v = try Viewer()
        let (b, camera, consumer) = (v.b, v.camera, v.consumer)
        let a = v.a
        func layer(_ kbits: Double, _ width: Int) -> LayerStats { v.layer(kbits, width) }
        func allocation(after events: [MediaEvent]) -> TransportAllocation.Entry? { v.allocation(after: events) }
        let layers = MediaEvent.layers(producer: camera, [layer(150, 320), layer(500, 640), layer(1500, 1280)])
        // 700 kbit/s: audio, then the middle layer.
        let middle = allocation(after: [layers, .estimate(transport: consumer.transport, bitrate: 700_000)])
        #expect(
            middle
                == TransportAllocation.Entry(
                    consumer: consumer.id, ceiling: VideoLayer(spatial: 1, temporal: 7), paused: false))
        // 120 kbit/s: no room for the camera after audio: paused, and bob is told.
        let before = b.sent.count
        let paused = allocation(after: [.estimate(transport: consumer.transport, bitrate: 120_000)])
        #expect(paused?.paused == true)
        let pushed = b.sent[before...].filter { $0["type"] == .string("track_paused") }
        #expect(pushed == [.object(["type": "track_paused", "trackId": .string(camera), "reason": "bandwidth"])])
        #expect(a.sent.allSatisfy { $0["type"] != .string("track_paused") }, "only the viewer hears it")
        // Just enough for the bottom layer is not enough to resume (a fifth more is needed).
        #expect(allocation(after: [.estimate(transport: consumer.transport, bitrate: 200_000)]) == nil)
        // Room for the bottom layer with its margin: held (a track that stepped down waits 2 s before
        // it steps up, unless the estimate doubles).
        v.now = 1
        #expect(allocation(after: [.estimate(transport: consumer.transport, bitrate: 235_000)]) == nil)
        // Past the hold: the bottom layer, and bob is told it is back; then the top.
        v.now = 2.5
        #expect(allocation(after: []) == v.entry(0))
        #expect(b.sent.last == .object(["type": "track_resumed", "trackId": .string(camera), "reason": "bandwidth"]))
        let top = allocation(after: [.estimate(transport: consumer.transport, bitrate: 3_000_000)])
        #expect(
            top
                == TransportAllocation.Entry(
                    consumer: consumer.id, ceiling: VideoLayer(spatial: 2, temporal: 7), paused: false))
    }

    /// New demand on an estimate nothing has challenged (the camera's layers grew, as a publisher's
    /// encoder ramps up or a share starts beside it) keeps the layer: a reason to probe, not to step
    /// down; a probe's higher estimate takes it up at once. A congestion signal (the path known narrow)
    /// does step it down.
    @Test func newDemandOnAnUnchallengedEstimateKeepsTheLayer() throws {
        let v = try Viewer()
        let cheap = v.cameraLayers(middle: 500, top: 1500)
        let dear = v.cameraLayers(middle: 800, top: 2000)
        #expect(v.allocation(after: [cheap, v.estimate(700_000)]) == v.entry(1))
        v.now = 1
        #expect(v.allocation(after: [dear, v.estimate(700_000)]) == v.entry(1), "kept on the middle layer")
        v.now = 1.2
        #expect(v.allocation(after: [v.estimate(3_000_000)]) == v.entry(2), "a probe's estimate: up at once")
        v.now = 2
        #expect(v.allocation(after: [v.estimate(1_000_000)]) == v.entry(1), "the estimate fell")
        v.now = 3
        #expect(v.allocation(after: [v.estimate(1_900_000)]) == nil, "held after a fall")
        v.now = 20
        #expect(v.allocation(after: [v.estimate(2_500_000)]) == v.entry(2))
        v.now = 21
        let more = v.allocation(after: [v.cameraLayers(middle: 800, top: 3000)])
        #expect(more == nil || more == v.entry(2), "more demand than the estimate: kept on the top layer")
        #expect(v.allocation(after: [v.bottleneck(true)]) == v.entry(1), "the path proved narrow: down")
    }

    /// A hold after a step down ends early when the estimate is twice what it was then (a probe found
    /// the limit lifted): back at the top at once instead of after the hold's seconds.
    @Test func aHoldEndsWhenTheLinkOpensFarWider() throws {
        let v = try Viewer()
        let layers = v.cameraLayers(middle: 500, top: 1500)
        #expect(v.allocation(after: [layers, v.estimate(3_000_000)]) == v.entry(2))
        v.now = 1
        #expect(v.allocation(after: [v.estimate(1_000_000)]) == v.entry(1), "the link narrowed")
        v.now = 1.5
        #expect(v.allocation(after: [v.estimate(1_900_000)]) == nil, "held: the top fits, but under twice 1 Mbit/s")
        v.now = 2
        #expect(v.allocation(after: [v.estimate(2_000_000)]) == v.entry(2), "twice it: the hold ends")
    }

    /// A step down soon after a step up with the estimate where it was (on a path known to be narrow, the
    /// layer just chosen ramped up past what it cost when chosen, as a publisher's encoding turned on
    /// again does) is held only 2 s, not the doubled hold of a link that narrowed again and again.
    @Test func aFlapFromNewDemandIsHeldBrieflyWithoutDoubling() throws {
        let v = try Viewer()
        let cheap = v.cameraLayers(middle: 500, top: 1500)
        let dear = v.cameraLayers(middle: 800, top: 3500)
        #expect(v.allocation(after: [cheap, v.estimate(1_900_000)]) == v.entry(2))
        v.now = 1
        #expect(v.allocation(after: [v.estimate(1_000_000)]) == v.entry(1), "narrowed: held 2 s")
        v.now = 3.2
        #expect(v.allocation(after: [v.estimate(1_900_000)]) == v.entry(2))
        v.now = 4
        #expect(v.allocation(after: [v.estimate(1_000_000)]) == v.entry(1), "narrowed again soon: held 4 s")
        v.now = 8.1
        #expect(v.allocation(after: [v.estimate(1_900_000)]) == v.entry(2))
        v.now = 9
        #expect(
            v.allocation(after: [dear, v.bottleneck(true), v.estimate(1_900_000)]) == v.entry(1),
            "new demand on a narrow path, soon after a step up")
        v.now = 10.5
        #expect(v.allocation(after: [cheap]) == v.entry(1), "held 2 s")
        v.now = 11.1
        #expect(v.allocation(after: []) == v.entry(2), "not 8 s")
    }

    /// A stream's measured temporal layers become the allocator's choices: each lower temporal layer
    /// with its rate and frame rate, then the whole stream (temporal 7); none while it does not arrive.
    @Test(
        arguments: [
            ([], true, [(7, 600_000.0, 30.0)]),
            (
                [(150_000.0, 8), (300_000, 15), (600_000, 30)], true,
                [(0, 150_000, 8), (1, 300_000, 15), (7, 600_000, 30)]
            ),
            ([(150_000.0, 8), (300_000, 15), (600_000, 30)], false, [(7, 600_000, 30)]),
        ] as [([(Double, Int)], Bool, [(Int, Double, Double)])])
    func temporalLayersBecomeChoices(
        _ temporal: [(Double, Int)], _ arriving: Bool, _ expected: [(Int, Double, Double)]
    ) {
        let s = LayerStats(
            bitrate: arriving ? 600_000 : 0, lastBitrate: 600_000, width: 1280, height: 720, framesPerSecond: 30,
            arriving: arriving, temporal: temporal.map { TemporalLayerStats(bitrate: $0.0, framesPerSecond: $0.1) })
        let layers = MediaCoordinator.allocatorLayers(spatial: 2, s)
        #expect(layers.map(\.temporal) == expected.map(\.0))
        #expect(layers.map(\.bitrate) == expected.map(\.1))
        #expect(layers.map(\.framesPerSecond) == expected.map(\.2))
        #expect(layers.allSatisfy { $0.spatial == 2 && $0.width == 1280 })
    }
}

/// A track whose media the room lost with the node that received it (an edge of a room spread over
/// nodes) is unpublished on its publisher's behalf: everyone hears `track_unpublished` with
/// `connection_lost` (its capture may live on), and the publisher publishes it again; nobody else
/// may say that reason. A camera that merely ended (`inactive`)
/// stays published.
@Suite struct NodeLostTrackTests {
    @Test func aCameraWhoseNodeWasLostIsUnpublished() throws {
        let v = try MediaAllocationTests.Viewer()
        v.w.send(v.a, ["type": "unpublish", "id": .int(40), "trackId": .string(v.camera), "reason": "connection_lost"])
        let refused = v.a.sent.last { $0["type"] == .string("error") }
        #expect(refused?["error"]?["code"] == .string("invalid_field"))
        v.w.plane.queued = [.producerEnded(id: v.camera, reason: .inactive)]
        v.w.endpoint.drainMedia()
        #expect(!v.b.sent.contains { $0["type"] == .string("track_unpublished") })
        v.w.plane.queued = [.producerEnded(id: v.camera, reason: .nodeLost)]
        v.w.endpoint.drainMedia()
        for c in [v.a, v.b] {
            let gone = c.sent.last { $0["type"] == .string("track_unpublished") }
            #expect(gone?["trackId"] == .string(v.camera) && gone?["reason"] == .string("connection_lost"))
        }
        #expect(v.w.plane.take().contains { if case .closeConsumer = $0 { true } else { false } })
    }
}
