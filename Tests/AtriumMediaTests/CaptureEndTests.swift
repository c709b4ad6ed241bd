import AtriumRTP
import Testing

@testable import AtriumMedia

/// A share whose capture ends while its connection lives on is stopped at the capture timeout: RTP
/// that stops counts, and so does a sender that goes on reporting an octet count that no longer moves
/// (aiortc's RTCP loop outlives its RTP one when a track stops; Chromium's padding moves only its
/// packet count). A report whose octets move is a sender still sending whose RTP is lost on the way,
/// and keeps the share.
@Suite struct CaptureEndTests {
    static func report(packets: UInt32, octets: UInt32, at t: Double) -> RTCPPacket {
        .senderReport(
            SenderReport(
                ssrc: 4242, ntpTimestamp: UInt64(t * 4_294_967_296), rtpTimestamp: UInt32(t * 90_000),
                packetCount: packets, octetCount: octets, reports: []))
    }

    static func ended(_ room: KeyFrameCacheTests.Room) -> Bool {
        room.media.events().contains {
            if case .producerEnded(id: "screen", reason: .inactive) = $0 { true } else { false }
        }
    }

    /// Frames for a second, then `seconds` of sender reports only, one a second, with the packet and
    /// octet counts `count(n)` for the n-th.
    static func run(seconds: Int, count: (UInt32) -> (UInt32, UInt32)) throws -> KeyFrameCacheTests.Room {
        let room = try KeyFrameCacheTests.Room()
        for _ in 0..<30 {
            try room.sendFrame()
            room.media.advance(by: 1.0 / 30)
        }
        for n in 0..<UInt32(seconds) {
            let (packets, octets) = count(n)
            try room.publisher.send(
                rtcp: [report(packets: packets, octets: octets, at: room.media.clock.now)], to: room.media)
            room.media.advance(by: 1)
        }
        return room
    }

    @Test func reportsWhoseCountsStandStillDoNotKeepAShareAlive() throws {
        let room = try Self.run(seconds: 8) { _ in (30, 3000) }
        #expect(Self.ended(room), "ended at the 5 s capture timeout although reports went on")
    }

    @Test func paddingThatMovesOnlyThePacketCountDoesNotKeepAShareAlive() throws {
        let room = try Self.run(seconds: 8) { (30 + 10 * $0, 3000) }
        #expect(Self.ended(room), "Chromium's padding after track.stop() is not media")
    }

    @Test func reportsWhoseOctetsMoveKeepAShareAlive() throws {
        let room = try Self.run(seconds: 8) { (30 + 30 * $0, 3000 + 3000 * $0) }
        #expect(!Self.ended(room), "a sender still sending (its RTP lost) keeps its share")
    }

    @Test func withoutReportsTheTransportFallsSilentAndConsentDecides() throws {
        // No reports and no RTP: the transport as a whole is silent, which is not a capture end.
        let room = try KeyFrameCacheTests.Room()
        for _ in 0..<30 {
            try room.sendFrame()
            room.media.advance(by: 1.0 / 30)
        }
        room.media.advance(by: 8)
        #expect(!Self.ended(room))
    }
}
