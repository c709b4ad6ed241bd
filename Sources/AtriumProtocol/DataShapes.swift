public import AtriumJSON
public import AtriumModel

/// A data message as clients see it (`data`, the snapshot's `chat`, the admin API's chat list).
public struct DataInfo: WireValue {
    public var messageId: MessageID
    /// nil: the application server sent it (the admin API).
    public var from: ParticipantID?
    public var topic: String
    public var payload: String
    /// nil: sent to everyone.
    public var to: [ParticipantID]?
    /// Unix milliseconds when the server received it.
    public var at: Int64

    public init(
        messageId: MessageID, from: ParticipantID?, topic: String, payload: String, to: [ParticipantID]?, at: Int64
    ) {
        self.messageId = messageId
        self.from = from
        self.topic = topic
        self.payload = payload
        self.to = to
        self.at = at
    }

    public init(json: JSONValue) throws(ProtocolError) {
        let f = try FieldReader(json, "data")
        var to: [ParticipantID]?
        if f.has("to"), try f.value("to") != .null {
            to = try f.list("to") { v throws(ProtocolError) in
                guard let s = v.stringValue else { throw .invalidField("to", "expected participant ids") }
                return ParticipantID(s)
            }
        }
        self.init(
            messageId: MessageID(try f.string("messageId", max: 64)),
            from: try f.optionalString("from", max: 64).map(ParticipantID.init), topic: try f.string("topic", max: 64),
            payload: try f.string("payload", max: DataLimits.maxPayloadBytes), to: to, at: try f.int64("at"))
    }

    public var json: JSONValue {
        .object([
            "messageId": .string(messageId.rawValue), "from": from.map { .string($0.rawValue) } ?? .null,
            "topic": .string(topic), "payload": .string(payload),
            "to": to.map { .array($0.map { .string($0.rawValue) }) } ?? .null, "at": .int(at),
        ])
    }
}

/// What a `set_permission` grants or revokes: a track source, or sending data messages (`"source":"data"`).
public enum PermissionTarget: Equatable, Sendable {
    case source(TrackSource)
    case data

    public init?(rawValue: String) {
        if rawValue == "data" {
            self = .data
        } else if let s = TrackSource(rawValue: rawValue) {
            self = .source(s)
        } else {
            return nil
        }
    }

    public var rawValue: String {
        switch self {
        case .source(let s): s.rawValue
        case .data: "data"
        }
    }
}

/// Attribute changes as sent: a string sets a key, `null` removes it.
enum AttributeCoding {
    static func decode(_ f: FieldReader, _ key: String) throws(ProtocolError) -> [String: String?] {
        let o = try f.object(key).object
        var out: [String: String?] = [:]
        for (k, v) in o {
            switch v {
            case .null: out[k] = .some(nil)
            case .string(let s): out[k] = .some(s)
            default: throw .invalidField(key, "\(k): expected a string or null")
            }
        }
        return out
    }

    static func encode(_ changes: [String: String?]) -> JSONValue {
        .object(changes.reduce(into: JSONObject()) { o, pair in o[pair.key] = pair.value.map { .string($0) } ?? .null })
    }

    static func decodeSet(_ v: JSONValue, _ key: String) throws(ProtocolError) -> [String: String] {
        guard let o = v.objectValue else { throw .invalidField(key, "expected an object") }
        var out: [String: String] = [:]
        for (k, v) in o {
            guard let s = v.stringValue else { throw .invalidField(key, "\(k): expected a string") }
            out[k] = s
        }
        return out
    }

    static func encodeSet(_ a: [String: String]) -> JSONValue {
        .object(a.reduce(into: JSONObject()) { o, pair in o[pair.key] = .string(pair.value) })
    }
}
