public import AtriumModel

/// Rooms in memory, gone at exit (`--store memory`). Also the in-memory fake for tests above the store.
public final class MemoryRoomStore: RoomStore {
    private var rooms: [RoomID: Room] = [:]
    private var closed = false

    public init() {}

    private func open() throws(StoreError) {
        if closed { throw .backend("store is closed") }
    }

    public func insert(_ room: Room) throws(StoreError) {
        try open()
        if let name = room.name, rooms.values.contains(where: { $0.name == name }) { throw .duplicateName(name) }
        rooms[room.id] = room
    }

    public func room(id: RoomID) throws(StoreError) -> Room? {
        try open()
        return rooms[id]
    }

    public func room(name: String) throws(StoreError) -> Room? {
        try open()
        return rooms.values.first { $0.name == name }
    }

    public func list(after cursor: RoomID?, limit: Int) throws(StoreError) -> [Room] {
        try open()
        let sorted = rooms.values.sorted { $0.id < $1.id }
        return Array(sorted.lazy.filter { room in cursor.map { room.id > $0 } ?? true }.prefix(limit))
    }

    public func update(_ room: Room) throws(StoreError) {
        try open()
        guard rooms[room.id] != nil else { throw .notFound(room.id) }
        if let name = room.name, rooms.values.contains(where: { $0.name == name && $0.id != room.id }) {
            throw .duplicateName(name)
        }
        rooms[room.id] = room
    }

    public func delete(id: RoomID) throws(StoreError) -> Bool {
        try open()
        return rooms.removeValue(forKey: id) != nil
    }

    public func count() throws(StoreError) -> Int {
        try open()
        return rooms.count
    }

    public func ping() throws(StoreError) { try open() }
    public func close() { closed = true }
}
