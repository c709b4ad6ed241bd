public import AtriumKit
public import AtriumModel
public import AtriumProtocol
public import AtriumSFrame

/// A native participant's media on Linux, both ways: a `NativePublisher` for what it sends and a
/// `NativeSubscriber` for what it receives, each with its own connection and thread, as the
/// protocol's two connections are. Either may be absent: a bot that only shares, a viewer that only
/// watches.
public final class NativeMediaSession: MediaSession, Sendable {
    public let publisher: NativePublisher?
    public let subscriber: NativeSubscriber?

    public init(publisher: NativePublisher?, subscriber: NativeSubscriber?) {
        self.publisher = publisher
        self.subscriber = subscriber
    }

    public func publisherOffer(sending sources: [LocalSource]) async throws(AtriumError) -> (
        sdp: String, mids: [TrackSource: String]
    ) {
        guard let publisher else { throw AtriumError(code: "media_unsupported", message: "this session only receives") }
        return try await publisher.publisherOffer(sending: sources)
    }

    public func publisherAnswer(_ sdp: String) async throws(AtriumError) {
        guard let publisher else { throw AtriumError(code: "media_unsupported", message: "this session only receives") }
        try await publisher.publisherAnswer(sdp)
    }

    public func subscriberAnswer(to offer: String, tracks: [SubscriberOffer.Track], reset: Bool)
        async throws(AtriumError) -> String
    {
        guard let subscriber else {
            throw AtriumError(
                code: "media_unsupported", message: "this session only sends: join with autoSubscribe false")
        }
        return try await subscriber.subscriberAnswer(to: offer, tracks: tracks, reset: reset)
    }

    public func layersWanted(_ track: TrackID, rids: [String]) async {}

    /// The publisher's sent counts and the subscriber's received ones.
    public func stats() async -> MediaStats {
        var s = await publisher?.stats() ?? MediaStats()
        if let r = await subscriber?.stats() {
            (s.framesReceived, s.keyFramesReceived, s.bytesReceived) = (
                r.framesReceived, r.keyFramesReceived, r.bytesReceived
            )
            (s.nacksSent, s.keyFrameRequestsSent, s.repaired) = (r.nacksSent, r.keyFrameRequestsSent, r.repaired)
            (s.decodeErrors, s.audioFramesReceived) = (r.decodeErrors, r.audioFramesReceived)
            s.decryptFailures = r.decryptFailures
        }
        return s
    }

    public func requestKeyFrame(_ track: TrackID) async { await subscriber?.requestKeyFrame(track) }

    /// SFrame on every VP8 and Opus frame both ways (AtriumSFrame: the JavaScript SDK's frames), with
    /// the room's keyring (one frame counter) for both.
    public func encryptFrames(with keys: SFrameKeyring, sender: ParticipantID) async -> Bool {
        publisher?.encrypt(with: keys, sender: sender)
        subscriber?.decrypt(with: keys)
        return true
    }

    public func keptSubscriberOffer() async -> String? { await subscriber?.keptSubscriberOffer() }

    public func close() async {
        await publisher?.close()
        await subscriber?.close()
    }
}
