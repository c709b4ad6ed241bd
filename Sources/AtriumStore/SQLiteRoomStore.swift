public import AtriumModel

/// Rooms in an SQLite file (the embedded default): they survive restarts. WAL mode, so a reader never
/// waits for the writer; `synchronous=NORMAL`, durable at each checkpoint and on close.
public final class SQLiteRoomStore: RoomStore {
    private let db: SQLiteDatabase
    private static let columns = """
        id, name, created_at, updated_at, max_participants, empty_timeout, metadata, share_mode, \
        max_concurrent_shares, who_can_share, share_request_required, share_locked, chat_history, e2ee
        """

    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    public init(path: String) throws(StoreError) {
        db = try SQLiteDatabase(path: path)
        try db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
        try Migrations.apply(to: db)
    }

    public var schemaVersion: Int { (try? db.userVersion()) ?? 0 }
    public static var latestSchemaVersion: Int { Migrations.latest }

    public func insert(_ room: Room) throws(StoreError) {
        let s = try db.prepare("INSERT INTO rooms (\(Self.columns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
        try s.bind(Self.values(room))
        do throws(StoreError) { _ = try s.step() } catch .duplicateName { throw .duplicateName(room.name ?? "") }
    }

    public func room(id: RoomID) throws(StoreError) -> Room? {
        try fetch("WHERE id = ?", [.text(id.rawValue)]).first
    }

    public func room(name: String) throws(StoreError) -> Room? {
        try fetch("WHERE name = ?", [.text(name)]).first
    }

    public func list(after cursor: RoomID?, limit: Int) throws(StoreError) -> [Room] {
        try fetch("WHERE id > ? ORDER BY id LIMIT ?", [.text(cursor?.rawValue ?? ""), .int(Int64(limit))])
    }

    public func update(_ room: Room) throws(StoreError) {
        let s = try db.prepare(
            """
            UPDATE rooms SET name=?2, created_at=?3, updated_at=?4, max_participants=?5, empty_timeout=?6,
            metadata=?7, share_mode=?8, max_concurrent_shares=?9, who_can_share=?10, share_request_required=?11,
            share_locked=?12, chat_history=?13, e2ee=?14 WHERE id=?1
            """)
        try s.bind(Self.values(room))
        do throws(StoreError) { _ = try s.step() } catch .duplicateName { throw .duplicateName(room.name ?? "") }
        if s.changes == 0 { throw .notFound(room.id) }
    }

    public func delete(id: RoomID) throws(StoreError) -> Bool {
        let s = try db.prepare("DELETE FROM rooms WHERE id = ?")
        try s.bind([.text(id.rawValue)])
        _ = try s.step()
        return s.changes > 0
    }

    public func count() throws(StoreError) -> Int {
        let s = try db.prepare("SELECT COUNT(*) FROM rooms")
        guard try s.step() else { return 0 }
        return Int(s.int64(0))
    }

    public func ping() throws(StoreError) {
        let s = try db.prepare("SELECT 1")
        _ = try s.step()
    }

    public func close() {
        try? db.exec("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
    }

    private func fetch(_ clause: String, _ args: [SQLiteValue]) throws(StoreError) -> [Room] {
        let s = try db.prepare("SELECT \(Self.columns) FROM rooms \(clause)")
        try s.bind(args)
        var out: [Room] = []
        while try s.step() {
            var r = Room(id: RoomID(s.text(0) ?? ""), name: s.text(1), createdAt: s.int64(2))
            r.updatedAt = s.int64(3)
            r.maxParticipants = Int(s.int64(4))
            r.emptyTimeout = Int(s.int64(5))
            r.metadata = s.text(6) ?? ""
            r.sharePolicy.shareMode = ShareMode(rawValue: s.text(7) ?? "") ?? .single
            r.sharePolicy.maxConcurrentShares = Int(s.int64(8))
            r.sharePolicy.whoCanShare = WhoCanShare(rawValue: s.text(9) ?? "") ?? .anyone
            r.sharePolicy.shareRequestRequired = s.int64(10) != 0
            r.sharePolicy.shareLocked = s.int64(11) != 0
            r.chatHistory = Int(clamping: min(max(s.int64(12), 0), Int64(Room.maxChatHistory)))
            r.e2ee = s.int64(13) != 0
            out.append(r)
        }
        return out
    }

    private static func values(_ r: Room) -> [SQLiteValue] {
        let p = r.sharePolicy
        return [
            .text(r.id.rawValue), r.name.map { .text($0) } ?? .null, .int(r.createdAt), .int(r.updatedAt),
            .int(Int64(r.maxParticipants)), .int(Int64(r.emptyTimeout)), .text(r.metadata),
            .text(p.shareMode.rawValue), .int(Int64(p.maxConcurrentShares)), .text(p.whoCanShare.rawValue),
            .int(p.shareRequestRequired ? 1 : 0), .int(p.shareLocked ? 1 : 0), .int(Int64(r.chatHistory)),
            .int(r.e2ee ? 1 : 0),
        ]
    }
}
