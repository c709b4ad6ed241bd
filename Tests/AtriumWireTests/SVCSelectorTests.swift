import Testing

@testable import AtriumForwarding

/// The VP9 payload descriptor and the SVC selector as tables: descriptors built from RFC 9628's
/// layout, and an L3T3_KEY stream (one picture = up to three spatial layer frames) decided packet by
/// packet for viewers at different targets.
@Suite struct SVCSelectorTests {
    // MARK: - Descriptor

    @Test(
        arguments: [
            // I P L F B E V Z | M PID PID | TID U SID D | TL0PICIDX
            ([0xA8, 0x80 | 0x12, 0x34, 0x00, 0x07] as [UInt8], 0x1234, 0, 0, false, true, false, 7, 5),
            // Predicted, end of frame, TID 2 U, SID 1 D.
            ([0xE4, 0x05, 0x53, 0x09] as [UInt8], 5, 2, 1, true, false, true, 9, 4),
            // Without I: no picture ID.
            ([0x2C, 0x55, 0x01] as [UInt8], -1, 2, 2, true, true, true, 1, 3),
        ] as [([UInt8], Int, UInt8, UInt8, Bool, Bool, Bool, UInt8, Int)])
    func descriptorFields(
        _ bytes: [UInt8], _ picture: Int, _ tid: UInt8, _ sid: UInt8, _ up: Bool, _ start: Bool, _ end: Bool,
        _ tl0: UInt8, _ length: Int
    ) throws {
        let d = try #require(VP9Descriptor(bytes))
        #expect(d.pictureID.map(Int.init) ?? -1 == picture)
        #expect(d.temporalLayer == tid && d.spatialLayer == sid && d.switchingUp == up)
        #expect(d.startOfFrame == start && d.endOfFrame == end)
        #expect(d.tl0PictureIndex == tl0)
        #expect(d.length == length)
    }

    @Test func flexibleModeReferencesAndTruncationNeverTrap() throws {
        // F and P: up to three P_DIFF bytes, N set while another follows.
        let flexible = try #require(VP9Descriptor([0xF8, 0x01, 0x20, 0x03, 0x05, 0x04]))
        #expect(flexible.length == 6 && flexible.tl0PictureIndex == nil && flexible.temporalLayer == 1)
        #expect(VP9Descriptor([0xF8, 0x01, 0x20, 0x03, 0x03, 0x03, 0x03]) == nil, "a fourth reference")
        for bytes: [UInt8] in [[], [0x80], [0x80, 0x80], [0x20], [0x20, 0x00], [0x02]] {
            #expect(VP9Descriptor(bytes) == nil, "\(bytes)")
        }
    }

    @Test func scalabilityStructureGivesTheLayerSizes() throws {
        // V, then N_S = 2 (three layers), Y: 320x180, 640x360, 1280x720.
        let bytes: [UInt8] = [
            0x0A, 0x50, 0x01, 0x40, 0x00, 0xB4, 0x02, 0x80, 0x01, 0x68, 0x05, 0x00, 0x02, 0xD0,
        ]
        let d = try #require(VP9Descriptor(bytes))
        let at = try #require(d.scalabilityOffset)
        let sizes = bytes.withUnsafeBytes { VP9Scalability.layers($0, at: at) }
        #expect(
            sizes == [
                LayerChoice.Size(width: 320, height: 180), LayerChoice.Size(width: 640, height: 360),
                LayerChoice.Size(width: 1280, height: 720),
            ])
        let truncated = Array(bytes.dropLast())
        #expect(truncated.withUnsafeBytes { VP9Scalability.layers($0, at: at) } == nil)
        let countOnly: [UInt8] = [0x0A, 0x20]
        #expect(countOnly.withUnsafeBytes { VP9Scalability.layers($0, at: 1) }?.count == 2)
    }

    // MARK: - Selector

    /// One layer frame in one packet: its spatial and temporal layer, key picture, U bit.
    struct Frame: CustomStringConvertible {
        var spatial: Int
        var temporal: Int
        var key = false
        var up = false
        var expect: SVCSelector.Decision
        var description: String { "S\(spatial)T\(temporal)\(key ? "K" : "") -> \(expect)" }
    }

    static func f(_ s: Int, _ t: Int, key: Bool = false, up: Bool = false, _ e: SVCSelector.Decision) -> Frame {
        Frame(spatial: s, temporal: t, key: key, up: up, expect: e)
    }

    static let ends = SVCSelector.Decision.forward(endsPicture: true)
    static let fwd = SVCSelector.Decision.forward(endsPicture: false)
    static let waiting = SVCSelector.Decision.drop(.waitingKeyFrame)
    static let above = SVCSelector.Decision.drop(.aboveTarget)

    static func run(_ s: inout SVCSelector, _ frames: [Frame], sourceLocation: SourceLocation = #_sourceLocation) {
        for (i, fr) in frames.enumerated() {
            let d = s.decide(
                spatial: fr.spatial, temporal: fr.temporal, pictureStart: fr.spatial == 0, keyPicture: fr.key,
                switchingUp: fr.up, endOfFrame: true)
            #expect(d == fr.expect, "frame \(i): \(fr), got \(d)", sourceLocation: sourceLocation)
        }
    }

    static let all = 7

    @Test(
        arguments: [
            // A low viewer gets the bottom layer of each picture, marked as the picture's end.
            (
                "bottom layer", 0,
                [
                    f(0, 0, waiting), f(1, 0, waiting), f(0, 0, key: true, ends), f(1, 0, key: true, above),
                    f(2, 0, key: true, above), f(0, 2, ends), f(1, 2, above), f(2, 2, above),
                ]
            ),
            // A high viewer gets every layer; only the top one ends the picture.
            (
                "all layers", 2,
                [
                    f(0, 0, key: true, fwd), f(1, 0, key: true, fwd), f(2, 0, key: true, ends), f(0, 1, fwd),
                    f(1, 1, fwd), f(2, 1, ends),
                ]
            ),
            // A middle viewer when the top layer stops: the middle one ends the picture.
            (
                "middle", 1,
                [
                    f(0, 0, key: true, fwd), f(1, 0, key: true, ends), f(2, 0, key: true, above), f(0, 2, fwd),
                    f(1, 2, ends),
                ]
            ),
        ] as [(String, Int, [Frame])])
    func layersForATarget(_ name: String, _ spatial: Int, _ frames: [Frame]) {
        var s = SVCSelector(target: VideoLayer(spatial: spatial, temporal: Self.all))
        Self.run(&s, frames)
    }

    @Test func spatialUpWaitsForAKeyPictureDownDoesNot() {
        var s = SVCSelector(target: VideoLayer(spatial: 0, temporal: Self.all))
        Self.run(&s, [Self.f(0, 0, key: true, Self.ends), Self.f(1, 0, key: true, Self.above)])
        let needsKey = s.select(desired: VideoLayer(spatial: 2, temporal: Self.all), spatialLayers: 3)
        #expect(needsKey)
        // No freeze: the bottom layer goes on until the key picture.
        Self.run(&s, [Self.f(0, 1, Self.ends), Self.f(1, 1, Self.above), Self.f(2, 1, Self.above)])
        Self.run(
            &s,
            [Self.f(0, 0, key: true, Self.fwd), Self.f(1, 0, key: true, Self.fwd), Self.f(2, 0, key: true, Self.ends)])
        let downNeedsKey = s.select(desired: VideoLayer(spatial: 1, temporal: Self.all), spatialLayers: 3)
        #expect(!downNeedsKey)
        Self.run(&s, [Self.f(0, 2, Self.fwd), Self.f(1, 2, Self.ends), Self.f(2, 2, Self.above)])
    }

    @Test func aTargetIsClampedToTheLayersTheStreamHas() {
        var s = SVCSelector(target: VideoLayer(spatial: 0, temporal: Self.all))
        _ = s.select(desired: VideoLayer(spatial: 2, temporal: Self.all), spatialLayers: 1)
        #expect(s.target.spatial == 0)
        _ = s.select(desired: VideoLayer(spatial: 2, temporal: Self.all), spatialLayers: 0)
        #expect(s.target.spatial == 2, "unknown layer count: as asked")
    }

    @Test func temporalDownAtAnyPictureUpAtABaseOrSwitchingPoint() {
        var s = SVCSelector(target: VideoLayer(spatial: 0, temporal: Self.all))
        Self.run(&s, [Self.f(0, 0, key: true, Self.ends), Self.f(0, 2, Self.ends)])
        _ = s.select(desired: VideoLayer(spatial: 0, temporal: 0), spatialLayers: 1)
        Self.run(&s, [Self.f(0, 1, Self.above), Self.f(0, 2, Self.above), Self.f(0, 0, Self.ends)])
        _ = s.select(desired: VideoLayer(spatial: 0, temporal: 2), spatialLayers: 1)
        Self.run(
            &s,
            [
                Self.f(0, 2, Self.above), Self.f(0, 1, up: true, Self.ends), Self.f(0, 2, Self.ends),
                Self.f(0, 0, Self.ends),
            ])
    }

    @Test func aRestartWaitsForTheNextKeyPicture() {
        var s = SVCSelector(target: VideoLayer(spatial: 1, temporal: Self.all))
        Self.run(&s, [Self.f(0, 0, key: true, Self.fwd), Self.f(1, 0, key: true, Self.ends)])
        s.restart()
        Self.run(
            &s,
            [
                Self.f(0, 1, Self.waiting), Self.f(1, 1, Self.waiting), Self.f(0, 0, key: true, Self.fwd),
                Self.f(1, 0, key: true, Self.ends),
            ])
    }
}
