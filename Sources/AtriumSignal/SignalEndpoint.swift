public import AtriumAuth
public import AtriumHTTP
import AtriumJSON

/// The WebSocket endpoint `/v1/signal`. For now it authenticates: the token comes as the
/// `access_token` query parameter or as the first message `{"type":"auth","token":"..."}`, and the
/// server answers `welcome` or an `error` followed by a close (4001 unauthenticated, 4003 forbidden,
/// 4008 no token in time). The signaling hub (rooms, tracks, shares) builds on this session.
public final class SignalEndpoint: WebSocketHandler {
    public static let protocolVersion = 1
    public let path = "/v1/signal"

    final class Session {
        var claims: TokenClaims?
    }

    let verifier: TokenVerifier
    let now: () -> Int64
    let authTimeout: Double
    private var sessions: [UInt64: Session] = [:]

    public var connectionCount: Int { sessions.count }
    public var authenticatedCount: Int { sessions.values.filter { $0.claims != nil }.count }

    public init(verifier: TokenVerifier, authTimeout: Double, now: @escaping () -> Int64) {
        self.verifier = verifier
        self.authTimeout = authTimeout
        self.now = now
    }

    public func opened(_ connection: any WebSocketConnection) {
        sessions[connection.id] = Session()
        if let token = connection.query.first(where: { $0.name == "access_token" })?.value {
            authenticate(connection, token: token)
        } else {
            connection.setTimer(seconds: authTimeout)
        }
    }

    public func received(_ connection: any WebSocketConnection, message: [UInt8], binary: Bool) {
        guard let session = sessions[connection.id] else { return }
        let parsed: JSONValue
        do {
            parsed = try JSONParser.parse(message)
        } catch {
            fail(
                connection, code: "malformed_json", message: "the message is not valid JSON: \(error)",
                close: session.claims == nil ? WebSocketCloseCode.unauthorized : nil)
            return
        }
        let type = parsed["type"]?.stringValue ?? ""
        guard session.claims != nil else {
            guard type == "auth", let token = parsed["token"]?.stringValue else {
                fail(
                    connection, code: "missing_token",
                    message: "the first message must be {\"type\":\"auth\",\"token\":...}",
                    close: WebSocketCloseCode.unauthorized)
                return
            }
            authenticate(connection, token: token)
            return
        }
        var reply: JSONObject = [:]
        if let id = parsed["id"] { reply["id"] = id }
        switch type {
        case "ping":
            reply["type"] = .string("pong")
            connection.send(text: JSONValue.object(reply).bytes())
        default:
            reply["type"] = .string("error")
            reply["error"] = .object([
                "code": .string("unknown_message"),
                "message": .string("unknown message type \"\(type)\""),
            ])
            connection.send(text: JSONValue.object(reply).bytes())
        }
    }

    public func timerFired(_ connection: any WebSocketConnection) {
        guard let session = sessions[connection.id], session.claims == nil else { return }
        fail(
            connection, code: "auth_timeout", message: "no token within \(Int(authTimeout)) s",
            close: WebSocketCloseCode.authTimeout)
    }

    public func closed(_ connection: any WebSocketConnection) {
        sessions[connection.id] = nil
    }

    private func authenticate(_ connection: any WebSocketConnection, token: String) {
        connection.setTimer(seconds: -1)
        let claims: TokenClaims
        do throws(AuthError) {
            claims = try verifier.verify(token, now: now())
            guard claims.grants.roomJoin else { throw .missingGrant("roomJoin") }
            guard claims.grants.room != nil else { throw .wrongRoom("(none)") }
            guard !claims.identity.isEmpty else { throw .malformedToken("missing sub (the identity)") }
        } catch {
            fail(
                connection, code: error.code, message: error.message,
                close: error.isAuthentication ? WebSocketCloseCode.unauthorized : WebSocketCloseCode.forbidden)
            return
        }
        sessions[connection.id]?.claims = claims
        let welcome: JSONObject = [
            "type": .string("welcome"),
            "protocol": .int(Int64(Self.protocolVersion)),
            "identity": .string(claims.identity),
            "room": .string(claims.grants.room ?? ""),
            "role": .string(claims.grants.role.rawValue),
            "grants": .object(claims.grants.json()),
            "expiresAt": .int(claims.expiresAt),
        ]
        connection.send(text: JSONValue.object(welcome).bytes())
    }

    private func fail(_ connection: any WebSocketConnection, code: String, message: String, close: UInt16?) {
        let err: JSONObject = [
            "type": .string("error"),
            "error": .object(["code": .string(code), "message": .string(message)]),
        ]
        connection.send(text: JSONValue.object(err).bytes())
        if let close { connection.close(code: close, reason: code) }
    }
}
