public import AtriumJSON

/// A message that is not a well-formed request or server message of protocol version 1, with its
/// documented code (docs/protocol.md section 10). The server answers it as an `error`; a client
/// decoding what the server sent reports it.
public enum ProtocolError: Error, Equatable, Sendable {
    /// Not JSON at all.
    case malformedJSON(String)
    /// JSON, but not a message: no string `type`, or a type this version does not have.
    case badRequest(String)
    /// A field is missing, of the wrong type, too long or out of range.
    case invalidField(String, String)
    /// `join` or `resume` asked for a protocol version this module does not speak.
    case unsupportedProtocol(Int)

    public var code: String {
        switch self {
        case .malformedJSON: "malformed_json"
        case .badRequest: "bad_request"
        case .invalidField: "invalid_field"
        case .unsupportedProtocol: "unsupported_protocol"
        }
    }

    public var message: String {
        switch self {
        case .malformedJSON(let m): "the message is not valid JSON: \(m)"
        case .badRequest(let m): m
        case .invalidField(let f, let m): "\(f): \(m)"
        case .unsupportedProtocol(let v):
            "protocol version \(v) is not supported; this server speaks \(ProtocolVersion.current)"
        }
    }

    static var notAMessage: ProtocolError { .badRequest("a message is a JSON object with a string \"type\"") }
    static func unknownType(_ type: String) -> ProtocolError { .badRequest("unknown message type \"\(type)\"") }
}

/// The protocol version this module speaks.
public enum ProtocolVersion {
    public static let current = 1
}

/// The `error` object of an answer: a documented code and a message for people.
public struct ErrorBody: Equatable, Sendable {
    public var code: String
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public init(_ error: ProtocolError) { self.init(code: error.code, message: error.message) }

    public var json: JSONValue { .object(["code": .string(code), "message": .string(message)]) }

    public init(json: JSONValue) throws(ProtocolError) {
        let f = try FieldReader(json, "error")
        self.init(code: try f.string("code", max: 64), message: try f.string("message", max: 65536))
    }
}
