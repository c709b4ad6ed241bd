public import AtriumKit
public import AtriumModel
public import AtriumProtocol
import AtriumSFrame
import AtriumSync

/// A native participant's media on Linux, both ways: a `NativePublisher` for what it sends and a
/// `NativeSubscriber` for what it receives, each with its own connection and thread, as the
/// protocol's two connections are. Either may be absent: a bot that only shares, a viewer that only
/// watches.
public final class NativeMediaSession: MediaSession, Sendable {
    public let publisher: NativePublisher?
    public let subscriber: NativeSubscriber?
    /// The keys of an end-to-end encrypted room, once `encryptFrames` gave them.
    let keys = Locked<SFrameKeyring?>(nil)

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
    /// one keyring (one frame counter) for both.
    public func encryptFrames(_ context: E2EEContext) async -> Bool {
        guard let ring = SFrameKeyring(context) else { return false }
        keys.withLock { $0 = ring }
        publisher?.encrypt(with: ring, sender: context.participant)
        subscriber?.decrypt(with: ring)
        return true
    }

    public func addE2EEKey(_ key: [UInt8], index: UInt64, send: Bool) async {
        guard !key.isEmpty else { return }
        keys.withLock { $0 }?.add(secret: key, index: index, send: send)
    }

    public func keptSubscriberOffer() async -> String? { await subscriber?.keptSubscriberOffer() }

    public func close() async {
        await publisher?.close()
        await subscriber?.close()
    }
}

extension SFrameKeyring {
    /// The keyring of a room's secret: a passphrase's (PBKDF2, salted with the room id) or the app's key.
    convenience init?(_ context: E2EEContext) {
        let secret: [UInt8]? =
            switch context.secret {
            case .passphrase(let p): SFrame.secret(passphrase: p, roomID: context.room.rawValue)
            case .key(let k): k.isEmpty ? nil : k
            }
        guard let secret else { return nil }
        self.init(secret: secret)
    }
}
