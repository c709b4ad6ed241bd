import AtriumDTLS
import AtriumForwarding
import AtriumRTP
import Testing

@testable import AtriumMedia

/// A VP9 L3T3_KEY publisher (one RTP stream, three spatial layers per picture) and viewers at low and
/// high quality, driven through the engine in memory: each gets its layers as one decodable stream,
/// with the marker bit on the last packet it gets of each picture, and switches up at a key picture.
@Suite struct SVCEngineTests {
    final class Room {
        let media: EmbeddedMedia
        let publisher: EmbeddedPeer
        let viewers: [EmbeddedPeer]
        var picture = 0
        var sequence: UInt16 = 60_000

        init() throws {
            media = try EmbeddedMedia()
            let fp = media.engine.certificate.fingerprint
            publisher = try EmbeddedPeer(port: 41_000, transport: "pub", serverFingerprint: fp)
            viewers = try (1...2).map {
                try EmbeddedPeer(port: 41_000 + UInt16($0), transport: "sub\($0)", serverFingerprint: fp)
            }
            try publisher.connect(to: media, midExtensionID: 1)
            for v in viewers { try v.connect(to: media) }
            media.apply(
                .addProducer(
                    ProducerSpec(
                        id: "cam", transport: "pub", mid: "0", source: "camera", kind: .video, videoCodec: "VP9",
                        clockRate: 90_000, payloadType: 98, rtxPayloadType: nil, ssrc: 7777, rtxSSRC: nil,
                        audioLevelID: nil, absSendTimeID: nil, paused: false)))
            for (i, quality) in [LayerChoice.Quality.low, .high].enumerated() {
                media.apply(
                    .addConsumer(
                        ConsumerSpec(
                            id: "c\(i + 1)", producer: "cam", transport: "sub\(i + 1)", ssrc: 3000 + UInt32(i),
                            rtxSSRC: nil, payloadType: 100, rtxPayloadType: nil, nack: true, audioLevelID: nil,
                            absSendTimeID: nil, preference: LayerPreference(quality: quality))))
            }
        }

        /// One picture (1/30 s): a one-packet layer frame per spatial layer, L1T3 temporal pattern, the
        /// scalability structure on a key picture, the marker on the top layer's packet.
        func sendPicture(key: Bool = false) throws {
            let tid = key ? 0 : UInt8([0, 2, 1, 2][picture % 4])
            for sid in 0..<3 {
                var payload: [UInt8] = [
                    0x80 | (key ? 0 : 0x40) | 0x20 | 0x08 | 0x04 | (key && sid == 0 ? 0x02 : 0),
                    0x80 | UInt8(picture >> 8 & 0x7F), UInt8(picture & 0xFF),
                    tid << 5 | (sid > 0 && key ? 0x01 : 0) | UInt8(sid) << 1, UInt8(truncatingIfNeeded: picture / 4),
                ]
                if key && sid == 0 {
                    payload += [0x50, 0x01, 0x40, 0x00, 0xB4, 0x02, 0x80, 0x01, 0x68, 0x05, 0x00, 0x02, 0xD0]
                }
                payload += [UInt8](repeating: 0xB0 + UInt8(sid), count: 16)
                try publisher.send(
                    rtp: RTPPacketWriter.packet(
                        payloadType: 98, sequenceNumber: sequence, timestamp: UInt32(picture) * 3000, ssrc: 7777,
                        marker: sid == 2, payload: payload), to: media)
                sequence &+= 1
            }
            picture += 1
            media.advance(by: 1.0 / 30)
            for v in viewers { try v.receive(from: media) }
            try publisher.receive(from: media)
        }
    }

    /// Per packet a viewer got: the spatial layer its payload names, its marker bit and sequence number.
    static func received(_ v: EmbeddedPeer) throws -> [(layer: Int, marker: Bool, sequence: UInt16)] {
        try v.rtp.map { p in
            let h = try RTPHeader(parsing: p)
            return (Int(p[h.payloadRange.upperBound - 1]) - 0xB0, h.marker, h.sequenceNumber)
        }
    }

    @Test func eachViewerGetsItsLayersAsOneMarkedGapFreeStream() throws {
        let room = try Room()
        try room.sendPicture()  // before any key picture: nothing to start on
        try room.sendPicture(key: true)
        for _ in 0..<11 { try room.sendPicture() }
        let low = try Self.received(room.viewers[0])
        #expect(low.map(\.layer) == [Int](repeating: 0, count: 12))
        let allMarked = low.allSatisfy { $0.marker }
        #expect(allMarked, "the bottom layer ends each of the low viewer's pictures")
        let high = try Self.received(room.viewers[1])
        let layers = [Int]((0..<12).flatMap { _ in [0, 1, 2] })
        let markers = [Bool]((0..<12).flatMap { _ in [false, false, true] })
        #expect(high.map(\.layer) == layers)
        #expect(high.map(\.marker) == markers)
        for r in [low, high] {
            for (a, b) in zip(r, r.dropFirst()) { #expect(b.sequence == a.sequence &+ 1) }
        }
    }

    @Test func aViewerSwitchingUpKeepsItsLayerUntilTheKeyPicture() throws {
        let room = try Room()
        try room.sendPicture(key: true)
        // Past the 300 ms throttle of the key-frame requests the viewers' start made (the second
        // viewer's went out at 300 ms).
        for _ in 0..<20 { try room.sendPicture() }
        room.publisher.rtcp.removeAll()
        let low = room.viewers[0]
        low.rtp.removeAll()
        room.media.apply(.setPreference(consumer: "c1", LayerPreference(quality: .high)))
        try room.publisher.receive(from: room.media)
        let plis = room.publisher.rtcp.compactMap { p -> UInt32? in
            if case .pictureLossIndication(let pli) = p { return pli.sources.mediaSSRC }
            return nil
        }
        #expect(plis == [7777])
        for _ in 0..<2 { try room.sendPicture() }
        try room.sendPicture(key: true)
        try room.sendPicture()
        let r = try Self.received(low)
        #expect(r.map(\.layer) == [0, 0, 0, 1, 2, 0, 1, 2])
        for (a, b) in zip(r, r.dropFirst()) { #expect(b.sequence == a.sequence &+ 1) }
    }
}
