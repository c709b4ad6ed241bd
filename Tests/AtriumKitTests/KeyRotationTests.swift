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

        let eve = try await joined("eve", "another")
        let dave = try await joined("dave", "shared")
        try await until("dave handed key 1") { await dave.e2eeKeyIndex == 1 }
        #expect(await dave.keys?.secret(1) == rolled)
        #expect(await alice.rotation?.members.count == 2)  // bob and dave; not eve
        #expect(await eve.e2eeKeyIndex == 0)
        #expect(await eve.keys?.secret(1) == nil)
        for room in [alice, bob, dave, eve] { await room.leave() }
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
