public import AtriumHTTP
public import AtriumJSON
public import AtriumModel
import AtriumRedis
public import AtriumRooms
public import AtriumRouting

/// The admin API's view of the cluster: `GET /v1/nodes`, readiness tied to Redis, and live-room calls
/// relayed to the node that runs the room (with the same responses as there).
public final class ClusterAdmin: NodeDirectory {
    let node: ClusterNode
    let relay: ClusterRelay
    weak var hub: Hub?

    public init(node: ClusterNode, relay: ClusterRelay, hub: Hub) {
        self.node = node
        self.relay = relay
        self.hub = hub
    }

    public func listNodes() -> Result<[JSONValue], NodeDirectoryError> {
        do throws(RedisError) {
            return .success(try node.directory.nodes().map(\.json))
        } catch {
            return .failure(NodeDirectoryError("the cluster's Redis cannot be reached: \(error)"))
        }
    }

    public func unready() -> String? {
        if node.draining { return "this node is draining" }
        if node.isConnected { return nil }
        return "the cluster's Redis cannot be reached: \(node.lastError?.description ?? "not registered yet")"
    }

    public func forward(_ request: HTTPRequest, room: RoomID) -> HTTPResponse? {
        guard request.header(ClusterRelay.relayedHeader) == nil, hub?.state(room) == nil,
            let owner = node.owner(of: room)
        else { return nil }
        return relay.call(request, on: owner)
    }
}
