public import AtriumAuth
public import AtriumModel

/// A request to a live room as a value (LiveKit's signal requests): what the WebSocket, the admin API
/// and the media plane ask of the hub, decoded once at their edge. `Hub.apply` is its one entry point;
/// being `Codable`, a command travels to the node that owns its room (`RoomRouter.send`). Who asks is
/// not part of the command: it comes with it as an `Actor`, and commands about "my" tracks, shares and
/// subscriptions act for that participant.
public enum HubCommand: Equatable, Sendable, Codable {
    /// A participant enters with the grants of its token (one of the same identity is replaced).
    case join(JoinRequest)
    /// A participant leaves (its own `leave`, or its resume window ended: `disconnected`).
    case leave(ParticipantID, reason: LeaveReason)
    /// A participant's socket went or came back within the resume window; no event.
    case setConnected(ParticipantID, Bool)
    /// A participant changes its own name or metadata.
    case update(name: String?, metadata: String?)
    /// The admin API changes a participant: name, metadata, and the sources it may publish.
    case updateParticipant(ParticipantID, name: String?, metadata: String?, sources: Set<TrackSource>?)
    /// Publishes a track of the actor's (a screen share starts a share with this id).
    case publish(Track, share: ShareID)
    case unpublish(TrackID, reason: ShareStopReason)
    /// Mutes or unmutes a track: its publisher both ways, a moderator or the admin API mute only.
    case setMuted(TrackID, Bool)
    case subscribe(TrackID, quality: VideoQuality)
    case unsubscribe(TrackID)
    case pauseShare(ShareID)
    case resumeShare(ShareID)
    /// Stops a share: its sharer (user_stopped, capture_ended), or a moderator or the admin (moderated).
    case stopShare(ShareID, reason: ShareStopReason)
    case requestShare(ShareRequestID)
    case answerShareRequest(ShareRequestID, grant: Bool)
    case setShareLock(Bool)
    case setSharePolicy(SharePolicy)
    case setPermission(ParticipantID, source: TrackSource, granted: Bool)
    /// Grants or revokes sending data messages.
    case setDataPermission(ParticipantID, granted: Bool)
    /// Sends a data message (made by the edge that received it: id, sender, time).
    case sendData(DataMessage)
    /// Sets or removes attributes of a participant (nil removes the key).
    case setAttributes(ParticipantID, AttributeChanges)
    case removeParticipant(ParticipantID)
    case endRoom
    /// Housekeeping: share requests past their lifetime expire.
    case expireRequests
    /// The room's settings changed in the store (the admin API's PATCH): the live room follows.
    case applySettings(Room)
}

/// A `join`: the participant's new id, who it is, and what its token grants.
public struct JoinRequest: Equatable, Sendable, Codable {
    public var participant: ParticipantID
    public var identity: String
    public var name: String
    public var metadata: String
    public var grants: Grants
    public var autoSubscribe: Bool
    /// Data channels on its subscriber connection from the first offer on.
    public var dataChannels: Bool

    public init(
        participant: ParticipantID, identity: String, name: String, metadata: String, grants: Grants,
        autoSubscribe: Bool, dataChannels: Bool = false
    ) {
        self.dataChannels = dataChannels
        self.participant = participant
        self.identity = identity
        self.name = name
        self.metadata = metadata
        self.grants = grants
        self.autoSubscribe = autoSubscribe
    }
}

/// A command addressed to a room, with who asks: what travels to the room's node.
public struct RoomCommand: Equatable, Sendable, Codable {
    public var room: RoomID
    public var actor: Actor
    public var command: HubCommand

    public init(room: RoomID, actor: Actor, command: HubCommand) {
        self.room = room
        self.actor = actor
        self.command = command
    }
}
