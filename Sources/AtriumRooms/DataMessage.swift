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

    public init(id: MessageID, from: ParticipantID?, topic: String, payload: String, to: [ParticipantID]?, at: Int64) {
        self.id = id
        self.from = from
        self.topic = topic
        self.payload = payload
        self.to = to
        self.at = at
    }

    /// Kept in the room's chat history: a `chat` message to everyone.
    public var isChatHistory: Bool { topic == Self.chatTopic && to == nil }
}

/// A change of one participant's attributes: a value sets a key, nil removes it.
public typealias AttributeChanges = [String: String?]
