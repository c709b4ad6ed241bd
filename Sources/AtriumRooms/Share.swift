/// Why a share stopped: one reason from this set is sent to everyone with every stop.
public enum ShareStopReason: String, Sendable, CaseIterable, Codable {
    case userStopped = "user_stopped"
    case captureEnded = "capture_ended"
    case preempted
    case permissionRevoked = "permission_revoked"
    case locked
    case moderated
    /// A new share policy no longer allows it (its sharer is not permitted, or it is over the limit).
    case policyChanged = "policy_changed"
    case publisherLeft = "publisher_left"
    case disconnected
    case roomEnded = "room_ended"
}

public enum ShareState: String, Sendable, Codable {
    case started
    case paused
}

/// A screen share: the screen_share track and, optionally, its screen_share_audio track.
public struct Share: Equatable, Sendable, Codable {
    public var id: ShareID
    public var sharer: ParticipantID
    public var videoTrack: TrackID
    public var audioTrack: TrackID?
    public var state: ShareState
    public var startedAt: Int64

    public init(id: ShareID, sharer: ParticipantID, videoTrack: TrackID, startedAt: Int64) {
        self.id = id
        self.sharer = sharer
        self.videoTrack = videoTrack
        self.state = .started
        self.startedAt = startedAt
    }
}

/// A participant's pending request for permission to share.
public struct ShareRequest: Equatable, Sendable, Codable {
    public var id: ShareRequestID
    public var requester: ParticipantID
    public var createdAt: Int64
    public var expiresAt: Int64
}

/// How a share request ended.
public enum ShareRequestOutcome: String, Sendable, Codable {
    case granted, denied, expired, cancelled
}
