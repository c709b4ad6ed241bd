import Testing

@testable import AtriumForwarding

/// The layer selector as tables: each row is a packet (stream, temporal layer, key frame, frame start,
/// layer sync) and the decision expected for it, after an optional change of target.
@Suite struct LayerSelectorTests {
    struct Packet: Sendable, CustomStringConvertible {
        var spatial: Int
        var temporal: Int?
        var key = false
        var start = true
        var sync = false
        var expect: LayerSelector.Decision
        var description: String { "S\(spatial)T\(temporal ?? -1)\(key ? "K" : "")\(sync ? "Y" : "") -> \(expect)" }
    }

    static func p(
        _ s: Int, _ t: Int?, key: Bool = false, start: Bool = true, sync: Bool = false,
        _ expect: LayerSelector.Decision
    ) -> Packet {
        Packet(spatial: s, temporal: t, key: key, start: start, sync: sync, expect: expect)
    }

    static let fwd = LayerSelector.Decision.forward(switched: false)
    static let switched = LayerSelector.Decision.forward(switched: true)
    static let waiting = LayerSelector.Decision.drop(.waitingKeyFrame)
    static let other = LayerSelector.Decision.drop(.otherStream)
    static let above = LayerSelector.Decision.drop(.temporalAboveTarget)

    static func run(_ selector: inout LayerSelector, _ packets: [Packet]) {
        for (i, packet) in packets.enumerated() {
            let d = selector.decide(
                spatial: packet.spatial, temporal: packet.temporal, keyFrame: packet.key,
                frameStart: packet.start, layerSync: packet.sync)
            #expect(d == packet.expect, "packet \(i): \(packet), got \(d)")
        }
    }

    static let rows: [(String, VideoLayer, [Packet])] = [
        (
            "starts on the target's key frame, drops deltas before it and other streams",
            VideoLayer(spatial: 1, temporal: 2),
            [
                p(1, 0, waiting), p(2, 0, key: true, waiting), p(1, 0, key: true, switched), p(1, 1, fwd),
                p(0, 0, key: true, other), p(2, 0, other), p(1, 2, fwd),
            ]
        ),
        (
            "starts on a lower stream's key frame when it comes first",
            VideoLayer(spatial: 2, temporal: 2),
            [
                p(0, 0, key: true, switched), p(0, 1, fwd), p(1, 0, key: true, switched), p(0, 0, other),
                p(1, 0, fwd), p(2, 0, other), p(2, 0, key: true, switched), p(1, 0, other),
            ]
        ),
        (
            "temporal layers above the target are dropped",
            VideoLayer(spatial: 0, temporal: 0),
            [
                p(0, 0, key: true, switched), p(0, 2, above), p(0, 1, above), p(0, 0, fwd),
                p(0, 2, start: false, above), p(0, nil, fwd),
            ]
        ),
        (
            "no temporal layer in the payload counts as the base layer",
            VideoLayer(spatial: 0, temporal: 0),
            [p(0, nil, key: true, switched), p(0, nil, fwd), p(0, nil, start: false, fwd)]
        ),
    ]

    @Test(arguments: rows.indices) func table(_ row: Int) {
        let (_, target, packets) = Self.rows[row]
        var selector = LayerSelector(target: target)
        Self.run(&selector, packets)
    }

    @Test func spatialSwitchWaitsForTheTargetsKeyFrameAndNeverFreezes() {
        var s = LayerSelector(target: VideoLayer(spatial: 0, temporal: 2))
        #expect(s.select(desired: VideoLayer(spatial: 0, temporal: 2), available: [0, 1, 2]) == 0)
        Self.run(&s, [Self.p(0, 0, key: true, Self.switched)])
        // Up: the key frame of stream 2 is asked for; stream 0 goes on meanwhile.
        #expect(s.select(desired: VideoLayer(spatial: 2, temporal: 2), available: [0, 1, 2]) == 2)
        Self.run(
            &s,
            [
                Self.p(0, 1, Self.fwd), Self.p(2, 0, Self.other), Self.p(0, 0, Self.fwd),
                Self.p(2, 0, key: true, Self.switched), Self.p(0, 0, Self.other), Self.p(2, 1, Self.fwd),
            ])
        #expect(s.current == VideoLayer(spatial: 2, temporal: 2))
        // Down: also on a key frame of the lower stream.
        #expect(s.select(desired: VideoLayer(spatial: 0, temporal: 2), available: [0, 1, 2]) == 0)
        Self.run(
            &s,
            [
                Self.p(0, 0, Self.other), Self.p(2, 0, Self.fwd), Self.p(0, 0, key: true, Self.switched),
                Self.p(2, 0, key: true, Self.other),
            ])
        #expect(s.select(desired: VideoLayer(spatial: 0, temporal: 2), available: [0, 1, 2]) == nil)
    }

    @Test func aLayerThatStopsArrivingIsReplacedByTheNextDown() {
        var s = LayerSelector(target: VideoLayer(spatial: 2, temporal: 0))
        Self.run(&s, [Self.p(2, 0, key: true, Self.switched)])
        // Stream 2 stopped: the best one left below the wish is the target, and the current one is gone.
        #expect(s.select(desired: VideoLayer(spatial: 2, temporal: 0), available: [0, 1]) == 1)
        #expect(s.current == nil && s.target.spatial == 1)
        Self.run(&s, [Self.p(0, 0, key: true, Self.switched)])
        Self.run(&s, [Self.p(1, 0, key: true, Self.switched)])
        #expect(s.current?.spatial == 1)
        // Only a stream above the wish arrives: the lowest one is used.
        #expect(s.select(desired: VideoLayer(spatial: 0, temporal: 0), available: [2]) == 2)
    }

    /// A bandwidth ceiling holds while the stream under it is missing for a moment: a viewer resumed
    /// at the low stream is not started on a higher one that happens to arrive (on a 250 kbit/s link
    /// a 1280-wide key frame is seconds of loss); it starts once a stream within the ceiling does.
    @Test func aBoundedCeilingNeverStartsAHigherStream() {
        var s = LayerSelector(target: VideoLayer(spatial: 0, temporal: 2))
        #expect(s.select(desired: VideoLayer(spatial: 0, temporal: 2), available: [1, 2], bounded: true) == nil)
        #expect(s.target.spatial == 0)
        Self.run(&s, [Self.p(2, 0, key: true, Self.waiting), Self.p(1, 0, key: true, Self.waiting)])
        #expect(s.current == nil)
        #expect(s.select(desired: VideoLayer(spatial: 0, temporal: 2), available: [0, 1, 2], bounded: true) == 0)
        Self.run(&s, [Self.p(0, 0, key: true, Self.switched)])
        #expect(s.current?.spatial == 0)
    }

    /// A bandwidth ceiling below the stream forwarded leaves it at once: nothing of it is forwarded
    /// while the target's key frame is awaited (it would only deepen the congestion); a ceiling at or
    /// above it, or a preference lowered without a ceiling, keeps it until the key frame.
    @Test func aCeilingBelowTheCurrentStreamLeavesItAtOnce() {
        var s = LayerSelector(target: VideoLayer(spatial: 2, temporal: 2))
        Self.run(&s, [Self.p(2, 0, key: true, Self.switched), Self.p(2, 1, Self.fwd)])
        let atTheTop = s.leave(above: 2)
        #expect(!atTheTop && s.current?.spatial == 2)
        #expect(s.select(desired: VideoLayer(spatial: 0, temporal: 2), available: [0, 1, 2], bounded: true) == 0)
        let left = s.leave(above: 0)
        #expect(left && s.current == nil)
        Self.run(
            &s,
            [
                Self.p(2, 0, Self.waiting), Self.p(2, 0, key: true, Self.waiting),
                Self.p(1, 0, key: true, Self.waiting),
                Self.p(0, 1, Self.waiting), Self.p(0, 0, key: true, Self.switched), Self.p(0, 1, Self.fwd),
                Self.p(2, 0, Self.other),
            ])
        let again = s.leave(above: 0)
        #expect(!again)
        // Lowered by preference (no ceiling): the current stream goes on until the key frame.
        var u = LayerSelector(target: VideoLayer(spatial: 2, temporal: 2))
        Self.run(&u, [Self.p(2, 0, key: true, Self.switched)])
        #expect(u.select(desired: VideoLayer(spatial: 0, temporal: 2), available: [0, 1, 2]) == 0)
        Self.run(&u, [Self.p(2, 0, Self.fwd), Self.p(0, 0, key: true, Self.switched)])
    }

    @Test func temporalUpSwitchesOnlyAtSyncPointsDownAtAnyFrameStart() {
        var s = LayerSelector(target: VideoLayer(spatial: 0, temporal: 0))
        Self.run(&s, [Self.p(0, 0, key: true, Self.switched), Self.p(0, 2, Self.above)])
        _ = s.select(desired: VideoLayer(spatial: 0, temporal: 2), available: [0])
        Self.run(
            &s,
            [
                Self.p(0, 2, Self.above),  // not a sync point: its references were not forwarded
                Self.p(0, 1, sync: true, Self.fwd),  // a sync frame of layer 1: up to 1 only
                Self.p(0, 2, Self.above),
                Self.p(0, 0, Self.fwd),  // a base frame: everything from here on
                Self.p(0, 2, Self.fwd),
                Self.p(0, 1, start: false, Self.fwd),
            ])
        _ = s.select(desired: VideoLayer(spatial: 0, temporal: 1), available: [0])
        // Mid-frame the frame's packets keep their decision; at the next frame start it goes down.
        Self.run(&s, [Self.p(0, 2, start: false, Self.fwd), Self.p(0, 2, Self.above), Self.p(0, 1, Self.fwd)])
    }
}
