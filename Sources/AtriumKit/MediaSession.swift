public import AtriumModel
public import AtriumProtocol
public import AtriumSFrame

/// The media under an `AtriumRoom`: the two connections of docs/protocol.md section 14 (a publisher
/// connection the client offers, a subscriber connection the server offers). On Apple platforms an
/// app adapts the WebRTC framework it ships (docs/swift-sdk.md); on Linux a native session does it
/// over Atrium's own stack. The room drives it: `publish_offer` with the session's offer for the
/// tracks to send, `subscriber_answer` with its answer to each `subscriber_offer`.
public protocol MediaSession: AnyObject, Sendable {
    /// An offer for the publisher connection sending these sources (one section each, in order),
    /// and each source's mid in it.
    func publisherOffer(sending sources: [LocalSource]) async throws(AtriumError) -> (
        sdp: String, mids: [TrackSource: String]
    )
    /// The server's answer to that offer: media starts flowing once ICE and DTLS are up.
    func publisherAnswer(_ sdp: String) async throws(AtriumError)
    /// An answer to the server's offer for the subscriber connection (`reset`: a new connection,
    /// the old one closes). `tracks` says which mid carries which track.
    func subscriberAnswer(to offer: String, tracks: [SubscriberOffer.Track], reset: Bool) async throws(AtriumError)
        -> String
    /// The publisher asks for layers (`layers_wanted`), the server for a key frame: whatever the
    /// session can do with it.
    func layersWanted(_ track: TrackID, rids: [String]) async
    /// Ends both connections.
    func close() async
    /// What the session has sent and received so far.
    func stats() async -> MediaStats
    /// Asks the sender of a received track for a key frame (PLI): a renderer that was re-created, a
    /// decoder that was reset.
    func requestKeyFrame(_ track: TrackID) async
    /// The last subscriber offer the session answered, while its subscriber connection is up: the
    /// room joins again with it when the server lost the session (`join`'s `subscriberOffer`), so
    /// that the room's new node can take the connection over; nil for none.
    func keptSubscriberOffer() async -> String?
    /// Encrypts every frame it sends (as `sender`) and decrypts every frame it receives with `keys`
    /// (docs/e2ee.md, SFrame as the JavaScript SDK does): true when it can. An end-to-end encrypted
    /// room publishes only through a session that can; the room rolls the keys in the keyring.
    func encryptFrames(with keys: SFrameKeyring, sender: ParticipantID) async -> Bool
}

extension MediaSession {
    public func stats() async -> MediaStats { MediaStats() }
    public func requestKeyFrame(_ track: TrackID) async {}
    public func keptSubscriberOffer() async -> String? { nil }
    public func encryptFrames(with keys: SFrameKeyring, sender: ParticipantID) async -> Bool { false }
}

/// The secret of an end-to-end encrypted room: a passphrase every participant knows, or a key the
/// app hands out.
public enum E2EESecret: Equatable, Sendable {
    case passphrase(String)
    case key([UInt8])
}

/// A media session's counts (a session counts what it can; the rest stay 0).
public struct MediaStats: Equatable, Sendable {
    public var framesSent = 0
    public var keyFramesSent = 0
    /// Packets sent again on a NACK.
    public var retransmitted = 0
    public var framesReceived = 0
    public var keyFramesReceived = 0
    public var bytesReceived = 0
    public var nacksSent = 0
    public var keyFrameRequestsSent = 0
    /// Retransmissions received that filled a gap.
    public var repaired = 0
    public var decodeErrors = 0
    public var audioFramesReceived = 0
    /// End-to-end encrypted frames (video and audio) that did not decrypt, dropped.
    public var decryptFailures = 0

    public init() {}
}

/// A source this participant sends, with what the room is told of it.
public struct LocalSource: Equatable, Sendable {
    public var source: TrackSource
    public var name: String
    public var width: Int
    public var height: Int

    public init(_ source: TrackSource, name: String = "", width: Int = 0, height: Int = 0) {
        self.source = source
        self.name = name
        self.width = width
        self.height = height
    }
}

extension AtriumRoom {
    /// Attaches the media: from now on the server's subscriber offers are answered by `session`.
    public func attach(_ session: any MediaSession) async {
        // Keys first: an offer that comes while they are set waits (the room is an actor, and a frame
        // received before them would be decoded as ciphertext).
        media = nil
        encrypting = false
        if let keys, let me { encrypting = await session.encryptFrames(with: keys, sender: me.id) }
        media = session
        // An offer that came before the session was attached is answered now.
        if let offer = pendingOffer {
            pendingOffer = nil
            await answer(offer)
        }
    }

    /// Publishes sources with media: one `publish_offer` with the session's offer, the server's answer
    /// applied. Returns the tracks bound (the screen share's share starts with it).
    @discardableResult
    public func publishMedia(_ sources: [LocalSource]) async throws(AtriumError) -> PublishAnswer {
        guard let media else { throw AtriumError(code: "media_unavailable", message: "attach a MediaSession first") }
        if room?.e2ee == true && !encrypting {
            throw AtriumError(
                code: "e2ee_unsupported", message: "the room is end-to-end encrypted: this session cannot encrypt")
        }
        let (sdp, mids) = try await media.publisherOffer(sending: sources)
        let entries = sources.compactMap { s -> PublishOfferRequest.Entry? in
            guard let mid = mids[s.source] else { return nil }
            return PublishOfferRequest.Entry(
                mid: mid, binding: .new(TrackRequest(source: s.source, name: s.name, width: s.width, height: s.height)))
        }
        guard
            case .publishAnswer(let answer) = try await request(
                .publishOffer(PublishOfferRequest(sdp: sdp, tracks: entries)))
        else {
            throw AtriumError(code: "bad_message", message: "publish_offer answered without an answer")
        }
        try await media.publisherAnswer(answer.sdp)
        return answer
    }

    /// The attached media session's counts (nil without one).
    public func mediaStats() async -> MediaStats? { await media?.stats() }

    /// Asks the sender of a received track for a key frame, through the attached media session.
    public func requestKeyFrame(_ track: TrackID) async { await media?.requestKeyFrame(track) }

    /// A `subscriber_offer`: answered by the session, or kept until one is attached.
    func answer(_ offer: SubscriberOffer) async {
        guard let media else {
            pendingOffer = offer
            return
        }
        do throws(AtriumError) {
            let sdp = try await media.subscriberAnswer(to: offer.sdp, tracks: offer.tracks, reset: offer.reset)
            try await request(.subscriberAnswer(revision: offer.revision, sdp: sdp))
        } catch {
            publish(.mediaError(error))
        }
    }
}
