import AtriumModel

/// The one dispatch from a command to the room's rules: validates it for `actor`, applies it and
/// returns the events it caused (the table of `HubCommandTests`).
extension RoomState {
    public mutating func apply(_ command: HubCommand, by actor: Actor, now: Int64) throws(HubError) -> [RoomEvent] {
        switch command {
        case .join(let j):
            return try join(
                id: j.participant, identity: j.identity, name: j.name, metadata: j.metadata, grants: j.grants,
                autoSubscribe: j.autoSubscribe, dataChannels: j.dataChannels, now: now)
        case .leave(let id, let reason):
            return leave(id, reason: reason)
        case .setConnected(let id, let connected):
            setConnected(id, connected)
            return []
        case .update(let name, let metadata):
            return try update(try self.participant(actor), name: name, metadata: metadata)
        case .updateParticipant(let id, let name, let metadata, let sources):
            guard actor == .admin else { throw .notAllowed("only the admin API changes another participant") }
            return try updateParticipant(id, name: name, metadata: metadata, sources: sources)
        case .publish(let track, let share):
            guard actor == .participant(track.owner) else {
                throw .notAllowed("a participant publishes its own tracks")
            }
            return try publish(track, now: now, newShareID: share)
        case .unpublish(let track, let reason):
            return try unpublish(track, by: try self.participant(actor), reason: reason)
        case .setMuted(let track, let muted):
            return try setMuted(track, muted, by: actor)
        case .subscribe(let track, let quality):
            try subscribe(try self.participant(actor), to: track, quality: quality)
            return []
        case .unsubscribe(let track):
            try unsubscribe(try self.participant(actor), from: track)
            return []
        case .pauseShare(let share):
            return try pause(share, by: try self.participant(actor))
        case .resumeShare(let share):
            return try resume(share, by: try self.participant(actor))
        case .stopShare(let share, let reason):
            return try stopShare(share, by: actor, reason: reason)
        case .requestShare(let request):
            return try requestShare(by: try self.participant(actor), requestID: request, now: now)
        case .answerShareRequest(let request, let grant):
            return try answer(request, grant: grant, by: actor)
        case .setShareLock(let locked):
            return try setLock(locked, by: actor)
        case .setSharePolicy(let policy):
            return try setPolicy(policy, by: actor)
        case .setPermission(let id, let source, let granted):
            return try setPermission(id, source: source, granted: granted, by: actor)
        case .setDataPermission(let id, let granted):
            return try setDataPermission(id, granted: granted, by: actor)
        case .sendData(let message):
            return try send(message, by: actor)
        case .setAttributes(let id, let changes):
            return try setAttributes(id, changes, by: actor)
        case .removeParticipant(let id):
            return try remove(id, by: actor)
        case .endRoom:
            return try end(by: actor)
        case .expireRequests:
            return expireRequests(now: now)
        case .applySettings(let room):
            return apply(settings: room)
        }
    }

    /// The participant a command about "my" tracks, shares or subscriptions acts for.
    func participant(_ actor: Actor) throws(HubError) -> ParticipantID {
        guard case .participant(let id) = actor else { throw .notAllowed("this request is a participant's own") }
        return id
    }

    /// The admin API's participant change: name and metadata, then each source granted or revoked
    /// (screen share audio follows screen share).
    mutating func updateParticipant(
        _ id: ParticipantID, name: String?, metadata: String?, sources: Set<TrackSource>?
    ) throws(HubError) -> [RoomEvent] {
        var events = try update(id, name: name, metadata: metadata)
        guard let sources, let current = participants[id]?.sources else { return events }
        for src in TrackSource.allCases where src != .screenShareAudio || !sources.contains(.screenShare) {
            let want = sources.contains(src)
            if want != current.contains(src) {
                events += try setPermission(id, source: src, granted: want, by: .admin)
            }
        }
        return events
    }
}
