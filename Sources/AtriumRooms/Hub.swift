public import AtriumAuth
public import AtriumModel

/// Where the hub sends what happens: the signaling layer encodes events for each recipient's socket.
public protocol HubOutput: AnyObject {
    /// Delivers an event to participants of a room.
    func deliver(_ event: RoomEvent, room: RoomID, to recipients: [ParticipantID])
    /// A participant left for a reason it did not choose itself (replaced, removed, room ended):
    /// tell it and close its connection.
    func ended(_ participant: ParticipantID, room: RoomID, reason: LeaveReason)
    /// A room changed (nil: it ended): the media plane brings forwarding in line with it.
    func roomChanged(_ room: RoomID, state: RoomState?)
}

extension HubOutput {
    public func roomChanged(_ room: RoomID, state: RoomState?) {}
}

/// Why a live room closed on this node.
public enum RoomCloseReason: String, Sendable {
    /// It ended (`end_room`, the admin API's delete).
    case ended
    /// It stayed empty past its empty timeout.
    case emptyTimeout = "empty_timeout"
    /// The node drains, or another node took the room over: its next join lands on another node.
    case moved
}

/// Watches every room of the hub whoever the audience: webhooks and recordings. Called on the
/// service thread, after the events were delivered; it must not block.
public protocol HubObserver: AnyObject {
    /// A room became live on this node (a first join loaded or created it).
    func roomOpened(_ room: Room, now: Int64)
    /// A change produced these events, in order; `room` is the room's settings after it.
    func roomEvents(_ events: [RoomEvent], room: Room, now: Int64)
    /// A live room closed: after its `roomEnded` event, or when its empty timeout passed.
    func roomClosed(_ room: Room, reason: RoomCloseReason, now: Int64)
}

/// When joining a room that does not exist creates it.
public enum AutoCreate: String, Sendable, CaseIterable {
    /// Never: rooms are created over the admin API.
    case off
    /// When the token has the `roomCreate` grant (the default).
    case grant
    /// For any token allowed to join.
    case any
}

/// Owns the live rooms of this node: looks rooms up in the store, runs their `RoomState`, routes the
/// events to their audiences, persists policy changes and closes rooms that stayed empty. Single owner:
/// everything runs on the service thread.
public final class Hub {
    public struct Live {
        public var state: RoomState
        /// When the room became empty (for its empty timeout).
        public var emptySince: Int64?
    }

    let store: any RoomStore
    public let ids: IDGenerator
    let autoCreate: AutoCreate
    let makeRoomID: () -> RoomID
    public weak var output: (any HubOutput)?
    /// Which node runs each room (`LocalRoomRouter` on one node).
    public var router: any RoomRouter = LocalRoomRouter()
    /// Draining (cluster, SIGTERM): joins no longer enter the rooms live here; the router sends them
    /// to the node each room is placed on next.
    public var draining = false
    public private(set) var rooms: [RoomID: Live] = [:]
    /// Told of every room's events, in the order they happen.
    public var observers: [any HubObserver] = []

    public init(store: any RoomStore, ids: IDGenerator, autoCreate: AutoCreate, makeRoomID: @escaping () -> RoomID) {
        self.store = store
        self.ids = ids
        self.autoCreate = autoCreate
        self.makeRoomID = makeRoomID
    }

    public var participantCount: Int { rooms.values.reduce(0) { $0 + $1.state.participants.count } }
    public var shareCount: Int { rooms.values.reduce(0) { $0 + $1.state.shares.count } }
    /// Tracks published in end-to-end encrypted rooms (their frames are ciphertext to this server).
    public var encryptedTrackCount: Int {
        rooms.values.reduce(0) { $0 + ($1.state.room.e2ee ? $1.state.tracks.count : 0) }
    }

    public func state(_ room: RoomID) -> RoomState? { rooms[room]?.state }

    /// Finds the live room for a token's scope (a name or an id), loading it from the store or creating it.
    public func open(scope: String, grants: Grants, now: Int64) throws(HubError) -> RoomID {
        if !draining, let live = rooms.first(where: { $0.value.state.room.matchesScope(scope) }) { return live.key }
        let stored: Room?
        do { stored = try store.room(idOrName: scope) } catch { throw Self.storeFailure(error) }
        var room: Room
        if let stored {
            room = stored
        } else {
            guard Room.isValidName(scope) || RoomID.isWellFormed(scope) else { throw .invalidRoomName(scope) }
            let allowed = autoCreate == .any || (autoCreate == .grant && grants.roomCreate)
            guard allowed, Room.isValidName(scope), !RoomID.isWellFormed(scope) else { throw .roomNotFound(scope) }
            room = Room(id: makeRoomID(), name: scope, createdAt: now)
            do { try store.insert(room) } catch { throw Self.storeFailure(error) }
        }
        switch router.claim(room.id) {
        case .here: break
        case .elsewhere(let node): throw .roomElsewhere(node: node)
        case .unavailable(let m): throw .clusterUnavailable(m)
        }
        room.updatedAt = max(room.updatedAt, room.createdAt)
        rooms[room.id] = Live(state: RoomState(room: room), emptySince: now)
        for o in observers { o.roomOpened(room, now: now) }
        return room.id
    }

    /// The stored room a scope (a name or an id) names, if the store knows it.
    public func storedRoomID(scope: String) -> RoomID? {
        (try? store.room(idOrName: scope))?.id
    }

    /// The other node running the room a scope names, if one does (cluster); nil when it is live here,
    /// on no node, or the store cannot say.
    public func remoteOwner(scope: String) -> String? {
        if !draining && rooms.contains(where: { $0.value.state.room.matchesScope(scope) }) { return nil }
        guard let stored = try? store.room(idOrName: scope) else { return nil }
        return router.owner(of: stored.id)
    }

    /// Runs a command on a room live here and delivers its events; the one way a request changes a room.
    /// Persists the room when its settings changed. `roomNotFound` when the room is not live here.
    @discardableResult
    public func apply(_ command: HubCommand, in room: RoomID, by actor: Actor, now: Int64) throws(HubError)
        -> [RoomEvent]
    {
        try perform(room, now: now) { s throws(HubError) in try s.apply(command, by: actor, now: now) }
    }

    /// Runs a change on a room and delivers its events. Persists the room when its settings changed,
    /// before the change takes effect: when the store fails, the room stays as it was and the caller
    /// gets `storeUnavailable` (`clusterUnavailable` when the cluster's Redis does not answer), so the
    /// live and the stored settings never differ.
    private func perform(_ id: RoomID, now: Int64, _ change: (inout RoomState) throws(HubError) -> [RoomEvent])
        throws(HubError) -> [RoomEvent]
    {
        guard var live = rooms[id] else { throw .roomNotFound(id.rawValue) }
        let before = live.state.room.sharePolicy
        let previous = live.state
        let events = try change(&live.state)
        live.emptySince = live.state.isEmpty ? (live.emptySince ?? now) : nil
        if live.state.room.sharePolicy != before {
            live.state.room.updatedAt = max(live.state.room.updatedAt, now)
            do {
                try store.update(live.state.room)
            } catch {
                if case .unavailable(let m) = error { throw .clusterUnavailable(m) }
                throw .storeUnavailable("\(error)")
            }
        }
        rooms[id] = live
        dispatch(events, room: id, before: previous, after: live.state)
        let ended = events.contains(where: { if case .roomEnded = $0 { true } else { false } })
        if ended {
            close(id, reason: .ended, now: now, events: events)
        } else {
            // Data and attributes change nothing the media plane follows: a chat message reconciles nothing.
            if events.isEmpty || !events.allSatisfy(\.isBesideMedia) { output?.roomChanged(id, state: live.state) }
            if !events.isEmpty { for o in observers { o.roomEvents(events, room: live.state.room, now: now) } }
        }
        return events
    }

    /// Delivers events to the participants present before or after the change, so that those who leave in
    /// it (room ended, removed) still hear why, and those who join hear what follows their join.
    func dispatch(_ events: [RoomEvent], room: RoomID, before: RoomState, after: RoomState) {
        guard let output else { return }
        var everyone = before.order
        everyone += after.order.filter { before.participants[$0] == nil }
        for event in events {
            let recipients: [ParticipantID]
            switch event.audience {
            case .nobody: recipients = []
            case .everyone(let except): recipients = everyone.filter { !except.contains($0) }
            case .moderatorsAnd(let extra):
                recipients = everyone.filter {
                    (after.participants[$0] ?? before.participants[$0])?.isModerator == true || extra.contains($0)
                }
            case .only(let listed): recipients = listed
            }
            if !recipients.isEmpty { output.deliver(event, room: room, to: recipients) }
            if case .participantLeft(let p, let reason) = event, [.replaced, .removed, .roomEnded].contains(reason) {
                output.ended(p.id, room: room, reason: reason)
            }
        }
    }

    /// Housekeeping: expires share requests and closes rooms empty for longer than their timeout.
    public func tick(now: Int64) {
        for (id, live) in rooms {
            let expired = live.state.requests.contains { $0.expiresAt <= now }
            if expired { _ = try? apply(.expireRequests, in: id, by: .admin, now: now) }
            if let since = live.emptySince, now - since >= Int64(live.state.room.emptyTimeout) {
                close(id, reason: .emptyTimeout, now: now)
            }
        }
    }

    /// The one way a live room closes here, whatever closed it: the room leaves the hub, its claim in
    /// the cluster is released, media control hears it ended (its router, worker placement and stage
    /// go), and the observers hear the last events, then the close.
    public func close(_ id: RoomID, reason: RoomCloseReason, now: Int64, events: [RoomEvent] = []) {
        guard let live = rooms.removeValue(forKey: id) else { return }
        router.released(id)
        output?.roomChanged(id, state: nil)
        if !events.isEmpty { for o in observers { o.roomEvents(events, room: live.state.room, now: now) } }
        for o in observers { o.roomClosed(live.state.room, reason: reason, now: now) }
    }

    /// Draining: every live room closes here (its sessions were told to move); the next join places it
    /// on another node.
    public func closeAll(reason: RoomCloseReason, now: Int64) {
        for id in Array(rooms.keys) { close(id, reason: reason, now: now) }
    }

    /// A room's settings changed through the admin API: the live room, here or on its node, follows
    /// them with the same events.
    public func roomUpdated(_ room: Room, now: Int64) {
        _ = route(RoomCommand(room: room.id, actor: .admin, command: .applySettings(room)), now: now)
    }

    /// A room was deleted through the admin API: it ends for everyone, here or on its node.
    public func roomDeleted(_ id: RoomID, now: Int64) {
        _ = route(RoomCommand(room: id, actor: .admin, command: .endRoom), now: now)
        close(id, reason: .ended, now: now)
    }

    /// A store failure while opening a room: Redis out of reach is `cluster_unavailable`.
    static func storeFailure(_ error: StoreError) -> HubError {
        if case .unavailable(let m) = error { return .clusterUnavailable(m) }
        return .badRequest("the room store failed: \(error)")
    }
}
