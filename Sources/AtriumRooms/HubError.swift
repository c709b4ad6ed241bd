import AtriumModel

/// Why the hub refused a request. Each case has a documented code (docs/protocol.md, openapi.yaml),
/// given at the edges (`AtriumRoomCoding`'s `HubError.code`), not here.
public enum HubError: Error, Equatable, Sendable, Codable {
    case badRequest(String)
    case invalidField(String, String)
    case unsupportedProtocol(Int)
    case notJoined
    case alreadyJoined
    case roomFull
    case roomNotFound(String)
    /// The token's room is neither a valid room name nor a room id: no such room can exist.
    case invalidRoomName(String)
    case notAllowed(String)
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
    case resumeFailed
    case rateLimited
    /// A media negotiation failure: `invalid_sdp`, `sdp_unsupported`, `stale_revision`, `media_unavailable`.
    case media(code: String, message: String)
    /// Cluster: the room is live on another node (the signaling endpoint relays the session there;
    /// a client sees this code only when that relay cannot be made).
    case roomElsewhere(node: String)
    /// Cluster: Redis cannot be reached, so a room that is not live here cannot be opened.
    case clusterUnavailable(String)
}
