public import AtriumModel

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
