public import AtriumModel

/// A data message (chat, a reaction, an application's own topic) as the room carries it: reliable and in
/// order over signaling, to everyone or to the listed participants.
public struct DataMessage: Equatable, Sendable, Codable {
    /// The topic whose messages to everyone the room keeps for joiners (`Room.chatHistory`).
    public static let chatTopic = "chat"

    public var id: MessageID
    /// nil: sent by the application server (the admin API).
    public var from: ParticipantID?
    public var topic: String
    public var payload: String
    /// nil: everyone in the room but the sender.
    public var to: [ParticipantID]?
    /// Unix milliseconds when the server received it.
    public var at: Int64
    /// How it came and so how it goes: over signaling, or on a data channel (reliable or lossy).
    public var path: DataPath

    public init(
        id: MessageID, from: ParticipantID?, topic: String, payload: String, to: [ParticipantID]?, at: Int64,
        path: DataPath = .signaling
    ) {
        self.path = path
        self.id = id
        self.from = from
        self.topic = topic
        self.payload = payload
        self.to = to
        self.at = at
    }

    /// Kept in the room's chat history: a `chat` message to everyone, not a lossy one.
    public var isChatHistory: Bool { topic == Self.chatTopic && to == nil && path != .lossy }
}

/// The way a data message travels: it leaves as it came. A message sent over signaling reaches its
/// recipients over signaling; one sent on a reliable data channel reaches them on theirs (or over
/// signaling when they have none); a lossy one (unordered, never retransmitted: a pointer) only on
/// their lossy channels.
public enum DataPath: String, Equatable, Sendable, Codable {
    case signaling, reliable, lossy
}

/// A change of one participant's attributes: a value sets a key, nil removes it.
public typealias AttributeChanges = [String: String?]
