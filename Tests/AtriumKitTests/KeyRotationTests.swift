import AtriumKit
import AtriumModel
import AtriumProtocol
import AtriumSFrame
import AtriumSync
import Foundation
import Testing

@testable import AtriumKit

/// Key rotation when a member leaves (docs/e2ee.md), between AtriumKit clients through the real
/// server: members prove their keys to each other; when one leaves, the others roll to the same new
/// key under index 1 (`e2eeKey` events) and the leaver holds none; a newcomer with the passphrase is
/// handed it; a client with another passphrase proves nothing and is handed nothing.
@Suite(.serialized) struct KeyRotationTests {
    let server: LiveServer

    init() throws { server = try LiveServer() }

    func until(_ what: String, _ done: () async -> Bool) async throws {
        let deadline = Date().addingTimeInterval(20)  // a hang guard
        while !(await done()) {
            guard Date() < deadline else { throw AtriumError(code: "timeout", message: what) }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func joined(_ identity: String, _ passphrase: String) async throws -> AtriumRoom {
        let room = AtriumRoom(url: server.url, token: try server.token("rotation", identity))
        try await room.join(e2ee: .passphrase(passphrase), rotateOnLeave: true)
        return room
    }

    /// The `e2eeKey` indexes a room announced, and the chat messages it got.
    final class Seen: Sendable {
        let keys = Monitor([UInt64]())
        let chats = Monitor([String]())
    }

    func keyEvents(_ room: AtriumRoom) -> Seen {
        let seen = Seen()
        Task {
            for await e in room.events {
                if case .e2eeKey(let i) = e { seen.keys.withLock { $0.append(i) } }
                if case .event(.data(let d)) = e, d.topic == "chat" { seen.chats.withLock { $0.append(d.payload) } }
            }
        }
        return seen
    }

    @Test func theKeyRollsWhenAMemberLeaves() async throws {
        #expect(try server.createRoom(#"{"name":"rotation","e2ee":true}"#) == 201)
        let alice = try await joined("alice", "shared")
        let bob = try await joined("bob", "shared")
        let carol = try await joined("carol", "shared")
        for room in [alice, bob, carol] {
            try await until("two proven members") { await room.rotation?.members.count == 2 }
        }
        let (aliceKeys, bobKeys) = (keyEvents(alice), keyEvents(bob))
        await carol.leave()
        for room in [alice, bob] {
            try await until("key 1 in use") { await room.e2eeKeyIndex == 1 }
            #expect(await room.rotation?.members.count == 1)
        }
        let rolled = try #require(await alice.keys?.secret(1))
        #expect(await bob.keys?.secret(1) == rolled)
        #expect(await carol.keys?.secret(1) == nil)
        let first = await alice.keys?.secret(0)
        #expect(rolled != first)
        try await until("the roll announced") {
            aliceKeys.keys.withLock { $0 } == [1] && bobKeys.keys.withLock { $0 } == [1]
        }
        // A member cannot send the others back to the passphrase's key (a leaver holds it).
        try await bob.sendData(topic: "atrium.e2ee", payload: #"{"t":"send","index":0}"#)
        try await bob.sendData(topic: "chat", payload: "after")  // relayed in order: the forged one came first
        try await until("bob's chat") { aliceKeys.chats.withLock { $0 } == ["after"] }
        #expect(await alice.e2eeKeyIndex == 1)
        // Nor hand out a key of its own: only the leader's keys are taken (alice leads, having joined
        // first), else two secrets could come to share an index.
        let aliceID = try #require(await alice.me?.id)
        await bob.keys?.add(secret: [UInt8](repeating: 7, count: 32), index: 7, send: false)
        for m in await bob.keysMessages(7, for: [aliceID], send: true) {
            try await bob.sendData(topic: "atrium.e2ee", payload: m, to: [aliceID])
        }
        try await bob.sendData(topic: "chat", payload: "after keys")
        try await until("bob's second chat") { aliceKeys.chats.withLock { $0 } == ["after", "after keys"] }
        #expect(await alice.e2eeKeyIndex == 1)
        #expect(await alice.keys?.secret(7) == nil)

        let eve = try await joined("eve", "another")
        let dave = try await joined("dave", "shared")
        try await until("dave handed key 1") { await dave.e2eeKeyIndex == 1 }
        #expect(await dave.keys?.secret(1) == rolled)
        #expect(await alice.rotation?.members.count == 2)  // bob and dave; not eve
        #expect(await eve.e2eeKeyIndex == 0)
        #expect(await eve.keys?.secret(1) == nil)
        for room in [alice, bob, dave, eve] { await room.leave() }
    }

    /// The member that joined first leads, whatever the ids: every member works it out alike, so two
    /// never roll different keys under one index. A room past the data rate limit's burst (60 messages)
    /// still rolls together: the leader wraps the key for many members in one `keys` message.
    @Test func aLargeRoomRollsTogetherLedByItsFirstMember() async throws {
        #expect(try server.createRoom(#"{"name":"large","e2ee":true,"maxParticipants":100}"#) == 201)
        var rooms: [AtriumRoom] = []
        for i in 0..<64 {
            let room = AtriumRoom(url: server.url, token: try server.token("large", "member\(i)"))
            try await room.join(e2ee: .passphrase("shared"), rotateOnLeave: true)
            rooms.append(room)
        }
        for room in rooms {
            try await until("63 proven members") { await room.rotation?.members.count == 63 }
        }
        var leaders: [Bool] = []
        for room in rooms { leaders.append(await room.leads()) }
        #expect(leaders == [true] + Array(repeating: false, count: 63))
        // 63 wrapped secrets go in two messages, each within a data message's 16 KiB.
        let members = try #require(await rooms[0].rotation?.members.keys)
        let batches = await rooms[0].keysMessages(0, for: Array(members), send: false)
        #expect(batches.count == 2)
        #expect(batches.allSatisfy { $0.utf8.count <= 16384 })
        // One that is not the leader leaves: the first roll is led by rooms[0].
        await rooms[1].leave()
        let stayed = [rooms[0]] + rooms[2...]
        for room in stayed { try await until("key 1 in use") { await room.e2eeKeyIndex == 1 } }
        let rolled = try #require(await rooms[0].keys?.secret(1))
        for room in stayed { #expect(await room.keys?.secret(1) == rolled) }
        #expect(await rooms[1].keys?.secret(1) == nil)
        // The leader leaves: the next to have joined leads the second roll.
        await rooms[0].leave()
        try await until("the next to have joined leads") { await rooms[2].leads() }
        for room in rooms[2...] { try await until("key 2 in use") { await room.e2eeKeyIndex == 2 } }
        let second = try #require(await rooms[2].keys?.secret(2))
        for room in rooms[2...] { #expect(await room.keys?.secret(2) == second) }
        for room in rooms[2...] { await room.leave() }
    }

    /// A client that joins again under a new participant id (its session lost: `moved`, or the server
    /// forgot it) proves its key again under that id; the leader hands it the key the room rolled to
    /// when its old id left, and its frames are keyed for the new id.
    @Test func aRejoinIsAnnouncedAgain() async throws {
        #expect(try server.createRoom(#"{"name":"rejoin","e2ee":true}"#) == 201)
        var rooms: [AtriumRoom] = []
        for name in ["alice", "bob", "carol"] {
            let room = AtriumRoom(url: server.url, token: try server.token("rejoin", name))
            try await room.join(e2ee: .passphrase("shared"), rotateOnLeave: true)
            rooms.append(room)
        }
        let (alice, bob, carol) = (rooms[0], rooms[1], rooms[2])
        for room in rooms { try await until("two proven members") { await room.rotation?.members.count == 2 } }
        let before = try #require(await bob.me?.id)
        // As after close 4104 `moved`: a new socket and a join; the old session is replaced.
        await bob.closed(code: SignalCloseCode.moved, reason: "moved")
        try await until("bob under a new id") {
            let (id, state) = (await bob.me?.id, await bob.connection)
            return id != before && state == .connected
        }
        let after = try #require(await bob.me?.id)
        for room in [alice, carol] {
            try await until("key 1 in use") { await room.e2eeKeyIndex == 1 }
            try await until("bob proven again") { await room.rotation?.members[after] != nil }
            #expect(await room.rotation?.members[before] == nil)
        }
        try await until("bob handed key 1") { await bob.e2eeKeyIndex == 1 }
        let rolled = try #require(await alice.keys?.secret(1))
        #expect(await bob.keys?.secret(1) == rolled)
        for room in rooms { await room.leave() }
    }

    /// A client given a passphrase refuses a room the server says is not encrypted: it never sends in
    /// clear on the server's word.
    @Test func aPassphraseForAPlainRoomIsRefused() async throws {
        let room = AtriumRoom(url: server.url, token: try server.token("plain-room", "alice"))
        do {
            try await room.join(e2ee: .passphrase("shared"))
            Issue.record("joined a plain room with a passphrase")
        } catch { #expect(error.code == "e2ee_mismatch") }
    }
}
