public import AtriumJSON
public import AtriumModel
import AtriumRooms

/// A recording's life: ffmpeg starting (ports not bound yet), recording, asked to finish the file,
/// then finished, or failed (ffmpeg exited on its own, or could not be started).
public enum RecordingState: String, Sendable {
    case starting, recording, stopping, finished, failed
}

/// One recording, as the admin API lists it and `recording_started`/`recording_finished` carry it.
public struct Recording: Equatable, Sendable {
    public var id: String
    public var room: RoomID
    public var target: RecordingTarget
    public var container: RecordingContainer
    public var state: RecordingState
    public var tracks: [TrackID]
    /// The file ffmpeg writes.
    public var path: String
    /// Unix milliseconds.
    public var startedAt: Int64
    public var endedAt: Int64?
    /// Why it stopped: `stopped` (DELETE), `share_ended`, `participant_left`, `room_ended`,
    /// `server_shutdown`, `ffmpeg_exited`.
    public var stopReason: String?
    public var sizeBytes: Int64?
    public var error: String?

    public var durationMs: Int64? { endedAt.map { max(0, $0 - startedAt) } }

    public var json: JSONValue {
        var o: JSONObject = [
            "id": .string(id), "roomId": .string(room.rawValue), "what": .string(target.what),
            "container": .string(container.rawValue), "state": .string(state.rawValue),
            "trackIds": .array(tracks.map { .string($0.rawValue) }), "path": .string(path),
            "startedAt": .int(startedAt), "endedAt": endedAt.map { .int($0) } ?? .null,
            "durationMs": durationMs.map { .int($0) } ?? .null, "sizeBytes": sizeBytes.map { .int($0) } ?? .null,
            "stopReason": stopReason.map { .string($0) } ?? .null, "error": error.map { .string($0) } ?? .null,
        ]
        switch target {
        case .share(let s): o["shareId"] = .string(s.rawValue)
        case .participant(let p): o["participantId"] = .string(p.rawValue)
        case .room: break
        }
        return .object(o)
    }
}

/// The media of a track as a recorder can follow it.
public struct RecordableTrack: Equatable, Sendable {
    /// The worker's producer id.
    public var producer: String
    public var kind: RecordedStream.Kind
    /// `VP8`, `VP9`, `H264`, `AV1` or `opus`.
    public var codec: String
    public var clockRate: UInt32

    public init(producer: String, kind: RecordedStream.Kind, codec: String, clockRate: UInt32) {
        self.producer = producer
        self.kind = kind
        self.codec = codec
        self.clockRate = clockRate
    }
}

/// What recordings and live streams need of the media plane (the composition root adapts the media
/// coordinator and worker): the producer of a track, recorders attached to producers (into a line,
/// for a stream) and detached, a stream's continuous lines, and a room's active speaker.
public protocol RecordingPlane: AnyObject {
    func recordable(_ track: TrackID) -> RecordableTrack?
    func attach(recorder: String, producer: String, port: Int, ssrc: UInt32, payloadType: UInt8, line: String?)
    func detach(recorder: String)
    func openLine(_ line: StreamLine, room: RoomID)
    func closeLine(_ id: String)
    func activeSpeaker(in room: RoomID) -> ParticipantID?
}

/// One continuous RTP output of a live stream toward its ffmpeg (the media plane's recorder line).
public struct StreamLine: Equatable, Sendable {
    public var id: String
    public var kind: RecordedStream.Kind
    public var port: Int
    public var ssrc: UInt32
    public var payloadType: UInt8
    public var clockRate: UInt32
}
