public import AtriumJSON
public import AtriumModel
import AtriumProtocol
import AtriumRoomCoding
public import AtriumRooms

/// One event as a webhook delivers it: `{"id", "type", "createdAt", "room": {"id", "name"}, "data"}`.
/// `data` holds the same fields as the signaling event of that name (docs/protocol.md), so one parser
/// reads both. Pure: the id and the time are given.
public struct WebhookEvent: Equatable, Sendable {
    public var id: String
    public var type: String
    /// Unix milliseconds when it happened.
    public var createdAt: Int64
    public var room: RoomID
    public var roomName: String?
    public var data: JSONObject

    public init(id: String, type: String, createdAt: Int64, room: RoomID, roomName: String?, data: JSONObject) {
        self.id = id
        self.type = type
        self.createdAt = createdAt
        self.room = room
        self.roomName = roomName
        self.data = data
    }

    /// The body sent, exactly as it is signed.
    public var body: String {
        JSONValue.object([
            "id": .string(id), "type": .string(type), "createdAt": .int(createdAt),
            "room": .object(["id": .string(room.rawValue), "name": roomName.map { .string($0) } ?? .null]),
            "data": .object(data),
        ]).serialized()
    }

    /// Every type a webhook can carry, in docs/webhooks.md's order.
    public static let types = [
        "room_started", "room_ended", "participant_joined", "participant_left", "track_published",
        "track_unpublished", "track_muted", "share_started", "share_paused", "share_resumed", "share_stopped",
        "share_requested", "share_granted", "share_denied", "share_request_expired", "share_request_cancelled",
        "share_lock_changed", "recording_started", "recording_finished", "stream_started", "stream_ended",
        "stream_failed", chatMessage,
    ]

    /// A message on the `chat` topic: only to the endpoints that ask for it (`"chat": true`).
    public static let chatMessage = "chat_message"

    /// The webhook type and data of a room event; nil for events webhooks do not carry (participant
    /// and permission updates, share policy changes other than the lock, and `room_ended`, which is
    /// sent when the room closes, with the reason).
    public static func from(_ event: RoomEvent) -> (type: String, data: JSONObject)? {
        let fields = HubCoding.event(event).json
        guard let type = fields["type"]?.stringValue else { return nil }
        var data = JSONObject()
        for (k, v) in fields where k != "type" { data[k] = v }
        switch event {
        case .participantUpdated, .permissionsChanged, .sharePolicyChanged, .roomEnded, .attributesChanged:
            return nil
        case .data(let m):
            guard m.topic == DataMessage.chatTopic else { return nil }
            return (chatMessage, ["message": HubCoding.dataInfo(m).json])
        case .participantJoined(let p):
            // Hidden participants too: the application server sees everyone.
            data["participant"] = HubCoding.participant(p, tracks: [])
            return (type, data)
        case .participantLeft(let p, _):
            data["identity"] = .string(p.identity)
            return (type, data)
        case .shareRequestResolved(_, let outcome, _):
            let name: String
            switch outcome {
            case .granted: name = "share_granted"
            case .denied: name = "share_denied"
            case .expired: name = "share_request_expired"
            case .cancelled: name = "share_request_cancelled"
            }
            return (name, data)
        default:
            return (type, data)
        }
    }
}
