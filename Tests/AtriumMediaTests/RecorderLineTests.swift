import AtriumRTP
import AtriumUDP
import Testing

@testable import AtriumMedia

/// Recorder lines in memory, on the manual clock: one gap-free stream toward the process across the
/// recorders attached to it one after the other; while none feeds it (or its producer is paused),
/// Opus silence every 20 ms or the last picture once a second.
@Suite struct RecorderLineTests {
    static let ffmpeg = SocketAddress.v4(address: 0x7F00_0001, port: 41_000)

    static func line(_ kind: MediaTrackKind) -> RecorderLineSpec {
        RecorderLineSpec(
            id: "line", router: "room", destination: ffmpeg, ssrc: 555, payloadType: kind == .audio ? 111 : 96,
            kind: kind, clockRate: kind == .audio ? 48_000 : 90_000)
    }

    static func sent(_ media: EmbeddedMedia) throws -> [(RTPHeader, [UInt8])] {
        try media.take(for: ffmpeg).map { (try RTPHeader(parsing: $0), $0) }
    }

    static func gapFree(_ headers: [RTPHeader]) -> Bool {
        let seqs = headers.map(\.sequenceNumber)
        return zip(seqs, seqs.dropFirst()).allSatisfy { $1 == $0 &+ 1 }
    }

    @Test func anAudioLineWithoutARecorderSendsOpusSilence() throws {
        let media = try EmbeddedMedia()
        media.apply(.openRecorderLine(Self.line(.audio)))
        media.advance(by: 0.2)
        let out = try Self.sent(media)
        #expect(out.count >= 2)
        #expect(out.allSatisfy { $0.0.ssrc == 555 && $0.0.payloadType == 111 })
        #expect(out.allSatisfy { Array($0.1.suffix(3)) == RecorderLine.opusSilence })
        #expect(Self.gapFree(out.map(\.0)))
        let ts = out.map(\.0.timestamp)
        #expect(zip(ts, ts.dropFirst()).allSatisfy { $1 &- $0 == 960 }, "20 ms at 48 kHz: \(ts)")
        media.apply(.closeRecorderLine(id: "line"))
        media.advance(by: 0.1)
        #expect(try Self.sent(media).isEmpty)
    }

    @Test func aVideoLineRunsOnAcrossRecordersAndShowsTheLastPictureWhilePaused() throws {
        let room = try KeyFrameCacheTests.Room()
        let media = room.media
        try room.sendFrame(key: true)
        try room.sendFrame()
        media.apply(.openRecorderLine(Self.line(.video)))
        media.advance(by: 0.1)
        #expect(try Self.sent(media).isEmpty, "no picture before a recorder")
        media.apply(
            .addRecorder(
                RecorderSpec(
                    id: "r1", producer: "screen", destination: Self.ffmpeg, ssrc: 555, payloadType: 96, line: "line")))
        // At once, the producer's current picture from its cache (the key frame and the delta after it).
        var out = try Self.sent(media)
        #expect(out.count == 2)
        try room.sendFrame(key: true)
        try room.sendFrame()
        out += try Self.sent(media)
        #expect(out.count == 4, "live from the next key frame")
        // Paused: the picture it paused on, once a second, on the same numbering.
        media.apply(.pauseProducer(id: "screen", paused: true))
        try room.sendFrame()
        media.advance(by: 2.05)
        let paused = try Self.sent(media)
        #expect(paused.count == 4, "two repeats of a two-packet picture: \(paused.count)")
        out += paused
        // Closed: the line keeps the picture; the next recorder (another producer's would do) goes on.
        media.apply(.closeRecorder(id: "r1"))
        media.apply(.pauseProducer(id: "screen", paused: false))
        media.advance(by: 1.0)
        out += try Self.sent(media)
        media.apply(
            .addRecorder(
                RecorderSpec(
                    id: "r2", producer: "screen", destination: Self.ffmpeg, ssrc: 555, payloadType: 96, line: "line")))
        try room.sendFrame(key: true)
        out += try Self.sent(media)
        #expect(out.count >= 9)
        #expect(out.allSatisfy { $0.0.ssrc == 555 && $0.0.payloadType == 96 })
        #expect(Self.gapFree(out.map(\.0)), "\(out.map(\.0.sequenceNumber))")
        let ts = out.map(\.0.timestamp)
        #expect(zip(ts, ts.dropFirst()).allSatisfy { Int32(bitPattern: $1 &- $0) >= 0 }, "\(ts)")
    }
}
