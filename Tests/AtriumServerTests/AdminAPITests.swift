import AtriumAuth
import AtriumHTTP
import AtriumJSON
import AtriumMetrics
import AtriumModel
import AtriumRooms
import AtriumRouting
import AtriumStore
import Testing

@testable import AtriumAdminAPI

/// The admin API in memory: requests in, responses out, against a `MemoryRoomStore`.
final class APIHarness {
    static let secret = Array("0123456789abcdef0123456789abcdef".utf8)
    var now: Int64 = 1_800_000_000
    var counter: UInt64 = 0
    let store = MemoryRoomStore()
    let metrics = MetricsRegistry(version: "test", swiftVersion: "6")
    lazy var api = AdminAPI(
        store: store, verifier: TokenVerifier(keys: ["k": Self.secret]), metrics: metrics,
        corsOrigins: ["https://admin.example"],
        environment: .init(
            now: { [unowned self] in now }, monotonic: { 0 },
            makeRoomID: { [unowned self] in
                counter += 1
                return RoomID.make(millis: counter, random: 7)
            }))

    func token(
        _ configure: (inout Grants) -> Void = {
            $0.roomCreate = true
            $0.roomList = true
            $0.roomAdmin = true
        }
    ) -> String {
        var g = Grants()
        configure(&g)
        return TokenIssuer(key: "k", secret: Self.secret).token(identity: "admin", grants: g, ttl: 600, now: now)
    }

    func call(
        _ method: HTTPMethod, _ path: String, body: String? = nil, token: String? = nil,
        contentType: String? = "application/json", query: [(name: String, value: String)] = [],
        headers extra: [String: String] = [:]
    ) -> (status: Int, json: JSONValue?, response: HTTPResponse) {
        var headers = extra
        if let t = token ?? .some(self.token()), !t.isEmpty { headers["authorization"] = "Bearer \(t)" }
        if body != nil, let contentType { headers["content-type"] = contentType }
        let r = api.handle(
            HTTPRequest(
                method: method, path: path, query: query, headers: headers,
                body: Array((body ?? "").utf8)))
        return (r.status, try? JSONParser.parse(r.body), r)
    }
}

@Suite struct AdminAPITests {
    @Test func roomLifecycle() throws {
        let h = APIHarness()
        let created = h.call(.POST, "/v1/rooms", body: #"{"name":"standup","shareMode":"grab","maxParticipants":5}"#)
        #expect(created.status == 201)
        let id = try #require(created.json?["id"]?.stringValue)
        #expect(created.response.header("location") == "/v1/rooms/\(id)")
        #expect(created.json?["shareMode"] == .string("grab"))
        #expect(created.json?["shareLocked"] == .bool(false))

        #expect(h.call(.GET, "/v1/rooms/\(id)").json?["name"] == .string("standup"))
        #expect(h.call(.GET, "/v1/rooms/standup").json?["id"] == .string(id))

        h.now += 10
        let patched = h.call(.PATCH, "/v1/rooms/\(id)", body: #"{"shareLocked":true,"metadata":"m"}"#)
        #expect(patched.status == 200)
        #expect(patched.json?["shareLocked"] == .bool(true))
        #expect(patched.json?["maxParticipants"] == .int(5))
        #expect(patched.json?["updatedAt"] == .int(h.now))

        #expect(h.call(.DELETE, "/v1/rooms/\(id)").status == 204)
        #expect(h.call(.GET, "/v1/rooms/\(id)").json?["error"]?["code"] == .string("room_not_found"))
    }

    @Test func emptyBodyCreatesAnUnnamedRoom() {
        let h = APIHarness()
        let r = h.call(.POST, "/v1/rooms")
        #expect(r.status == 201)
        #expect(r.json?["name"] == .null)
    }

    @Test func pagination() throws {
        let h = APIHarness()
        for i in 0..<5 { _ = h.call(.POST, "/v1/rooms", body: #"{"name":"r\#(i)"}"#) }
        var seen: [String] = []
        var pageToken: String?
        repeat {
            var q: [(name: String, value: String)] = [("limit", "2")]
            if let t = pageToken { q.append(("pageToken", t)) }
            let page = h.call(.GET, "/v1/rooms", query: q)
            #expect(page.status == 200)
            seen += page.json?["rooms"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
            pageToken = page.json?["nextPageToken"]?.stringValue
        } while pageToken != nil
        #expect(seen == ["r0", "r1", "r2", "r3", "r4"])
        #expect(h.call(.GET, "/v1/rooms", query: [("limit", "0")]).status == 400)
        #expect(h.call(.GET, "/v1/rooms", query: [("pageToken", "nope")]).status == 400)
    }

    /// Every documented error, from the table of (request, status, code).
    @Test func errors() {
        let h = APIHarness()
        _ = h.call(.POST, "/v1/rooms", body: #"{"name":"taken"}"#)
        let expired = { () -> String in
            let t = h.token()
            h.now += 10_000
            return t
        }()
        let rows: [(HTTPMethod, String, String?, String?, String?, Int, String)] = [
            (.GET, "/nowhere", nil, nil, nil, 404, "not_found"),
            (.PUT, "/v1/rooms", nil, nil, nil, 405, "method_not_allowed"),
            (.POST, "/v1/rooms", #"{"name":"taken"}"#, nil, nil, 409, "duplicate_name"),
            (.POST, "/v1/rooms", #"{"name":"#, nil, nil, 400, "malformed_json"),
            (.POST, "/v1/rooms", "[1]", nil, nil, 400, "invalid_body"),
            (.POST, "/v1/rooms", #"{"name":"a"}"#, nil, "text/plain", 415, "unsupported_media_type"),
            (.POST, "/v1/rooms", #"{"name":"bad name"}"#, nil, nil, 422, "invalid_room_name"),
            (.POST, "/v1/rooms", #"{"colour":"blue"}"#, nil, nil, 422, "invalid_field"),
            (.POST, "/v1/rooms", #"{"maxParticipants":-1}"#, nil, nil, 422, "invalid_field"),
            (.POST, "/v1/rooms", #"{"maxParticipants":1.5}"#, nil, nil, 422, "invalid_field"),
            (.POST, "/v1/rooms", #"{"shareMode":"chaos"}"#, nil, nil, 422, "invalid_field"),
            (.POST, "/v1/rooms", #"{"maxConcurrentShares":17}"#, nil, nil, 422, "invalid_field"),
            (.POST, "/v1/rooms", #"{"shareLocked":"yes"}"#, nil, nil, 422, "invalid_field"),
            (.POST, "/v1/rooms", #"{"name":"rm_0000000000000000"}"#, nil, nil, 422, "invalid_field"),
            (.GET, "/v1/rooms", nil, "", nil, 401, "missing_token"),
            (.GET, "/v1/rooms", nil, "garbage", nil, 401, "malformed_token"),
            (.GET, "/v1/rooms", nil, expired, nil, 401, "token_expired"),
            (.GET, "/v1/rooms", nil, h.token { $0.roomCreate = true }, nil, 403, "missing_grant"),
            (
                .DELETE, "/v1/rooms/taken", nil,
                h.token {
                    $0.roomAdmin = true
                    $0.room = "other"
                }, nil, 403, "wrong_room"
            ),
            (.GET, "/v1/rooms/missing", nil, nil, nil, 404, "room_not_found"),
        ]
        for (i, (method, path, body, token, type, status, code)) in rows.enumerated() {
            let r = h.call(method, path, body: body, token: token, contentType: type ?? "application/json")
            #expect(r.status == status, "row \(i): \(method) \(path)")
            #expect(r.json?["error"]?["code"] == .string(code), "row \(i): \(method) \(path)")
            #expect(r.json?["error"]?["message"]?.stringValue?.isEmpty == false, "row \(i)")
        }
    }

    @Test func invalidFieldNamesTheField() {
        let h = APIHarness()
        let r = h.call(.POST, "/v1/rooms", body: #"{"emptyTimeout":"soon"}"#)
        #expect(r.json?["error"]?["field"] == .string("emptyTimeout"))
    }

    @Test func methodNotAllowedListsAllow() {
        let h = APIHarness()
        let r = h.call(.POST, "/v1/rooms/x")
        #expect(r.status == 405)
        #expect(r.response.header("allow") == "GET, PATCH, DELETE, HEAD, OPTIONS")
    }

    @Test func unauthenticatedCallsGetWWWAuthenticate() {
        let h = APIHarness()
        #expect(h.call(.GET, "/v1/rooms", token: "").response.header("www-authenticate")?.hasPrefix("Bearer") == true)
    }

    @Test func cors() {
        let h = APIHarness()
        let pre = h.call(
            .OPTIONS, "/v1/rooms", token: "",
            headers: [
                "origin": "https://admin.example",
                "access-control-request-method": "POST",
            ])
        #expect(pre.status == 204)
        #expect(pre.response.header("access-control-allow-origin") == "https://admin.example")
        #expect(pre.response.header("access-control-allow-headers")?.contains("authorization") == true)
        let other = h.call(.GET, "/v1/rooms", headers: ["origin": "https://evil.example"])
        #expect(other.response.header("access-control-allow-origin") == nil)
    }

    @Test func mintedTokensVerifyAndCarryGrants() throws {
        let h = APIHarness()
        let r = h.call(
            .POST, "/v1/tokens",
            body: #"{"room":"standup","identity":"bob","role":"viewer","sources":["camera"],"ttl":120}"#)
        #expect(r.status == 201)
        let token = try #require(r.json?["token"]?.stringValue)
        let claims = try TokenVerifier(keys: ["k": APIHarness.secret]).verify(token, now: h.now)
        #expect(claims.identity == "bob")
        #expect(claims.grants.room == "standup")
        #expect(claims.grants.roomJoin)
        #expect(claims.grants.role == .viewer)
        #expect(!claims.grants.canPublish)
        #expect(claims.expiresAt == h.now + 120)
        let scoped = h.call(
            .POST, "/v1/tokens", body: #"{"room":"x","identity":"bob"}"#,
            token: h.token {
                $0.roomAdmin = true
                $0.room = "y"
            })
        #expect(scoped.status == 403)
        #expect(h.call(.POST, "/v1/tokens", body: #"{"room":"x"}"#).status == 422)
    }

    @Test func healthReadinessAndMetrics() {
        let h = APIHarness()
        #expect(h.call(.GET, "/healthz", token: "").status == 200)
        #expect(h.call(.GET, "/readyz", token: "").status == 200)
        let m = h.call(.GET, "/metrics", token: "")
        let text = String(decoding: m.response.body, as: UTF8.self)
        #expect(text.contains("atrium_http_requests_total{route=\"/healthz\",method=\"GET\",status=\"200\"} 1"))
        #expect(text.contains("atrium_build_info"))
        h.store.close()
        let down = h.call(.GET, "/readyz", token: "")
        #expect(down.status == 503 && down.json?["error"]?["code"] == .string("store_unavailable"))
    }

    /// A clustered node whose store (the cluster's Redis) fails before its own connection noticed: the
    /// same code as once it has.
    @Test func aClusteredNodeIsUnreadyWithOneCode() {
        final class Nodes: NodeDirectory {
            var problem: String?
            func listNodes() -> Result<[JSONValue], NodeDirectoryError> { .success([]) }
            func unready() -> String? { problem }
            func forward(_ request: HTTPRequest, room: RoomID) -> HTTPResponse? { nil }
        }
        let h = APIHarness()
        let nodes = Nodes()
        h.api.nodes = nodes
        #expect(h.call(.GET, "/readyz", token: "").status == 200)
        h.store.close()
        let early = h.call(.GET, "/readyz", token: "")
        #expect(early.status == 503 && early.json?["error"]?["code"] == .string("cluster_unavailable"))
        nodes.problem = "the cluster's Redis cannot be reached: gone"
        let later = h.call(.GET, "/readyz", token: "")
        #expect(later.status == 503 && later.json?["error"]?["code"] == .string("cluster_unavailable"))
    }
}

@Suite struct AdminLiveRoomTests {
    /// A live room with a host and a sharing participant, behind the admin API.
    static func setUp() throws -> (APIHarness, Hub, RoomID, ParticipantID, ShareID) {
        let h = APIHarness()
        var n: UInt64 = 0
        let hub = Hub(
            store: h.store,
            ids: IDGenerator(random: {
                n += 1
                return n
            }), autoCreate: .off,
            makeRoomID: { RoomID.make(millis: 9, random: 9) })
        h.api.hub = hub
        _ = h.call(.POST, "/v1/rooms", body: #"{"name":"live"}"#)
        var g = Grants()
        g.canPublish = true
        g.canSubscribe = true
        let room = try hub.open(scope: "live", grants: g, now: h.now)
        let alice = ParticipantID("pa_alice")
        let join = JoinRequest(
            participant: alice, identity: "alice", name: "Alice", metadata: "", grants: g, autoSubscribe: true)
        try hub.apply(.join(join), in: room, by: .participant(alice), now: h.now)
        let screen = Track(id: TrackID("tr_screen"), owner: alice, source: .screenShare, name: "screen")
        try hub.apply(.publish(screen, share: ShareID("sh_1")), in: room, by: .participant(alice), now: h.now)
        return (h, hub, room, alice, ShareID("sh_1"))
    }

    @Test func participantsSharesAndControls() throws {
        let (h, hub, room, alice, share) = try Self.setUp()
        let list = h.call(.GET, "/v1/rooms/live/participants")
        #expect(list.json?["participants"]?.arrayValue?.first?["identity"] == .string("alice"))
        #expect(h.call(.GET, "/v1/rooms/live/participants/alice").json?["id"] == .string(alice.rawValue))
        #expect(h.call(.GET, "/v1/rooms/live/participants/nobody").status == 404)
        #expect(h.call(.GET, "/v1/rooms/live/shares").json?["shares"]?.arrayValue?.count == 1)

        // Revoking screen_share through PATCH stops the share with permission_revoked.
        let patched = h.call(.PATCH, "/v1/rooms/live/participants/alice", body: #"{"sources":["camera"],"name":"A."}"#)
        #expect(patched.status == 200)
        #expect(patched.json?["name"] == .string("A."))
        #expect(hub.state(room)?.shares.isEmpty == true)
        #expect(
            h.call(.DELETE, "/v1/rooms/live/shares/\(share.rawValue)").json?["error"]?["code"]
                == .string("share_not_found"))

        #expect(
            h.call(.PUT, "/v1/rooms/live/share-lock", body: #"{"locked":true}"#).json?["shareLocked"] == .bool(true))
        #expect(hub.state(room)?.policy.shareLocked == true)
        #expect(h.call(.PUT, "/v1/rooms/live/share-lock", body: #"{"locked":"yes"}"#).status == 422)

        #expect(h.call(.DELETE, "/v1/rooms/live/participants/alice").status == 204)
        #expect(hub.state(room)?.participants.isEmpty == true)
    }

    @Test func forceStopAndMute() throws {
        let (h, hub, room, _, share) = try Self.setUp()
        #expect(h.call(.DELETE, "/v1/rooms/live/shares/\(share.rawValue)").status == 204)
        #expect(hub.state(room)?.shares.isEmpty == true)
        let alice = ParticipantID("pa_alice")
        let mic = Track(id: TrackID("tr_mic"), owner: alice, source: .microphone, name: "")
        try hub.apply(.publish(mic, share: ShareID("sh_2")), in: room, by: .participant(alice), now: h.now)
        let muted = h.call(.POST, "/v1/rooms/live/participants/alice/tracks/tr_mic/mute")
        #expect(muted.status == 200)
        #expect(muted.json?["muted"] == .bool(true))
        #expect(h.call(.POST, "/v1/rooms/live/participants/alice/tracks/tr_none/mute").status == 404)
    }

    @Test func roomNotLiveYet() {
        let h = APIHarness()
        _ = h.call(.POST, "/v1/rooms", body: #"{"name":"quiet"}"#)
        #expect(h.call(.GET, "/v1/rooms/quiet/participants").json?["participants"] == .array([]))
        #expect(
            h.call(.PUT, "/v1/rooms/quiet/share-lock", body: #"{"locked":true}"#).json?["shareLocked"] == .bool(true))
        #expect(h.call(.GET, "/v1/rooms/quiet").json?["shareLocked"] == .bool(true))
    }
}
