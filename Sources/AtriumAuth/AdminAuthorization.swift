public import AtriumModel

/// What an admin call wants to do, for the pure authorization check below.
public enum AdminAction: Sendable {
    /// Create a room, optionally with a name (a scoped token may only create its own room).
    case createRoom(name: String?)
    case listRooms
    case readRoom(Room)
    case administerRoom(Room)
    /// Mint a token for a room given by name or id.
    case mintToken(room: String)
    /// List the cluster's nodes (`GET /v1/nodes`): an admin token for every room.
    case listNodes
}

extension TokenClaims {
    /// Decides whether these claims allow `action`. A nil room scope means every room.
    public func authorize(_ action: AdminAction) throws(AuthError) {
        let scope = grants.room
        switch action {
        case .createRoom(let name):
            guard grants.roomCreate else { throw .missingGrant("roomCreate") }
            if let scope, scope != name { throw .wrongRoom(name ?? "(unnamed)") }
        case .listRooms:
            guard grants.roomList else { throw .missingGrant("roomList") }
        case .readRoom(let room):
            if grants.roomList && scope == nil { return }
            guard grants.roomAdmin || grants.roomList else { throw .missingGrant("roomList") }
            if let scope, !room.matchesScope(scope) { throw .wrongRoom(room.id.rawValue) }
        case .administerRoom(let room):
            guard grants.roomAdmin else { throw .missingGrant("roomAdmin") }
            if let scope, !room.matchesScope(scope) { throw .wrongRoom(room.id.rawValue) }
        case .mintToken(let room):
            guard grants.roomAdmin else { throw .missingGrant("roomAdmin") }
            if let scope, scope != room { throw .wrongRoom(room) }
        case .listNodes:
            guard grants.roomAdmin else { throw .missingGrant("roomAdmin") }
            if let scope { throw .wrongRoom(scope) }
        }
    }
}
