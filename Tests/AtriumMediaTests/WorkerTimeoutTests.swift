import Testing

@testable import AtriumMedia

/// How long a media worker sleeps: an idle worker wakes once a second instead of on the
/// 20 ms timer, one carrying media keeps its timer, and one whose room leaves goes back to idle.
@Suite struct WorkerTimeoutTests {
    @Test func anIdleWorkerSleepsASecondAndOneWithATransportKeepsItsTimer() throws {
        let media = try EmbeddedMedia()
        #expect(media.engine.isIdle)
        #expect(media.engine.pollTimeout == .seconds(1))
        media.apply(
            .openTransport(
                TransportSpec(id: "t1", router: "r", label: "t1", localUfrag: "u", localPassword: "p", remote: nil)))
        #expect(!media.engine.isIdle)
        #expect(media.engine.pollTimeout == .milliseconds(20))
        media.apply(
            .addProducer(
                ProducerSpec(
                    id: "p1", transport: "t1", mid: "0", source: "camera", kind: .video, videoCodec: "VP8",
                    clockRate: 90000, payloadType: 96, rtxPayloadType: nil, ssrc: nil, rtxSSRC: nil,
                    audioLevelID: nil, absSendTimeID: nil, paused: false)))
        media.apply(.closeRouter(id: "r"))
        #expect(media.engine.isIdle)
        #expect(media.engine.pollTimeout == .seconds(1))
    }
}
