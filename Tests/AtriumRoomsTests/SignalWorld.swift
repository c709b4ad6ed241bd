import AtriumAuth
import AtriumJSON
import AtriumModel
import AtriumRooms
import AtriumStore

@testable import AtriumSignal

/// A hub and a signaling endpoint in memory, with tokens for the room "standup" and connections that
/// join it: the fixture of the tests that drive signaling through the endpoint (SignalFlowTests, and
/// MediaCoordinatorTests with a media plane). Room, participant and resume-token ids count up from 1.
class SignalWorld {
    static let secret = Array("0123456789abcdef0123456789abcdef".utf8)
    static let now: Int64 = 1_800_000_000

    /// A token that lets `identity` join "standup", publish and subscribe, in `role`.
    static func token(_ identity: String, role: ParticipantRole = .participant, data: Bool = true) -> String {
        var g = Grants()
        g.canPublishData = data
        g.room = "standup"
        g.roomJoin = true
        g.canPublish = true
        g.canSubscribe = true
        g.role = role
        return TokenIssuer(key: "k", secret: secret).token(identity: identity, grants: g, ttl: 600, now: now)
    }

    var counter: UInt64 = 0
    /// The endpoint's monotonic clock, in seconds: tests move it.
    var clock = 0.0
    lazy var hub = Hub(
        store: MemoryRoomStore(),
        ids: IDGenerator(random: { [unowned self] in
            counter += 1
            return counter
        }),
        autoCreate: .any, makeRoomID: { RoomID.make(millis: 1, random: 1) })
    lazy var endpoint = SignalEndpoint(
        verifier: TokenVerifier(keys: ["k": SignalWorld.secret]), hub: hub, options: SignalOptions(),
        now: { SignalWorld.now }, monotonic: { [unowned self] in clock },
        makeToken: { [unowned self] in
            counter += 1
            return "rt\(counter)"
        })
    var nextID: UInt64 = 1

    /// A new connection of `identity` that has sent its join.
    func connect(
        _ identity: String, role: ParticipantRole = .participant, data: Bool = true, join: JSONObject = [:]
    ) -> FakeConnection {
        let c = FakeConnection(id: nextID, query: [("access_token", Self.token(identity, role: role, data: data))])
        nextID += 1
        endpoint.opened(c)
        var request: JSONObject = ["type": "join", "id": .int(1), "protocol": .int(1)]
        for (k, v) in join { request[k] = v }
        send(c, request)
        return c
    }

    func send(_ c: FakeConnection, _ text: String) {
        endpoint.received(c, message: Array(text.utf8), binary: false)
    }

    func send(_ c: FakeConnection, _ message: JSONObject) {
        endpoint.received(c, message: JSONValue.object(message).bytes(), binary: false)
    }
}
