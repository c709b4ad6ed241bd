import Testing

@testable import AtriumMedia

/// How long a media worker sleeps: an idle worker wakes once a second instead of on the
/// 20 ms timer, one carrying media keeps its timer, and one whose room leaves goes back to idle.
@Suite struct WorkerTimeoutTests {
    @Test func anIdleWorkerSleepsASecondAndOneWithATransportKeepsItsTimer() throws {
        let media = try EmbeddedMedia()
        #expect(media.engine.isIdle)
        #expect(media.engine.pollTimeout == .seconds(1))
        media.apply(MediaWorkersTests.transport("t1", room: "r"))
        #expect(!media.engine.isIdle)
        #expect(media.engine.pollTimeout == .milliseconds(20))
        media.apply(MediaWorkersTests.producer("p1", on: "t1"))
        media.apply(.closeRouter(id: "r"))
        #expect(media.engine.isIdle)
        #expect(media.engine.pollTimeout == .seconds(1))
    }
}
