public import AtriumModel

/// Whether this node may run a room live (the answer of `RoomRouter.claim`).
public enum RoomClaim: Equatable, Sendable {
    /// This node owns the room now (it was free, placed here, or already ours).
    case here
    /// Another live node owns it (or was chosen for it): the session goes there.
    case elsewhere(node: String)
    /// The cluster cannot be asked (Redis unreachable): a room not live here cannot open.
    case unavailable(String)
}

/// The seam between the hub and the cluster (LiveKit's router): which node runs a live room, and the
/// way a command reaches it. One node uses `LocalRoomRouter` (every room is here: commands apply to
/// the local hub, `Hub.route`); `--redis` supplies the cluster's router, which claims rooms atomically
/// in Redis, places new ones on the least-loaded node, and sends commands to a room's node over the
/// Redis relay (docs/cluster.md).
public protocol RoomRouter: AnyObject {
    /// Asked before a room becomes live on this node.
    func claim(_ room: RoomID) -> RoomClaim
    /// The room is no longer live here (ended, deleted, closed when empty).
    func released(_ room: RoomID)
    /// The other node that runs a room live now, if one does (nil: here, nowhere, or unknown).
    func owner(of room: RoomID) -> String?
    /// Sends a command to `node`, which runs its room, and returns what the room's hub answered there.
    func send(_ command: RoomCommand, to node: String) -> Result<[RoomEvent], HubError>
}

/// A single node: every room is here.
public final class LocalRoomRouter: RoomRouter {
    public init() {}
    public func claim(_ room: RoomID) -> RoomClaim { .here }
    public func released(_ room: RoomID) {}
    public func owner(of room: RoomID) -> String? { nil }
    public func send(_ command: RoomCommand, to node: String) -> Result<[RoomEvent], HubError> {
        .failure(.roomNotFound(command.room.rawValue))
    }
}
