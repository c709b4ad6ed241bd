import Testing

@testable import AtriumCongestion

/// The allocation rules as tables: an estimate and the tracks a viewer receives in, the layer (or
/// pause) of each out.
@Suite struct AllocatorTests {
    typealias L = Allocator.Layer

    /// A camera in three simulcast layers (one temporal layer each).
    static func camera(_ id: String, speaker: Bool = false, ceiling: Int = .max) -> Allocator.Track {
        Allocator.Track(
            id: id, kind: .camera,
            layers: [
                L(spatial: 0, temporal: 0, bitrate: 150_000, width: 320, height: 180, framesPerSecond: 30),
                L(spatial: 1, temporal: 0, bitrate: 500_000, width: 640, height: 360, framesPerSecond: 30),
                L(spatial: 2, temporal: 0, bitrate: 1_500_000, width: 1280, height: 720, framesPerSecond: 30),
            ], ceiling: ceiling, activeSpeaker: speaker)
    }

    /// A screen share as the SDK publishes it: full resolution at 5 fps and at 30 fps.
    static let share = Allocator.Track(
        id: "share", kind: .screenShare,
        layers: [
            L(spatial: 0, temporal: 0, bitrate: 400_000, width: 1920, height: 1080, framesPerSecond: 5),
            L(spatial: 1, temporal: 0, bitrate: 2_000_000, width: 1920, height: 1080, framesPerSecond: 30),
        ], onStage: true)
    static let mic = Allocator.Track(id: "mic", kind: .audio, bitrate: 40_000)

    @Test(
        arguments: [
            // Plenty: everything at the top.
            (
                5_000_000, [mic, share, camera("a", speaker: true)],
                ["mic": .audio, "share": .layer(spatial: 1, temporal: 0), "a": .layer(spatial: 2, temporal: 0)]
            ),
            // 2.5 Mbit/s: the share at full rate, the speaker's camera in the 460 kbit/s left.
            (
                2_500_000, [mic, share, camera("a", speaker: true)],
                ["mic": .audio, "share": .layer(spatial: 1, temporal: 0), "a": .layer(spatial: 0, temporal: 0)]
            ),
            // 500 kbit/s: the share keeps its resolution at 5 fps; the camera is paused.
            (
                500_000, [mic, share, camera("a", speaker: true)],
                ["mic": .audio, "share": .layer(spatial: 0, temporal: 0), "a": .paused]
            ),
            // 250 kbit/s: below the share's floor, which it keeps anyway; cameras paused.
            (
                250_000, [mic, share, camera("a"), camera("b")],
                ["mic": .audio, "share": .layer(spatial: 0, temporal: 0), "a": .paused, "b": .paused]
            ),
            // No share: the active speaker before the others, whatever their order.
            (
                900_000, [mic, camera("a"), camera("b", speaker: true)],
                ["mic": .audio, "b": .layer(spatial: 1, temporal: 0), "a": .layer(spatial: 0, temporal: 0)]
            ),
            // A viewer's quality is a ceiling, not a promise.
            (5_000_000, [camera("a", ceiling: 0)], ["a": .layer(spatial: 0, temporal: 0)]),
            (100_000, [camera("a", ceiling: 2)], ["a": .paused]),
        ] as [(Double, [Allocator.Track], [String: Allocator.Choice])])
    func allocations(_ estimate: Double, _ tracks: [Allocator.Track], _ expected: [String: Allocator.Choice]) {
        let result = Allocator.allocate(estimate: estimate, tracks: tracks)
        #expect(result.choices == expected, "at \(Int(estimate / 1000)) kbit/s")
    }

    @Test func theShareFloorIsTheOnlyThingAllowedPastTheEstimate() {
        let r = Allocator.allocate(estimate: 250_000, tracks: [Self.mic, Self.share, Self.camera("a")])
        #expect(r.allocated == 440_000)
        let fits = Allocator.allocate(estimate: 900_000, tracks: [Self.mic, Self.camera("a"), Self.camera("b")])
        #expect(fits.allocated <= 900_000)
    }

    static func held(_ current: Allocator.Choice?, mayGoUp: Bool = true) -> Allocator.Track {
        var t = camera("a")
        t.current = current
        t.mayGoUp = mayGoUp
        return t
    }

    /// Hysteresis: (estimate, the camera's current choice, whether it may go up, expected).
    @Test(
        arguments: [
            // 190 kbit/s fits the bottom layer (150k) after audio from nothing, but not a resume (180k).
            (190_000, nil, true, Allocator.Choice.layer(spatial: 0, temporal: 0)),
            (190_000, .paused, true, .paused),
            (240_000, .paused, true, .layer(spatial: 0, temporal: 0)),
            // Going up a layer needs a fifth more than the layer; staying needs only the layer.
            (600_000, .layer(spatial: 0, temporal: 0), true, .layer(spatial: 0, temporal: 0)),
            (600_000, .layer(spatial: 1, temporal: 0), true, .layer(spatial: 1, temporal: 0)),
            (700_000, .layer(spatial: 0, temporal: 0), true, .layer(spatial: 1, temporal: 0)),
            // Held after a step down: it keeps what it has, or goes lower, never higher.
            (5_000_000, .layer(spatial: 0, temporal: 0), false, .layer(spatial: 0, temporal: 0)),
            (5_000_000, .paused, false, .paused),
            (100_000, .layer(spatial: 1, temporal: 0), false, .paused),
        ] as [(Double, Allocator.Choice?, Bool, Allocator.Choice)])
    func aStepUpNeedsMoreRoomAndWaitsOutAHold(
        _ estimate: Double, _ current: Allocator.Choice?, _ mayGoUp: Bool, _ expected: Allocator.Choice
    ) {
        let r = Allocator.allocate(estimate: estimate, tracks: [Self.mic, Self.held(current, mayGoUp: mayGoUp)])
        #expect(r.choices["a"] == expected, "at \(Int(estimate / 1000)) kbit/s from \(String(describing: current))")
    }

    /// A step up pays its key frame: 150 kbit/s with a 6 kB key frame needs 150 + 96 kbit/s (the key
    /// frame drained within half a second), more than the fifth more.
    @Test func aStepUpNeedsRoomForItsKeyFrame() {
        var cam = Self.held(.paused)
        cam.layers[0].keyFrameBits = 48_000
        #expect(Allocator.upCost(cam.layers[0]) == 246_000)
        let short = Allocator.allocate(estimate: 40_000 + 240_000, tracks: [Self.mic, cam])
        #expect(short.choices["a"] == .paused)
        let room = Allocator.allocate(estimate: 40_000 + 247_000, tracks: [Self.mic, cam])
        #expect(room.choices["a"] == .layer(spatial: 0, temporal: 0))
        // Staying costs only the rate.
        cam.current = .layer(spatial: 0, temporal: 0)
        #expect(Allocator.allocate(estimate: 40_000 + 150_000, tracks: [Self.mic, cam]).choices["a"] == cam.current)
        #expect(abs(room.needed - (40_000 + 1_500_000 * 1.2)) < 1)
    }

    /// A screen share whose full-size stream arrives in three temporal layers (7.5, 15, 30 fps) beside a
    /// full-size 5 fps stream (whose own base layer, 2.5 fps, is below the floor) and a half-size one.
    static let layeredShare = Allocator.Track(
        id: "share", kind: .screenShare,
        layers: [
            L(spatial: 0, temporal: 7, bitrate: 250_000, width: 960, height: 540, framesPerSecond: 30),
            L(spatial: 1, temporal: 0, bitrate: 200_000, width: 1920, height: 1080, framesPerSecond: 2.5),
            L(spatial: 1, temporal: 7, bitrate: 300_000, width: 1920, height: 1080, framesPerSecond: 5),
            L(spatial: 2, temporal: 0, bitrate: 600_000, width: 1920, height: 1080, framesPerSecond: 7.5),
            L(spatial: 2, temporal: 1, bitrate: 1_000_000, width: 1920, height: 1080, framesPerSecond: 15),
            L(spatial: 2, temporal: 7, bitrate: 1_500_000, width: 1920, height: 1080, framesPerSecond: 30),
        ], onStage: true)

    /// A camera whose streams arrive in temporal layers: it drops resolution, never frame rate.
    static let layeredCamera = Allocator.Track(
        id: "a", kind: .camera,
        layers: [
            L(spatial: 0, temporal: 0, bitrate: 60_000, width: 320, height: 180, framesPerSecond: 7.5),
            L(spatial: 0, temporal: 7, bitrate: 150_000, width: 320, height: 180, framesPerSecond: 30),
            L(spatial: 1, temporal: 0, bitrate: 250_000, width: 640, height: 360, framesPerSecond: 7.5),
            L(spatial: 1, temporal: 7, bitrate: 500_000, width: 640, height: 360, framesPerSecond: 30),
        ])

    /// Resolution first for the share, in temporal layers: (estimate, the share's choice, the
    /// camera's). The share's full-size stream loses its temporal layers one by one, then the full-size
    /// 5 fps stream, then (only) the half size; the camera steps down whole streams or pauses.
    @Test(
        arguments: [
            (
                5_000_000, Allocator.Choice.layer(spatial: 2, temporal: 7),
                Allocator.Choice.layer(spatial: 1, temporal: 7)
            ),
            (2_000_000, .layer(spatial: 2, temporal: 7), .layer(spatial: 0, temporal: 7)),
            (1_500_000, .layer(spatial: 2, temporal: 1), .layer(spatial: 0, temporal: 7)),
            (1_100_000, .layer(spatial: 2, temporal: 1), .paused),
            (700_000, .layer(spatial: 2, temporal: 0), .paused),
            (600_000, .layer(spatial: 1, temporal: 7), .layer(spatial: 0, temporal: 7)),
            (400_000, .layer(spatial: 1, temporal: 7), .paused),
            (320_000, .layer(spatial: 0, temporal: 7), .paused),
            // Below everything: the share keeps its cheapest choice offered (the 2.5 fps base layer is not).
            (100_000, .layer(spatial: 0, temporal: 7), .paused),
        ] as [(Double, Allocator.Choice, Allocator.Choice)])
    func aShareDropsTemporalLayersBeforeResolution(
        _ estimate: Double, _ share: Allocator.Choice, _ camera: Allocator.Choice
    ) {
        let r = Allocator.allocate(estimate: estimate, tracks: [Self.mic, Self.layeredShare, Self.layeredCamera])
        #expect(r.choices["share"] == share, "share at \(Int(estimate / 1000)) kbit/s")
        #expect(r.choices["a"] == camera, "camera at \(Int(estimate / 1000)) kbit/s")
    }

    /// More temporal layers of the stream a track has needs no key frame (a sync point will do): only
    /// the fifth more. Another stream needs its key frame's room.
    @Test func aTemporalStepUpPaysNoKeyFrame() {
        var share = Self.layeredShare
        for i in share.layers.indices { share.layers[i].keyFrameBits = 400_000 }
        share.current = .layer(spatial: 2, temporal: 0)
        // 1.0 Mbit/s * 1.2 after the audio: temporal layer 1 fits.
        let up = Allocator.allocate(estimate: 40_000 + 1_210_000, tracks: [Self.mic, share])
        #expect(up.choices["share"] == .layer(spatial: 2, temporal: 1))
        // From the 5 fps stream the same estimate does not carry the switch and its key frame.
        share.current = .layer(spatial: 1, temporal: 7)
        let across = Allocator.allocate(estimate: 40_000 + 1_210_000, tracks: [Self.mic, share])
        #expect(across.choices["share"] == .layer(spatial: 1, temporal: 7))
    }

    @Test func wantedIsWhatTheTracksWouldTakeUnderTheirCeilings() {
        let r = Allocator.allocate(estimate: 100_000, tracks: [Self.mic, Self.share, Self.camera("a", ceiling: 1)])
        #expect(r.wanted == 40_000 + 2_000_000 + 500_000)
    }

    /// Without a congestion signal a track keeps the layer it has, even when the estimate no longer
    /// covers it (the layer's rate grew: a reason to probe); with one it steps down to what fits. A
    /// layer the viewer no longer asks for (above its ceiling) is never kept, and nothing goes up
    /// past the estimate.
    @Test(
        arguments: [
            (false, Int.max, Allocator.Choice.layer(spatial: 2, temporal: 0)),
            (true, Int.max, .layer(spatial: 1, temporal: 0)),
            (false, 1, .layer(spatial: 1, temporal: 0)),
        ])
    func aLayerIsKeptUnlessTheLinkGaveACongestionSignal(congested: Bool, ceiling: Int, expected: Allocator.Choice) {
        var cam = Self.camera("a", ceiling: ceiling)
        cam.layers[2].bitrate = 2_600_000
        cam.current = .layer(spatial: 2, temporal: 0)
        let r = Allocator.allocate(estimate: 1_000_000, tracks: [Self.mic, cam], congested: congested)
        #expect(r.choices["a"] == expected)
        let given: Double = expected == .layer(spatial: 2, temporal: 0) ? 2_600_000 : 500_000
        #expect(r.allocated == 40_000 + given)
        // From a lower layer, no step up past the estimate either way.
        cam.current = .layer(spatial: 0, temporal: 0)
        let up = Allocator.allocate(estimate: 1_000_000, tracks: [Self.mic, cam], congested: congested)
        #expect(up.choices["a"] == .layer(spatial: 1, temporal: 0))
    }
}
