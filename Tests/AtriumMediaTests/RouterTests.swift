import AtriumDTLS
import AtriumRTP
import Testing

@testable import AtriumMedia

/// Routers in the engine, in memory: a room's media never feeds another room's consumer, whatever
/// the commands say, and ending a room ends everything on its router.
@Suite struct RouterTests {
    static func camera(_ transport: String) -> ProducerSpec {
        ProducerSpec(
            id: "cam-\(transport)", transport: transport, mid: "0", source: "camera", kind: .video,
            videoCodec: "VP8", clockRate: 90_000, payloadType: 96, rtxPayloadType: nil, ssrc: 5555, rtxSSRC: nil,
            audioLevelID: nil, absSendTimeID: nil, paused: false)
    }

    static func consumer(_ id: String, of producer: String, on transport: String) -> ConsumerSpec {
        ConsumerSpec(
            id: id, producer: producer, transport: transport, ssrc: 6000, rtxSSRC: nil, payloadType: 96,
            rtxPayloadType: nil, nack: false, audioLevelID: nil, absSendTimeID: nil)
    }

    @Test func aConsumerOfAnotherRoomsProducerIsRefused() throws {
        let media = try EmbeddedMedia()
        let fp = media.engine.certificate.fingerprint
        let publisher = try EmbeddedPeer(port: 43_000, transport: "pub", serverFingerprint: fp)
        let inside = try EmbeddedPeer(port: 43_001, transport: "in", serverFingerprint: fp)
        let outside = try EmbeddedPeer(port: 43_002, transport: "out", serverFingerprint: fp)
        try publisher.connect(to: media, router: "room-a", midExtensionID: 1)
        try inside.connect(to: media, router: "room-a")
        try outside.connect(to: media, router: "room-b")
        #expect(media.engine.routers.count == 2)
        media.apply(.addProducer(Self.camera("pub")))
        media.apply(.addConsumer(Self.consumer("c-in", of: "cam-pub", on: "in")))
        media.apply(.addConsumer(Self.consumer("c-out", of: "cam-pub", on: "out")))
        #expect(media.engine.counters.consumersRefused == 1)
        #expect(media.engine.consumers["c-out"] == nil)
        // A key frame reaches the room's viewer only.
        let key: [UInt8] = [0x10, 0x50, 0x01, 0x00, 0x9D, 0x01, 0x2A] + [UInt8](repeating: 1, count: 20)
        try publisher.send(
            rtp: RTPPacketWriter.packet(
                payloadType: 96, sequenceNumber: 1, timestamp: 1, ssrc: 5555, marker: true, payload: key),
            to: media)
        try inside.receive(from: media)
        try outside.receive(from: media)
        #expect(inside.rtp.count == 1)
        #expect(outside.rtp.isEmpty)
    }

    @Test func endingARoomClosesItsRouterAndNothingElse() throws {
        let media = try EmbeddedMedia()
        let fp = media.engine.certificate.fingerprint
        let a = try EmbeddedPeer(port: 43_010, transport: "a", serverFingerprint: fp)
        let b = try EmbeddedPeer(port: 43_011, transport: "b", serverFingerprint: fp)
        try a.connect(to: media, router: "room-a", midExtensionID: 1)
        try b.connect(to: media, router: "room-b", midExtensionID: 1)
        media.apply(.addProducer(Self.camera("a")))
        _ = media.events()
        media.apply(.closeRouter(id: "room-a"))
        #expect(media.events() == [.transportState(id: "a", state: .closed)])
        #expect(media.engine.routers.keys.sorted() == ["room-b"])
        #expect(media.engine.producers.isEmpty && media.engine.transports.keys.sorted() == ["b"])
        // The last transport of a room takes its router along.
        media.apply(.closeTransport(id: "b"))
        #expect(media.engine.routers.isEmpty)
        #expect(media.engine.snapshot().routers == 0)
    }
}
