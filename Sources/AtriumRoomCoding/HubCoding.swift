public import AtriumJSON
public import AtriumModel
public import AtriumProtocol
public import AtriumRooms

/// The hub's values as the protocol's (docs/protocol.md): what clients, the admin API and webhooks
/// see. The rooms know no JSON; the edges encode them with this, and AtriumProtocol writes the JSON.
public enum HubCoding {
    public static func by(_ a: Actor?) -> By? {
        switch a {
        case .participant(let id): .participant(id)
        case .admin: .admin
        case nil: nil
        }
    }

    public static func actor(_ a: Actor?) -> JSONValue {
        switch a {
        case .participant(let id): .string(id.rawValue)
        case .admin: .string("admin")
        case nil: .null
        }
    }

    public static func permissions(_ p: Participant) -> Permissions {
        Permissions(
            sources: TrackSource.allCases.filter(p.sources.contains), canSubscribe: p.canSubscribe,
            shareGranted: p.shareGranted, canPublishData: p.canPublishData)
    }

    public static func participantInfo(_ p: Participant, tracks: [Track]) -> ParticipantInfo {
        ParticipantInfo(
            id: p.id, identity: p.identity, name: p.name, metadata: p.metadata, role: p.role, joinedAt: p.joinedAt,
            permissions: permissions(p), tracks: tracks.map(trackInfo), attributes: p.attributes)
    }

    public static func trackInfo(_ t: Track) -> TrackInfo {
        TrackInfo(
            id: t.id, participantId: t.owner, source: t.source, name: t.name, width: t.width, height: t.height,
            layers: t.layers, muted: t.muted, shareId: t.shareID)
    }

    public static func shareInfo(_ s: Share) -> ShareInfo {
        ShareInfo(
            id: s.id, participantId: s.sharer, state: s.state, trackId: s.videoTrack, audioTrackId: s.audioTrack,
            startedAt: s.startedAt)
    }

    public static func dataInfo(_ m: DataMessage) -> DataInfo {
        DataInfo(messageId: m.id, from: m.from, topic: m.topic, payload: m.payload, to: m.to, at: m.at)
    }

    public static func requestInfo(_ r: ShareRequest) -> ShareRequestInfo {
        ShareRequestInfo(id: r.id, participantId: r.requester, createdAt: r.createdAt, expiresAt: r.expiresAt)
    }

    public static func roomInfo(_ r: Room) -> RoomInfo {
        RoomInfo(
            id: r.id, name: r.name, maxParticipants: r.maxParticipants, metadata: r.metadata,
            sharePolicy: r.sharePolicy, e2ee: r.e2ee)
    }

    public static func participant(_ p: Participant, tracks: [Track]) -> JSONValue {
        participantInfo(p, tracks: tracks).json
    }
    public static func track(_ t: Track) -> JSONValue { trackInfo(t).json }
    public static func share(_ s: Share) -> JSONValue { shareInfo(s).json }
    public static func room(_ r: Room) -> JSONValue { roomInfo(r).json }

    /// The full state a participant sees on join and resume.
    public static func snapshot(_ s: RoomState, me: ParticipantID, resumeToken: String, iceServers: [IceServer])
        -> Snapshot?
    {
        guard let mine = s.participants[me] else { return nil }
        let others = s.orderedParticipants.filter { $0.id != me && !$0.hidden }
        return Snapshot(
            room: roomInfo(s.room), participant: participantInfo(mine, tracks: s.tracks(of: me)),
            participants: others.map { participantInfo($0, tracks: s.tracks(of: $0.id)) },
            shares: s.shares.map(shareInfo),
            subscriptions: mine.subscriptions.sorted { $0.key.rawValue < $1.key.rawValue }.map {
                Subscription(trackId: $0.key, quality: $0.value)
            },
            resumeToken: resumeToken, iceServers: iceServers,
            requests: mine.isModerator ? s.requests.map(requestInfo) : nil, chat: s.chat.map(dataInfo))
    }

    /// An event as pushed to clients.
    public static func event(_ e: RoomEvent) -> ServerEvent {
        switch e {
        case .participantJoined(let p): .participantJoined(participantInfo(p, tracks: []))
        case .participantLeft(let p, let reason): .participantLeft(p.id, reason: reason)
        case .participantUpdated(let p): .participantUpdated(participantInfo(p, tracks: []))
        case .trackPublished(let t): .trackPublished(trackInfo(t))
        case .trackUnpublished(let t, let reason):
            .trackUnpublished(t.id, participant: t.owner, source: t.source, reason: reason)
        case .trackMuted(let t, let a): .trackMuted(t.id, participant: t.owner, muted: t.muted, by: by(a))
        case .shareStarted(let s): .shareStarted(shareInfo(s))
        case .sharePaused(let s): .sharePaused(shareInfo(s))
        case .shareResumed(let s): .shareResumed(shareInfo(s))
        case .shareStopped(let s, let reason, let a): .shareStopped(shareInfo(s), reason: reason, by: by(a))
        case .permissionsChanged(let p, let a): .permissionsChanged(p.id, permissions(p), by: by(a))
        case .shareLockChanged(let locked, let a): .shareLockChanged(locked: locked, by: by(a))
        case .sharePolicyChanged(let p, let a): .sharePolicyChanged(p, by: by(a))
        case .shareRequested(let r): .shareRequested(requestInfo(r))
        case .shareRequestResolved(let r, let outcome, let a):
            .shareRequestResolved(requestInfo(r), outcome: outcome, by: by(a))
        case .roomEnded(let a): .roomEnded(by: by(a))
        case .data(let m): .data(dataInfo(m))
        case .attributesChanged(let p, let a): .attributesChanged(p.id, attributes: p.attributes, by: by(a))
        }
    }
}
