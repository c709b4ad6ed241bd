import Testing

@testable import AtriumCluster

/// The relay's per-session backlog: frames wait in order, go out in order up to the first failure,
/// and the bounds refuse what would pass them.
@Suite struct RelayBacklogTests {
    @Test func framesGoOutInOrderUpToTheFirstFailure() {
        var b = RelayBacklog(node: "n2", since: 10)
        for f in ["a", "b", "c"] {
            let queued = b.append(f)
            #expect(queued)
        }
        var sent: [String] = []
        var budget = 2
        b.flush { f in
            guard budget > 0 else { return false }
            budget -= 1
            sent.append(f)
            return true
        }
        #expect(sent == ["a", "b"])
        #expect(b.frames == ["c"] && b.bytes == 1)
        b.flush { f in
            sent.append(f)
            return true
        }
        #expect(sent == ["a", "b", "c"] && b.isEmpty && b.bytes == 0)
    }

    @Test(arguments: [
        // (frames already queued, size of each, size of the next, accepted)
        (0, 0, 10, true),
        (RelayBacklog.maxFrames - 1, 1, 1, true),
        (RelayBacklog.maxFrames, 1, 1, false),
        (1, RelayBacklog.maxBytes - 10, 10, true),
        (1, RelayBacklog.maxBytes - 10, 11, false),
        (0, 0, RelayBacklog.maxBytes + 1, false),
    ])
    func boundsRefuseWhatWouldPassThem(queued: Int, size: Int, next: Int, accepted: Bool) {
        var b = RelayBacklog(node: "n2", since: 0)
        for _ in 0..<queued {
            let ok = b.append(String(repeating: "x", count: size))
            #expect(ok)
        }
        let took = b.append(String(repeating: "y", count: next))
        #expect(took == accepted)
        #expect(b.frames.count == queued + (accepted ? 1 : 0))
    }

    @Test(arguments: [(10.0, 29.0, false), (10.0, 30.0, false), (10.0, 30.5, true)])
    func expiresAfterTheLimit(since: Double, now: Double, expired: Bool) {
        #expect(RelayBacklog(node: "n2", since: since).expired(now: now, limit: 20) == expired)
    }
}
