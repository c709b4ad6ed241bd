import AtriumAuth
import AtriumJSON
import AtriumModel
import AtriumRoomCoding
import AtriumStore
import Testing

@testable import AtriumRooms
@testable import AtriumSignal

/// Data beside media: messages over signaling (to everyone, to some), the chat history a joiner gets,
/// the grant and the live permission, the limits per participant, and attributes.
@Suite struct DataMessageTests {
    static func room(history: Int = 100) -> RoomState {
        var r = Room(id: RoomID("rm_0000000000000001"), name: "r", createdAt: 0)
        r.chatHistory = history
        return RoomState(room: r)
    }

    static func join(
        _ s: inout RoomState, _ identity: String, _ role: ParticipantRole = .participant, data: Bool = true
    )
        throws -> ParticipantID
    {
        var g = Grants()
        g.roomJoin = true
        g.canPublish = true
        g.canSubscribe = true
        g.role = role
        g.canPublishData = data
        let id = ParticipantID("pa_\(identity)")
        _ = try s.join(id: id, identity: identity, name: identity, metadata: "", grants: g, autoSubscribe: true, now: 0)
        return id
    }

    static func message(_ n: Int, from: ParticipantID?, topic: String = "chat", to: [ParticipantID]? = nil)
        -> DataMessage
    {
        DataMessage(id: MessageID("dm_\(n)"), from: from, topic: topic, payload: "m\(n)", to: to, at: Int64(n))
    }

    @Test func aMessageToEveryoneGoesToAllButItsSenderAndChatIsKeptUpToTheRoomsHistory() throws {
        var s = Self.room(history: 3)
        let a = try Self.join(&s, "a")
        let b = try Self.join(&s, "b")
        for n in 1...5 {
            let events = try s.send(Self.message(n, from: a), by: .participant(a))
            #expect(events == [.data(Self.message(n, from: a))])
            #expect(events[0].audience == .everyone(except: [a]))
        }
        #expect(s.chat.map(\.payload) == ["m3", "m4", "m5"])
        // Other topics and private messages are relayed, not kept.
        _ = try s.send(Self.message(6, from: a, topic: "reaction"), by: .participant(a))
        _ = try s.send(Self.message(7, from: b, to: [a]), by: .participant(b))
        #expect(s.chat.map(\.payload) == ["m3", "m4", "m5"])
        // A smaller setting trims what is kept; 0 keeps nothing.
        var settings = s.room
        settings.chatHistory = 1
        _ = s.apply(settings: settings)
        #expect(s.chat.map(\.payload) == ["m5"])
        settings.chatHistory = 0
        _ = s.apply(settings: settings)
        _ = try s.send(Self.message(8, from: a), by: .participant(a))
        #expect(s.chat.isEmpty)
    }

    @Test func recipientsNotInTheRoomAreSkippedAndNoneLeftIsAnError() throws {
        var s = Self.room()
        let a = try Self.join(&s, "a")
        let b = try Self.join(&s, "b")
        let ghost = ParticipantID("pa_ghost")
        let events = try s.send(Self.message(1, from: a, to: [b, ghost, a, b]), by: .participant(a))
        #expect(events == [.data(Self.message(1, from: a, to: [b]))])
        #expect(events[0].audience == .only([b]))
        #expect(throws: HubError.participantNotFound) {
            try s.send(Self.message(2, from: a, to: [ghost, a]), by: .participant(a))
        }
    }

    /// The token's grant, then a host's live revoke and grant, decide; the admin API always may send.
    @Test func thePermissionToSendIsTheTokensAndHostsChangeItLive() throws {
        var s = Self.room()
        let host = try Self.join(&s, "h", .host)
        let quiet = try Self.join(&s, "q", data: false)
        let p = try Self.join(&s, "p")
        let viewer = try Self.join(&s, "v", .viewer)
        #expect(throws: HubError.dataNotAllowed) { try s.send(Self.message(1, from: quiet), by: .participant(quiet)) }
        _ = try s.send(Self.message(2, from: viewer), by: .participant(viewer))
        #expect(throws: HubError.notAllowed("only hosts and cohosts may do this")) {
            try s.setDataPermission(quiet, granted: true, by: .participant(p))
        }
        let revoked = try s.setDataPermission(p, granted: false, by: .participant(host))
        #expect(revoked.count == 1 && s.participants[p]?.canPublishData == false)
        #expect(throws: HubError.dataNotAllowed) { try s.send(Self.message(3, from: p), by: .participant(p)) }
        #expect(try s.setDataPermission(p, granted: false, by: .participant(host)).isEmpty, "no change, no event")
        _ = try s.setDataPermission(p, granted: true, by: .admin)
        _ = try s.send(Self.message(4, from: p), by: .participant(p))
        // Nobody sends in another's name; the server's messages have no sender.
        #expect(throws: HubError.notAllowed("a participant sends its own messages")) {
            try s.send(Self.message(5, from: host), by: .participant(p))
        }
        _ = try s.send(Self.message(6, from: nil), by: .admin)
        #expect(throws: HubError.notAllowed("the server's messages have no sender")) {
            try s.send(Self.message(7, from: p), by: .admin)
        }
    }

    @Test func attributesAreSetByTheirOwnerAndClearedByHosts() throws {
        var s = Self.room()
        let host = try Self.join(&s, "h", .host)
        let cohost = try Self.join(&s, "c", .cohost)
        let p = try Self.join(&s, "p")
        let e = try s.setAttributes(p, ["hand": "raised", "mood": "ok"], by: .participant(p))
        #expect(e.count == 1 && s.participants[p]?.attributes == ["hand": "raised", "mood": "ok"])
        #expect(try s.setAttributes(p, ["hand": "raised"], by: .participant(p)).isEmpty, "no change, no event")
        #expect(throws: HubError.notAllowed("only hosts and cohosts may do this")) {
            try s.setAttributes(host, ["hand": nil], by: .participant(p))
        }
        #expect(throws: HubError.notAllowed("hosts clear another participant's attributes; only its owner sets them")) {
            try s.setAttributes(p, ["hand": "lowered"], by: .participant(host))
        }
        _ = try s.setAttributes(host, ["hand": "raised"], by: .participant(host))
        #expect(throws: HubError.notAllowed("a cohost cannot act on a host")) {
            try s.setAttributes(host, ["hand": nil], by: .participant(cohost))
        }
        _ = try s.setAttributes(p, ["hand": nil], by: .participant(cohost))
        #expect(s.participants[p]?.attributes == ["mood": "ok"])
        _ = try s.setAttributes(p, ["badge": "speaker"], by: .admin)
        #expect(s.participants[p]?.attributes == ["mood": "ok", "badge": "speaker"])
    }

    @Test(
        arguments: [
            (["": "x"], "attributes: a key is 1 to 64 bytes"),
            ([String(repeating: "k", count: 65): "x"], "attributes: a key is 1 to 64 bytes"),
            (["k": String(repeating: "v", count: 1025)], "attributes: a value is at most 1024 bytes"),
        ] as [([String: String], String)])
    func attributesOutOfBoundsAreRefusedAndNothingChanges(_ changes: [String: String], _ message: String) throws {
        var s = Self.room()
        let p = try Self.join(&s, "p")
        #expect(throws: HubError.self) { try s.setAttributes(p, changes, by: .participant(p)) }
        do {
            _ = try s.setAttributes(p, changes, by: .participant(p))
        } catch {
            #expect(error.code == "invalid_field" && error.message == message)
        }
        #expect(s.participants[p]?.attributes == [:])
    }

    @Test func atMost32Attributes() throws {
        var s = Self.room()
        let p = try Self.join(&s, "p")
        var many: AttributeChanges = [:]
        for i in 0..<32 { many["k\(i)"] = .some("v") }
        _ = try s.setAttributes(p, many, by: .participant(p))
        #expect(throws: HubError.invalidField("attributes", "at most 32 attributes")) {
            try s.setAttributes(p, ["one-more": "v"], by: .participant(p))
        }
        #expect(s.participants[p]?.attributes.count == 32)
    }

    /// The two buckets on the manual clock: a burst of 60 messages, then 30 a second; 256 KiB of
    /// payload at once, then 64 KiB a second. A refused message costs nothing.
    @Test func theDataLimiterAdmitsBurstsThenTheSustainedRate() {
        var l = DataRateLimiter(now: 0)
        var admitted = 0
        for _ in 0..<100 where l.admit(size: 10, now: 0) { admitted += 1 }
        #expect(admitted == 60)
        let overBurst = l.admit(size: 10, now: 0.01)
        #expect(!overBurst)
        admitted = 0
        for _ in 0..<100 where l.admit(size: 10, now: 1.01) { admitted += 1 }
        #expect(admitted == 30)

        var bytes = DataRateLimiter(now: 0)
        let big = 16 * 1024
        admitted = 0
        for _ in 0..<40 where bytes.admit(size: big, now: 0) { admitted += 1 }
        #expect(admitted == 16)
        admitted = 0
        for _ in 0..<40 where bytes.admit(size: big, now: 1) { admitted += 1 }
        #expect(admitted == 4)
        let empty = bytes.admit(size: 0, now: 1)
        #expect(empty, "an empty payload needs only a message token")
        // A clock that goes back refills nothing.
        var back = DataRateLimiter(now: 10)
        for _ in 0..<60 { _ = back.admit(size: 1, now: 10) }
        let earlier = back.admit(size: 1, now: 5)
        #expect(!earlier)
    }

    // MARK: - Through the signaling endpoint

    static func results(_ c: FakeConnection, id: Int) -> JSONValue? {
        c.sent.last { $0["id"] == .int(Int64(id)) }
    }

    @Test func twoParticipantsExchangeMessagesAndAJoinerGetsTheChatHistory() throws {
        let w = SignalWorld()
        let a = w.connect("alice", role: .host)
        let b = w.connect("bob")
        let c = w.connect("carol")
        let bobID = try #require(b.sent.first { $0["type"] == .string("result") }?["data"]?["participant"]?["id"])
        w.send(a, #"{"type":"send_data","id":2,"topic":"chat","payload":"hello all"}"#)
        let r = try #require(Self.results(a, id: 2))
        #expect(r["data"]?["recipients"] == .int(2))
        for other in [b, c] {
            let d = try #require(other.sent.last { $0["type"] == .string("data") })
            #expect(d["payload"] == .string("hello all") && d["topic"] == .string("chat") && d["to"] == .null)
            #expect(d["messageId"] == r["data"]?["messageId"] && d["at"] == .int(SignalWorld.now * 1000))
        }
        #expect(!a.sent.contains { $0["type"] == .string("data") }, "the sender gets its result, not a copy")
        // To one participant only.
        let carolBefore = c.sent.count
        w.send(a, ["type": "send_data", "id": .int(3), "topic": "reaction", "payload": "+1", "to": .array([bobID])])
        #expect(b.sent.last?["type"] == .string("data") && b.sent.last?["to"] == .array([bobID]))
        #expect(c.sent.count == carolBefore)
        // A joiner gets the chat (not the reaction) in its snapshot.
        let d = w.connect("dave")
        let chat = try #require(d.sent.first { $0["type"] == .string("result") }?["data"]?["chat"]?.arrayValue)
        #expect(chat.count == 1 && chat.first?["payload"] == .string("hello all"))
    }

    @Test func withoutTheGrantOrPastTheLimitTheErrorComesAndTheConnectionStays() throws {
        let w = SignalWorld()
        let a = w.connect("alice", role: .host)
        let q = w.connect("quiet", data: false)
        w.send(q, #"{"type":"send_data","id":2,"topic":"chat","payload":"hi"}"#)
        #expect(Self.results(q, id: 2)?["error"]?["code"] == .string("data_not_allowed"))
        // Past the limit: refused with the documented error, not sent, not cut.
        var refused = 0
        for i in 0..<70 {
            w.send(a, #"{"type":"send_data","id":\#(100 + i),"topic":"t","payload":"x"}"#)
            if Self.results(a, id: 100 + i)?["error"]?["code"] == .string("data_rate_limited") { refused += 1 }
        }
        #expect(refused == 10)
        #expect(a.closedWith == nil && q.closedWith == nil)
        #expect(q.sent.filter { $0["type"] == .string("data") }.count == 60)
        w.clock += 1
        w.send(a, #"{"type":"send_data","id":300,"topic":"t","payload":"x"}"#)
        #expect(Self.results(a, id: 300)?["data"]?["recipients"] == .int(1))
        // A payload over 16 KiB is an invalid field.
        w.send(
            a,
            [
                "type": "send_data", "id": .int(301), "topic": "t",
                "payload": .string(String(repeating: "x", count: 16385)),
            ])
        #expect(Self.results(a, id: 301)?["error"]?["code"] == .string("invalid_field"))
    }

    @Test func aRevokedPermissionTakesEffectAtOnceAndAttributesAreInTheNextSnapshot() throws {
        let w = SignalWorld()
        let a = w.connect("alice", role: .host)
        let b = w.connect("bob")
        let bobID = try #require(b.sent.first { $0["type"] == .string("result") }?["data"]?["participant"]?["id"])
        w.send(
            a, ["type": "set_permission", "id": .int(2), "participantId": bobID, "source": "data", "granted": false])
        #expect(Self.results(a, id: 2)?["data"] == .object([:]))
        let changed = try #require(b.sent.last { $0["type"] == .string("permissions_changed") })
        #expect(changed["permissions"]?["canPublishData"] == .bool(false))
        w.send(b, #"{"type":"send_data","id":3,"topic":"chat","payload":"hi"}"#)
        #expect(Self.results(b, id: 3)?["error"]?["code"] == .string("data_not_allowed"))
        // Attributes: set by bob, seen by alice, cleared by alice, in a later snapshot.
        w.send(b, #"{"type":"set_attributes","id":4,"attributes":{"hand":"raised","status":"away"}}"#)
        let seen = try #require(a.sent.last { $0["type"] == .string("attributes_changed") })
        #expect(seen["attributes"] == .object(["hand": "raised", "status": "away"]) && seen["by"] == bobID)
        w.send(
            a,
            ["type": "set_attributes", "id": .int(5), "participantId": bobID, "attributes": .object(["hand": .null])])
        #expect(Self.results(a, id: 5)?["data"]?["attributes"] == .object(["status": "away"]))
        let c = w.connect("carol")
        let snapshot = try #require(c.sent.first { $0["type"] == .string("result") }?["data"])
        let bob = try #require(snapshot["participants"]?.arrayValue?.first { $0["id"] == bobID })
        #expect(bob["attributes"] == .object(["status": "away"]))
        #expect(bob["permissions"]?["canPublishData"] == .bool(false))
    }
}
