import AtriumDTLS
import AtriumForwarding
import AtriumRTP
import Testing

@testable import AtriumMedia

/// Writes bits most significant first (to build dependency descriptors field by field, as the AV1
/// RTP specification's appendix A lays them out).
struct BitWriter {
    var bytes: [UInt8] = []
    var count = 0

    mutating func put(_ value: Int, _ bits: Int) {
        for i in stride(from: bits - 1, through: 0, by: -1) {
            if count % 8 == 0 { bytes.append(0) }
            if (value >> i) & 1 == 1 { bytes[bytes.count - 1] |= UInt8(0x80 >> (count % 8)) }
            count += 1
        }
    }
}

/// The AV1 dependency descriptor as tables, and an AV1 L3T1 publisher (three spatial layers in one
/// stream, told apart by the descriptor) driven through the engine in memory.
@Suite struct AV1EngineTests {
    static let templateOffset = 10

    /// A descriptor: the mandatory fields, and on a key frame the template structure of three
    /// spatial layers (one template each) with their render sizes.
    static func descriptor(spatial: Int, frame: Int, structure: Bool) -> [UInt8] {
        var w = BitWriter()
        w.put(1, 1)  // start_of_frame
        w.put(1, 1)  // end_of_frame
        w.put((templateOffset + spatial) % 64, 6)
        w.put(frame & 0xFFFF, 16)
        guard structure else { return w.bytes }
        w.put(1, 1)  // template_dependency_structure_present_flag
        w.put(0, 4)  // active decode targets, custom dtis, fdiffs, chains
        w.put(templateOffset, 6)
        w.put(2, 5)  // three decode targets
        for idc in [2, 2, 3] { w.put(idc, 2) }  // S0T0, S1T0, S2T0
        for _ in 0..<9 { w.put(2, 2) }  // template_dti
        for _ in 0..<3 { w.put(0, 1) }  // no fdiffs
        w.put(0, 2)  // chain_cnt ns(4) = 0
        w.put(1, 1)  // resolutions
        for (width, height) in [(320, 180), (640, 360), (1280, 720)] {
            w.put(width - 1, 16)
            w.put(height - 1, 16)
        }
        return w.bytes
    }

    @Test func theDescriptorGivesEachFramesLayer() throws {
        let key = try #require(DependencyDescriptor(Self.descriptor(spatial: 0, frame: 7, structure: true)))
        #expect(key.startOfFrame && key.endOfFrame && key.frameNumber == 7)
        let s = try #require(key.structure)
        #expect(s.templates.map(\.spatial) == [0, 1, 2] && s.templates.allSatisfy { $0.temporal == 0 })
        #expect(s.decodeTargets == 3 && s.spatialLayers == 3)
        #expect(s.resolutions.map(\.width) == [320, 640, 1280] && s.resolutions.map(\.height) == [180, 360, 720])
        let delta = try #require(DependencyDescriptor(Self.descriptor(spatial: 2, frame: 8, structure: false)))
        #expect(delta.structure == nil)
        #expect(s.layer(templateID: delta.templateID) == VideoLayer(spatial: 2, temporal: 0))
        #expect(s.layer(templateID: 9) == nil, "below the offset: not a template of this structure")
    }

    @Test func truncatedDescriptorsNeverTrap() {
        let full = Self.descriptor(spatial: 0, frame: 1, structure: true)
        for n in 0..<full.count {
            let d = DependencyDescriptor(Array(full.prefix(n)))
            if n < 3 { #expect(d == nil) } else if n > 3 { #expect(d == nil, "cut at \(n)") }
        }
        // Templates that never end (next_layer_idc never 3) stop at 64.
        var w = BitWriter()
        w.put(0xC0, 8)
        w.put(0, 16)
        w.put(0b10000, 5)
        w.put(0, 6)
        w.put(0, 5)
        for _ in 0..<70 { w.put(0, 2) }
        #expect(DependencyDescriptor(w.bytes) == nil)
    }

    final class Room {
        let media: EmbeddedMedia
        let publisher: EmbeddedPeer
        let viewers: [EmbeddedPeer]
        var frame = 0
        var sequence: UInt16 = 10

        init() throws {
            media = try EmbeddedMedia()
            let fp = media.engine.certificate.fingerprint
            publisher = try EmbeddedPeer(port: 42_000, transport: "pub", serverFingerprint: fp)
            viewers = try (1...2).map {
                try EmbeddedPeer(port: 42_000 + UInt16($0), transport: "sub\($0)", serverFingerprint: fp)
            }
            try publisher.connect(to: media, midExtensionID: 1)
            for v in viewers { try v.connect(to: media) }
            media.apply(
                .addProducer(
                    ProducerSpec(
                        id: "cam", transport: "pub", mid: "0", source: "camera", kind: .video, videoCodec: "AV1",
                        clockRate: 90_000, payloadType: 45, rtxPayloadType: nil, ssrc: 8888, rtxSSRC: nil,
                        audioLevelID: nil, absSendTimeID: nil, paused: false, dependencyDescriptorID: 5)))
            for (i, quality) in [LayerChoice.Quality.low, .high].enumerated() {
                media.apply(
                    .addConsumer(
                        ConsumerSpec(
                            id: "c\(i + 1)", producer: "cam", transport: "sub\(i + 1)", ssrc: 4000 + UInt32(i),
                            rtxSSRC: nil, payloadType: 45, rtxPayloadType: nil, nack: true, audioLevelID: nil,
                            absSendTimeID: nil, preference: LayerPreference(quality: quality),
                            dependencyDescriptorID: 3)))
            }
        }

        /// One temporal unit: a one-packet frame per spatial layer, the structure on a key unit's first.
        func sendUnit(key: Bool = false) throws {
            for sid in 0..<3 {
                let payload = [key && sid == 0 ? 0x18 : 0x10] + [UInt8](repeating: 0xC0 + UInt8(sid), count: 16)
                try publisher.send(
                    rtp: RTPPacketWriter.packet(
                        payloadType: 45, sequenceNumber: sequence, timestamp: UInt32(frame) * 3000, ssrc: 8888,
                        marker: sid == 2,
                        extensions: [
                            RTPHeaderExtensionElement(
                                id: 5,
                                value: AV1EngineTests.descriptor(
                                    spatial: sid, frame: frame * 3 + sid, structure: key && sid == 0))
                        ], payload: payload), to: media)
                sequence &+= 1
            }
            frame += 1
            media.advance(by: 1.0 / 30)
            for v in viewers { try v.receive(from: media) }
        }
    }

    @Test func eachViewerGetsItsSpatialLayersWithTheDescriptorForwarded() throws {
        let room = try Room()
        try room.sendUnit()  // before the structure: no layer is known, nothing starts
        try room.sendUnit(key: true)
        for _ in 0..<5 { try room.sendUnit() }
        for (v, layers) in zip(room.viewers, [[0], [0, 1, 2]]) {
            var got: [Int] = []
            var markers: [Bool] = []
            for p in v.rtp {
                let h = try RTPHeader(parsing: p)
                got.append(Int(p[h.payloadRange.upperBound - 1]) - 0xC0)
                markers.append(h.marker)
                let ext = try h.extensionElements(in: p)
                #expect(ext.map(\.id) == [3], "the descriptor goes on, renumbered to the viewer's id")
            }
            #expect(got == [Int]((0..<6).flatMap { _ in layers }))
            #expect(markers == [Bool]((0..<6).flatMap { _ in layers.map { $0 == layers.last } }))
        }
    }
}
