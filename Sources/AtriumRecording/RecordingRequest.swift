public import AtriumJSON
public import AtriumModel
public import AtriumRooms

/// What a recording records.
public enum RecordingTarget: Equatable, Sendable {
    /// A screen share: its video and, if it has one, its audio.
    case share(ShareID)
    /// Every track a participant publishes when the recording starts.
    case participant(ParticipantID)
    /// Every track of the room when the recording starts.
    case room

    var what: String {
        switch self {
        case .share: "share"
        case .participant: "participant"
        case .room: "room"
        }
    }
}

/// The file format ffmpeg writes, streams copied as they arrive (`-c copy`): WebM takes VP8, VP9, AV1
/// and Opus; MP4 H264, VP9, AV1 and Opus; Matroska all of them.
public enum RecordingContainer: String, Sendable, CaseIterable {
    case webm, mkv, mp4

    public func accepts(_ codec: String) -> Bool {
        switch self {
        case .mkv: true
        case .webm: ["vp8", "vp9", "av1", "opus"].contains(codec.lowercased())
        case .mp4: ["h264", "vp9", "av1", "opus"].contains(codec.lowercased())
        }
    }
}

/// Why a recording request was refused; the admin API maps each to a documented error.
public enum RecordingError: Error, Equatable, Sendable {
    case invalidField(String, String)
    /// The room has no live state on this node (nobody is in it).
    case roomNotLive
    case shareNotFound(String)
    case participantNotFound(String)
    /// None of the chosen tracks has media yet.
    case nothingToRecord
    /// The container cannot hold a chosen track's codec without re-encoding.
    case codecUnsupported(codec: String, container: RecordingContainer)
    case recordingNotFound(String)
    /// ffmpeg could not be started (not installed, no free port, the directory not writable).
    case unavailable(String)
}

/// A `POST /v1/rooms/{roomId}/recordings` body, checked: `{"what": "share", "shareId"?}`,
/// `{"what": "participant", "participantId"}` (an id or an identity), or `{"what": "room"}`, and an
/// optional `"container"` (default: WebM when every codec fits it, else Matroska).
public struct RecordingRequest: Equatable, Sendable {
    public var what: String
    public var shareID: String?
    public var participant: String?
    public var container: RecordingContainer?

    public static let fields: Set<String> = ["what", "shareId", "participantId", "container"]

    public init(what: String, shareID: String? = nil, participant: String? = nil, container: RecordingContainer? = nil)
    {
        self.what = what
        self.shareID = shareID
        self.participant = participant
        self.container = container
    }

    public init(json body: JSONObject) throws(RecordingError) {
        for key in body.keys where !Self.fields.contains(key) { throw .invalidField(key, "unknown field") }
        guard let what = body["what"]?.stringValue, ["share", "participant", "room"].contains(what) else {
            throw .invalidField("what", "expected share, participant or room")
        }
        self.what = what
        func text(_ key: String) throws(RecordingError) -> String? {
            guard let v = body[key], !v.isNull else { return nil }
            guard let s = v.stringValue, !s.isEmpty, s.utf8.count <= 128 else {
                throw .invalidField(key, "expected a non-empty string of at most 128 bytes")
            }
            return s
        }
        shareID = try text("shareId")
        participant = try text("participantId")
        if let c = try text("container") {
            guard let k = RecordingContainer(rawValue: c) else {
                throw .invalidField("container", "expected webm, mkv or mp4")
            }
            container = k
        }
        if what == "participant" && participant == nil { throw .invalidField("participantId", "is required") }
    }

    /// The target in a live room: a share by id (or the room's only share when none is named), a
    /// participant by id or identity.
    public func target(in state: RoomState) throws(RecordingError) -> RecordingTarget {
        switch what {
        case "share":
            if let id = shareID {
                guard state.share(ShareID(id)) != nil else { throw .shareNotFound(id) }
                return .share(ShareID(id))
            }
            guard let only = state.shares.first else { throw .shareNotFound("(the room has no share)") }
            guard state.shares.count == 1 else {
                throw .invalidField("shareId", "is required when the room has more than one share")
            }
            return .share(only.id)
        case "participant":
            let key = participant ?? ""
            guard let p = state.participants[ParticipantID(key)] ?? state.participant(identity: key) else {
                throw .participantNotFound(key)
            }
            return .participant(p.id)
        default:
            return .room
        }
    }

    /// The tracks the target covers now, in a stable order (video first).
    public static func tracks(of target: RecordingTarget, in state: RoomState) -> [Track] {
        let all: [Track]
        switch target {
        case .share(let id):
            guard let s = state.share(id) else { return [] }
            all = [s.videoTrack, s.audioTrack].compactMap { $0 }.compactMap { state.tracks[$0] }
        case .participant(let p):
            all = state.tracks(of: p)
        case .room:
            all = state.orderedParticipants.flatMap { state.tracks(of: $0.id) }
        }
        return all.filter { $0.kind == .video } + all.filter { $0.kind == .audio }
    }
}
