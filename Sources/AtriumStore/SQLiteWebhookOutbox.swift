public import AtriumModel

/// The webhook outbox in the room store's SQLite file (table `webhook_outbox`, migration 2), through a
/// connection of its own: the service thread and each delivery thread open one each, and SQLite's WAL
/// mode lets them read while another writes. Entries are durable once `enqueue` returns (WAL,
/// `synchronous=NORMAL`: a process crash loses nothing; a power cut may lose the last commits).
public final class SQLiteWebhookOutbox: WebhookOutbox, @unchecked Sendable {
    // @unchecked: the connection is opened with SQLITE_OPEN_FULLMUTEX, and each instance is used by one
    // thread.
    private let db: SQLiteDatabase

    public init(path: String) throws(StoreError) {
        db = try SQLiteDatabase(path: path)
        try db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
        try Migrations.apply(to: db)
    }

    public func enqueue(_ entries: [OutboxEntry]) throws(StoreError) {
        guard !entries.isEmpty else { return }
        try db.exec("BEGIN IMMEDIATE")
        do throws(StoreError) {
            let s = try db.prepare(
                "INSERT INTO webhook_outbox (endpoint, room, event_id, body, attempts, next_attempt_at) "
                    + "VALUES (?,?,?,?,?,?)")
            for e in entries {
                try s.bind([
                    .text(e.endpoint), .text(e.room), .text(e.eventID), .text(e.body), .int(Int64(e.attempts)),
                    .int(e.nextAttemptAt),
                ])
                _ = try s.step()
            }
            try db.exec("COMMIT")
        } catch {
            try? db.exec("ROLLBACK")
            throw error
        }
    }

    public func pending(endpoint: String, limit: Int) throws(StoreError) -> [OutboxEntry] {
        let s = try db.prepare(
            "SELECT seq, endpoint, room, event_id, body, attempts, next_attempt_at FROM webhook_outbox "
                + "WHERE endpoint = ? ORDER BY seq LIMIT ?")
        try s.bind([.text(endpoint), .int(Int64(max(0, limit)))])
        var out: [OutboxEntry] = []
        while try s.step() {
            out.append(
                OutboxEntry(
                    seq: s.int64(0), endpoint: s.text(1) ?? "", room: s.text(2) ?? "", eventID: s.text(3) ?? "",
                    body: s.text(4) ?? "", attempts: Int(clamping: s.int64(5)), nextAttemptAt: s.int64(6)))
        }
        return out
    }

    public func remove(seq: Int64) throws(StoreError) {
        let s = try db.prepare("DELETE FROM webhook_outbox WHERE seq = ?")
        try s.bind([.int(seq)])
        _ = try s.step()
    }

    public func reschedule(seq: Int64, attempts: Int, nextAttemptAt: Int64) throws(StoreError) {
        let s = try db.prepare("UPDATE webhook_outbox SET attempts = ?, next_attempt_at = ? WHERE seq = ?")
        try s.bind([.int(Int64(attempts)), .int(nextAttemptAt), .int(seq)])
        _ = try s.step()
    }

    public func count() throws(StoreError) -> Int {
        let s = try db.prepare("SELECT COUNT(*) FROM webhook_outbox")
        guard try s.step() else { return 0 }
        return Int(clamping: s.int64(0))
    }

    public func close() { db.close() }
}
