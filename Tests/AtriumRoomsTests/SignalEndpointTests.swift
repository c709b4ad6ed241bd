import AtriumAuth
import AtriumHTTP
import AtriumJSON
import AtriumModel
import AtriumRooms
import AtriumStore
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
    let endpoint: SignalEndpoint = {
        var counter: UInt64 = 0
        let hub = Hub(
            store: MemoryRoomStore(),
            ids: IDGenerator(random: {
                counter += 1
                return counter
            }),
            autoCreate: .any, makeRoomID: { RoomID.make(millis: 1, random: 1) })
        var options = SignalOptions()
        options.authTimeout = 5
        return SignalEndpoint(
            verifier: TokenVerifier(keys: ["k": secret]), hub: hub, options: options, now: { now },
            monotonic: { 0 }, makeToken: { "resume-token" })
    }()

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
        #expect(c.sent.last?["type"] == .string("result"))
        #expect(c.sent.last?["id"] == .int(7))
        endpoint.received(c, message: Array(#"{"type":"join","id":8,"protocol":1}"#.utf8), binary: false)
        #expect(c.sent.last?["data"]?["room"]?["name"] == .string("standup"))
        #expect(c.sent.last?["data"]?["resumeToken"] == .string("resume-token"))
        endpoint.received(c, message: Array(#"{"type":"join","id":9,"protocol":1}"#.utf8), binary: false)
        #expect(c.sent.last?["error"]?["code"] == .string("already_joined"))
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

@Suite struct SignalFlowTests {
    @Test func shareIsSeenAndStopped() throws {
        let w = SignalWorld()
        let a = w.connect("alice", role: .host)
        let b = w.connect("bob")
        #expect(a.sent.last?["type"] == .string("participant_joined"))
        w.send(b, #"{"type":"publish","id":2,"source":"screen_share","width":1280,"height":720}"#)
        let shareID = try #require(b.sent.last?["data"]?["share"]?["id"]?.stringValue)
        #expect(a.sent.contains { $0["type"] == .string("share_started") })
        w.send(b, #"{"type":"stop_share","id":3,"shareId":"\#(shareID)"}"#)
        let stop = try #require(a.sent.first { $0["type"] == .string("share_stopped") })
        #expect(stop["reason"] == .string("user_stopped"))
    }

    @Test func resumeKeepsTheParticipant() throws {
        let w = SignalWorld()
        let a = w.connect("alice")
        let b = w.connect("bob")
        let token = try #require(b.sent.first { $0["type"] == .string("result") }?["data"]?["resumeToken"]?.stringValue)
        w.endpoint.closed(b)
        let before = a.sent.count
        let b2 = FakeConnection(id: 99, query: [("access_token", SignalWorld.token("bob"))])
        w.endpoint.opened(b2)
        w.send(b2, #"{"type":"resume","id":1,"protocol":1,"resumeToken":"\#(token)"}"#)
        #expect(b2.sent.last?["type"] == .string("result"))
        #expect(a.sent.count == before, "the others saw nothing")
        w.send(b2, #"{"type":"resume","id":2,"protocol":1,"resumeToken":"nope"}"#)
        #expect(b2.sent.last?["error"]?["code"] == .string("already_joined"))
    }

    @Test func errorsForOutOfOrderAndBadFields() {
        let w = SignalWorld()
        let c = FakeConnection(id: 50, query: [("access_token", SignalWorld.token("x"))])
        w.endpoint.opened(c)
        let rows: [(String, String)] = [
            (#"{"type":"publish","id":1,"source":"camera"}"#, "not_joined"),
            (#"{"type":"join","id":1}"#, "invalid_field"),
            (#"{"type":"join","id":1,"protocol":2}"#, "unsupported_protocol"),
            (#"{"type":"dance","id":1}"#, "bad_request"),
            (#"[1,2]"#, "bad_request"),
            (#"{"type":"join","id":1,"protocol":1,"name":7}"#, "invalid_field"),
        ]
        for (text, code) in rows {
            w.send(c, text)
            #expect(c.sent.last?["error"]?["code"] == .string(code), "\(text)")
        }
        #expect(c.closedWith == nil)
    }
}
