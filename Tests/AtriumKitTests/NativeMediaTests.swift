import AtriumCodecs
import AtriumKit
import AtriumModel
import AtriumNative
import AtriumProtocol
import AtriumSync
import Foundation
import Testing

/// A native publisher and a native viewer through the real server, both over Atrium's own ICE, DTLS
/// and SRTP: the viewer decodes the publisher's pattern (its frame stamps in order), and loss
/// injected on either leg is repaired by NACK.
@Suite(.serialized) struct NativeMediaTests {
    let server: LiveServer

    init() throws { server = try LiveServer(["--udp-port", "0", "--media-bind", "127.0.0.1"]) }

    /// What a viewer decoded: each picture's stamp, and whether the stripes are where they belong.
    final class Pictures: Sendable {
        struct Seen {
            var stamps: [UInt32] = []
            var wrongContent = 0
            var audioFrames = 0
            var sources: Set<String> = []
        }
        let seen = Monitor(Seen())

        func take(_ m: ReceivedMedia) {
            switch m {
            case .video(let v):
                let p = v.picture
                // The first stripe's middle (white) and the blue after it, below the stamp row.
                let ok =
                    p.width == 1280 && p.height == 720 && p.y.count == 1280 * 720 && p.y[360 * 1280 + 16] > 200
                    && p.y[360 * 1280 + 80] < 80
                seen.withLock {
                    if let s = FrameStamp.read(p) { $0.stamps.append(s) }
                    if !ok { $0.wrongContent += 1 }
                    if let source = v.source { $0.sources.insert(source.rawValue) }
                }
            case .audio: seen.withLock { $0.audioFrames += 1 }
            }
        }
    }

    /// Waits (a hang guard, not a measure) until `done` holds.
    func until(_ what: String, seconds: Double = 30, _ done: () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !done() {
            guard Date() < deadline else { throw AtriumError(code: "timeout", message: "\(what) within \(seconds) s") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func run(room name: String, publisherDrops: Int, viewerDrops: Int) async throws -> (
        NativePublisher, NativeSubscriber, Pictures
    ) {
        let sharer = AtriumRoom(url: server.url, token: try server.token(name, "bot"))
        try await sharer.join(JoinOptions(autoSubscribe: false))
        let publisher = try NativePublisher(video: StripesPattern(framesPerSecond: 15), tone: 440)
        publisher.dropEvery = publisherDrops
        await sharer.attach(NativeMediaSession(publisher: publisher, subscriber: nil))
        try await sharer.publishMedia([
            LocalSource(.screenShare, name: "pattern", width: 1280, height: 720), LocalSource(.screenShareAudio),
        ])
        let pictures = Pictures()
        let viewer = AtriumRoom(url: server.url, token: try server.token(name, "viewer"))
        try await viewer.join()
        let subscriber = try NativeSubscriber(dropEvery: viewerDrops) { pictures.take($0) }
        await viewer.attach(NativeMediaSession(publisher: nil, subscriber: subscriber))
        try await until("60 pictures decoded") { pictures.seen.withLock { $0.stamps.count >= 60 } }
        await viewer.leave()
        await sharer.leave()
        await publisher.close()
        await subscriber.close()
        return (publisher, subscriber, pictures)
    }

    /// The server forgot the session (restarted): the room joins again with the subscriber
    /// connection its media session keeps (`subscriberOffer`); one node cannot take it over, so its
    /// first offer says `reset` and the native viewer makes a new connection for it.
    @Test func aRejoinOffersTheKeptSubscriberConnectionAndANewOneFollowsWithReset() async throws {
        let media = ["--udp-port", "0", "--media-bind", "127.0.0.1"]
        var live = try LiveServer(media)
        let port = live.port
        let room = AtriumRoom(
            url: live.url, token: try live.token("rejoin-media", "viewer"), backoff: [0.2, 0.4, 0.8, 1.6, 3.2])
        try await room.join(JoinOptions(dataChannels: true))
        let subscriber = try NativeSubscriber { _ in }
        let spy = SessionSpy(NativeMediaSession(publisher: nil, subscriber: subscriber))
        await room.attach(spy)
        try await until("the first offer answered") { spy.resets.withLock { $0.count } >= 1 }
        #expect(await spy.keptSubscriberOffer() != nil)
        live.kept = true
        live.stop(keepData: true)
        live = try LiveServer(sameAs: live, port: port, media)
        try await until("the new server's offer answered") { spy.resets.withLock { $0.count } >= 2 }
        #expect(spy.resets.withLock { $0 } == [false, true])
        await room.leave()
        await subscriber.close()
        live.stop()
    }

    /// An end-to-end encrypted room (docs/e2ee.md): a room without the secret is refused
    /// (`e2ee_required`); a session that cannot encrypt cannot publish (`e2ee_unsupported`); the
    /// native sharer's frames (SFrame, AtriumSFrame) are decoded by a viewer with the passphrase (the
    /// pattern, in order, and its audio) and by none with another (all counted as decryption failures).
    @Test func anEncryptedRoomIsReadOnlyWithItsKey() async throws {
        #expect(try server.createRoom(#"{"name":"native-e2ee","e2ee":true}"#) == 201)
        let secret = E2EESecret.passphrase("native secret")
        let plain = AtriumRoom(url: server.url, token: try server.token("native-e2ee", "plain"))
        await #expect(throws: AtriumError.self) { try await plain.join() }
        do { try await plain.join() } catch { #expect(error.code == "e2ee_required") }

        let sharer = AtriumRoom(url: server.url, token: try server.token("native-e2ee", "bot"))
        try await sharer.join(JoinOptions(autoSubscribe: false), e2ee: secret)
        let publisher = try NativePublisher(video: StripesPattern(framesPerSecond: 15), tone: 440)
        let unable = SessionSpy(NativeMediaSession(publisher: publisher, subscriber: nil))
        await sharer.attach(unable)
        do {
            try await sharer.publishMedia([LocalSource(.screenShare, name: "pattern", width: 1280, height: 720)])
            Issue.record("a session that cannot encrypt published")
        } catch { #expect(error.code == "e2ee_unsupported") }
        await sharer.attach(NativeMediaSession(publisher: publisher, subscriber: nil))
        try await sharer.publishMedia([
            LocalSource(.screenShare, name: "pattern", width: 1280, height: 720), LocalSource(.screenShareAudio),
        ])

        let pictures = Pictures()
        let viewer = AtriumRoom(url: server.url, token: try server.token("native-e2ee", "viewer"))
        try await viewer.join(e2ee: secret)
        let subscriber = try NativeSubscriber { pictures.take($0) }
        await viewer.attach(NativeMediaSession(publisher: nil, subscriber: subscriber))
        let outsider = AtriumRoom(url: server.url, token: try server.token("native-e2ee", "outsider"))
        try await outsider.join(e2ee: .passphrase("another"))
        let unread = Pictures()
        let wrong = try NativeSubscriber { unread.take($0) }
        await outsider.attach(NativeMediaSession(publisher: nil, subscriber: wrong))
        try await until("30 pictures decrypted and decoded") { pictures.seen.withLock { $0.stamps.count >= 30 } }
        try await until("the outsider failing to decrypt") { wrong.counts.decryptFailures >= 20 }
        let seen = pictures.seen.withLock { $0 }
        #expect(seen.wrongContent == 0 && inOrder(seen.stamps), "\(seen.stamps.prefix(20))")
        #expect(seen.audioFrames > 0, "the share's audio was decrypted and decoded too")
        #expect(subscriber.counts.decryptFailures == 0 && subscriber.counts.decodeErrors == 0)
        #expect(unread.seen.withLock { $0.stamps.count + $0.audioFrames } == 0)
        #expect(wrong.counts.frames == 0)
        for room in [viewer, outsider, sharer] { await room.leave() }
        for session in [subscriber, wrong] { await session.close() }
        await publisher.close()
    }

    /// Stamps that only go forward: the pattern's frames in the order they were sent.
    func inOrder(_ stamps: [UInt32]) -> Bool { zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 } }

    @Test func aNativeViewerDecodesTheNativeSharersPattern() async throws {
        let (publisher, subscriber, pictures) = try await run(room: "native-clean", publisherDrops: 0, viewerDrops: 0)
        let seen = pictures.seen.withLock { $0 }
        let counts = subscriber.counts
        #expect(seen.wrongContent == 0, "pictures that are not the stripes")
        #expect(inOrder(seen.stamps), "\(seen.stamps.prefix(20))")
        #expect(seen.sources == ["screen_share"])
        #expect(seen.audioFrames > 0, "the share's audio was decoded too")
        #expect(counts.decodeErrors == 0 && counts.keyFrames >= 1 && counts.width == 1280 && counts.height == 720)
        #expect(publisher.counts.frames > 0 && publisher.failure == nil)
    }

    @Test func lossOnEitherLegIsRepairedByNACK() async throws {
        let (publisher, subscriber, pictures) = try await run(room: "native-lossy", publisherDrops: 23, viewerDrops: 17)
        let seen = pictures.seen.withLock { $0 }
        let counts = subscriber.counts
        // The publisher's dropped packets came back on the server's NACKs; the viewer's on its own,
        // from the server's retransmission (RTX), and every picture is whole.
        #expect(publisher.counts.retransmitted > 0, "the server NACKed the publisher's losses")
        #expect(counts.dropped > 0 && counts.nacksSent > 0, "the viewer dropped packets and NACKed them")
        #expect(counts.repaired > 0, "the server resent them (RTX) and they filled the gaps")
        #expect(seen.wrongContent == 0 && counts.decodeErrors == 0)
        #expect(inOrder(seen.stamps), "\(seen.stamps.prefix(20))")
    }

    @Test func framesPushedByTheAppArriveAndTheAppCanAskForAKeyFrame() async throws {
        let sharer = AtriumRoom(url: server.url, token: try server.token("native-push", "app"))
        try await sharer.join(JoinOptions(autoSubscribe: false))
        let source = PushSource(width: 640, height: 360, framesPerSecond: 15)
        let publisher = try NativePublisher(video: source)
        await sharer.attach(NativeMediaSession(publisher: publisher, subscriber: nil))
        try await sharer.publishMedia([LocalSource(.camera, name: "pushed", width: 640, height: 360)])
        let stamps = Monitor([UInt32]())
        let viewer = AtriumRoom(url: server.url, token: try server.token("native-push", "viewer"))
        try await viewer.join()
        let subscriber = try NativeSubscriber { m in
            if case .video(let v) = m, let s = FrameStamp.read(v.picture) { stamps.withLock { $0.append(s) } }
        }
        await viewer.attach(NativeMediaSession(publisher: nil, subscriber: subscriber))
        // The app pushes pictures stamped 5000, 5001, ... as a capture callback would.
        let pusher = Task {
            var n: UInt32 = 5000
            while !Task.isCancelled {
                var f = I420Frame(width: 640, height: 360, y: 90, u: 128, v: 128)
                FrameStamp.write(n, into: &f)
                source.push(f)
                n += 1
                try? await Task.sleep(for: .milliseconds(30))
            }
        }
        defer { pusher.cancel() }
        try await until("30 pushed pictures decoded") { stamps.withLock { $0.filter { $0 >= 5000 }.count >= 30 } }
        let seen = stamps.withLock { $0 }.filter { $0 >= 5000 }
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 <= $1 }, "\(seen.prefix(20))")
        #expect(source.push(I420Frame(width: 320, height: 180, y: 0, u: 0, v: 0)) == false, "another size is refused")
        // The app asks for a key frame of the track it receives: the viewer sends a PLI.
        let before = try #require(await viewer.mediaStats())
        let track = try #require(await viewer.participants.values.first { $0.identity == "app" }?.tracks.first?.id)
        await viewer.requestKeyFrame(track)
        try await until("the PLI sent") { subscriber.counts.keyFrameRequests > before.keyFrameRequestsSent }
        // The room's media stats are the session's: the PLI shows there too.
        let after = try #require(await viewer.mediaStats())
        #expect(after.keyFrameRequestsSent > before.keyFrameRequestsSent)
        await viewer.leave()
        await sharer.leave()
        await publisher.close()
        await subscriber.close()
    }
}
