import AtriumKit
import AtriumModel
import AtriumNative
import AtriumProtocol
import AtriumSync

/// A native media session that notes the `reset` of each subscriber offer it answers and counts its
/// closes. It does not pass `encryptFrames` on: a session that cannot encrypt.
final class SessionSpy: MediaSession {
    let inner: NativeMediaSession
    let resets = Monitor([Bool]())
    let closes = Monitor(0)

    init(_ inner: NativeMediaSession) { self.inner = inner }

    func publisherOffer(sending sources: [LocalSource]) async throws(AtriumError) -> (
        sdp: String, mids: [TrackSource: String]
    ) { try await inner.publisherOffer(sending: sources) }
    func publisherAnswer(_ sdp: String) async throws(AtriumError) { try await inner.publisherAnswer(sdp) }
    func subscriberAnswer(to offer: String, tracks: [SubscriberOffer.Track], reset: Bool)
        async throws(AtriumError) -> String
    {
        let answer = try await inner.subscriberAnswer(to: offer, tracks: tracks, reset: reset)
        resets.withLock { $0.append(reset) }
        return answer
    }
    func layersWanted(_ track: TrackID, rids: [String]) async {}
    func close() async {
        closes.withLock { $0 += 1 }
        await inner.close()
    }
    func keptSubscriberOffer() async -> String? { await inner.keptSubscriberOffer() }
}
