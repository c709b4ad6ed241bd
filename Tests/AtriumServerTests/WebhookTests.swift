import AtriumJSON
import AtriumLog
import AtriumModel
import AtriumStore
import AtriumWebhook
import Testing

@testable import AtriumRooms

/// Webhooks as values: the signature (a fixed vector, also in docs/webhooks.md), URLs, the order
/// and backoff of deliveries, the events' JSON, the status line; both outboxes behind one table.
@Suite struct WebhookTests {
    /// The example in docs/webhooks.md: secret `whsec_example`, timestamp 1700000000, body `{"id":"evt_1"}`.
    @Test func signatureVector() {
        let sig = WebhookSignature.sign(body: #"{"id":"evt_1"}"#, timestamp: 1_700_000_000, secret: "whsec_example")
        // Computed independently: Python's hmac.new(b"whsec_example", b"1700000000." + body, sha256).
        #expect(sig == "v1=2f6f24854ba5c8d505c37e6fc0a06fc74456f1a4042208e7acdd4bd0bdbd599e")
        #expect(
            WebhookSignature.verify(
                signature: sig, body: #"{"id":"evt_1"}"#, timestamp: 1_700_000_000, secret: "whsec_example"))
        #expect(
            !WebhookSignature.verify(
                signature: sig, body: #"{"id":"evt_2"}"#, timestamp: 1_700_000_000, secret: "whsec_example"))
        #expect(
            !WebhookSignature.verify(
                signature: sig, body: #"{"id":"evt_1"}"#, timestamp: 1_700_000_001, secret: "whsec_example"))
        #expect(
            !WebhookSignature.verify(
                signature: sig, body: #"{"id":"evt_1"}"#, timestamp: 1_700_000_000, secret: "other"))
    }

    @Test(arguments: [
        ("http://127.0.0.1:9000/hooks?x=1", false, "127.0.0.1", 9000, "/hooks?x=1", "127.0.0.1:9000"),
        ("https://example.com", true, "example.com", 443, "/", "example.com"),
        ("http://[::1]:8080/a", false, "::1", 8080, "/a", "[::1]:8080"),
        ("http://host?q", false, "host", 80, "/?q", "host"),
    ])
    func urls(text: String, tls: Bool, host: String, port: Int, target: String, hostHeader: String) throws {
        let u = try #require(WebhookURL(text))
        #expect(u.tls == tls && u.host == host && u.port == port && u.target == target && u.hostHeader == hostHeader)
    }

    @Test(arguments: [
        "ftp://x/", "http://", "http://user@host/", "http://host:0/", "http://host:65536/", "http://host:x/",
        "http://host/#frag", "http://ho st/", "http://[::1/", "http://host/a b", "http://host:/",
    ])
    func badURLs(text: String) {
        #expect(WebhookURL(text) == nil)
    }

    @Test func backoffDoublesUpToItsCap() {
        let b = BackoffPolicy(initialDelay: 500, maxDelay: 4000, maxAttempts: 5)
        #expect((1...6).map { b.delay(afterFailures: $0) } == [500, 1000, 2000, 4000, 4000, 4000])
        #expect(b.delay(afterFailures: 1000) == 4000)
        #expect(b.delay(afterFailures: 0) == 500)
    }

    @Test func onlyTheHeadOfEachRoomGoesAndOnlyWhenDue() {
        func e(_ seq: Int64, _ room: String, at: Int64 = 0) -> OutboxEntry {
            OutboxEntry(seq: seq, endpoint: "u", room: room, eventID: "e\(seq)", body: "{}", nextAttemptAt: at)
        }
        let d = DeliveryPlan.decide(
            [e(1, "a", at: 500), e(2, "b"), e(3, "a"), e(4, "b"), e(5, "c", at: 300)], now: 100)
        #expect(d.due.map(\.seq) == [2], "a waits for its retry, b's head goes, c is not due")
        #expect(d.nextWake == 300)
        let none = DeliveryPlan.decide([], now: 0)
        #expect(none.due.isEmpty && none.nextWake == nil)
    }

    @Test func eventsCarryTheSignalingFieldsUnderData() throws {
        let share = Share(id: ShareID("sh_1"), sharer: ParticipantID("pa_1"), videoTrack: TrackID("tr_1"), startedAt: 5)
        let (type, data) = try #require(
            WebhookEvent.from(.shareStopped(share, .locked, by: .participant(ParticipantID("pa_2")))))
        #expect(type == "share_stopped")
        #expect(data["reason"] == .string("locked") && data["by"] == .string("pa_2"))
        #expect(data["share"]?["id"] == .string("sh_1"))
        let request = ShareRequest(
            id: ShareRequestID("rq_1"), requester: ParticipantID("pa_1"), createdAt: 1, expiresAt: 2)
        #expect(WebhookEvent.from(.shareRequestResolved(request, .granted, by: .admin))?.type == "share_granted")
        #expect(WebhookEvent.from(.shareRequestResolved(request, .denied, by: .admin))?.type == "share_denied")
        #expect(WebhookEvent.from(.shareLockChanged(locked: true, by: .admin))?.type == "share_lock_changed")
        #expect(WebhookEvent.from(.roomEnded(by: .admin)) == nil, "sent as room_ended when the room closes")
        let body = WebhookEvent(
            id: "evt_1", type: "share_stopped", createdAt: 7, room: RoomID("rm_1"), roomName: "demo", data: data
        ).body
        let parsed = try JSONParser.parse(body)
        #expect(parsed["id"] == .string("evt_1") && parsed["type"] == .string("share_stopped"))
        #expect(parsed["room"]?["name"] == .string("demo") && parsed["createdAt"] == .int(7))
        #expect(WebhookEvent.types.contains(type))
    }

    @Test(
        arguments: [
            ("HTTP/1.1 200 OK\r\n", 200, false), ("HTTP/1.0 503 Busy\r\n", 503, false), ("HTTP/1.1 20", nil, false),
            ("SSH-2.0-OpenSSH_9.2\r\n", nil, true), ("HTTP/1.1 2x0 OK\r\n", nil, true), ("garbage!!!", nil, true),
        ] as [(String, Int?, Bool)])
    func statusLines(text: String, code: Int?, malformed: Bool) {
        let r = HTTPResponseHead.status(Array(text.utf8))
        #expect(r.code == code && r.malformed == malformed)
    }

    enum OutboxKind: String, CaseIterable, Sendable {
        case memory, sqlite

        func make() throws -> any WebhookOutbox {
            switch self {
            case .memory: MemoryWebhookOutbox()
            case .sqlite: try SQLiteWebhookOutbox(path: temporaryPath("outbox.sqlite"))
            }
        }
    }

    @Test(arguments: OutboxKind.allCases)
    func outboxKeepsOrderAndRetries(kind: OutboxKind) throws {
        let o = try kind.make()
        try o.enqueue([
            OutboxEntry(endpoint: "a", room: "r", eventID: "1", body: "{1}"),
            OutboxEntry(endpoint: "b", room: "r", eventID: "1", body: "{1}"),
            OutboxEntry(endpoint: "a", room: "r", eventID: "2", body: "{2}"),
        ])
        #expect(try o.count() == 3)
        var a = try o.pending(endpoint: "a", limit: 10)
        #expect(a.map(\.eventID) == ["1", "2"] && a[0].seq < a[1].seq)
        try o.reschedule(seq: a[0].seq, attempts: 1, nextAttemptAt: 99)
        a = try o.pending(endpoint: "a", limit: 1)
        #expect(a.count == 1 && a[0].attempts == 1 && a[0].nextAttemptAt == 99)
        try o.remove(seq: a[0].seq)
        #expect(try o.pending(endpoint: "a", limit: 10).map(\.eventID) == ["2"])
        #expect(try o.pending(endpoint: "b", limit: 10).map(\.body) == ["{1}"])
        #expect(try o.count() == 2)
    }

    @Test func theSQLiteOutboxSurvivesAReopen() throws {
        let path = temporaryPath("outbox.sqlite")
        _ = try SQLiteRoomStore(path: path)
        try SQLiteWebhookOutbox(path: path).enqueue([OutboxEntry(endpoint: "a", room: "r", eventID: "1", body: "x")])
        #expect(try SQLiteWebhookOutbox(path: path).pending(endpoint: "a", limit: 5).map(\.eventID) == ["1"])
        #expect(try SQLiteRoomStore(path: path).schemaVersion == SQLiteRoomStore.latestSchemaVersion)
    }

    /// The hub's events become outbox entries for every endpoint, in order, before any thread runs.
    @Test func theObserverQueuesEveryEventForEveryEndpoint() throws {
        let outbox = MemoryWebhookOutbox()
        var n = 0
        let endpoints = try ["http://127.0.0.1:1/a", "http://127.0.0.1:1/b"].map {
            WebhookEndpoint(url: try #require(WebhookURL($0)), secret: "s")
        }
        let hooks = try Webhooks(
            endpoints: endpoints, outbox: outbox, makeOutbox: { () throws(StoreError) -> any WebhookOutbox in outbox },
            options: WebhookOptions(now: { 1_000 }), logger: Logger(level: .error),
            makeID: {
                n += 1
                return "evt_\(n)"
            })
        let room = Room(id: RoomID("rm_1"), name: "demo", createdAt: 0)
        hooks.roomOpened(room, now: 0)
        hooks.roomEvents(
            [.shareLockChanged(locked: true, by: .admin), .sharePolicyChanged(room.sharePolicy, by: .admin)],
            room: room,
            now: 0)
        hooks.roomEvents([.roomEnded(by: .admin)], room: room, now: 0)
        hooks.roomClosed(room, reason: .ended, now: 0)
        hooks.roomClosed(room, reason: .emptyTimeout, now: 0)
        for endpoint in ["http://127.0.0.1:1/a", "http://127.0.0.1:1/b"] {
            let bodies = try outbox.pending(endpoint: endpoint, limit: 10).map { try JSONParser.parse($0.body) }
            #expect(
                bodies.map { $0["type"]?.stringValue } == [
                    "room_started", "share_lock_changed", "room_ended", "room_ended",
                ])
            #expect(bodies.map { $0["id"]?.stringValue } == ["evt_1", "evt_2", "evt_3", "evt_4"])
            #expect(bodies[2]["data"]?["reason"] == .string("ended") && bodies[2]["data"]?["by"] == .string("admin"))
            #expect(bodies[3]["data"]?["reason"] == .string("empty_timeout"))
        }
        #expect(hooks.queueLength == 8)
    }
}
