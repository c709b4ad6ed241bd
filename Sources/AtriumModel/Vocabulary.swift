/// The names the signaling protocol, the rooms and the media plane share (docs/protocol.md).

/// Why a participant left a room.
public enum LeaveReason: String, Sendable, CaseIterable, Codable {
    case left
    case disconnected
    case removed
    case replaced
    case roomEnded = "room_ended"
}

/// Preferred video quality of a subscription: for a simulcast track, the layer the media plane
/// forwards (docs/protocol.md, "Simulcast layers").
public enum VideoQuality: String, Sendable, CaseIterable, Codable {
    case high, medium, low
}

public enum TrackKind: String, Sendable, CaseIterable, Codable {
    case audio, video

    public init(source: TrackSource) {
        switch source {
        case .camera, .screenShare: self = .video
        case .microphone, .screenShareAudio: self = .audio
        }
    }
}

/// One simulcast layer as the publisher declares it.
public struct SimulcastLayer: Equatable, Sendable, Codable {
    public var rid: String
    public var width: Int
    public var height: Int

    public init(rid: String, width: Int, height: Int) {
        self.rid = rid
        self.width = width
        self.height = height
    }
}

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
    /// The server lost its media: the node that received it left a cluster (the server's own).
    case connectionLost = "connection_lost"
}

public enum ShareState: String, Sendable, CaseIterable, Codable {
    case started
    case paused
}

/// How a share request ended.
public enum ShareRequestOutcome: String, Sendable, CaseIterable, Codable {
    case granted, denied, expired, cancelled
}
