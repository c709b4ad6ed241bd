import AtriumModel

/// Why the hub refused a command: the rules of a room, its lookup and its node. Protocol-level
/// refusals (a version, a second join, a failed resume, the rate limit, media negotiation) are the
/// signaling edge's `SignalError`. Each case has a documented code (docs/protocol.md, openapi.yaml),
/// given at the edges (`AtriumRoomCoding`'s `HubError.code`), not here.
public enum HubError: Error, Equatable, Sendable, Codable {
    case badRequest(String)
    case invalidField(String, String)
    case notJoined
    case roomFull
    case roomNotFound(String)
    /// The token's room is neither a valid room name nor a room id: no such room can exist.
    case invalidRoomName(String)
    case notAllowed(String)
    /// The participant may not send data messages (its token, or a host revoked it).
    case dataNotAllowed
    case shareLocked
    case shareInProgress
    case tooManyShares
    case noActiveShare
    case alreadyPublished
    case trackNotFound
    case participantNotFound
    case shareNotFound
    case requestNotFound
    case requestPending
    case publisherLeft
    /// Cluster: the room is live on another node (the signaling endpoint relays the session there;
    /// a client sees this code only when that relay cannot be made).
    case roomElsewhere(node: String)
    /// Cluster: Redis cannot be reached, so a room that is not live here cannot be opened.
    case clusterUnavailable(String)
    /// The room store failed to keep a change of the room's settings: the change is not made.
    case storeUnavailable(String)
}
