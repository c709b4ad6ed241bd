public import AtriumJSON
public import AtriumLog
public import AtriumModel
public import AtriumRooms

#if canImport(Glibc)
    import Glibc
#endif

/// The recordings of this node, on the service thread. A recording is an ffmpeg process the server
/// starts with an SDP file it writes (`RecordingSDP`, `FFmpegCommand`) and supervises from the
/// housekeeping tick; once ffmpeg has bound its ports the worker's recorders are attached (each
/// asks for a key frame), and ffmpeg copies the streams into the file. It ends with SIGINT, which
/// makes ffmpeg finish the file: on DELETE, when the share, the participant or the room ends, and at
/// shutdown. ffmpeg exiting unasked fails the recording. Every start and end is reported through
/// `onEvent` (the webhooks' `recording_started` and `recording_finished`).
public final class RecordingManager: HubObserver {
    struct Live {
        var recording: Recording
        var process: ChildProcess
        /// Per stream: the recorder id, producer, port, SSRC and payload type.
        var streams: [(recorder: String, track: TrackID, producer: String, port: Int, ssrc: UInt32, pt: UInt8)]
        var attached = false
        /// Monotonic seconds when it was started and when it was asked to stop.
        var spawnedAt: Double
        var stopAskedAt: Double?
        var roomName: String?
        /// Why the server gave up on it, if it did.
        var failure: String?
    }

    let directory: String
    let ffmpeg: String
    let plane: any RecordingPlane
    let logger: Logger
    let now: () -> Int64
    let monotonic: () -> Double
    let makeID: () -> String
    let random32: () -> UInt32
    /// Told of each recording's start and end: (type, room, room name, data).
    public var onEvent: ((String, RoomID, String?, JSONObject) -> Void)?
    var live: [String: Live] = [:]
    let keepalive = KeepaliveSocket()
    /// Recordings that ended, newest last (the last 100 per node).
    var done: [Recording] = []

    /// Seconds ffmpeg gets to bind its ports (the recorders are attached once it has: what is sent
    /// before is lost), and to finish the file after SIGINT before it is killed.
    static let bindTimeout = 20.0
    static let finishTimeout = Double(FFmpegCommand.listenTimeout) + 10

    public init(
        directory: String, ffmpeg: String, plane: any RecordingPlane, logger: Logger, now: @escaping () -> Int64,
        monotonic: @escaping () -> Double, makeID: @escaping () -> String, random32: @escaping () -> UInt32
    ) {
        self.directory = directory
        self.ffmpeg = ffmpeg
        self.plane = plane
        self.logger = logger
        self.now = now
        self.monotonic = monotonic
        self.makeID = makeID
        self.random32 = random32
    }

    public func list(room: RoomID) -> [Recording] {
        (done.filter { $0.room == room } + live.values.map(\.recording).filter { $0.room == room })
            .sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
    }

    public func recording(room: RoomID, id: String) -> Recording? {
        if let l = live[id], l.recording.room == room { return l.recording }
        return done.last { $0.id == id && $0.room == room }
    }

    /// Starts recording what `request` names in a live room.
    public func start(_ request: RecordingRequest, room: Room, state: RoomState) throws(RecordingError) -> Recording {
        let target = try request.target(in: state)
        let tracks = RecordingRequest.tracks(of: target, in: state).compactMap { t in
            plane.recordable(t.id).map { (t.id, $0) }
        }
        guard !tracks.isEmpty else { throw .nothingToRecord }
        let container =
            request.container ?? (tracks.allSatisfy { RecordingContainer.webm.accepts($0.1.codec) } ? .webm : .mkv)
        if let bad = tracks.first(where: { !container.accepts($0.1.codec) }) {
            throw .codecUnsupported(codec: bad.1.codec, container: container)
        }
        let id = makeID()
        let dir = directory + "/" + room.id.rawValue
        guard Self.makeDirectories(dir) else { throw .unavailable("cannot create \(dir)") }
        var streams: [(recorder: String, track: TrackID, producer: String, port: Int, ssrc: UInt32, pt: UInt8)] = []
        var described: [RecordedStream] = []
        for (i, (track, media)) in tracks.enumerated() {
            guard let port = LocalPorts.freePair() else { throw .unavailable("no free UDP port on 127.0.0.1") }
            let pt: UInt8 = media.kind == .audio ? 111 : 96
            streams.append((id + "-\(i)", track, media.producer, port, max(1, random32()), pt))
            described.append(
                RecordedStream(
                    kind: media.kind, codec: media.codec, clockRate: media.clockRate,
                    channels: media.kind == .audio ? 2 : nil, payloadType: pt, port: port))
        }
        let base = dir + "/" + id
        let sdpPath = base + ".sdp"
        let output = base + "." + container.rawValue
        guard Self.write(RecordingSDP.write(described, name: "Atrium recording \(id)"), to: sdpPath) else {
            throw .unavailable("cannot write \(sdpPath)")
        }
        let args = FFmpegCommand.arguments(ffmpeg: ffmpeg, sdp: sdpPath, output: output, container: container)
        guard let process = ChildProcess(arguments: args, logPath: base + ".log") else {
            throw .unavailable("cannot run \(ffmpeg)")
        }
        let recording = Recording(
            id: id, room: room.id, target: target, container: container, state: .starting, tracks: tracks.map(\.0),
            path: output, startedAt: now())
        live[id] = Live(
            recording: recording, process: process, streams: streams, spawnedAt: monotonic(), roomName: room.name)
        logger.info(
            "recording started", ("recording", id), ("room", room.id.rawValue), ("file", output),
            ("pid", String(process.pid)))
        onEvent?("recording_started", room.id, room.name, ["recording": recording.json])
        return recording
    }

    /// Asks ffmpeg to finish the file (DELETE); the recording is `stopping` until it has.
    public func stop(room: RoomID, id: String) throws(RecordingError) -> Recording {
        guard let l = live[id], l.recording.room == room else {
            if let r = recording(room: room, id: id) { return r }
            throw .recordingNotFound(id)
        }
        stop(id, reason: "stopped")
        return live[id]?.recording ?? l.recording
    }

    func stop(_ id: String, reason: String) {
        guard var l = live[id], l.stopAskedAt == nil else { return }
        // The recorders stay attached until ffmpeg exits: it acts on the signal at its next packet.
        l.stopAskedAt = monotonic()
        l.recording.state = .stopping
        l.recording.stopReason = reason
        l.recording.endedAt = now()
        l.process.signal(SIGINT)
        live[id] = l
    }

    /// Supervision, from the housekeeping tick: attaches the recorders once ffmpeg listens, reaps
    /// ffmpeg when it exited and kills one that does not finish in time.
    public func tick() {
        guard !live.isEmpty else { return }
        let t = monotonic()
        let bound = live.values.contains { !$0.attached } ? LocalPorts.boundUDPPorts(LocalPorts.readProcNetUDP()) : []
        for (id, var l) in live {
            if let status = l.process.poll() {
                finish(id, l, status: status)
                continue
            }
            if !l.attached && l.stopAskedAt == nil && l.failure == nil && t - l.spawnedAt >= Self.bindTimeout {
                // Packets sent before ffmpeg listens are lost, the first key frame with them.
                l.failure = "ffmpeg did not open its ports within \(Int(Self.bindTimeout)) s"
                l.process.signal(SIGKILL)
                live[id] = l
                continue
            }
            if !l.attached && l.stopAskedAt == nil && l.failure == nil
                && l.streams.allSatisfy({ bound.contains($0.port) })
            {
                for s in l.streams {
                    plane.attach(
                        recorder: s.recorder, producer: s.producer, port: s.port, ssrc: s.ssrc, payloadType: s.pt,
                        line: nil)
                }
                l.attached = true
                l.recording.state = .recording
                live[id] = l
            }
            if let asked = l.stopAskedAt {
                // ffmpeg acts on SIGINT at its next packet, or ends its input once the keepalives
                // stopped for its listen timeout (a share that ended sends nothing): either way it
                // finishes the file. (A second SIGINT would cut the file's trailer.)
                if t - asked >= Self.finishTimeout { l.process.signal(SIGKILL) }
            } else if let keepalive {
                for s in l.streams {
                    keepalive.send(
                        KeepaliveSocket.receiverReport(ssrc: s.ssrc ^ 0x5A5A_5A5A), toLoopbackPort: s.port + 1)
                }
            }
        }
    }

    private func finish(_ id: String, _ l: Live, status: Int32) {
        live[id] = nil
        var r = l.recording
        for s in l.streams { plane.detach(recorder: s.recorder) }
        if l.stopAskedAt == nil {
            r.endedAt = now()
            r.stopReason = "ffmpeg_exited"
        }
        r.sizeBytes = Self.fileSize(r.path)
        // ffmpeg exits 255 after finishing the file on SIGINT.
        let asked = l.stopAskedAt != nil
        if asked && (status == 0 || status == 255) && (r.sizeBytes ?? 0) > 0 {
            r.state = .finished
        } else {
            r.state = .failed
            r.error =
                l.failure
                ?? (asked && status == 128 + SIGKILL
                    ? "ffmpeg did not finish the file in time"
                    : "ffmpeg exited with status \(status); see \(r.path.dropLast(r.container.rawValue.count))log")
        }
        done.append(r)
        if done.count > 100 { done.removeFirst(done.count - 100) }
        logger.info(
            "recording ended", ("recording", id), ("state", r.state.rawValue), ("size", String(r.sizeBytes ?? 0)),
            ("status", String(status)))
        onEvent?("recording_finished", r.room, l.roomName, ["recording": r.json])
    }

    /// Stops every recording and waits (up to `finishTimeout`) for the files to be finished.
    public func shutdown() {
        for id in live.keys { stop(id, reason: "server_shutdown") }
        let deadline = monotonic() + Self.finishTimeout
        while !live.isEmpty && monotonic() < deadline {
            tick()
            usleep(50_000)
        }
        for l in live.values { l.process.signal(SIGKILL) }
        tick()
    }

    // MARK: - HubObserver

    public func roomOpened(_ room: Room, now: Int64) {}

    public func roomEvents(_ events: [RoomEvent], room: Room, now: Int64) {
        for e in events {
            switch e {
            case .shareStopped(let s, _, _):
                for (id, l) in live where l.recording.target == .share(s.id) { stop(id, reason: "share_ended") }
            case .participantLeft(let p, _):
                for (id, l) in live where l.recording.target == .participant(p.id) {
                    stop(id, reason: "participant_left")
                }
            case .roomEnded:
                for (id, l) in live where l.recording.room == room.id { stop(id, reason: "room_ended") }
            default: break
            }
        }
    }

    public func roomClosed(_ room: Room, reason: RoomCloseReason, now: Int64) {
        for (id, l) in live where l.recording.room == room.id { stop(id, reason: "room_ended") }
    }

    // MARK: - Files

    static func makeDirectories(_ path: String) -> Bool {
        var prefix = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            prefix += "/" + part
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST { return false }
        }
        return true
    }

    static func write(_ text: String, to path: String) -> Bool {
        guard let f = fopen(path, "w") else { return false }
        defer { fclose(f) }
        let bytes = Array(text.utf8)
        return fwrite(bytes, 1, bytes.count, f) == bytes.count
    }

    static func fileSize(_ path: String) -> Int64? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Int64(st.st_size)
    }
}
