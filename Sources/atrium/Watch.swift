import AtriumCodecs
import AtriumKit
import AtriumModel
import AtriumNative
import AtriumProtocol
import AtriumSync
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `atrium watch`: a native viewer that receives the room's media, decodes it, writes the watched
/// video to a file (IVF as received, or Y4M decoded) and prints a JSON line per second.
struct WatchOptions: Sendable {
    var url = ""
    var token = ""
    var source = TrackSource.screenShare
    var participant: String?
    var share: String?
    var out: String?
    var seconds = 0.0
    var dropEvery = 0
    var estimate: UInt64 = 8_000_000
    var passphrase: String?
}

func watchOptions(_ args: ArraySlice<String>) -> WatchOptions? {
    var o = WatchOptions()
    var it = args.makeIterator()
    while let a = it.next() {
        func value() -> String {
            guard let v = it.next() else { fail("watch: \(a) needs a value") }
            return v
        }
        switch a {
        case "--url": o.url = value()
        case "--token": o.token = value()
        case "--source":
            switch value() {
            case "screen_share": o.source = .screenShare
            case "camera": o.source = .camera
            case let v: fail("watch: --source screen_share or camera, not \(v)")
            }
        case "--participant": o.participant = value()
        case "--passphrase": o.passphrase = value()
        case "--share": o.share = value()
        case "--out":
            let path = value()
            guard path.hasSuffix(".ivf") || path.hasSuffix(".y4m") else { fail("watch: --out FILE.ivf or FILE.y4m") }
            o.out = path
        case "--seconds":
            guard let n = Double(value()), n >= 0, n < 1e6 else { fail("watch: --seconds 0 to 1000000") }
            o.seconds = n
        case "--drop-every":
            guard let n = Int(value()), (0...1000).contains(n) else { fail("watch: --drop-every 0 to 1000") }
            o.dropEvery = n
        case "--estimate":
            guard let n = UInt64(value()), (50_000...100_000_000).contains(n) else {
                fail("watch: --estimate 50000 to 100000000")
            }
            o.estimate = n
        case "--help":
            print(Usage.watch)
            return nil
        default: fail("watch: unknown option \(a)\n\(Usage.watch)")
        }
    }
    guard o.url.hasPrefix("ws://") || o.url.hasPrefix("wss://"), !o.token.isEmpty else {
        fail("watch: --url ws://HOST:PORT and --token TOKEN are required\n\(Usage.watch)")
    }
    return o
}

/// What the watched video came to, on the subscriber's thread: the file and this second's counts.
/// It follows the first video track that matches (the source, `--participant`, `--share`).
final class WatchSink: Sendable {
    struct State {
        var wanted: Set<ParticipantID>?
        /// With `--share`: its video track (empty until the share is known).
        var tracks: Set<TrackID>?
        /// The track followed: the first that matched.
        var following: TrackID?
        var ivf: IVFWriter?
        var y4m: Y4MWriter?
        /// The first picture, until the second says the frame rate (Y4M has no timestamps).
        var firstPicture: ReceivedVideo?
        var firstTimestamp: UInt32?
        var written = 0
        var frames = 0
        var keyFrames = 0
        var bytes = 0
        var audioFrames = 0
        var width = 0
        var height = 0
        var stamp: UInt32?
        var fileError: String?
    }

    let state = Monitor(State())
    let source: TrackSource
    let out: String?

    init(source: TrackSource, out: String?, onlyFrom wanted: Set<ParticipantID>?) {
        self.source = source
        self.out = out
        state.withLock { $0.wanted = wanted }
    }

    func take(_ m: ReceivedMedia) {
        switch m {
        case .audio: state.withLock { $0.audioFrames += 1 }
        case .video(let v):
            state.withLock { s in
                guard v.source == source || s.tracks != nil, let track = v.track else { return }
                if let wanted = s.wanted, !(v.publisher.map(wanted.contains) ?? false) { return }
                if let tracks = s.tracks, !tracks.contains(track) { return }
                if s.following == nil { s.following = track }
                guard s.following == track else { return }
                s.frames += 1
                s.bytes += v.encoded.count
                if v.isKeyFrame { s.keyFrames += 1 }
                (s.width, s.height) = (v.picture.width, v.picture.height)
                s.stamp = FrameStamp.read(v.picture)
                write(v, &s)
            }
        }
    }

    /// The file opens with the first picture (its size is the file's; a Y4M file's frame rate from
    /// the first two pictures' timestamps).
    func write(_ v: ReceivedVideo, _ s: inout State) {
        guard let out, s.fileError == nil else { return }
        do {
            if out.hasSuffix(".ivf") {
                if s.ivf == nil { s.ivf = try IVFWriter(path: out, width: v.picture.width, height: v.picture.height) }
                let first = s.firstTimestamp ?? v.timestamp
                s.firstTimestamp = first
                try s.ivf?.append(v.encoded, timestamp: UInt64(v.timestamp &- first))
                s.written += 1
                return
            }
            if s.y4m == nil {
                guard let first = s.firstPicture else {
                    s.firstPicture = v
                    return
                }
                let ticks = v.timestamp &- first.timestamp
                let fps = ticks > 0 && ticks < 90000 ? max(1, min(120, Int((90000 + ticks / 2) / ticks))) : 30
                try openY4M(first, fps: fps, &s)
            }
            if v.picture.width == s.y4m?.width && v.picture.height == s.y4m?.height {
                try s.y4m?.append(v.picture)
                s.written += 1
            }
        } catch {
            s.fileError = "\(error)"
        }
    }

    func openY4M(_ first: ReceivedVideo, fps: Int, _ s: inout State) throws(MediaFileError) {
        guard let out else { return }
        s.y4m = try Y4MWriter(
            path: out, width: first.picture.width, height: first.picture.height, framesPerSecond: fps)
        try s.y4m?.append(first.picture)
        s.written += 1
        s.firstPicture = nil
    }

    /// A Y4M file of one picture is written at the end.
    func finish() {
        state.withLock { s in
            guard let first = s.firstPicture, s.y4m == nil, s.fileError == nil else { return }
            do { try openY4M(first, fps: 30, &s) } catch { s.fileError = "\(error)" }
        }
    }

    /// This second's counts, reset.
    func second() -> State {
        state.withLock { s in
            defer { (s.frames, s.keyFrames, s.bytes, s.audioFrames) = (0, 0, 0, 0) }
            return s
        }
    }
}

func watch(_ args: ArraySlice<String>) -> Int32 {
    guard let o = watchOptions(args) else { return 0 }
    ShareSignals.install()
    return runNative("watch") {
        let room = AtriumRoom(url: o.url, token: o.token)
        try await room.join(e2ee: o.passphrase.map { E2EESecret.passphrase($0) }, rotateOnLeave: o.passphrase != nil)
        let sink = WatchSink(source: o.source, out: o.out, onlyFrom: o.participant.map { _ in [] })
        if o.share != nil { sink.state.withLock { $0.tracks = [] } }
        // The participant's ids, by identity: now, then every second (it may join later or rejoin).
        let resolve: @Sendable () async -> Void = {
            if let identity = o.participant {
                let ids = await room.participants.values.filter { $0.identity == identity }.map(\.id)
                sink.state.withLock { $0.wanted = Set(ids) }
            }
            if let id = o.share {
                let track = await room.shares.first { $0.id.rawValue == id }?.trackId
                sink.state.withLock { $0.tracks = Set(track.map { [$0] } ?? []) }
            }
        }
        await resolve()
        let subscriber = try NativeSubscriber(estimate: o.estimate, dropEvery: o.dropEvery) { sink.take($0) }
        await room.attach(NativeMediaSession(publisher: nil, subscriber: subscriber))
        emitLine("{\"event\":\"joined\"}")
        Task {
            for await e in room.events {
                if case .shareStatus(let s) = e {
                    emitLine(
                        "{\"event\":\"share_\(s.change.rawValue)\",\"shareId\":\"\(s.share.id.rawValue)\","
                            + "\"reason\":\"\(s.reason?.rawValue ?? "")\"}")
                }
                if case .closed(let code, _) = e {
                    emitLine("{\"event\":\"closed\",\"code\":\(code)}")
                    ShareSignals.stop.store(true, ordering: .relaxed)
                }
            }
        }
        let started = ContinuousClock.now
        var last = subscriber.counts
        var second = 0
        while !ShareSignals.stop.load(ordering: .relaxed) {
            if o.seconds > 0 && ContinuousClock.now - started > .milliseconds(Int(o.seconds * 1000)) { break }
            try await Task.sleep(for: .seconds(1))
            await resolve()
            second += 1
            let s = sink.second()
            let c = subscriber.counts
            let stamp = s.stamp.map { String($0) } ?? "null"
            emitLine(
                "{\"event\":\"second\",\"second\":\(second),\"frames\":\(s.frames),\"keyFrames\":\(s.keyFrames),"
                    + "\"kbps\":\(s.bytes * 8 / 1000),\"width\":\(s.width),\"height\":\(s.height),"
                    + "\"audioFrames\":\(s.audioFrames),\"nacks\":\(c.nacksSent - last.nacksSent),"
                    + "\"plis\":\(c.keyFrameRequests - last.keyFrameRequests),"
                    + "\"repaired\":\(c.repaired - last.repaired),\"decodeErrors\":\(c.decodeErrors),"
                    + "\"decryptFailures\":\(c.decryptFailures),\"keyIndex\":\(await room.e2eeKeyIndex ?? 0),"
                    + "\"stamp\":\(stamp)}")
            if let e = s.fileError {
                writeStderr("atrium watch: \(o.out ?? ""): \(e)\n")
                return 1
            }
            last = c
        }
        await subscriber.close()
        sink.finish()
        let c = subscriber.counts
        let written = sink.second().written
        emitLine(
            "{\"event\":\"stopping\",\"frames\":\(c.frames),\"keyFrames\":\(c.keyFrames),"
                + "\"written\":\(written),\"nacks\":\(c.nacksSent),\"repaired\":\(c.repaired),"
                + "\"decodeErrors\":\(c.decodeErrors),\"decryptFailures\":\(c.decryptFailures)}")
        await room.leave()
        return 0
    }
}
