import Testing

@testable import AtriumCluster

/// The seal on what nodes publish to each other: a message opens at the node it was sealed for, and
/// nowhere else; one under another key, tampered with, or plain does not open.
@Suite struct RelaySealTests {
    static let secret = Array("a cluster secret of at least thirty-two chars".utf8)

    @Test func aMessageOpensAtItsNodeOnly() throws {
        let a = try RelaySeal(secret: Self.secret, now: { 1_000_000 })
        let b = try RelaySeal(secret: Self.secret, now: { 1_000_000 })
        let text = #"{"op":"open","token":"eyJhbGciOiJIUzI1NiJ9.secret"}"#
        let sealed = try #require(a.seal(text, for: "n2"))
        #expect(sealed.hasPrefix("s1.") && !sealed.contains("eyJhbGciOiJIUzI1NiJ9") && !sealed.contains("\"op\""))
        #expect(b.open(Array(sealed.utf8), at: "n2") == Array(text.utf8))
        #expect(b.open(Array(sealed.utf8), at: "n3") == nil, "sealed for another node")
        #expect(a.seal(text, for: "n2") != sealed, "a fresh nonce each time")
    }

    @Test func whatDoesNotOpenIsRefused() throws {
        let a = try RelaySeal(secret: Self.secret, now: { 1_000_000 })
        let other = try RelaySeal(secret: Array("another cluster's secret, also long enough".utf8), now: { 1_000_000 })
        let sealed = Array(try #require(a.seal("{}", for: "n1")).utf8)
        #expect(other.open(sealed, at: "n1") == nil, "another key")
        var tampered = sealed
        tampered[10] = tampered[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(a.open(tampered, at: "n1") == nil, "tampered with")
        #expect(a.open(Array(#"{"op":"msg"}"#.utf8), at: "n1") == nil, "plain")
        #expect(a.open(Array("s1.".utf8), at: "n1") == nil, "empty")
        #expect(a.open(Array("s1.!!!".utf8), at: "n1") == nil, "not base64url")
    }

    @Test func theSecretFromTheAPIKeysIsTheSameOnEveryNode() {
        let one = RelaySeal.secret(apiKeys: ["k1": "s1", "k2": "s2"])
        let two = RelaySeal.secret(apiKeys: ["k2": "s2", "k1": "s1"])
        #expect(one == two && one.count == 32)
        #expect(RelaySeal.secret(apiKeys: ["k1": "s1"]) != one)
    }

    @Test func aMessageOutsideTheWindowIsRefused() throws {
        let sender = try RelaySeal(secret: Self.secret, now: { 1_000_000 })
        let sealed = Array(try #require(sender.seal("{}", for: "n1")).utf8)
        for (clock, opens) in [
            (1_000_000 + 59_000, true), (1_000_000 - 59_000, true), (1_000_000 + 61_000, false),
            (1_000_000 - 61_000, false),
        ] {
            let receiver = try RelaySeal(secret: Self.secret, now: { Int64(clock) })
            #expect((receiver.open(sealed, at: "n1") != nil) == opens, "received at \(clock)")
        }
        let extreme = try RelaySeal(secret: Self.secret, now: { Int64.min })
        #expect(extreme.open(sealed, at: "n1") == nil, "no overflow on a wild clock")
    }
}
