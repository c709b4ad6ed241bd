public import AtriumJSON
public import AtriumModel
public import AtriumRooms

/// The JSON forms of the hub's values, as documented in docs/protocol.md: what clients, the admin API
/// and webhooks see. The rooms know no JSON; the edges encode them with this.
public enum HubCoding {
    public static func actor(_ a: Actor?) -> JSONValue {
        switch a {
        case .participant(let id): .string(id.rawValue)
        case .admin: .string("admin")
        case nil: .null
        }
    }

    public static func permissions(_ p: Participant) -> JSONValue {
        .object([
            "sources": .array(TrackSource.allCases.filter(p.sources.contains).map { .string($0.rawValue) }),
            "canSubscribe": .bool(p.canSubscribe),
            "shareGranted": .bool(p.shareGranted),
        ])
    }

    public static func participant(_ p: Participant, tracks: [Track]) -> JSONValue {
        .object([
            "id": .string(p.id.rawValue), "identity": .string(p.identity), "name": .string(p.name),
            "metadata": .string(p.metadata), "role": .string(p.role.rawValue), "joinedAt": .int(p.joinedAt),
            "permissions": permissions(p), "tracks": .array(tracks.map(track)),
        ])
    }

    public static func track(_ t: Track) -> JSONValue {
        .object([
            "id": .string(t.id.rawValue), "participantId": .string(t.owner.rawValue),
            "source": .string(t.source.rawValue),
            "kind": .string(t.kind.rawValue), "name": .string(t.name), "width": .int(Int64(t.width)),
            "height": .int(Int64(t.height)),
            "layers": .array(
                t.layers.map {
                    .object(["rid": .string($0.rid), "width": .int(Int64($0.width)), "height": .int(Int64($0.height))])
                }),
            "muted": .bool(t.muted), "shareId": t.shareID.map { .string($0.rawValue) } ?? .null,
        ])
    }

    public static func share(_ s: Share) -> JSONValue {
        .object([
            "id": .string(s.id.rawValue), "participantId": .string(s.sharer.rawValue),
            "state": .string(s.state.rawValue),
            "trackId": .string(s.videoTrack.rawValue),
            "audioTrackId": s.audioTrack.map { .string($0.rawValue) } ?? .null,
            "startedAt": .int(s.startedAt),
        ])
    }

    public static func request(_ r: ShareRequest) -> JSONValue {
        .object([
            "id": .string(r.id.rawValue), "participantId": .string(r.requester.rawValue),
            "createdAt": .int(r.createdAt),
            "expiresAt": .int(r.expiresAt),
        ])
    }

    public static func policy(_ p: SharePolicy) -> JSONValue {
        .object([
            "shareMode": .string(p.shareMode.rawValue), "maxConcurrentShares": .int(Int64(p.maxConcurrentShares)),
            "whoCanShare": .string(p.whoCanShare.rawValue), "shareRequestRequired": .bool(p.shareRequestRequired),
            "shareLocked": .bool(p.shareLocked),
        ])
    }

    public static func room(_ r: Room) -> JSONValue {
        .object([
            "id": .string(r.id.rawValue), "name": r.name.map { .string($0) } ?? .null,
            "maxParticipants": .int(Int64(r.maxParticipants)), "metadata": .string(r.metadata),
            "sharePolicy": policy(r.sharePolicy),
        ])
    }

    /// The full state a participant sees on join and resume.
    public static func snapshot(_ s: RoomState, me: ParticipantID, resumeToken: String, protocolVersion: Int)
        -> JSONObject
    {
        let others = s.orderedParticipants.filter { $0.id != me && !$0.hidden }
        var o: JSONObject = [
            "protocol": .int(Int64(protocolVersion)),
            "room": room(s.room),
            "participant": s.participants[me].map { participant($0, tracks: s.tracks(of: me)) } ?? .null,
            "participants": .array(others.map { participant($0, tracks: s.tracks(of: $0.id)) }),
            "shares": .array(s.shares.map(share)),
            "subscriptions": .array(
                (s.participants[me]?.subscriptions ?? [:]).sorted { $0.key.rawValue < $1.key.rawValue }.map {
                    .object(["trackId": .string($0.key.rawValue), "quality": .string($0.value.rawValue)])
                }),
            "resumeToken": .string(resumeToken),
        ]
        if s.participants[me]?.isModerator == true { o["requests"] = .array(s.requests.map(request)) }
        return o
    }

    /// An event as pushed to clients: `{"type": name, ...fields}`.
    public static func event(_ e: RoomEvent) -> JSONObject {
        switch e {
        case .participantJoined(let p):
            return ["type": "participant_joined", "participant": participant(p, tracks: [])]
        case .participantLeft(let p, let reason):
            return [
                "type": "participant_left", "participantId": .string(p.id.rawValue), "reason": .string(reason.rawValue),
            ]
        case .participantUpdated(let p):
            return ["type": "participant_updated", "participant": participant(p, tracks: [])]
        case .trackPublished(let t):
            return ["type": "track_published", "track": track(t)]
        case .trackUnpublished(let t, let reason):
            return [
                "type": "track_unpublished", "trackId": .string(t.id.rawValue),
                "participantId": .string(t.owner.rawValue),
                "source": .string(t.source.rawValue), "reason": .string(reason),
            ]
        case .trackMuted(let t, let by):
            return [
                "type": "track_muted", "trackId": .string(t.id.rawValue), "participantId": .string(t.owner.rawValue),
                "muted": .bool(t.muted), "by": actor(by),
            ]
        case .shareStarted(let s): return ["type": "share_started", "share": share(s)]
        case .sharePaused(let s): return ["type": "share_paused", "share": share(s)]
        case .shareResumed(let s): return ["type": "share_resumed", "share": share(s)]
        case .shareStopped(let s, let reason, let by):
            return ["type": "share_stopped", "share": share(s), "reason": .string(reason.rawValue), "by": actor(by)]
        case .permissionsChanged(let p, let by):
            return [
                "type": "permissions_changed", "participantId": .string(p.id.rawValue), "permissions": permissions(p),
                "by": actor(by),
            ]
        case .shareLockChanged(let locked, let by):
            return ["type": "share_lock_changed", "locked": .bool(locked), "by": actor(by)]
        case .sharePolicyChanged(let p, let by):
            return ["type": "share_policy_changed", "sharePolicy": policy(p), "by": actor(by)]
        case .shareRequested(let r):
            return ["type": "share_requested", "request": request(r)]
        case .shareRequestResolved(let r, let outcome, let by):
            return [
                "type": "share_request_resolved", "request": request(r), "outcome": .string(outcome.rawValue),
                "by": actor(by),
            ]
        case .roomEnded(let by):
            return ["type": "room_ended", "by": actor(by)]
        }
    }
}
