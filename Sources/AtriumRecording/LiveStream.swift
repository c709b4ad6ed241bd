public import AtriumJSON
public import AtriumModel
public import AtriumRooms

/// What a live stream follows.
public enum StreamSource: Equatable, Sendable {
    /// The room's active share (the newest running one, else the newest paused one), with its audio,
    /// else its sharer's microphone.
    case share
    /// One participant, by identity (it may leave and come back): its camera, else its screen share;
    /// its microphone, else its share audio.
    case participant(String)
    /// The room's active speaker (the last one while nobody speaks): its camera, else its screen share,
    /// and its microphone.
    case speaker

    var name: String {
        switch self {
        case .share: "share"
        case .participant: "participant"
        case .speaker: "speaker"
        }
    }

    /// The video and audio tracks to stream now, among those `hasMedia` says have media; `speaker`
    /// is the active speaker (or the last one). Pure.
    public func tracks(in state: RoomState, speaker: ParticipantID?, hasMedia: (TrackID) -> Bool) -> (
        video: TrackID?, audio: TrackID?
    ) {
        func of(_ p: ParticipantID, _ sources: [TrackSource]) -> TrackID? {
            let tracks = state.tracks(of: p).filter { hasMedia($0.id) }
            for s in sources { if let t = tracks.first(where: { $0.source == s }) { return t.id } }
            return nil
        }
        switch self {
        case .share:
            let live = state.shares.filter { hasMedia($0.videoTrack) }
            guard let share = live.last(where: { $0.state == .started }) ?? live.last else { return (nil, nil) }
            let audio = share.audioTrack.flatMap { hasMedia($0) ? $0 : nil } ?? of(share.sharer, [.microphone])
            return (share.videoTrack, audio)
        case .participant(let identity):
            guard let p = state.participant(identity: identity) else { return (nil, nil) }
            return (of(p.id, [.camera, .screenShare]), of(p.id, [.microphone, .screenShareAudio]))
        case .speaker:
            guard let p = speaker, state.participants[p] != nil else { return (nil, nil) }
            return (of(p, [.camera, .screenShare]), of(p, [.microphone]))
        }
    }
}

/// Where a live stream goes.
public enum StreamOutput: Equatable, Sendable {
    /// An RTMP or RTMPS ingest URL (a streaming platform, an nginx-rtmp server).
    case rtmp(String)
    /// HLS into the data directory, served by the server under a token.
    case hls
}

/// A live stream's life: waiting for video (ffmpeg not started), starting (ffmpeg binding its ports),
/// live, restarting (a new codec, or a restart asked for), then ended or failed (ffmpeg exited on
/// its own: restartable).
public enum LiveStreamState: String, Sendable {
    case waiting, starting, live, restarting, ended, failed
}

/// One live stream, as the admin API lists it and its webhooks carry it.
public struct LiveStream: Equatable, Sendable {
    public var id: String
    public var room: RoomID
    public var source: StreamSource
    public var output: StreamOutput
    public var state: LiveStreamState
    /// The tracks streamed now.
    public var video: TrackID?
    public var audio: TrackID?
    /// The codec ffmpeg receives (`VP8`, `VP9`, `H264`, `AV1`) since its last start.
    public var videoCodec: String?
    /// The HLS playlist's path under the API (HLS only).
    public var playlist: String?
    public var startedAt: Int64
    public var endedAt: Int64?
    /// Why it ended: `stopped` (DELETE), `room_ended`, `server_shutdown`.
    public var stopReason: String?
    public var error: String?
    /// ffmpeg starts after the first (a codec change, a restart).
    public var restarts = 0

    public var json: JSONValue {
        var o: JSONObject = [
            "id": .string(id), "roomId": .string(room.rawValue), "source": .string(source.name),
            "state": .string(state.rawValue), "videoTrackId": video.map { .string($0.rawValue) } ?? .null,
            "audioTrackId": audio.map { .string($0.rawValue) } ?? .null,
            "videoCodec": videoCodec.map { .string($0) } ?? .null, "startedAt": .int(startedAt),
            "endedAt": endedAt.map { .int($0) } ?? .null, "stopReason": stopReason.map { .string($0) } ?? .null,
            "error": error.map { .string($0) } ?? .null, "restarts": .int(Int64(restarts)),
        ]
        if case .participant(let identity) = source { o["participantIdentity"] = .string(identity) }
        switch output {
        case .rtmp(let url): o["rtmpUrl"] = .string(Self.redacted(url))
        case .hls:
            o["hls"] = .bool(true)
            o["playlist"] = playlist.map { .string($0) } ?? .null
        }
        return .object(o)
    }

    /// An RTMP URL without its stream key (the last path segment), which is a secret.
    static func redacted(_ url: String) -> String {
        guard let slash = url.lastIndex(of: "/"), url[url.index(after: slash)...].count > 0,
            url.distance(from: url.startIndex, to: slash) > 8
        else { return url }
        return String(url[...slash]) + "***"
    }
}

/// Why a stream request was refused; the admin API maps each to a documented error.
public enum StreamError: Error, Equatable, Sendable {
    case invalidField(String, String)
    case roomNotLive
    case streamNotFound(String)
    /// A restart of a stream that ended.
    case streamEnded(String)
    case unavailable(String)
}

/// A `POST /v1/rooms/{roomId}/streams` body, checked: `{"source": "share" | "participant" |
/// "speaker", "participantId"?: identity, "rtmpUrl": "rtmp(s)://..."}` or `{..., "hls": true}`.
public struct StreamRequest: Equatable, Sendable {
    public var source: StreamSource
    public var output: StreamOutput

    public static let fields: Set<String> = ["source", "participantId", "rtmpUrl", "hls"]
    static let maxURLBytes = 2048

    public init(source: StreamSource, output: StreamOutput) {
        self.source = source
        self.output = output
    }

    public init(json body: JSONObject) throws(StreamError) {
        for key in body.keys where !Self.fields.contains(key) { throw .invalidField(key, "unknown field") }
        let participant = body["participantId"]?.stringValue
        switch body["source"]?.stringValue ?? "share" {
        case "share": source = .share
        case "speaker": source = .speaker
        case "participant":
            guard let p = participant, !p.isEmpty, p.utf8.count <= 256 else {
                throw .invalidField("participantId", "an identity of 1 to 256 bytes is required")
            }
            source = .participant(p)
        default: throw .invalidField("source", "expected share, participant or speaker")
        }
        if participant != nil, source.name != "participant" {
            throw .invalidField("participantId", "only with source participant")
        }
        let hls = body["hls"]?.boolValue ?? false
        if let v = body["hls"], v.boolValue == nil { throw .invalidField("hls", "expected true or false") }
        switch (body["rtmpUrl"], hls) {
        case (nil, true): output = .hls
        case (let u?, false):
            guard let url = u.stringValue, Self.isRTMP(url) else {
                throw .invalidField("rtmpUrl", "expected an rtmp:// or rtmps:// URL of at most 2048 bytes")
            }
            output = .rtmp(url)
        case (nil, false), (_?, true): throw .invalidField("rtmpUrl", "give exactly one of rtmpUrl and hls")
        }
    }

    /// An RTMP(S) URL with a host and nothing ffmpeg could read as an option or another protocol.
    static func isRTMP(_ url: String) -> Bool {
        guard url.utf8.count <= maxURLBytes, url.hasPrefix("rtmp://") || url.hasPrefix("rtmps://") else {
            return false
        }
        let rest = url.drop { $0 != ":" }.dropFirst(3)
        guard let host = rest.split(separator: "/", omittingEmptySubsequences: false).first, !host.isEmpty else {
            return false
        }
        return url.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F }
    }
}
