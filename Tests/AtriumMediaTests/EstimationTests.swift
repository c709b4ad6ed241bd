import AtriumDTLS
import AtriumRTP
import Testing

@testable import AtriumMedia

/// Bandwidth toward a subscriber, in memory: the engine numbers what it sends with the subscriber's
/// transport-wide extension, and the subscriber's feedback (arrivals as a link of a given rate would
/// give them) moves the transport's estimate.
@Suite struct EstimationTests {
    /// Sends `seconds` of a 1 Mbit/s camera (100 packets/s of 1250 bytes) through a link of `capacity`
    /// bits per second toward the viewer, with its feedback every 100 ms; returns the estimate.
    static func run(capacity: Double, seconds: Int) throws -> (Double?, [UInt16]) {
        let media = try EmbeddedMedia()
        let fp = media.engine.certificate.fingerprint
        let publisher = try EmbeddedPeer(port: 47_000, transport: "pub", serverFingerprint: fp)
        let viewer = try EmbeddedPeer(port: 47_001, transport: "sub", serverFingerprint: fp)
        try publisher.connect(to: media, midExtensionID: 1, transportWideCC: 3)
        try viewer.connect(to: media, transportWideCC: 4)
        media.apply(
            .addProducer(
                ProducerSpec(
                    id: "cam", transport: "pub", mid: "0", source: "camera", kind: .video, videoCodec: "VP8",
                    clockRate: 90_000, payloadType: 96, rtxPayloadType: nil, ssrc: 7000, rtxSSRC: nil,
                    audioLevelID: nil, absSendTimeID: nil, paused: false)))
        media.apply(
            .addConsumer(
                ConsumerSpec(
                    id: "c", producer: "cam", transport: "sub", ssrc: 8000, rtxSSRC: nil, payloadType: 96,
                    rtxPayloadType: nil, nack: true, audioLevelID: nil, absSendTimeID: nil)))
        var link = TransportWideLink(capacity: capacity)
        var numbers: [UInt16] = []
        for n in 0..<(seconds * 100) {
            let payload: [UInt8] =
                (n == 0 ? [0x10, 0x50, 0x01, 0x00, 0x9D, 0x01, 0x2A] : [0x10, 0x51])
                + [UInt8](repeating: 0, count: 1200)
            try publisher.send(
                rtp: RTPPacketWriter.packet(
                    payloadType: 96, sequenceNumber: UInt16(n), timestamp: UInt32(n) * 900, ssrc: 7000, marker: true,
                    extensions: [
                        RTPHeaderExtensionElement(id: 1, value: Array("0".utf8)),
                        RTPHeaderExtensionElement(id: 3, value: [0, 0]),
                    ], payload: payload), to: media)
            try viewer.receive(from: media)
            for p in viewer.rtp {
                let h = try RTPHeader(parsing: p)
                guard let r = h.extensionValueRange(id: 4, in: p), r.count == 2 else { continue }
                let seq = UInt16(p[r.lowerBound]) << 8 | UInt16(p[r.lowerBound + 1])
                numbers.append(seq)
                _ = link.carry(bytes: p.count, sent: media.clock.now, number: seq)
            }
            viewer.rtp.removeAll()
            media.advance(by: 0.01)
            // What has come out of the link by now is reported.
            link.deliver(until: media.clock.now)
            if n % 10 == 9 {
                let feedback = link.feedback(mediaSSRC: 8000)
                if !feedback.isEmpty { try viewer.send(rtcp: feedback, to: media) }
            }
        }
        return (media.engine.snapshot().transports.first { $0.id == "sub" }?.estimate, numbers)
    }

    @Test func everyPacketIsNumberedForTheSubscriber() throws {
        let (_, numbers) = try Self.run(capacity: 10_000_000, seconds: 1)
        #expect(numbers == (0..<100).map(UInt16.init))
    }

    @Test func theEstimateFollowsTheLink() throws {
        let (wide, _) = try Self.run(capacity: 10_000_000, seconds: 10)
        let narrow = try Self.run(capacity: 300_000, seconds: 10).0
        let w = try #require(wide)
        let n = try #require(narrow)
        #expect(w > 900_000, "an open link: at least what is sent (\(Int(w)))")
        #expect(n < 450_000, "a 300 kbit/s link (\(Int(n)))")
    }
}
