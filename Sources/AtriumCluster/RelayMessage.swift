public import AtriumJSON

/// What nodes send each other on their inboxes (one JSON object per pub/sub message; docs/cluster.md):
/// a relayed signaling session (`open`, `msg`, `close`, both ways), a relayed admin call (`http`,
/// answered by `http_reply`) and a hub command (`cmd`, answered by `cmd_reply`). Decoded once here; anything else is dropped and counted.
public enum RelayMessage: Equatable, Sendable {
    /// Entry node to owner: a client joined through `from`; authenticate `token`, then handle `first`.
    case open(from: String, session: String, token: String, first: String)
    /// Either way: one signaling message of the session.
    case message(from: String, session: String, data: String)
    /// Either way: the session ended (the owner closed it, or the client's socket went).
    case close(from: String, session: String, code: Int, reason: String)
    /// Entry node to owner: an admin call on a room live there.
    case http(from: String, call: String, request: RelayedRequest)
    case httpReply(call: String, status: Int, headers: [(String, String)], body: String)
    /// Entry node to owner: a hub command for a room live there (an encoded `RoomCommand`), answered
    /// by `commandReply` (an encoded `CommandOutcome`).
    case command(from: String, call: String, body: JSONValue)
    case commandReply(call: String, body: JSONValue)
    /// Either way between a room's owner and an edge node: media commands (owner to edge) and events
    /// (edge to owner), and the relay link's setup (docs/cluster.md, one room across nodes).
    case media(from: String, body: JSONValue)

    public static func == (a: RelayMessage, b: RelayMessage) -> Bool { a.json == b.json }

    public var json: JSONValue {
        switch self {
        case .open(let from, let session, let token, let first):
            .object([
                "op": "open", "from": .string(from), "s": .string(session), "token": .string(token),
                "first": .string(first),
            ])
        case .message(let from, let session, let data):
            .object(["op": "msg", "from": .string(from), "s": .string(session), "data": .string(data)])
        case .close(let from, let session, let code, let reason):
            .object([
                "op": "close", "from": .string(from), "s": .string(session), "code": .int(Int64(code)),
                "reason": .string(reason),
            ])
        case .http(let from, let call, let r):
            .object([
                "op": "http", "from": .string(from), "call": .string(call), "method": .string(r.method),
                "path": .string(r.path), "query": .array(r.query.map { .array([.string($0.0), .string($0.1)]) }),
                "headers": .array(r.headers.map { .array([.string($0.0), .string($0.1)]) }), "body": .string(r.body),
            ])
        case .httpReply(let call, let status, let headers, let body):
            .object([
                "op": "http_reply", "call": .string(call), "status": .int(Int64(status)),
                "headers": .array(headers.map { .array([.string($0.0), .string($0.1)]) }), "body": .string(body),
            ])
        case .command(let from, let call, let body):
            .object(["op": "cmd", "from": .string(from), "call": .string(call), "body": body])
        case .commandReply(let call, let body):
            .object(["op": "cmd_reply", "call": .string(call), "body": body])
        case .media(let from, let body):
            .object(["op": "media", "from": .string(from), "body": body])
        }
    }

    public init?(bytes: [UInt8]) {
        guard let v = try? JSONParser.parse(bytes), let op = v["op"]?.stringValue else { return nil }
        let from = v["from"]?.stringValue ?? ""
        let session = v["s"]?.stringValue ?? ""
        switch op {
        case "open":
            guard let token = v["token"]?.stringValue, let first = v["first"]?.stringValue else { return nil }
            self = .open(from: from, session: session, token: token, first: first)
        case "msg":
            guard let data = v["data"]?.stringValue else { return nil }
            self = .message(from: from, session: session, data: data)
        case "close":
            guard let code = v["code"]?.int64Value, (1000...4999).contains(code) else { return nil }
            self = .close(from: from, session: session, code: Int(code), reason: v["reason"]?.stringValue ?? "")
        case "http":
            guard let call = v["call"]?.stringValue, let method = v["method"]?.stringValue,
                let path = v["path"]?.stringValue
            else { return nil }
            let r = RelayedRequest(
                method: method, path: path, query: Self.pairs(v["query"]), headers: Self.pairs(v["headers"]),
                body: v["body"]?.stringValue ?? "")
            self = .http(from: from, call: call, request: r)
        case "http_reply":
            guard let call = v["call"]?.stringValue, let status = v["status"]?.int64Value, (100...599).contains(status)
            else { return nil }
            self = .httpReply(
                call: call, status: Int(status), headers: Self.pairs(v["headers"]), body: v["body"]?.stringValue ?? "")
        case "cmd":
            guard let call = v["call"]?.stringValue, let body = v["body"] else { return nil }
            self = .command(from: from, call: call, body: body)
        case "cmd_reply":
            guard let call = v["call"]?.stringValue, let body = v["body"] else { return nil }
            self = .commandReply(call: call, body: body)
        case "media":
            guard NodeID.isValid(from), let body = v["body"] else { return nil }
            self = .media(from: from, body: body)
        default: return nil
        }
    }

    static func pairs(_ v: JSONValue?) -> [(String, String)] {
        (v?.arrayValue ?? []).compactMap { p in
            guard let a = p.arrayValue, a.count == 2, let k = a[0].stringValue, let val = a[1].stringValue else {
                return nil
            }
            return (k, val)
        }
    }
}

/// An admin call as it travels to the owner node.
public struct RelayedRequest: Sendable {
    public var method: String
    public var path: String
    public var query: [(String, String)]
    public var headers: [(String, String)]
    public var body: String

    public init(method: String, path: String, query: [(String, String)], headers: [(String, String)], body: String) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }
}
