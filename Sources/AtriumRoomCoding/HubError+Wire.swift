import AtriumModel
public import AtriumRooms

/// The documented `{code, message}` of each hub refusal (docs/protocol.md, openapi.yaml): the signal
/// endpoint's `error` messages and the admin API's error bodies say these.
extension HubError {
    public var code: String {
        switch self {
        case .badRequest: "bad_request"
        case .invalidField: "invalid_field"
        case .notJoined: "not_joined"
        case .roomFull: "room_full"
        case .roomNotFound: "room_not_found"
        case .invalidRoomName: "invalid_room_name"
        case .notAllowed: "not_allowed"
        case .dataNotAllowed: "data_not_allowed"
        case .shareLocked: "share_locked"
        case .shareInProgress: "share_in_progress"
        case .tooManyShares: "too_many_shares"
        case .noActiveShare: "no_active_share"
        case .alreadyPublished: "already_published"
        case .trackNotFound: "track_not_found"
        case .participantNotFound: "participant_not_found"
        case .shareNotFound: "share_not_found"
        case .requestNotFound: "request_not_found"
        case .requestPending: "request_pending"
        case .publisherLeft: "publisher_left"
        case .roomElsewhere: "room_elsewhere"
        case .clusterUnavailable: "cluster_unavailable"
        case .storeUnavailable: "store_unavailable"
        }
    }

    public var message: String {
        switch self {
        case .badRequest(let m): m
        case .invalidField(let f, let m): "\(f): \(m)"
        case .notJoined: "join a room first"
        case .roomFull: "the room is full"
        case .roomNotFound(let r): "no room \"\(r)\" and this token may not create it"
        case .invalidRoomName(let r):
            Room.invalidNameMessage(r)
        case .notAllowed(let m): m
        case .dataNotAllowed: "sending data messages is not allowed for this participant"
        case .shareLocked: "sharing is locked by a host"
        case .shareInProgress: "another share is in progress"
        case .tooManyShares: "the room's maximum of concurrent shares is reached"
        case .noActiveShare: "screen_share_audio needs an active share of yours"
        case .alreadyPublished: "a track from this source is already published"
        case .trackNotFound: "no such track"
        case .participantNotFound: "no such participant"
        case .shareNotFound: "no such share"
        case .requestNotFound: "no such share request"
        case .requestPending: "a share request of yours is already pending"
        case .publisherLeft: "the track's publisher has left"
        case .roomElsewhere(let node): "the room is live on node \(node), which cannot be reached"
        case .clusterUnavailable(let m): "the cluster's Redis cannot be reached: \(m)"
        case .storeUnavailable(let m): "the room store failed: \(m)"
        }
    }
}
