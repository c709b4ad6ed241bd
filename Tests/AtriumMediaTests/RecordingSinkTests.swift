import AtriumRTP
import AtriumUDP
import Testing

@testable import AtriumMedia

/// The worker's recorders in memory: plain RTP to the recording address, starting on a key frame
/// (asked for with a PLI), one SSRC and payload type, gap-free sequence numbers and a timeline that
/// goes on across a pause.
@Suite struct RecordingSinkTests {
    static let ffmpeg = SocketAddress.v4(address: 0x7F00_0001, port: 40_000)

    final class Screen {
        let room: KeyFrameCacheTests.Room
        var sequence: UInt16 = 65_500
        var timestamp: UInt32 = 0

        init() throws {
            room = try KeyFrameCacheTests.Room { $0.keyFrameCacheBytes = 0 }
        }

        func send(key: Bool, paused: Bool = false) throws {
            let payload: [UInt8] =
                [0x10] + (key ? [0x50, 0x01, 0x00, 0x9D, 0x01, 0x2A, 0x80, 0x07, 0x38, 0x04] : [0x51])
                + [UInt8](repeating: key ? 0xAA : 0x55, count: 50)
            try room.publisher.send(
                rtp: RTPPacketWriter.packet(
                    payloadType: 96, sequenceNumber: sequence, timestamp: timestamp, ssrc: 4242, marker: true,
                    payload: payload), to: room.media)
            sequence &+= 1
            timestamp &+= 6000
            room.media.advance(by: 1.0 / 15)
        }

        func recorded() throws -> [RTPHeader] {
            try room.media.take(for: RecordingSinkTests.ffmpeg).map { try RTPHeader(parsing: $0) }
        }
    }

    @Test func startsOnAKeyFrameAskedForAndKeepsOneGapFreeStream() throws {
        let s = try Screen()
        try s.send(key: true)
        try s.send(key: false)
        _ = try s.room.plis()
        s.room.media.apply(
            .addRecorder(
                RecorderSpec(id: "rec", producer: "screen", destination: Self.ffmpeg, ssrc: 777, payloadType: 98)))
        #expect(try s.room.plis() >= 1, "a key frame is asked for at the start")
        try s.send(key: false)
        #expect(try s.recorded().isEmpty, "nothing before a key frame")
        try s.send(key: true)
        try s.send(key: false)
        try s.send(key: false)
        var out = try s.recorded()
        #expect(out.count == 3)
        #expect(out.allSatisfy { $0.ssrc == 777 && $0.payloadType == 98 })

        // Paused: nothing; resumed: a key frame again, numbering and timeline go on.
        s.room.media.apply(.pauseProducer(id: "screen", paused: true))
        for _ in 0..<10 { try s.send(key: false) }
        #expect(try s.recorded().isEmpty)
        s.room.media.apply(.pauseProducer(id: "screen", paused: false))
        try s.send(key: false)
        try s.send(key: true)
        try s.send(key: false)
        out += try s.recorded()
        #expect(out.count == 5)
        let seqs = out.map(\.sequenceNumber)
        #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $1 == $0 &+ 1 }, "gap-free: \(seqs)")
        let ts = out.map(\.timestamp)
        #expect(zip(ts, ts.dropFirst()).allSatisfy { Int32(bitPattern: $1 &- $0) > 0 }, "increasing: \(ts)")
        // The pause shows in the timeline (about 11 frames at 15 fps), not as a jump back.
        #expect(Int32(bitPattern: ts[3] &- ts[2]) >= 5 * 6000)
        #expect(s.room.media.engine.counters.recordingPackets == 5)
    }

    @Test func endsWithItsProducerOrWhenClosed() throws {
        let s = try Screen()
        s.room.media.apply(
            .addRecorder(
                RecorderSpec(id: "rec", producer: "screen", destination: Self.ffmpeg, ssrc: 1, payloadType: 96)))
        try s.send(key: true)
        #expect(try s.recorded().count == 1)
        s.room.media.apply(.closeRecorder(id: "rec"))
        try s.send(key: true)
        #expect(try s.recorded().isEmpty)
        s.room.media.apply(
            .addRecorder(
                RecorderSpec(id: "rec2", producer: "screen", destination: Self.ffmpeg, ssrc: 1, payloadType: 96)))
        s.room.media.apply(.closeProducer(id: "screen"))
        #expect(s.room.media.engine.recorders.isEmpty)
        // A recorder of a producer the worker does not have is ignored.
        s.room.media.apply(
            .addRecorder(
                RecorderSpec(id: "rec3", producer: "nope", destination: Self.ffmpeg, ssrc: 1, payloadType: 96)))
        #expect(s.room.media.engine.recorders.isEmpty)
    }
}
