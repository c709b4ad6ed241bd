import AtriumKit
import AtriumModel
import AtriumNative
import AtriumProtocol
import AtriumSync
import Foundation
import Testing

/// The seeds' share flows through AtriumKit's public API against the real server (no media: the
/// shares are the room's; media is a `MediaSession`'s). Each test has its own room.
@Suite(.serialized) struct SeedFlowTests {
    let server: LiveServer

    init() throws { server = try LiveServer() }

    func room(_ name: String, _ identity: String, role: String? = nil, sources: String? = nil) async throws
        -> AtriumRoom
    {
        let r = AtriumRoom(url: server.url, token: try server.token(name, identity, role: role, sources: sources))
        try await r.join()
        return r
    }

    /// The next share status of the room's stream matching `change` (a hang guard bounds the wait).
    func status(_ r: AtriumRoom, _ change: ShareStatus.Change, seconds: Double = 10) async throws -> ShareStatus {
        try await next(r, seconds: seconds) {
            if case .shareStatus(let s) = $0, s.change == change { s } else { nil }
        }
    }

    // MARK: - VideoSDK: join, share on and off, the remote sees it, mute

    @Test func videoSDKShareOnAndOffSeenByTheRemote() async throws {
        let host = try await room("vsdk", "host", role: "host")
        let guest = try await room("vsdk", "guest")
        let mic = try await host.publish(TrackRequest(source: .microphone))
        let share = try await host.startScreenShare(name: "Slides", width: 1280, height: 720)
        let seen = try await status(guest, .started)
        #expect(seen.share.id == share.id && !seen.isMine)
        #expect(await guest.shares.map(\.id) == [share.id])
        try await host.setMuted(mic.id, true)
        let muted = try await next(guest) {
            if case .event(.trackMuted(let t, _, let m, _)) = $0, t == mic.id { m } else { nil }
        }
        #expect(muted)
        try await host.stopScreenShare()
        let stopped = try await status(guest, .stopped)
        #expect(stopped.reason == .userStopped)
        #expect(await guest.shares.isEmpty)
        await host.leave()
        await guest.leave()
    }

    // MARK: - PlanetKit: 1-to-1 share start and stop with reasons, the capture ending

    @Test func planetKitStopReasons() async throws {
        let a = try await room("pkit", "a")
        let b = try await room("pkit", "b")
        _ = try await a.startScreenShare()
        _ = try await status(b, .started)
        try await a.stopScreenShare(reason: .captureEnded)
        #expect(try await status(b, .stopped).reason == .captureEnded)
        _ = try await a.startScreenShare()
        try await a.stopScreenShare()
        #expect(try await status(b, .stopped).reason == .userStopped)
        await a.leave()
        await b.leave()
    }

    // MARK: - Stream: the capability per role, request, grant, revoke

    @Test func streamCapabilityRequestGrantRevoke() async throws {
        let host = try await room("stream", "host", role: "host")
        let viewer = try await room("stream", "viewer", role: "viewer")
        #expect(await viewer.canShareScreen == false)
        #expect(await refusal { _ = try await viewer.startScreenShare() } == "not_allowed")
        try await host.setSharePolicy(SharePolicyChange(shareRequestRequired: true))
        let guest = try await room("stream", "guest")
        #expect(await refusal { _ = try await guest.startScreenShare() } == "not_allowed")
        let id = try await guest.requestScreenShare()
        let asked = try await next(host) { if case .event(.shareRequested(let r)) = $0 { r } else { nil } }
        #expect(asked.id == id)
        try await host.answerShareRequest(id, grant: true)
        _ = try await next(guest) {
            if case .event(.shareRequestResolved(let r, let o, _)) = $0, r.id == id { o } else { nil }
        }
        let share = try await guest.startScreenShare()
        _ = try await status(host, .started)
        let me = try #require(await guest.me)
        try await host.setScreenShareCapability(me.id, granted: false)
        let stopped = try await status(guest, .stopped)
        #expect(stopped.share.id == share.id && stopped.reason == .permissionRevoked && stopped.isMine)
        await host.leave()
        await viewer.leave()
        await guest.leave()
    }

    // MARK: - Zoom: lock, lock while sharing, two shares, a chosen one, pause and resume, grab

    @Test func zoomLockTwoSharesPauseAndGrab() async throws {
        let host = try await room("zoom", "host", role: "host")
        let a = try await room("zoom", "a")
        let b = try await room("zoom", "b")
        try await host.setShareLock(true)
        _ = try await next(a) { if case .event(.shareLockChanged(true, _)) = $0 { true } else { nil } }
        #expect(await a.isShareLocked)
        #expect(await refusal { _ = try await a.startScreenShare() } == "share_locked")
        try await host.setShareLock(false)
        _ = try await next(a) { if case .event(.shareLockChanged(false, _)) = $0 { true } else { nil } }
        // Locking while a participant shares stops the share with `locked`.
        _ = try await a.startScreenShare()
        try await host.setShareLock(true)
        #expect(try await status(a, .stopped).reason == .locked)
        try await host.setShareLock(false)

        // Two at once; the viewer subscribes to the one it chooses.
        try await host.setSharePolicy(SharePolicyChange(shareMode: .multi, maxConcurrentShares: 2))
        let sa = try await a.startScreenShare()
        let sb = try await b.startScreenShare()
        _ = try await next(host) {
            if case .event(.shareStarted(let s)) = $0, s.id == sb.id { true } else { nil }
        }
        #expect(Set(await host.shares.map(\.id)) == [sa.id, sb.id])
        try await host.subscribe(sb.trackId, quality: .medium)
        try await host.setViewport(sb.trackId, width: 640, height: 360)

        // Pause and resume, told to everyone.
        try await a.pauseScreenShare()
        #expect(try await status(host, .paused).share.id == sa.id)
        try await a.resumeScreenShare()
        #expect(try await status(host, .resumed).share.id == sa.id)
        try await a.stopScreenShare()
        try await b.stopScreenShare()

        // Grab: a new share pre-empts the running one.
        try await host.setSharePolicy(SharePolicyChange(shareMode: .grab))
        let grabbed = try await a.startScreenShare()
        _ = try await b.startScreenShare()
        let preempted = try await next(a) {
            if case .shareStatus(let s) = $0, s.change == .stopped, s.share.id == grabbed.id { s } else { nil }
        }
        #expect(preempted.isMine)
        #expect(preempted.reason == .preempted)
        await host.leave()
        await a.leave()
        await b.leave()
    }

    // MARK: - Data, attributes, typed errors

    @Test func dataAttributesAndTypedErrors() async throws {
        let a = try await room("data", "a")
        let b = try await room("data", "b")
        try await a.sendData(topic: "chat", payload: "hello")
        let got = try await next(b) { if case .event(.data(let d)) = $0 { d.payload } else { nil } }
        #expect(got == "hello")
        try await a.setAttributes(["hand": "up"])
        let hand = try await next(b) {
            if case .event(.attributesChanged(_, let attrs, _)) = $0 { attrs["hand"] } else { nil }
        }
        #expect(hand == "up")
        #expect(await refusal { try await a.stopShare(ShareID("sh_none")) } == "share_not_found")
        #expect(await refusal { try await a.setShareLock(true) } == "not_allowed")
        await a.leave()
        await b.leave()
    }
}

/// A dropped socket: the session is resumed on a new one (same participant), and requests work again;
/// a session the server no longer knows is joined again.
@Suite(.serialized) struct ResumeTests {
    final class Sockets: @unchecked Sendable {
        let lock = NSLock()
        var all: [LWSWebSocket] = []

        func make() -> any SignalSocket {
            let s = LWSWebSocket()
            lock.withLock { all.append(s) }
            return s
        }

        var last: LWSWebSocket? { lock.withLock { all.last } }
        var count: Int { lock.withLock { all.count } }
    }

    @Test func aDroppedSocketIsResumedAsTheSameParticipant() async throws {
        let server = try LiveServer()
        let sockets = Sockets()
        let room = AtriumRoom(url: server.url, token: try server.token("resume", "a"), backoff: [0.05, 0.1, 0.2]) {
            sockets.make()
        }
        let first = try await room.join()
        sockets.last?.close()
        var resumed = false
        for await e in room.events {
            if e == .resumed {
                resumed = true
                break
            }
        }
        #expect(resumed)
        #expect(sockets.count == 2)
        #expect(await room.me?.id == first.participant.id)
        #expect(await room.connection == .connected)
        _ = try await room.startScreenShare()
        #expect(await room.myShare != nil)
        await room.leave()
    }

    /// The server closes a socket silent for its idle timeout (5 s here): a room that pings keeps its
    /// one socket past it, one that does not (a ping interval far beyond it) is closed and resumes on
    /// a second socket, which shows the wait below is long enough to see the close.
    @Test(.timeLimit(.minutes(1)), arguments: [(ping: 1.0, closed: false), (ping: 1000.0, closed: true)])
    func aQuietRoomIsKeptOpenByItsPings(_ ping: Double, _ closed: Bool) async throws {
        let server = try LiveServer(["--signal-idle-timeout", "5"])
        let sockets = Sockets()
        let room = AtriumRoom(
            url: server.url, token: try server.token("quiet", "a"), backoff: [0.05, 0.1, 0.2], pingInterval: ping
        ) { sockets.make() }
        try await room.join()
        if closed {
            _ = try await next(room, seconds: 20) { $0 == .resumed ? true : nil }
            #expect(sockets.count == 2)
        } else {
            // Past the idle timeout and the server's next housekeeping tick (every 0.5 s).
            try await Task.sleep(for: .seconds(8))
            #expect(sockets.count == 1)
            #expect(await room.connection == .connected)
        }
        await room.leave()
    }

    /// `body`'s result while `server` is stopped (SIGSTOP: its sockets stay open, nothing answers). A
    /// hang guard lets the server go on after 20 s, so that a body waiting for an answer without a
    /// timeout of its own gets one and the test fails rather than hangs.
    func whileStopped<T>(_ server: LiveServer, _ body: () async -> T) async -> T {
        let pid = server.process.processIdentifier
        kill(pid, SIGSTOP)
        let guardTask = Task {
            try? await Task.sleep(for: .seconds(20))
            kill(pid, SIGCONT)
        }
        let result = await body()
        kill(pid, SIGCONT)
        guardTask.cancel()
        return result
    }

    /// A server that stops answering (stopped, its sockets left open): the request fails with `timeout`
    /// after `requestTimeout`; once it answers again, its late answer to that request is dropped and
    /// the next request gets its own.
    @Test(.timeLimit(.minutes(1))) func aRequestWithNoAnswerFailsWithTimeout() async throws {
        let server = try LiveServer()
        let room = AtriumRoom(url: server.url, token: try server.token("stalled", "a"), requestTimeout: 2)
        try await room.join()
        let code = await whileStopped(server) { await refusal { try await room.request(.ping) } }
        #expect(code == "timeout")
        guard case .pong = try await room.request(.ping) else {
            Issue.record("the next ping was not answered with a pong")
            return
        }
        #expect(await room.connection == .connected)
        await room.leave()
    }

    /// A server that accepts the connection but does not speak (stopped before the join): the join
    /// fails with `timeout` after `requestTimeout`, and a join once it speaks again succeeds.
    @Test(.timeLimit(.minutes(1))) func aJoinWithNoWelcomeFailsWithTimeout() async throws {
        let server = try LiveServer()
        let room = AtriumRoom(url: server.url, token: try server.token("mute", "a"), requestTimeout: 2)
        let code = await whileStopped(server) { await refusal { try await room.join() } }
        #expect(code == "timeout")
        #expect(await room.connection == .disconnected)
        try await room.join()
        #expect(await room.connection == .connected)
        await room.leave()
    }

    @Test func aSessionTheServerForgotIsJoinedAgain() async throws {
        var server = try LiveServer()
        let port = server.port
        let sockets = Sockets()
        let token = try server.token("rejoin", "a")
        let room = AtriumRoom(url: server.url, token: token, backoff: [0.2, 0.4, 0.8, 1.6]) { sockets.make() }
        let first = try await room.join()
        // The server restarts on the same port (its dev key kept in the same data directory).
        server.kept = true
        server.stop(keepData: true)
        server = try LiveServer(sameAs: server, port: port)
        var rejoined = false
        for await e in room.events {
            if e == .rejoined {
                rejoined = true
                break
            }
        }
        #expect(rejoined)
        #expect(await room.me?.id != first.participant.id)
        #expect(await room.connection == .connected)
        await room.leave()
        server.stop()
    }

    /// The server restarts without the room and without making rooms on a join: the resume finds the
    /// session forgotten, and the join again is refused (`room_not_found`); the room ends at once
    /// with that refusal (as the JavaScript SDK), where it tried again through the rest of its
    /// backoff and ended with "could not resume".
    @Test(.timeLimit(.minutes(1))) func aRefusedJoinAgainEndsTheRoom() async throws {
        var server = try LiveServer()
        let port = server.port
        let room = AtriumRoom(
            url: server.url, token: try server.token("gone", "a"), backoff: [0.2, 0.4, 0.8, 1.6, 3.2, 6.4])
        try await room.join()
        server.kept = true
        server.stop(keepData: true)
        server = try LiveServer(sameAs: server, port: port, ["--auto-create-rooms", "off"])
        let closed = try await next(room, seconds: 30) { e -> RoomEvent? in
            if case .closed = e { return e }
            return nil
        }
        // The code is the dropped socket's: 1001 from the server going away (1006 had the frame been lost).
        guard case .closed(let code, let reason) = closed else { return }
        #expect(reason == "room_not_found" && [1001, 1006].contains(code))
        #expect(await room.connection == .disconnected)
        server.stop()
    }

    /// The token expires while the room is connected (the server tolerating no clock skew), then the
    /// socket drops: the resume's token is refused (`token_expired`), and the room ends at once with
    /// that refusal, closing its media, where it went on trying the same token through the rest of
    /// its backoff.
    @Test(.timeLimit(.minutes(1))) func aResumeWhoseTokenIsRefusedEndsTheRoom() async throws {
        let server = try LiveServer(["--token-leeway", "0"])
        let sockets = Sockets()
        let subscriber = try NativeSubscriber { _ in }
        let media = SessionSpy(NativeMediaSession(publisher: nil, subscriber: subscriber))
        let room = AtriumRoom(
            url: server.url, token: try server.token("refused", "a", ttl: 3), backoff: [0.05, 0.05, 0.05, 0.05]
        ) { sockets.make() }
        try await room.join()
        await room.attach(media)
        // Refused from the second after `exp` on (whole seconds): past it by a margin.
        let expiresAt = try #require(await room.welcome?.expiresAt)
        let wait = Date(timeIntervalSince1970: Double(expiresAt) + 1.5).timeIntervalSinceNow
        try await Task.sleep(for: .seconds(max(0, wait)))
        sockets.last?.close()
        let closed = try await next(room, seconds: 20) { e -> RoomEvent? in
            if case .closed = e { return e }
            return nil
        }
        #expect(closed == .closed(code: SignalCloseCode.unauthorized, reason: "token_expired"))
        // Longer than the rest of the backoff: no attempt after the refusal.
        try await Task.sleep(for: .seconds(1))
        #expect(sockets.count == 2)
        #expect(await room.connection == .disconnected)
        #expect(media.closes.withLock { $0 } == 1)
        await subscriber.close()
        server.stop()
    }
}

// What both suites wait for: the next event matching (a hang guard bounds the wait), and the code an
// `AtriumError` refused with.

private func next<T: Sendable>(_ r: AtriumRoom, seconds: Double = 10, _ match: @escaping @Sendable (RoomEvent) -> T?)
    async throws -> T
{
    try await withThrowingTaskGroup(of: T?.self) { g in
        g.addTask {
            for await e in r.events { if let v = match(e) { return v } }
            return nil
        }
        g.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { g.cancelAll() }
        guard let first = try await g.next(), let v = first else {
            throw AtriumError(code: "timeout", message: "no matching event within \(seconds) s")
        }
        return v
    }
}

private func refusal(_ body: () async throws -> Void) async -> String? {
    do {
        try await body()
        return nil
    } catch let e as AtriumError {
        return e.code
    } catch {
        return "\(error)"
    }
}
