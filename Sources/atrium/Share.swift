import AtriumKit
import AtriumModel
import AtriumNative
import AtriumProtocol
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `atrium share`: a native participant that shares a test pattern, a Y4M file or an IVF file (VP8,
/// with an Opus tone), prints
/// the room's share events as JSON lines, pauses on SIGUSR1 and resumes on SIGUSR2, and stops its
/// share (`user_stopped`) and leaves on SIGINT or SIGTERM, or after `--seconds`.
struct ShareOptions: Sendable {
    var url = ""
    var token = ""
    var source = TrackSource.screenShare
    var fps = 15
    var tone = 0.0
    var seconds = 0.0
    var dropEvery = 0
    var y4m: String?
    var ivf: String?
    var passphrase: String?
}

func shareOptions(_ args: ArraySlice<String>) -> ShareOptions? {
    var o = ShareOptions()
    var it = args.makeIterator()
    while let a = it.next() {
        func value() -> String {
            guard let v = it.next() else { fail("share: \(a) needs a value") }
            return v
        }
        switch a {
        case "--url": o.url = value()
        case "--token": o.token = value()
        case "--pattern": (o.y4m, o.ivf) = (nil, nil)
        case "--y4m": o.y4m = value()
        case "--ivf": o.ivf = value()
        case "--camera": o.source = .camera
        case "--passphrase": o.passphrase = value()
        case "--fps":
            guard let n = Int(value()), (1...60).contains(n) else { fail("share: --fps 1 to 60") }
            o.fps = n
        case "--tone":
            guard let n = Double(value()), (0...4000).contains(n) else { fail("share: --tone 0 to 4000") }
            o.tone = n
        case "--seconds":
            guard let n = Double(value()), n >= 0, n < 1e6 else { fail("share: --seconds 0 to 1000000") }
            o.seconds = n
        case "--drop-every":
            guard let n = Int(value()), (0...1000).contains(n) else { fail("share: --drop-every 0 to 1000") }
            o.dropEvery = n
        case "--help":
            print(Usage.share)
            return nil
        default: fail("share: unknown option \(a)\n\(Usage.share)")
        }
    }
    guard o.url.hasPrefix("ws://") || o.url.hasPrefix("wss://"), !o.token.isEmpty else {
        fail("share: --url ws://HOST:PORT and --token TOKEN are required\n\(Usage.share)")
    }
    return o
}

func share(_ args: ArraySlice<String>) -> Int32 {
    guard let o = shareOptions(args) else { return 0 }
    let (url, token, source, fps, tone, seconds) = (o.url, o.token, o.source, o.fps, o.tone, o.seconds)
    let dropEvery = o.dropEvery
    let e2ee = o.passphrase.map { E2EESecret.passphrase($0) }
    let video: any VideoSource
    do {
        if let path = o.ivf {
            video = try IVFSource(path: path)
        } else if let path = o.y4m {
            video = try Y4MSource(path: path)
        } else {
            video = StripesPattern(framesPerSecond: fps)
        }
    } catch {
        fail("share: \(error)")
    }
    ShareSignals.install()
    return runNative("share") {
        let room = AtriumRoom(url: url, token: token)
        // With the page's key rotation when someone leaves (docs/e2ee.md).
        try await room.join(JoinOptions(autoSubscribe: false), e2ee: e2ee, rotateOnLeave: e2ee != nil)
        let session = try NativePublisher(video: video, tone: tone)
        session.dropEvery = dropEvery
        await room.attach(session)
        let answer = try await room.publishMedia(
            [LocalSource(source, name: "pattern", width: video.width, height: video.height)]
                + (tone > 0 ? [LocalSource(source == .screenShare ? .screenShareAudio : .microphone)] : []))
        emitLine("{\"event\":\"published\",\"tracks\":\(answer.tracks.count)}")
        Task {
            for await e in room.events {
                if case .shareStatus(let s) = e {
                    let reason = s.reason?.rawValue ?? ""
                    let line =
                        "{\"event\":\"share_\(s.change.rawValue)\",\"shareId\":\"\(s.share.id.rawValue)\","
                        + "\"mine\":\(s.isMine),\"reason\":\"\(reason)\"}"
                    emitLine(line)
                }
                if case .closed(let code, _) = e {
                    emitLine("{\"event\":\"closed\",\"code\":\(code)}")
                    ShareSignals.stop.store(true, ordering: .relaxed)
                }
            }
        }
        let started = ContinuousClock.now
        var paused = false
        while !ShareSignals.stop.load(ordering: .relaxed) {
            if seconds > 0 && ContinuousClock.now - started > .milliseconds(Int(seconds * 1000)) { break }
            let want = ShareSignals.paused.load(ordering: .relaxed)
            if want != paused, source == .screenShare {
                paused = want
                if want { try await room.pauseScreenShare() } else { try await room.resumeScreenShare() }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        emitLine(
            "{\"event\":\"stopping\",\"framesSent\":\(session.counts.frames),\"keyFrames\":\(session.counts.keyFrames),\"retransmitted\":\(session.counts.retransmitted)}"
        )
        if source == .screenShare { try? await room.stopScreenShare() }
        await room.leave()
        return 0
    }
}

/// The signals `atrium share` acts on, as flags the loop reads.
enum ShareSignals {
    static let stop = Atomic<Bool>(false)
    static let paused = Atomic<Bool>(false)

    static func install() {
        signal(SIGINT) { _ in ShareSignals.stop.store(true, ordering: .relaxed) }
        signal(SIGTERM) { _ in ShareSignals.stop.store(true, ordering: .relaxed) }
        signal(SIGUSR1) { _ in ShareSignals.paused.store(true, ordering: .relaxed) }
        signal(SIGUSR2) { _ in ShareSignals.paused.store(false, ordering: .relaxed) }
        signal(SIGPIPE, SIG_IGN)
    }
}

/// Runs a native participant's command (`share`, `watch`) on the concurrency runtime while the main
/// thread waits for its exit code; an error ends it with 1 and a line on standard error.
func runNative(_ name: String, _ body: @escaping @Sendable () async throws -> Int32) -> Int32 {
    let done = Mutex<Int32?>(nil)
    Task {
        let code: Int32
        do {
            code = try await body()
        } catch let e as AtriumError {
            writeStderr("atrium \(name): \(e.code): \(e.message)\n")
            code = 1
        } catch {
            writeStderr("atrium \(name): \(error)\n")
            code = 1
        }
        done.withLock { $0 = code }
    }
    while true {
        if let c = done.withLock({ $0 }) { return c }
        usleep(20_000)
    }
}
