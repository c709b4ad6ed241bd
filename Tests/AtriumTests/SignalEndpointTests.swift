import AtriumAuth
import AtriumHTTP
import AtriumJSON
import Testing

@testable import AtriumSignal

/// A WebSocket connection that records what the endpoint does with it.
final class FakeConnection: WebSocketConnection {
    let id: UInt64
    let query: [(name: String, value: String)]
    var sent: [JSONValue] = []
    var closedWith: (UInt16, String)?
    var timer: Double?

    init(id: UInt64, query: [(name: String, value: String)] = []) {
        self.id = id
        self.query = query
    }

    func send(text: [UInt8]) -> Bool {
        sent.append((try? JSONParser.parse(text)) ?? .null)
        return true
    }

    func close(code: UInt16, reason: String) { closedWith = (code, reason) }
    func setTimer(seconds: Double) { timer = seconds < 0 ? nil : seconds }
}

@Suite struct SignalEndpointTests {
    static let secret = Array("0123456789abcdef0123456789abcdef".utf8)
    static let now: Int64 = 1_800_000_000
    let endpoint = SignalEndpoint(verifier: TokenVerifier(keys: ["k": secret]), authTimeout: 5, now: { now })

    static func token(room: String? = "standup", join: Bool = true, ttl: Int64 = 600) -> String {
        var g = Grants()
        g.room = room
        g.roomJoin = join
        return TokenIssuer(key: "k", secret: secret).token(identity: "alice", grants: g, ttl: ttl, now: now)
    }

    @Test func queryTokenIsWelcomed() {
        let c = FakeConnection(id: 1, query: [("access_token", Self.token())])
        endpoint.opened(c)
        #expect(c.sent.first?["type"] == .string("welcome"))
        #expect(c.sent.first?["identity"] == .string("alice"))
        #expect(c.sent.first?["room"] == .string("standup"))
        #expect(c.closedWith == nil)
        endpoint.received(c, message: Array(#"{"type":"ping","id":7}"#.utf8), binary: false)
        #expect(c.sent.last?["type"] == .string("pong"))
        #expect(c.sent.last?["id"] == .int(7))
    }

    @Test func firstMessageToken() {
        let c = FakeConnection(id: 2)
        endpoint.opened(c)
        #expect(c.timer == 5)
        endpoint.received(c, message: Array(#"{"type":"auth","token":"\#(Self.token())"}"#.utf8), binary: false)
        #expect(c.sent.first?["type"] == .string("welcome"))
        #expect(c.timer == nil)
    }

    @Test(arguments: [
        ("garbage", "malformed_token", UInt16(4001)),
        (token(ttl: -100), "token_expired", UInt16(4001)),
        (token(join: false), "missing_grant", UInt16(4003)),
        (token(room: nil), "wrong_room", UInt16(4003)),
    ])
    func refusals(token: String, code: String, close: UInt16) {
        let c = FakeConnection(id: 3, query: [("access_token", token)])
        endpoint.opened(c)
        #expect(c.sent.first?["error"]?["code"] == .string(code))
        #expect(c.closedWith?.0 == close)
    }

    @Test func noTokenInTime() {
        let c = FakeConnection(id: 4)
        endpoint.opened(c)
        endpoint.timerFired(c)
        #expect(c.sent.first?["error"]?["code"] == .string("auth_timeout"))
        #expect(c.closedWith?.0 == 4008)
    }

    @Test func garbageBeforeAuthCloses() {
        let c = FakeConnection(id: 5)
        endpoint.opened(c)
        endpoint.received(c, message: [0x7b, 0xff], binary: false)
        #expect(c.sent.first?["error"]?["code"] == .string("malformed_json"))
        #expect(c.closedWith?.0 == 4001)
    }
}
