import AtriumAuth
import AtriumCrypto
import AtriumJSON
import AtriumModel
import AtriumRooms
import AtriumStore
import Testing

@testable import AtriumSignal

/// `iceServers` in the join and resume results: TURN REST credentials made from the endpoint's clock,
/// valid for the TTL, none when the clock gives no honest expiry.
@Suite struct SignalTURNTests {
    static let secret = Array("0123456789abcdef0123456789abcdef".utf8)
    static let start: Int64 = 1_800_000_000

    final class Clock: @unchecked Sendable { var now = SignalTURNTests.start }

    static func endpoint(_ clock: Clock, turn: TURNSettings?) -> SignalEndpoint {
        let hub = Hub(
            store: MemoryRoomStore(), ids: IDGenerator(random: { 1 }), autoCreate: .any,
            makeRoomID: { RoomID.make(millis: 1, random: 1) })
        var options = SignalOptions()
        options.turn = turn
        return SignalEndpoint(
            verifier: TokenVerifier(keys: ["k": secret]), hub: hub, options: options, now: { clock.now },
            monotonic: { 0 }, makeToken: { "resume-token" })
    }

    static func token(now: Int64) -> String {
        var g = Grants()
        g.room = "standup"
        g.roomJoin = true
        return TokenIssuer(key: "k", secret: secret).token(identity: "alice", grants: g, ttl: 600, now: now)
    }

    static let turn = TURNSettings(
        urls: ["turn:127.0.0.1:3478?transport=udp", "turns:t.example.com:5349?transport=tcp"],
        secret: Array("coturn-secret".utf8), ttl: 3600)

    @Test func joinAndResumeCarryCredentialsValidForTheTTL() throws {
        let clock = Clock()
        let endpoint = Self.endpoint(clock, turn: Self.turn)
        let c = FakeConnection(id: 1, query: [("access_token", Self.token(now: clock.now))])
        endpoint.opened(c)
        endpoint.received(c, message: Array(#"{"type":"join","id":1,"protocol":1}"#.utf8), binary: false)
        let servers = try #require(c.sent.last?["data"]?["iceServers"]?.arrayValue)
        #expect(servers.count == 1)
        #expect(servers[0]["urls"] == .array(Self.turn.urls.map(JSONValue.string)))
        let username = "\(Self.start + 3600):alice"
        #expect(servers[0]["username"] == .string(username))
        let credential = Base64.encode(HMACSHA1.authenticate(Array(username.utf8), key: Self.turn.secret))
        #expect(servers[0]["credential"] == .string(credential))

        // A resume 100 s later: fresh credentials, expiring 3600 s from then.
        clock.now += 100
        endpoint.closed(c)
        let back = FakeConnection(id: 2, query: [("access_token", Self.token(now: clock.now))])
        endpoint.opened(back)
        endpoint.received(
            back, message: Array(#"{"type":"resume","id":2,"protocol":1,"resumeToken":"resume-token"}"#.utf8),
            binary: false)
        let fresh = try #require(back.sent.last?["data"]?["iceServers"]?.arrayValue)
        #expect(fresh.first?["username"] == .string("\(Self.start + 3700):alice"))
    }

    @Test(arguments: [Int64.max, Int64.max - 3599, -1, Int64.min])
    func aClockWithNoHonestExpiryGivesNoCredentials(now: Int64) {
        let clock = Clock()
        let endpoint = Self.endpoint(clock, turn: Self.turn)
        clock.now = now
        #expect(endpoint.iceServers(identity: "alice", participant: ParticipantID("pa_1")).isEmpty)
    }

    @Test func withoutTURNTheListIsEmpty() {
        let clock = Clock()
        let endpoint = Self.endpoint(clock, turn: nil)
        let c = FakeConnection(id: 1, query: [("access_token", Self.token(now: clock.now))])
        endpoint.opened(c)
        endpoint.received(c, message: Array(#"{"type":"join","id":1,"protocol":1}"#.utf8), binary: false)
        #expect(c.sent.last?["data"]?["iceServers"] == .array([]))
    }
}
