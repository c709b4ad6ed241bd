import AtriumModel
internal import CSQLite

/// One SQLite connection (a `final class` that closes it in `deinit`). Errors carry SQLite's message.
final class SQLiteDatabase {
    private(set) var handle: OpaquePointer?

    init(path: String) throws(StoreError) {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let msg = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open database"
            sqlite3_close(db)
            throw .backend("\(path): \(msg)")
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 2000)
    }

    deinit { close() }

    func close() {
        if let h = handle { sqlite3_close_v2(h) }
        handle = nil
    }

    var lastError: String { handle.map { String(cString: sqlite3_errmsg($0)) } ?? "database is closed" }

    /// Runs one or more statements without results.
    func exec(_ sql: String) throws(StoreError) {
        guard let h = handle else { throw .backend("database is closed") }
        var err: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(h, sql, nil, nil, &err) != SQLITE_OK {
            let msg = err.map { String(cString: $0) } ?? lastError
            sqlite3_free(err)
            throw .backend(msg)
        }
    }

    func prepare(_ sql: String) throws(StoreError) -> SQLiteStatement {
        guard let h = handle else { throw .backend("database is closed") }
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(h, sql, -1, &stmt, nil) == SQLITE_OK, let stmt else { throw .backend(lastError) }
        return SQLiteStatement(stmt, db: self)
    }

    /// `PRAGMA user_version`, which holds the schema version.
    func userVersion() throws(StoreError) -> Int {
        let s = try prepare("PRAGMA user_version")
        guard try s.step() else { return 0 }
        return Int(s.int64(0))
    }
}

/// A prepared statement, finalized in `deinit`.
final class SQLiteStatement {
    private let stmt: OpaquePointer
    private let db: SQLiteDatabase

    init(_ stmt: OpaquePointer, db: SQLiteDatabase) {
        self.stmt = stmt
        self.db = db
    }

    deinit { sqlite3_finalize(stmt) }

    /// The outcome of a step that failed on a UNIQUE constraint.
    struct UniqueViolation: Error {}

    func bind(_ values: [SQLiteValue]) throws(StoreError) {
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
        for (i, v) in values.enumerated() {
            let idx = Int32(i + 1)
            let rc: Int32
            switch v {
            case .null: rc = sqlite3_bind_null(stmt, idx)
            case .int(let n): rc = sqlite3_bind_int64(stmt, idx, n)
            case .text(let s):
                let n = Int32(s.utf8.count)
                rc = s.withCString { atrium_sqlite3_bind_text_transient(stmt, idx, $0, n) }
            }
            if rc != SQLITE_OK { throw .backend(db.lastError) }
        }
    }

    /// Steps once: true when a row is available, false when done. A UNIQUE violation throws
    /// `UniqueViolation` so callers can name what was duplicated.
    func step() throws(StoreError) -> Bool {
        let rc = sqlite3_step(stmt)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case Int32(2067) /* SQLITE_CONSTRAINT_UNIQUE */, Int32(1555) /* SQLITE_CONSTRAINT_PRIMARYKEY */:
            throw .duplicateName("")
        default: throw .backend(db.lastError)
        }
    }

    func int64(_ col: Int32) -> Int64 { sqlite3_column_int64(stmt, col) }

    func text(_ col: Int32) -> String? {
        guard sqlite3_column_type(stmt, col) != SQLITE_NULL, let p = sqlite3_column_text(stmt, col) else {
            return nil
        }
        let n = Int(sqlite3_column_bytes(stmt, col))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }

    var changes: Int { Int(sqlite3_changes(sqlite3_db_handle(stmt))) }
}

enum SQLiteValue {
    case null
    case int(Int64)
    case text(String)
}
