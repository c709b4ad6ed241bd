public import AtriumAuth
public import AtriumModel

/// A live room: participants, tracks, shares and share requests, with every rule of the share control set.
/// A value type whose `mutating` functions validate a request, apply it and return the events it caused;
/// it never touches sockets, clocks or the store (time comes in as `now`). One owner (the hub) holds it.
public struct RoomState: Sendable {
    public static let shareRequestLifetime: Int64 = 60
    /// Remembered unpublished tracks, to tell a late subscriber `publisher_left` rather than `track_not_found`.
    static let tombstoneLimit = 256

    public internal(set) var room: Room
    public internal(set) var participants: [ParticipantID: Participant] = [:]
    /// Join order, for stable listings.
    public private(set) var order: [ParticipantID] = []
    public private(set) var tracks: [TrackID: Track] = [:]
    /// Active and paused shares, oldest first.
    public private(set) var shares: [Share] = []
    public private(set) var requests: [ShareRequest] = []
    /// The last messages on the `chat` topic sent to everyone, oldest first, at most `room.chatHistory`.
    public internal(set) var chat: [DataMessage] = []
    private var tombstones: [TrackID: Bool] = [:]
    private var tombstoneOrder: [TrackID] = []

    public init(room: Room) { self.room = room }

    public var policy: SharePolicy { room.sharePolicy }
    public var isEmpty: Bool { participants.isEmpty }
    public var orderedParticipants: [Participant] { order.compactMap { participants[$0] } }
    public func participant(identity: String) -> Participant? {
        participants.values.first { $0.identity == identity }
    }
    public func tracks(of id: ParticipantID) -> [Track] {
        tracks.values.filter { $0.owner == id }.sorted { $0.id.rawValue < $1.id.rawValue }
    }
    public func share(_ id: ShareID) -> Share? { shares.first { $0.id == id } }

    // MARK: - Presence

    /// Admits a participant with the grants of its token. A participant with the same identity is replaced.
    public mutating func join(
        id: ParticipantID, identity: String, name: String, metadata: String, grants: Grants, autoSubscribe: Bool,
        dataChannels: Bool = false, now: Int64
    ) throws(HubError) -> [RoomEvent] {
        var events: [RoomEvent] = []
        if let previous = participant(identity: identity) {
            events += leave(previous.id, reason: .replaced)
        }
        if room.maxParticipants > 0 && participants.count >= room.maxParticipants { throw .roomFull }
        var sources: Set<TrackSource> = []
        if grants.canPublish && grants.role != .viewer && !grants.hidden {
            sources = grants.canPublishSources ?? Set(TrackSource.allCases)
        }
        var p = Participant(
            id: id, identity: identity, name: name, metadata: metadata, role: grants.role, hidden: grants.hidden,
            joinedAt: now, sources: sources, canSubscribe: grants.canSubscribe, autoSubscribe: autoSubscribe)
        p.canPublishData = grants.canPublishData
        p.dataChannels = dataChannels
        if autoSubscribe && p.canSubscribe {
            for t in tracks.values { p.subscriptions[t.id] = .high }
        }
        participants[id] = p
        order.append(id)
        events.append(.participantJoined(p))
        return events
    }

    /// Removes a participant; its shares stop and its tracks are unpublished.
    public mutating func leave(_ id: ParticipantID, reason: LeaveReason, by actor: Actor? = nil) -> [RoomEvent] {
        guard let p = participants[id] else { return [] }
        let shareReason: ShareStopReason =
            switch reason {
            case .left, .replaced: .publisherLeft
            case .disconnected: .disconnected
            case .removed: .moderated
            case .roomEnded: .roomEnded
            }
        var events: [RoomEvent] = []
        for s in shares where s.sharer == id {
            events += stop(s.id, reason: shareReason, by: actor ?? .participant(id))
        }
        for t in tracks(of: id) {
            events += removeTrack(t.id, reason: "publisher_left")
        }
        for r in requests where r.requester == id {
            events += resolve(r.id, .cancelled, by: nil)
        }
        participants[id] = nil
        order.removeAll { $0 == id }
        events.append(.participantLeft(p, reason))
        return events
    }

    public mutating func setConnected(_ id: ParticipantID, _ connected: Bool) {
        participants[id]?.connected = connected
    }

    public mutating func update(_ id: ParticipantID, name: String?, metadata: String?) throws(HubError) -> [RoomEvent] {
        guard var p = participants[id] else { throw .participantNotFound }
        if let name { p.name = name }
        if let metadata { p.metadata = metadata }
        guard p != participants[id] else { return [] }
        participants[id] = p
        return [.participantUpdated(p)]
    }

    // MARK: - Tracks

    /// Publishes a track. A screen_share track starts a share (through the share arbiter); a
    /// screen_share_audio track joins the publisher's share.
    public mutating func publish(
        _ track: Track, now: Int64, newShareID: ShareID
    ) throws(HubError) -> [RoomEvent] {
        guard let p = participants[track.owner] else { throw .notJoined }
        guard p.sources.contains(track.source), !p.hidden, p.role != .viewer else {
            throw track.source == .screenShare && policy.shareLocked && !p.isModerator
                ? .shareLocked : .notAllowed("publishing \(track.source.rawValue) is not permitted")
        }
        if tracks.values.contains(where: { $0.owner == p.id && $0.source == track.source }) { throw .alreadyPublished }
        var track = track
        var events: [RoomEvent] = []
        switch track.source {
        case .screenShare:
            switch ShareArbiter.decide(p, policy: policy, active: shares) {
            case .refuse(let e): throw e
            case .allowPreempting(let ids):
                for id in ids { events += stop(id, reason: .preempted, by: .participant(p.id)) }
            case .allow: break
            }
            track.shareID = newShareID
            addTrack(track)
            events.append(.trackPublished(track))
            let share = Share(id: newShareID, sharer: p.id, videoTrack: track.id, startedAt: now)
            shares.append(share)
            events.append(.shareStarted(share))
        case .screenShareAudio:
            guard let i = shares.firstIndex(where: { $0.sharer == p.id && $0.audioTrack == nil }) else {
                throw .noActiveShare
            }
            track.shareID = shares[i].id
            shares[i].audioTrack = track.id
            addTrack(track)
            events.append(.trackPublished(track))
        case .camera, .microphone:
            addTrack(track)
            events.append(.trackPublished(track))
        }
        return events
    }

    private mutating func addTrack(_ t: Track) {
        tracks[t.id] = t
        for (id, p) in participants where id != t.owner && p.autoSubscribe && p.canSubscribe {
            participants[id]?.subscriptions[t.id] = .high
        }
    }

    /// Unpublishes a track on its owner's request (or, `connection_lost`, on the server's when the
    /// node that received it left a cluster). The share's video track stops the share.
    public mutating func unpublish(_ trackID: TrackID, by owner: ParticipantID, reason: ShareStopReason = .userStopped)
        throws(HubError) -> [RoomEvent]
    {
        guard let t = tracks[trackID], t.owner == owner else { throw .trackNotFound }
        guard reason == .userStopped || reason == .captureEnded || reason == .connectionLost else {
            throw .invalidField("reason", "must be user_stopped or capture_ended")
        }
        if t.source == .screenShare, let sid = t.shareID { return stop(sid, reason: reason, by: .participant(owner)) }
        if t.source == .screenShareAudio, let sid = t.shareID, let i = shares.firstIndex(where: { $0.id == sid }) {
            shares[i].audioTrack = nil
        }
        return removeTrack(trackID, reason: reason == .connectionLost ? reason.rawValue : "unpublished")
    }

    private mutating func removeTrack(_ id: TrackID, reason: String) -> [RoomEvent] {
        guard let t = tracks.removeValue(forKey: id) else { return [] }
        for key in Array(participants.keys) { participants[key]?.subscriptions[id] = nil }
        tombstones[id] = reason == "publisher_left"
        tombstoneOrder.append(id)
        if tombstoneOrder.count > Self.tombstoneLimit { tombstones[tombstoneOrder.removeFirst()] = nil }
        return [.trackUnpublished(t, reason: reason)]
    }

    public mutating func setMuted(_ trackID: TrackID, _ muted: Bool, by actor: Actor) throws(HubError) -> [RoomEvent] {
        guard let t = tracks[trackID] else { throw .trackNotFound }
        if actor != .participant(t.owner) {
            try requireModerator(actor)
            try requireAuthority(actor, over: t.owner)
            // A moderator may mute, never unmute someone else's track.
            guard muted else { throw .notAllowed("only the publisher can unmute its track") }
        }
        guard t.muted != muted else { return [] }
        tracks[trackID]?.muted = muted
        return [.trackMuted(tracks[trackID] ?? t, by: actor)]
    }

    // MARK: - Subscriptions

    public mutating func subscribe(_ id: ParticipantID, to trackID: TrackID, quality: VideoQuality) throws(HubError) {
        guard let p = participants[id] else { throw .notJoined }
        guard let t = tracks[trackID] else { throw tombstones[trackID] == true ? .publisherLeft : .trackNotFound }
        guard p.canSubscribe, t.owner != id else { throw .notAllowed("subscribing is not permitted") }
        participants[id]?.subscriptions[trackID] = quality
    }

    public mutating func unsubscribe(_ id: ParticipantID, from trackID: TrackID) throws(HubError) {
        guard participants[id]?.subscriptions[trackID] != nil else { throw .trackNotFound }
        participants[id]?.subscriptions[trackID] = nil
    }

    // MARK: - Shares

    public mutating func pause(_ shareID: ShareID, by id: ParticipantID) throws(HubError) -> [RoomEvent] {
        guard let i = shares.firstIndex(where: { $0.id == shareID }) else { throw .shareNotFound }
        guard shares[i].sharer == id else { throw .notAllowed("only the sharer pauses a share") }
        guard shares[i].state != .paused else { return [] }
        shares[i].state = .paused
        return [.sharePaused(shares[i])]
    }

    public mutating func resume(_ shareID: ShareID, by id: ParticipantID) throws(HubError) -> [RoomEvent] {
        guard let i = shares.firstIndex(where: { $0.id == shareID }) else { throw .shareNotFound }
        guard shares[i].sharer == id else { throw .notAllowed("only the sharer resumes a share") }
        guard shares[i].state != .started else { return [] }
        shares[i].state = .started
        return [.shareResumed(shares[i])]
    }

    /// Stops a share on request: the sharer stops its own (user_stopped or capture_ended); a moderator
    /// or the admin API stops anyone's (moderated).
    public mutating func stopShare(_ shareID: ShareID, by actor: Actor, reason: ShareStopReason)
        throws(HubError) -> [RoomEvent]
    {
        guard let s = share(shareID) else { throw .shareNotFound }
        if actor == .participant(s.sharer) {
            guard reason == .userStopped || reason == .captureEnded else {
                throw .invalidField("reason", "must be user_stopped or capture_ended")
            }
            return stop(shareID, reason: reason, by: actor)
        }
        try requireModerator(actor)
        try requireAuthority(actor, over: s.sharer)
        return stop(shareID, reason: .moderated, by: actor)
    }

    /// Ends a share: both its tracks are unpublished and everyone is told the reason.
    mutating func stop(_ shareID: ShareID, reason: ShareStopReason, by actor: Actor) -> [RoomEvent] {
        guard let i = shares.firstIndex(where: { $0.id == shareID }) else { return [] }
        let s = shares.remove(at: i)
        var events: [RoomEvent] = [.shareStopped(s, reason, by: actor)]
        if let a = s.audioTrack { events += removeTrack(a, reason: reason.rawValue) }
        events += removeTrack(s.videoTrack, reason: reason.rawValue)
        return events
    }

    // MARK: - Permission requests

    public mutating func requestShare(by id: ParticipantID, requestID: ShareRequestID, now: Int64)
        throws(HubError) -> [RoomEvent]
    {
        guard let p = participants[id] else { throw .notJoined }
        guard p.role != .viewer, !p.hidden else { throw .notAllowed("viewers cannot share") }
        if requests.contains(where: { $0.requester == id }) { throw .requestPending }
        let r = ShareRequest(id: requestID, requester: id, createdAt: now, expiresAt: now + Self.shareRequestLifetime)
        requests.append(r)
        return [.shareRequested(r)]
    }

    public mutating func answer(_ requestID: ShareRequestID, grant: Bool, by actor: Actor) throws(HubError)
        -> [RoomEvent]
    {
        try requireModerator(actor)
        guard let r = requests.first(where: { $0.id == requestID }) else { throw .requestNotFound }
        var events = resolve(r.id, grant ? .granted : .denied, by: actor)
        if grant { events += (try? setPermission(r.requester, source: .screenShare, granted: true, by: actor)) ?? [] }
        return events
    }

    public mutating func expireRequests(now: Int64) -> [RoomEvent] {
        requests.filter { $0.expiresAt <= now }.flatMap { resolve($0.id, .expired, by: nil) }
    }

    private mutating func resolve(_ id: ShareRequestID, _ outcome: ShareRequestOutcome, by actor: Actor?) -> [RoomEvent]
    {
        guard let i = requests.firstIndex(where: { $0.id == id }) else { return [] }
        return [.shareRequestResolved(requests.remove(at: i), outcome, by: actor)]
    }

    // MARK: - Host controls

    func requireModerator(_ actor: Actor) throws(HubError) {
        if case .participant(let id) = actor, participants[id]?.isModerator != true {
            throw .notAllowed("only hosts and cohosts may do this")
        }
    }

    func requireHost(_ actor: Actor) throws(HubError) {
        if case .participant(let id) = actor, participants[id]?.role != .host {
            throw .notAllowed("only hosts may do this")
        }
    }

    /// Grants or revokes a source. Revoking stops what the participant publishes from it
    /// (its share with reason permission_revoked).
    public mutating func setPermission(_ id: ParticipantID, source: TrackSource, granted: Bool, by actor: Actor)
        throws(HubError) -> [RoomEvent]
    {
        try requireModerator(actor)
        guard var p = participants[id] else { throw .participantNotFound }
        try requireAuthority(actor, over: id)
        var events: [RoomEvent] = []
        if granted {
            guard p.role != .viewer, !p.hidden else {
                throw .notAllowed("viewers and hidden participants cannot publish")
            }
            p.sources.insert(source)
            if source == .screenShare {
                p.sources.insert(.screenShareAudio)
                p.shareGranted = true
            }
        } else {
            p.sources.remove(source)
            if source == .screenShare {
                p.sources.remove(.screenShareAudio)
                p.shareGranted = false
            }
        }
        guard p != participants[id] else { return [] }
        participants[id] = p
        events.append(.permissionsChanged(p, by: actor))
        if !granted {
            for t in tracks(of: id) where !p.sources.contains(t.source) {
                if t.source == .screenShare, let sid = t.shareID {
                    events += stop(sid, reason: .permissionRevoked, by: actor)
                } else if tracks[t.id] != nil {
                    if t.source == .screenShareAudio, let sid = t.shareID,
                        let i = shares.firstIndex(where: { $0.id == sid })
                    {
                        shares[i].audioTrack = nil
                    }
                    events += removeTrack(t.id, reason: ShareStopReason.permissionRevoked.rawValue)
                }
            }
        }
        return events
    }

    /// Locks or unlocks sharing. Locking stops the shares of everyone but hosts and cohosts (reason locked).
    public mutating func setLock(_ locked: Bool, by actor: Actor) throws(HubError) -> [RoomEvent] {
        try requireHost(actor)
        guard room.sharePolicy.shareLocked != locked else { return [] }
        room.sharePolicy.shareLocked = locked
        var events: [RoomEvent] = [.shareLockChanged(locked: locked, by: actor)]
        if locked {
            for id in ShareArbiter.stoppedByLock(shares, participants: participants) {
                events += stop(id, reason: .locked, by: actor)
            }
        }
        return events
    }

    /// Replaces the share policy; shares it no longer allows stop (reason policy_changed, or locked for the
    /// lock): the policy did it, not the host who set it on some sharer's share.
    public mutating func setPolicy(_ policy: SharePolicy, by actor: Actor) throws(HubError) -> [RoomEvent] {
        try requireHost(actor)
        var events: [RoomEvent] = []
        if policy.shareLocked != room.sharePolicy.shareLocked {
            events += try setLock(policy.shareLocked, by: actor)
        }
        guard policy != room.sharePolicy else { return events }
        room.sharePolicy = policy
        events.append(.sharePolicyChanged(policy, by: actor))
        for id in ShareArbiter.stoppedByPolicy(shares, participants: participants, policy: policy) {
            events += stop(id, reason: .policyChanged, by: actor)
        }
        return events
    }

    public mutating func remove(_ id: ParticipantID, by actor: Actor) throws(HubError) -> [RoomEvent] {
        try requireModerator(actor)
        guard let target = participants[id] else { throw .participantNotFound }
        try requireAuthority(actor, over: target.id)
        return leave(id, reason: .removed, by: actor)
    }

    /// A cohost moderates participants, never a host.
    func requireAuthority(_ actor: Actor, over target: ParticipantID) throws(HubError) {
        guard case .participant(let id) = actor, id != target else { return }
        if participants[id]?.role == .cohost && participants[target]?.role == .host {
            throw .notAllowed("a cohost cannot act on a host")
        }
    }

    /// Ends the room: every share stops (room_ended) and everyone leaves.
    public mutating func end(by actor: Actor) throws(HubError) -> [RoomEvent] {
        try requireHost(actor)
        var events: [RoomEvent] = [.roomEnded(by: actor)]
        for id in order { events += leave(id, reason: .roomEnded) }
        return events
    }

    /// Applies room settings changed through the admin API (PATCH), with the same events.
    public mutating func apply(settings newRoom: Room) -> [RoomEvent] {
        let policy = newRoom.sharePolicy
        room.name = newRoom.name
        room.maxParticipants = newRoom.maxParticipants
        room.emptyTimeout = newRoom.emptyTimeout
        room.metadata = newRoom.metadata
        room.updatedAt = newRoom.updatedAt
        room.chatHistory = newRoom.chatHistory
        if chat.count > room.chatHistory { chat.removeFirst(chat.count - room.chatHistory) }
        return (try? setPolicy(policy, by: .admin)) ?? []
    }
}
