import AtriumAuth
import AtriumHTTP
import AtriumJSON
import AtriumModel
import AtriumRoomCoding
import AtriumRooms

/// Live-room controls: participants, their permissions and tracks, shares and the share lock. They go
/// through the hub, so participants see exactly the events a host's action over WebSocket produces.
extension AdminAPI {
    static let participantFields: Set<String> = ["name", "metadata", "sources", "canPublishData", "attributes"]

    /// The room (authorized for `action`) and its live state, if it has one on this node.
    private func liveRoom(_ request: HTTPRequest, _ params: [String: String], write: Bool) throws(APIError)
        -> (Room, RoomState?)
    {
        let claims = try authenticate(request)
        let room = try find(params["roomId"] ?? "")
        do throws(AuthError) { try claims.authorize(write ? .administerRoom(room) : .readRoom(room)) } catch {
            throw .auth(error)
        }
        return (room, hub?.state(room.id))
    }

    private func participantNotFound(_ key: String) -> APIError {
        APIError(status: 404, code: "participant_not_found", message: "no participant \"\(key)\" in this room")
    }

    /// A participant by id or identity.
    private func lookup(_ state: RoomState?, _ key: String) throws(APIError) -> Participant {
        guard let state, let p = state.participants[ParticipantID(key)] ?? state.participant(identity: key) else {
            throw participantNotFound(key)
        }
        return p
    }

    /// Runs a command on a room live here as the admin API and maps its refusal to the documented HTTP error.
    private func apply(_ command: HubCommand, in room: RoomID) throws(APIError) {
        guard let hub else {
            throw APIError(status: 503, code: "hub_unavailable", message: "no live rooms on this node")
        }
        do throws(HubError) { try hub.apply(command, in: room, by: .admin, now: env.now()) } catch { throw .hub(error) }
    }

    /// Runs a command on the room wherever it is live: here, or on the node running it (the cluster's
    /// router sends it there and returns that node's answer). False when it is live nowhere.
    private func route(_ command: HubCommand, in room: RoomID) throws(APIError) -> Bool {
        guard let hub else { return false }
        switch hub.route(RoomCommand(room: room, actor: .admin, command: command), now: env.now()) {
        case .success: return true
        case .failure(.roomNotFound): return false
        case .failure(let e): throw .hub(e)
        }
    }

    func listParticipants(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, state) = try liveRoom(request, params, write: false)
        let list = (state?.orderedParticipants ?? []).map {
            HubCoding.participant($0, tracks: state?.tracks(of: $0.id) ?? [])
        }
        var body: JSONObject = ["participants": .array(list)]
        if let mediaNodes, state != nil {
            body["mediaNodes"] = .array(
                mediaNodes(room.id).sorted { $0.key < $1.key }.map { node, transports in
                    .object(["node": .string(node), "transports": .int(Int64(transports))])
                })
        }
        return Self.json(200, body)
    }

    func getParticipant(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (_, state) = try liveRoom(request, params, write: false)
        let p = try lookup(state, params["participantId"] ?? "")
        return Self.json(200, HubCoding.participant(p, tracks: state?.tracks(of: p.id) ?? []))
    }

    /// Changes name, metadata and the set of sources it may publish (grants and revokes the difference).
    func updateParticipant(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, state) = try liveRoom(request, params, write: true)
        let p = try lookup(state, params["participantId"] ?? "")
        let body = try jsonBody(request)
        for key in body.keys where !Self.participantFields.contains(key) { throw .invalidField(key, "unknown field") }
        var name: String?
        var metadata: String?
        if let v = body["name"] {
            guard let s = v.stringValue, s.unicodeScalars.count <= 256 else {
                throw .invalidField("name", "expected a string of at most 256 characters")
            }
            name = s
        }
        if let v = body["metadata"] {
            guard let s = v.stringValue, s.unicodeScalars.count <= 16 * 1024 else {
                throw .invalidField("metadata", "expected a string of at most 16384 characters")
            }
            metadata = s
        }
        var sources: Set<TrackSource>?
        if let v = body["sources"] {
            guard let arr = v.arrayValue else { throw .invalidField("sources", "expected an array of sources") }
            var set = Set<TrackSource>()
            for item in arr { set.insert(try RoomCoding.enumValue(item, "sources")) }
            sources = set
        }
        let canPublishData = try body["canPublishData"].map { v throws(APIError) in
            try RoomCoding.bool(v, "canPublishData")
        }
        var attributes: AttributeChanges?
        if let v = body["attributes"] {
            guard let o = v.objectValue else { throw .invalidField("attributes", "expected an object") }
            var changes = AttributeChanges()
            for (key, value) in o {
                switch value {
                case .null: changes[key] = .some(nil)
                case .string(let s): changes[key] = .some(s)
                default: throw .invalidField("attributes", "\(key): expected a string or null")
                }
            }
            attributes = changes
        }
        let id = p.id
        try apply(.updateParticipant(id, name: name, metadata: metadata, sources: sources), in: room.id)
        if let canPublishData { try apply(.setDataPermission(id, granted: canPublishData), in: room.id) }
        if let attributes { try apply(.setAttributes(id, attributes), in: room.id) }
        let after = hub?.state(room.id)
        return Self.json(
            200, HubCoding.participant(try lookup(after, id.rawValue), tracks: after?.tracks(of: id) ?? []))
    }

    func removeParticipant(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, state) = try liveRoom(request, params, write: true)
        let id = try lookup(state, params["participantId"] ?? "").id
        try apply(.removeParticipant(id), in: room.id)
        return HTTPResponse(status: 204)
    }

    func muteTrack(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, state) = try liveRoom(request, params, write: true)
        let p = try lookup(state, params["participantId"] ?? "")
        let trackID = TrackID(params["trackId"] ?? "")
        guard state?.tracks[trackID]?.owner == p.id else {
            throw APIError(status: 404, code: "track_not_found", message: "no track \"\(trackID)\" of this participant")
        }
        try apply(.setMuted(trackID, true), in: room.id)
        guard let t = hub?.state(room.id)?.tracks[trackID] else { throw .hub(.trackNotFound) }
        return Self.json(200, HubCoding.track(t))
    }

    func listShares(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (_, state) = try liveRoom(request, params, write: false)
        return Self.json(200, ["shares": .array((state?.shares ?? []).map(HubCoding.share))])
    }

    func stopShare(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, _) = try liveRoom(request, params, write: true)
        let shareID = ShareID(params["shareId"] ?? "")
        guard try route(.stopShare(shareID, reason: .moderated), in: room.id) else { throw .hub(.shareNotFound) }
        return HTTPResponse(status: 204)
    }

    /// Locks or unlocks sharing: in the live room (stopping others' shares) and in the store.
    func setShareLock(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, _) = try liveRoom(request, params, write: true)
        let body = try jsonBody(request)
        for key in body.keys where key != "locked" { throw .invalidField(key, "unknown field") }
        guard let v = body["locked"] else { throw .invalidField("locked", "is required") }
        let locked = try RoomCoding.bool(v, "locked")
        if try !route(.setShareLock(locked), in: room.id) {
            var r = room
            r.sharePolicy.shareLocked = locked
            r.updatedAt = max(r.updatedAt, env.now())
            do throws(StoreError) { try store.update(r) } catch { throw .store(error) }
        }
        let stored: Room?
        do throws(StoreError) { stored = try store.room(id: room.id) } catch { throw .store(error) }
        return Self.json(200, RoomCoding.json(stored ?? room))
    }
}
