import AtriumAuth
import AtriumHTTP
import AtriumJSON
import AtriumModel
import AtriumRooms
import AtriumStore

/// Live-room controls: participants, their permissions and tracks, shares and the share lock. They go
/// through the hub, so participants see exactly the events a host's action over WebSocket produces.
extension AdminAPI {
    static let participantFields: Set<String> = ["name", "metadata", "sources"]

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

    /// Runs a hub change as the admin API and maps its refusal to the documented HTTP error.
    private func perform(_ room: RoomID, _ change: (inout RoomState) throws(HubError) -> [RoomEvent]) throws(APIError) {
        guard let hub else {
            throw APIError(status: 503, code: "hub_unavailable", message: "no live rooms on this node")
        }
        do throws(HubError) { try hub.perform(room, now: env.now(), change) } catch { throw .hub(error) }
    }

    func listParticipants(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (_, state) = try liveRoom(request, params, write: false)
        let list = (state?.orderedParticipants ?? []).map {
            HubCoding.participant($0, tracks: state?.tracks(of: $0.id) ?? [])
        }
        return Self.json(200, ["participants": .array(list)])
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
        let id = p.id
        try perform(room.id) { s throws(HubError) in
            var events = try s.update(id, name: name, metadata: metadata)
            if let sources, let current = s.participants[id]?.sources {
                // Screen share audio follows screen share; grant the rest one by one.
                for src in TrackSource.allCases where src != .screenShareAudio || !sources.contains(.screenShare) {
                    let want = sources.contains(src)
                    if want != current.contains(src) {
                        events += try s.setPermission(id, source: src, granted: want, by: .admin)
                    }
                }
            }
            return events
        }
        let after = hub?.state(room.id)
        return Self.json(
            200, HubCoding.participant(try lookup(after, id.rawValue), tracks: after?.tracks(of: id) ?? []))
    }

    func removeParticipant(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, state) = try liveRoom(request, params, write: true)
        let id = try lookup(state, params["participantId"] ?? "").id
        try perform(room.id) { s throws(HubError) in try s.remove(id, by: .admin) }
        return HTTPResponse(status: 204)
    }

    func muteTrack(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, state) = try liveRoom(request, params, write: true)
        let p = try lookup(state, params["participantId"] ?? "")
        let trackID = TrackID(params["trackId"] ?? "")
        guard state?.tracks[trackID]?.owner == p.id else {
            throw APIError(status: 404, code: "track_not_found", message: "no track \"\(trackID)\" of this participant")
        }
        try perform(room.id) { s throws(HubError) in try s.setMuted(trackID, true, by: .admin) }
        guard let t = hub?.state(room.id)?.tracks[trackID] else { throw .hub(.trackNotFound) }
        return Self.json(200, HubCoding.track(t))
    }

    func listShares(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (_, state) = try liveRoom(request, params, write: false)
        return Self.json(200, ["shares": .array((state?.shares ?? []).map(HubCoding.share))])
    }

    func stopShare(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, state) = try liveRoom(request, params, write: true)
        let shareID = ShareID(params["shareId"] ?? "")
        guard state?.share(shareID) != nil else { throw .hub(.shareNotFound) }
        try perform(room.id) { s throws(HubError) in try s.stopShare(shareID, by: .admin, reason: .moderated) }
        return HTTPResponse(status: 204)
    }

    /// Locks or unlocks sharing: in the live room (stopping others' shares) and in the store.
    func setShareLock(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, state) = try liveRoom(request, params, write: true)
        let body = try jsonBody(request)
        for key in body.keys where key != "locked" { throw .invalidField(key, "unknown field") }
        guard let v = body["locked"] else { throw .invalidField("locked", "is required") }
        let locked = try RoomCoding.bool(v, "locked")
        if state != nil {
            try perform(room.id) { s throws(HubError) in try s.setLock(locked, by: .admin) }
        } else {
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
