public import AtriumModel

/// Data beside media: messages to the room or to some of it, the chat history joiners get, the live
/// permission to send, and participants' attributes. Pure, like the rest of `RoomState`.
extension RoomState {
    /// Sends a message (checked by the edge for size and shape): a participant sends its own while it
    /// may (`canPublishData`), the admin API as the server. Recipients that are not here are skipped;
    /// a `chat` message to everyone joins the history.
    public mutating func send(_ message: DataMessage, by actor: Actor) throws(HubError) -> [RoomEvent] {
        var m = message
        switch actor {
        case .participant(let id):
            guard let p = participants[id], m.from == id else {
                throw .notAllowed("a participant sends its own messages")
            }
            guard p.canPublishData else { throw .dataNotAllowed }
        case .admin:
            guard m.from == nil else { throw .notAllowed("the server's messages have no sender") }
        }
        if let to = m.to {
            var seen = Set<ParticipantID>()
            m.to = to.filter { participants[$0] != nil && $0 != m.from && seen.insert($0).inserted }
            guard !(m.to ?? []).isEmpty else { throw .participantNotFound }
        }
        if m.isChatHistory && room.chatHistory > 0 {
            chat.append(m)
            if chat.count > room.chatHistory { chat.removeFirst(chat.count - room.chatHistory) }
        }
        return [.data(m)]
    }

    /// Grants or revokes sending data messages (hosts and cohosts, or the admin API).
    public mutating func setDataPermission(_ id: ParticipantID, granted: Bool, by actor: Actor) throws(HubError)
        -> [RoomEvent]
    {
        try requireModerator(actor)
        guard var p = participants[id] else { throw .participantNotFound }
        try requireAuthority(actor, over: id)
        guard p.canPublishData != granted else { return [] }
        p.canPublishData = granted
        participants[id] = p
        return [.permissionsChanged(p, by: actor)]
    }

    /// Changes attributes: a participant its own (set or remove), hosts and cohosts remove anyone's,
    /// the admin API anything. The result must stay within `AttributeLimits`.
    public mutating func setAttributes(_ id: ParticipantID, _ changes: AttributeChanges, by actor: Actor)
        throws(HubError) -> [RoomEvent]
    {
        guard var p = participants[id] else { throw .participantNotFound }
        if case .participant(let me) = actor, me != id {
            try requireModerator(actor)
            try requireAuthority(actor, over: id)
            guard changes.values.allSatisfy({ $0 == nil }) else {
                throw .notAllowed("hosts clear another participant's attributes; only its owner sets them")
            }
        }
        for (key, value) in changes {
            guard !key.isEmpty, key.utf8.count <= AttributeLimits.maxKeyBytes else {
                throw .invalidField("attributes", "a key is 1 to \(AttributeLimits.maxKeyBytes) bytes")
            }
            if let value {
                guard value.utf8.count <= AttributeLimits.maxValueBytes else {
                    throw .invalidField("attributes", "a value is at most \(AttributeLimits.maxValueBytes) bytes")
                }
                p.attributes[key] = value
            } else {
                p.attributes[key] = nil
            }
        }
        guard p.attributes.count <= AttributeLimits.maxKeys else {
            throw .invalidField("attributes", "at most \(AttributeLimits.maxKeys) attributes")
        }
        guard p != participants[id] else { return [] }
        participants[id] = p
        return [.attributesChanged(p, by: actor)]
    }
}
