public import AtriumModel

/// A participant in a live room.
public struct Participant: Equatable, Sendable, Codable {
    public var id: ParticipantID
    public var identity: String
    public var name: String
    public var metadata: String
    public var role: ParticipantRole
    public var hidden: Bool
    public var joinedAt: Int64
    /// Sources it may publish now: the token's grants, changed at runtime by hosts and the admin API.
    public var sources: Set<TrackSource>
    public var canSubscribe: Bool
    /// Set when a host or the admin API granted screen sharing explicitly (which waives `whoCanShare`
    /// and `shareRequestRequired`); cleared on revoke.
    public var shareGranted: Bool
    public var autoSubscribe: Bool
    /// Sending data messages: the token's `canPublishData`, revoked and granted live by hosts.
    public var canPublishData = true
    /// It asked for data channels on its subscriber connection (`join`'s `dataChannels`).
    public var dataChannels = false
    /// Its own key/value attributes (`hand: raised`), set by itself; hosts and the admin API may clear them.
    public var attributes: [String: String] = [:]
    /// Track -> preferred quality.
    public var subscriptions: [TrackID: VideoQuality] = [:]
    /// False while its socket is gone and the resume window runs.
    public var connected = true

    public init(
        id: ParticipantID, identity: String, name: String, metadata: String, role: ParticipantRole,
        hidden: Bool, joinedAt: Int64, sources: Set<TrackSource>, canSubscribe: Bool,
        autoSubscribe: Bool
    ) {
        self.id = id
        self.identity = identity
        self.name = name
        self.metadata = metadata
        self.role = role
        self.hidden = hidden
        self.joinedAt = joinedAt
        self.sources = sources
        self.canSubscribe = canSubscribe
        self.shareGranted = false
        self.autoSubscribe = autoSubscribe
    }

    /// Hosts and cohosts moderate and share through a lock.
    public var isModerator: Bool { role == .host || role == .cohost }
}
