import AtriumModel
import Testing

@testable import AtriumStore

#if canImport(Glibc)
    import Glibc
#endif

func temporaryPath(_ name: String) -> String {
    var template = Array("/tmp/atrium-test-XXXXXX".utf8CString)
    let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    return dir + "/" + name
}

func sampleRoom(_ n: Int, name: String? = nil) -> Room {
    var r = Room(
        id: RoomID.make(millis: UInt64(1_700_000_000_000 + n), random: UInt64(n)), name: name, createdAt: Int64(n))
    r.maxParticipants = n
    r.metadata = "meta \(n) ☃"
    r.sharePolicy.shareMode = .multi
    r.sharePolicy.maxConcurrentShares = 3
    r.sharePolicy.whoCanShare = .cohost
    r.sharePolicy.shareRequestRequired = true
    r.sharePolicy.shareLocked = n % 2 == 0
    r.e2ee = n % 2 == 1
    return r
}

enum StoreKindUnderTest: String, CaseIterable, Sendable {
    case memory, sqlite

    func make() throws -> any RoomStore {
        switch self {
        case .memory: MemoryRoomStore()
        case .sqlite: try SQLiteRoomStore(path: temporaryPath("rooms.sqlite"))
        }
    }
}

@Suite struct StoreTests {
    @Test(arguments: StoreKindUnderTest.allCases)
    func roundTrip(_ kind: StoreKindUnderTest) throws {
        try Self.roundTrip(try kind.make())
    }

    /// What every store must do; run on memory and SQLite here, and on Redis in RedisRoomStoreTests.
    static func roundTrip(_ store: any RoomStore) throws {
        let a = sampleRoom(1, name: "alpha"), b = sampleRoom(2), c = sampleRoom(3, name: "gamma")
        for r in [c, a, b] { try store.insert(r) }
        #expect(try store.room(id: a.id) == a)
        #expect(try store.room(name: "gamma") == c)
        #expect(try store.room(idOrName: a.id.rawValue) == a)
        #expect(try store.room(idOrName: "alpha") == a)
        #expect(try store.count() == 3)
        #expect(try store.list(after: nil, limit: 10).map(\.id) == [a.id, b.id, c.id])
        #expect(try store.list(after: a.id, limit: 1).map(\.id) == [b.id])
        var a2 = a
        a2.name = "alpha2"
        a2.sharePolicy.shareLocked = true
        try store.update(a2)
        #expect(try store.room(id: a.id) == a2)
        #expect(throws: StoreError.duplicateName("gamma")) { try store.insert(sampleRoom(9, name: "gamma")) }
        var clash = b
        clash.name = "gamma"
        #expect(throws: StoreError.duplicateName("gamma")) { try store.update(clash) }
        #expect(throws: StoreError.notFound(sampleRoom(42).id)) { try store.update(sampleRoom(42)) }
        #expect(try store.delete(id: b.id))
        #expect(try !store.delete(id: b.id))
        #expect(try store.count() == 2)
        try store.ping()
        store.close()
        #expect(throws: StoreError.self) { try store.ping() }
    }

    @Test func sqliteKeepsRoomsAcrossReopen() throws {
        let path = temporaryPath("rooms.sqlite")
        let s1 = try SQLiteRoomStore(path: path)
        try s1.insert(sampleRoom(1, name: "kept"))
        s1.close()
        let s2 = try SQLiteRoomStore(path: path)
        #expect(try s2.room(name: "kept") == sampleRoom(1, name: "kept"))
    }

    @Test func migratesAnEmptyFile() throws {
        let path = temporaryPath("empty.sqlite")
        let fd = open(path, O_CREAT | O_WRONLY, 0o600)
        close(fd)
        let store = try SQLiteRoomStore(path: path)
        #expect(store.schemaVersion == SQLiteRoomStore.latestSchemaVersion)
        try store.insert(sampleRoom(1))
        #expect(try store.count() == 1)
    }

    /// A file of the version before end-to-end encrypted rooms: its rooms come back with `e2ee` off.
    @Test func aRoomOfAnOlderFileIsNotEncrypted() throws {
        let path = temporaryPath("v3.sqlite")
        let db = try SQLiteDatabase(path: path)
        for step in Migrations.all.prefix(3) { try db.exec(step) }
        try db.exec("PRAGMA user_version = 3")
        try db.exec(
            """
            INSERT INTO rooms (id, name, created_at, updated_at, max_participants, empty_timeout, metadata,
            share_mode, max_concurrent_shares, who_can_share, share_request_required, share_locked, chat_history)
            VALUES ('rm_01m8mtrr91jpe304', 'old', 1, 1, 0, 300, '', 'single', 1, 'anyone', 0, 0, 100)
            """)
        db.close()
        let store = try SQLiteRoomStore(path: path)
        #expect(store.schemaVersion == SQLiteRoomStore.latestSchemaVersion)
        #expect(try store.room(name: "old")?.e2ee == false)
    }

    @Test func refusesANewerSchema() throws {
        let path = temporaryPath("future.sqlite")
        let db = try SQLiteDatabase(path: path)
        try db.exec("PRAGMA user_version = 999")
        db.close()
        #expect(throws: StoreError.schemaTooNew(found: 999, known: SQLiteRoomStore.latestSchemaVersion)) {
            try SQLiteRoomStore(path: path)
        }
    }

    @Test func refusesAFileThatIsNotADatabase() throws {
        let path = temporaryPath("garbage.sqlite")
        let fd = open(path, O_CREAT | O_WRONLY, 0o600)
        let junk = Array("this is not an sqlite database, just text that is long enough to matter".utf8)
        _ = junk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        #expect(throws: StoreError.self) { try SQLiteRoomStore(path: path) }
    }
}
