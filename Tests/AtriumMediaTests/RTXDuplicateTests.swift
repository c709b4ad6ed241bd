import AtriumDTLS
import AtriumRTP
import Testing

@testable import AtriumMedia

/// A publisher's RTX copies (its padding resends old packets; a repair can come late): a copy of a
/// packet that arrived is dropped as `duplicate`, a repair of a lost one is forwarded.
@Suite struct RTXDuplicateTests {
    @Test func copiesOfArrivedPacketsAreDroppedRepairsAreForwarded() throws {
        let media = try EmbeddedMedia()
        let fp = media.engine.certificate.fingerprint
        let publisher = try EmbeddedPeer(port: 46_000, transport: "pub", serverFingerprint: fp)
        let viewer = try EmbeddedPeer(port: 46_001, transport: "sub", serverFingerprint: fp)
        try publisher.connect(to: media, midExtensionID: 1)
        try viewer.connect(to: media)
        media.apply(
            .addProducer(
                ProducerSpec(
                    id: "cam", transport: "pub", mid: "0", source: "camera", kind: .video, videoCodec: "VP8",
                    clockRate: 90_000, payloadType: 96, rtxPayloadType: 97, ssrc: 5000, rtxSSRC: 5001,
                    audioLevelID: nil, absSendTimeID: nil, paused: false)))
        media.apply(
            .addConsumer(
                ConsumerSpec(
                    id: "c", producer: "cam", transport: "sub", ssrc: 6000, rtxSSRC: nil, payloadType: 96,
                    rtxPayloadType: nil, nack: true, audioLevelID: nil, absSendTimeID: nil)))
        func frame(_ seq: UInt16, key: Bool = false) throws -> [UInt8] {
            let payload: [UInt8] = (key ? [0x10, 0x50, 0x01, 0x00, 0x9D, 0x01, 0x2A] : [0x10, 0x51]) + [UInt8(seq)]
            return try RTPPacketWriter.packet(
                payloadType: 96, sequenceNumber: seq, timestamp: UInt32(seq) * 3000, ssrc: 5000, marker: true,
                payload: payload)
        }
        func rtx(of packet: [UInt8], osn: UInt16, seq: UInt16) throws -> [UInt8] {
            let h = try RTPHeader(parsing: packet)
            return try RTPPacketWriter.packet(
                payloadType: 97, sequenceNumber: seq, timestamp: h.timestamp, ssrc: 5001, marker: true,
                payload: [UInt8(osn >> 8), UInt8(osn & 0xFF)] + Array(packet[h.payloadRange]))
        }
        let first = try frame(1, key: true)
        try publisher.send(rtp: first, to: media)
        try publisher.send(rtp: try frame(3), to: media)  // 2 is lost
        try publisher.send(rtp: try rtx(of: first, osn: 1, seq: 100), to: media)  // padding: a copy of 1
        try publisher.send(rtp: try rtx(of: try frame(2), osn: 2, seq: 101), to: media)  // the repair of 2
        try viewer.receive(from: media)
        let got = try viewer.rtp.map { try RTPHeader(parsing: $0).sequenceNumber }
        #expect(got.count == 3, "1, 3, then 2 repaired; the copy of 1 is not sent again")
        #expect(Set(got).count == 3)
        #expect(media.engine.counters.dropped[DropReason.duplicate.rawValue] == 1)
    }
}
