/// Why a store call failed.
public enum StoreError: Error, Equatable, Sendable {
    /// Another room already has this name.
    case duplicateName(String)
    case notFound(RoomID)
    /// The database file was written by a newer Atrium whose schema this one does not know.
    case schemaTooNew(found: Int, known: Int)
    /// The backend failed (I/O, corruption); the message is the backend's.
    case backend(String)
    /// The cluster's shared store (Redis) cannot be reached: what needs it fails until it is back
    /// (`503 cluster_unavailable`); live rooms keep running.
    case unavailable(String)
}

/// Where rooms live. Single-node Atrium uses `SQLiteRoomStore` (or `MemoryRoomStore` for ephemeral runs);
/// a Redis-backed store for multi-node joins behind the same protocol. Called from one thread.
public protocol RoomStore: AnyObject {
    /// Inserts a new room; fails with `duplicateName` when its name is taken.
    func insert(_ room: Room) throws(StoreError)
    func room(id: RoomID) throws(StoreError) -> Room?
    func room(name: String) throws(StoreError) -> Room?
    /// Rooms in id order (creation order), starting after `cursor`.
    func list(after cursor: RoomID?, limit: Int) throws(StoreError) -> [Room]
    /// Replaces a stored room; `notFound` if it is gone, `duplicateName` if the new name is taken.
    func update(_ room: Room) throws(StoreError)
    /// Deletes a room; returns false when there was none.
    func delete(id: RoomID) throws(StoreError) -> Bool
    func count() throws(StoreError) -> Int
    /// Checks the backend answers (for `/readyz`).
    func ping() throws(StoreError)
    /// Flushes and closes; later calls fail.
    func close()
}

extension RoomStore {
    /// Finds a room by id, or by name when the string is not shaped like an id.
    public func room(idOrName key: String) throws(StoreError) -> Room? {
        if RoomID.isWellFormed(key), let r = try room(id: RoomID(key)) { return r }
        return try room(name: key)
    }
}
