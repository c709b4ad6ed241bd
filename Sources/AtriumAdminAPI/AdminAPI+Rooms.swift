import AtriumAuth
import AtriumHTTP
import AtriumJSON
import AtriumModel
import AtriumRooms

/// `/v1/rooms` and `/v1/rooms/{roomId}`.
extension AdminAPI {
    func createRoom(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let claims = try authenticate(request)
        let body = try jsonBody(request)
        let now = env.now()
        var room = Room(id: env.makeRoomID(), name: nil, createdAt: now)
        try RoomCoding.apply(body, to: &room)
        do throws(AuthError) { try claims.authorize(.createRoom(name: room.name)) } catch { throw .auth(error) }
        do throws(StoreError) { try store.insert(room) } catch { throw .store(error) }
        return Self.json(201, RoomCoding.json(room), headers: [("location", "/v1/rooms/\(room.id.rawValue)")])
    }

    func listRooms(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let claims = try authenticate(request)
        do throws(AuthError) { try claims.authorize(.listRooms) } catch { throw .auth(error) }
        var limit = Self.defaultPageSize
        if let l = request.queryValue("limit") {
            guard let n = Int(l), (1...Self.maxPageSize).contains(n) else {
                throw APIError(
                    status: 400, code: "invalid_query",
                    message: "limit must be an integer from 1 to \(Self.maxPageSize)",
                    details: ["field": .string("limit")])
            }
            limit = n
        }
        var cursor: RoomID?
        if let t = request.queryValue("pageToken"), !t.isEmpty {
            guard RoomID.isWellFormed(t) else {
                throw APIError(
                    status: 400, code: "invalid_query", message: "pageToken is not one this server issued",
                    details: ["field": .string("pageToken")])
            }
            cursor = RoomID(t)
        }
        var rooms: [Room]
        if let scope = claims.grants.room {
            // A room-scoped token lists its own room only.
            let found: Room?
            do throws(StoreError) { found = try store.room(idOrName: scope) } catch { throw .store(error) }
            rooms = [found].compactMap { $0 }.filter { room in cursor.map { room.id > $0 } ?? true }
        } else {
            do throws(StoreError) { rooms = try store.list(after: cursor, limit: limit + 1) } catch {
                throw .store(error)
            }
        }
        let page = rooms.prefix(limit)
        let next: JSONValue = rooms.count > limit ? .string(page.last?.id.rawValue ?? "") : .null
        return Self.json(200, ["rooms": .array(page.map(RoomCoding.json)), "nextPageToken": next])
    }

    func getRoom(_ request: HTTPRequest, _ key: String) throws(APIError) -> HTTPResponse {
        let claims = try authenticate(request)
        let room = try find(key)
        do throws(AuthError) { try claims.authorize(.readRoom(room)) } catch { throw .auth(error) }
        return Self.json(200, RoomCoding.json(room))
    }

    func updateRoom(_ request: HTTPRequest, _ key: String) throws(APIError) -> HTTPResponse {
        let claims = try authenticate(request)
        let body = try jsonBody(request)
        var room = try find(key)
        do throws(AuthError) { try claims.authorize(.administerRoom(room)) } catch { throw .auth(error) }
        let wasE2EE = room.e2ee
        try RoomCoding.apply(body, to: &room)
        // Clients choose to encrypt as they join: a live room (here, or on another node of the cluster)
        // keeps what they joined with.
        if room.e2ee != wasE2EE, hub?.state(room.id) != nil || hub?.remoteOwner(scope: room.id.rawValue) != nil {
            throw APIError(
                status: 409, code: "room_live", message: "e2ee: changed only while the room is not live")
        }
        room.updatedAt = max(room.updatedAt, env.now())
        do throws(StoreError) { try store.update(room) } catch { throw .store(error) }
        hub?.roomUpdated(room, now: env.now())
        return Self.json(200, RoomCoding.json(room))
    }

    func deleteRoom(_ request: HTTPRequest, _ key: String) throws(APIError) -> HTTPResponse {
        let claims = try authenticate(request)
        let room = try find(key)
        do throws(AuthError) { try claims.authorize(.administerRoom(room)) } catch { throw .auth(error) }
        do throws(StoreError) { _ = try store.delete(id: room.id) } catch { throw .store(error) }
        hub?.roomDeleted(room.id, now: env.now())
        return HTTPResponse(status: 204)
    }

    /// A room by id or by name; 404 when neither matches.
    func find(_ key: String) throws(APIError) -> Room {
        let found: Room?
        do throws(StoreError) { found = try store.room(idOrName: key) } catch { throw .store(error) }
        guard let room = found else { throw .roomNotFound(key) }
        return room
    }
}
