public import AtriumModel
import Synchronization

/// The webhook outbox in memory (`--store memory`): ordered and retried like the SQLite one, but lost
/// at exit. One instance shared by every thread, behind a mutex.
public final class MemoryWebhookOutbox: WebhookOutbox {
    private struct State {
        var entries: [OutboxEntry] = []
        var nextSeq: Int64 = 1
    }

    private let state = Mutex(State())

    public init() {}

    public func enqueue(_ entries: [OutboxEntry]) throws(StoreError) {
        state.withLock { s in
            for var e in entries {
                e.seq = s.nextSeq
                s.nextSeq += 1
                s.entries.append(e)
            }
        }
    }

    public func pending(endpoint: String, limit: Int) throws(StoreError) -> [OutboxEntry] {
        state.withLock { s in Array(s.entries.lazy.filter { $0.endpoint == endpoint }.prefix(max(0, limit))) }
    }

    public func remove(seq: Int64) throws(StoreError) {
        state.withLock { s in s.entries.removeAll { $0.seq == seq } }
    }

    public func reschedule(seq: Int64, attempts: Int, nextAttemptAt: Int64) throws(StoreError) {
        state.withLock { s in
            if let i = s.entries.firstIndex(where: { $0.seq == seq }) {
                s.entries[i].attempts = attempts
                s.entries[i].nextAttemptAt = nextAttemptAt
            }
        }
    }

    public func count() throws(StoreError) -> Int { state.withLock { $0.entries.count } }
}
