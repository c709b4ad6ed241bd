public import AtriumJSON
public import AtriumLog
public import AtriumModel
public import AtriumRooms

#if canImport(Glibc)
    import Glibc
#endif

/// The live streams of this node, on the service thread. A stream is an ffmpeg process (`StreamCommand`)
/// fed by two recorder lines of the media plane (`StreamLine`): video and audio that run on while the
/// followed tracks change hands, pause or stop (the line repeats the last picture, and sends silence).
/// Each housekeeping tick follows the room: the tracks its source names now are attached to the lines;
/// a video codec other than ffmpeg's restarts ffmpeg (its SDP names one codec). ffmpeg exiting unasked
/// fails the stream, which `restart` starts again. Every change of state is told through `onEvent`
/// (the webhooks' `stream_started`, `stream_ended`, `stream_failed`).
public final class StreamManager: HubObserver {
    struct Attached: Equatable {
        var recorder: String
        var track: TrackID
    }

    struct Live {
        var stream: LiveStream
        var roomName: String?
        var process: ChildProcess?
        var ports: (video: Int, audio: Int) = (0, 0)
        var lines: (video: StreamLine, audio: StreamLine)?
        var video: Attached?
        var audio: Attached?
        var bound = false
        var spawnedAt = 0.0
        var stopAskedAt: Double?
        /// Why the running ffmpeg was asked to stop: the stream ends, or it starts again.
        var restarting = false
        var generation = 0
        var lastSpeaker: ParticipantID?
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
    /// The live room's state (the hub's), read each tick.
    let rooms: (RoomID) -> RoomState?
    /// Told of each start, end and failure: (type, room, room name, data).
    public var onEvent: ((String, RoomID, String?, JSONObject) -> Void)?
    var live: [String: Live] = [:]
    /// Streams that ended, newest last (the last 100 per node).
    var done: [LiveStream] = []

    static let bindTimeout = 20.0
    static let finishTimeout = 10.0

    public init(
        directory: String, ffmpeg: String, plane: any RecordingPlane, logger: Logger, now: @escaping () -> Int64,
        monotonic: @escaping () -> Double, makeID: @escaping () -> String, random32: @escaping () -> UInt32,
        rooms: @escaping (RoomID) -> RoomState?
    ) {
        self.directory = directory
        self.ffmpeg = ffmpeg
        self.plane = plane
        self.logger = logger
        self.now = now
        self.monotonic = monotonic
        self.makeID = makeID
        self.random32 = random32
        self.rooms = rooms
    }

    /// Streams not ended, for the metrics.
    public var liveCount: Int { live.count }

    public func list(room: RoomID) -> [LiveStream] {
        (done.filter { $0.room == room } + live.values.map(\.stream).filter { $0.room == room })
            .sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
    }

    public func stream(room: RoomID, id: String) -> LiveStream? {
        if let l = live[id], l.stream.room == room { return l.stream }
        return done.last { $0.id == id && $0.room == room }
    }

    /// The directory of an HLS stream's playlist and segments.
    public func hlsDirectory(room: RoomID, id: String) -> String {
        directory + "/" + room.rawValue + "/" + id
    }

    /// Starts a stream of a live room; ffmpeg starts once its source has video.
    public func start(_ request: StreamRequest, room: Room) throws(StreamError) -> LiveStream {
        guard rooms(room.id) != nil else { throw .roomNotLive }
        let id = makeID()
        var stream = LiveStream(
            id: id, room: room.id, source: request.source, output: request.output, state: .waiting,
            startedAt: now())
        if request.output == .hls {
            guard RecordingManager.makeDirectories(hlsDirectory(room: room.id, id: id)) else {
                throw .unavailable("cannot create \(hlsDirectory(room: room.id, id: id))")
            }
            stream.playlist = "/v1/rooms/\(room.id.rawValue)/streams/\(id)/hls/\(StreamCommand.hlsPlaylist)"
        }
        live[id] = Live(stream: stream, roomName: room.name)
        logger.info("stream created", ("stream", id), ("room", room.id.rawValue), ("source", request.source.name))
        tick()
        return live[id]?.stream ?? stream
    }

    /// Ends a stream (DELETE): ffmpeg is asked to finish; `ended` once it has.
    public func stop(room: RoomID, id: String) throws(StreamError) -> LiveStream {
        guard let l = live[id], l.stream.room == room else {
            if let s = stream(room: room, id: id) { return s }
            throw .streamNotFound(id)
        }
        stop(id, reason: "stopped")
        return live[id]?.stream ?? l.stream
    }

    /// Starts a failed stream again, or restarts a running one's ffmpeg.
    public func restart(room: RoomID, id: String) throws(StreamError) -> LiveStream {
        guard var l = live[id], l.stream.room == room else {
            if stream(room: room, id: id) != nil { throw .streamEnded(id) }
            throw .streamNotFound(id)
        }
        if l.process != nil {
            ask(&l, restart: true)
        } else {
            l.stream.state = .waiting
            l.stream.error = nil
            l.failure = nil
        }
        live[id] = l
        tick()
        return live[id]?.stream ?? l.stream
    }

    func stop(_ id: String, reason: String) {
        guard var l = live[id] else { return }
        l.stream.stopReason = reason
        if l.process == nil {
            end(id, l, state: .ended)
            return
        }
        ask(&l, restart: false)
        live[id] = l
    }

    private func ask(_ l: inout Live, restart: Bool) {
        l.restarting = restart
        if restart { l.stream.state = .restarting }
        guard l.stopAskedAt == nil else { return }
        l.stopAskedAt = monotonic()
        l.process?.signal(SIGINT)
    }

    // MARK: - Supervision

    /// From the housekeeping tick: reaps ffmpeg, starts it when there is video, attaches the lines
    /// once it listens, and follows the room.
    public func tick() {
        guard !live.isEmpty else { return }
        let t = monotonic()
        let bound =
            live.values.contains { $0.process != nil && !$0.bound }
            ? LocalPorts.boundUDPPorts(LocalPorts.readProcNetUDP()) : []
        for id in Array(live.keys) {
            guard var l = live[id] else { continue }
            if let p = l.process, let status = p.poll() {
                exited(id, &l, status: status)
                guard let now = live[id] else { continue }
                l = now
            }
            if let asked = l.stopAskedAt, t - asked >= Self.finishTimeout { l.process?.signal(SIGKILL) }
            let targets = self.targets(&l)
            if l.process == nil, l.stream.state != .failed, let v = targets.video, let media = plane.recordable(v) {
                spawn(id, &l, codec: media.codec)
            }
            if l.process != nil, !l.bound, l.stopAskedAt == nil {
                if bound.contains(l.ports.video) && bound.contains(l.ports.audio) {
                    openLines(id, &l)
                } else if t - l.spawnedAt >= Self.bindTimeout {
                    l.failure = "ffmpeg did not open its ports within \(Int(Self.bindTimeout)) s"
                    l.process?.signal(SIGKILL)
                }
            }
            if l.bound && l.stopAskedAt == nil {
                if let v = targets.video, let media = plane.recordable(v),
                    media.codec.uppercased() != l.stream.videoCodec?.uppercased()
                {
                    // ffmpeg's SDP names one codec: another one needs another ffmpeg.
                    ask(&l, restart: true)
                } else {
                    follow(&l, targets)
                }
            }
            live[id] = l
        }
    }

    /// The tracks the stream's source names now (the active speaker sticks while nobody speaks).
    private func targets(_ l: inout Live) -> (video: TrackID?, audio: TrackID?) {
        guard let state = rooms(l.stream.room) else { return (nil, nil) }
        let speaker = plane.activeSpeaker(in: l.stream.room) ?? l.lastSpeaker
        l.lastSpeaker = speaker
        return l.stream.source.tracks(in: state, speaker: speaker) { plane.recordable($0) != nil }
    }

    private func spawn(_ id: String, _ l: inout Live, codec: String) {
        guard let video = LocalPorts.freePair(), let audio = LocalPorts.freePair(), video != audio else {
            fail(id, &l, "no free UDP port on 127.0.0.1")
            return
        }
        l.generation += 1
        let base = directory + "/" + l.stream.room.rawValue + "/" + id
        guard RecordingManager.makeDirectories(base) else {
            fail(id, &l, "cannot create \(base)")
            return
        }
        let sdpPath = base + "/input-\(l.generation).sdp"
        let streams = [
            RecordedStream(kind: .video, codec: codec, clockRate: 90000, channels: nil, payloadType: 96, port: video),
            RecordedStream(kind: .audio, codec: "opus", clockRate: 48000, channels: 2, payloadType: 111, port: audio),
        ]
        guard RecordingManager.write(RecordingSDP.write(streams, name: "Atrium stream \(id)"), to: sdpPath) else {
            fail(id, &l, "cannot write \(sdpPath)")
            return
        }
        let args = StreamCommand.arguments(
            ffmpeg: ffmpeg, sdp: sdpPath, videoCodec: codec, output: l.stream.output, hlsDirectory: base)
        guard let process = ChildProcess(arguments: args, logPath: base + "/ffmpeg.log") else {
            fail(id, &l, "cannot run \(ffmpeg)")
            return
        }
        l.process = process
        l.ports = (video, audio)
        l.bound = false
        l.spawnedAt = monotonic()
        l.stopAskedAt = nil
        l.restarting = false
        l.stream.videoCodec = codec
        l.stream.state = .starting
        l.stream.error = nil
        logger.info("stream ffmpeg started", ("stream", id), ("codec", codec), ("pid", String(process.pid)))
    }

    /// ffmpeg listens: the lines open toward it (audio silence at once, video from the first key frame).
    private func openLines(_ id: String, _ l: inout Live) {
        let g = l.generation
        let lines = (
            video: StreamLine(
                id: "\(id)-\(g)-v", kind: .video, port: l.ports.video, ssrc: max(1, random32()), payloadType: 96,
                clockRate: 90000),
            audio: StreamLine(
                id: "\(id)-\(g)-a", kind: .audio, port: l.ports.audio, ssrc: max(1, random32()), payloadType: 111,
                clockRate: 48000)
        )
        plane.openLine(lines.video, room: l.stream.room)
        plane.openLine(lines.audio, room: l.stream.room)
        l.lines = lines
        l.bound = true
        l.stream.state = .live
        logger.info("stream live", ("stream", id), ("restarts", String(l.stream.restarts)))
        onEvent?("stream_started", l.stream.room, l.roomName, ["stream": l.stream.json])
    }

    /// The lines carry the tracks the source names now.
    private func follow(_ l: inout Live, _ targets: (video: TrackID?, audio: TrackID?)) {
        guard let lines = l.lines else { return }
        func retarget(_ current: inout Attached?, _ track: TrackID?, _ line: StreamLine) {
            guard current?.track != track else { return }
            if let c = current { plane.detach(recorder: c.recorder) }
            current = nil
            guard let track, let media = plane.recordable(track) else { return }
            let recorder = "\(line.id)-\(track.rawValue)"
            plane.attach(
                recorder: recorder, producer: media.producer, port: line.port, ssrc: line.ssrc,
                payloadType: line.payloadType, line: line.id)
            current = Attached(recorder: recorder, track: track)
        }
        retarget(&l.video, targets.video, lines.video)
        retarget(&l.audio, targets.audio, lines.audio)
        l.stream.video = l.video?.track
        l.stream.audio = l.audio?.track
    }

    private func release(_ l: inout Live) {
        if let v = l.video { plane.detach(recorder: v.recorder) }
        if let a = l.audio { plane.detach(recorder: a.recorder) }
        if let lines = l.lines {
            plane.closeLine(lines.video.id)
            plane.closeLine(lines.audio.id)
        }
        l.video = nil
        l.audio = nil
        l.lines = nil
        l.bound = false
        l.process = nil
    }

    private func exited(_ id: String, _ l: inout Live, status: Int32) {
        let asked = l.stopAskedAt != nil
        release(&l)
        l.stopAskedAt = nil
        if asked && l.restarting {
            // Started again at once (this tick) with the codec the source has now.
            l.restarting = false
            l.stream.restarts += 1
            l.stream.state = .waiting
            live[id] = l
            return
        }
        if asked {
            end(id, l, state: .ended)
            return
        }
        fail(id, &l, l.failure ?? "ffmpeg exited with status \(status); see its ffmpeg.log")
    }

    private func fail(_ id: String, _ l: inout Live, _ why: String) {
        release(&l)
        l.stream.state = .failed
        l.stream.error = why
        l.failure = nil
        live[id] = l
        logger.warn("stream failed", ("stream", id), ("error", why))
        onEvent?("stream_failed", l.stream.room, l.roomName, ["stream": l.stream.json])
    }

    private func end(_ id: String, _ l: Live, state: LiveStreamState) {
        var l = l
        release(&l)
        live[id] = nil
        l.stream.state = state
        l.stream.endedAt = now()
        done.append(l.stream)
        if done.count > 100 { done.removeFirst(done.count - 100) }
        logger.info("stream ended", ("stream", id), ("reason", l.stream.stopReason ?? ""))
        onEvent?("stream_ended", l.stream.room, l.roomName, ["stream": l.stream.json])
    }

    /// Ends every stream and waits (up to `finishTimeout`) for ffmpeg to finish.
    public func shutdown() {
        for id in live.keys { stop(id, reason: "server_shutdown") }
        let deadline = monotonic() + Self.finishTimeout
        while !live.isEmpty && monotonic() < deadline {
            for (id, var l) in live {
                if let status = l.process?.poll() { exited(id, &l, status: status) }
            }
            usleep(50_000)
        }
        for l in live.values { l.process?.signal(SIGKILL) }
    }

    // MARK: - HubObserver

    public func roomOpened(_ room: Room, now: Int64) {}
    public func roomEvents(_ events: [RoomEvent], room: Room, now: Int64) {}

    public func roomClosed(_ room: Room, reason: RoomCloseReason, now: Int64) {
        for (id, l) in live where l.stream.room == room.id { stop(id, reason: "room_ended") }
    }
}
