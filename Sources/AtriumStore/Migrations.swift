import AtriumModel

/// The schema, as an ordered list of migrations. Version N is `migrations[N - 1]`; the applied version is
/// kept in `PRAGMA user_version`. Append, never edit: released databases have run the earlier steps.
enum Migrations {
    static let all: [String] = [
        // 1: rooms with their settings and share policy.
        """
        CREATE TABLE rooms (
            id TEXT PRIMARY KEY NOT NULL,
            name TEXT UNIQUE,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            max_participants INTEGER NOT NULL,
            empty_timeout INTEGER NOT NULL,
            metadata TEXT NOT NULL,
            share_mode TEXT NOT NULL,
            max_concurrent_shares INTEGER NOT NULL,
            who_can_share TEXT NOT NULL,
            share_request_required INTEGER NOT NULL,
            share_locked INTEGER NOT NULL
        );
        """,
        // 2: the webhook outbox: events waiting for delivery, per endpoint, in order (`seq`).
        """
        CREATE TABLE webhook_outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            endpoint TEXT NOT NULL,
            room TEXT NOT NULL,
            event_id TEXT NOT NULL,
            body TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX webhook_outbox_endpoint ON webhook_outbox (endpoint, seq);
        """,
        // 3: how many chat messages a live room keeps for joiners.
        """
        ALTER TABLE rooms ADD COLUMN chat_history INTEGER NOT NULL DEFAULT 100;
        """,
        // 4: end-to-end encrypted rooms.
        """
        ALTER TABLE rooms ADD COLUMN e2ee INTEGER NOT NULL DEFAULT 0;
        """,
    ]

    static var latest: Int { all.count }

    /// Brings the database to the latest version, one transaction per step.
    static func apply(to db: SQLiteDatabase) throws(StoreError) {
        let current = try db.userVersion()
        if current > latest { throw .schemaTooNew(found: current, known: latest) }
        for version in stride(from: current + 1, through: latest, by: 1) {
            try db.exec("BEGIN IMMEDIATE")
            do throws(StoreError) {
                try db.exec(all[version - 1])
                try db.exec("PRAGMA user_version = \(version)")
                try db.exec("COMMIT")
            } catch {
                try? db.exec("ROLLBACK")
                throw error
            }
        }
    }
}
