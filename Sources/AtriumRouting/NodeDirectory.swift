public import AtriumHTTP
public import AtriumJSON
public import AtriumModel

/// What the admin API needs from the cluster (supplied by the composition root; nil on one node
/// without the cluster layer): the node list, readiness, and the relay of live-room calls.
public protocol NodeDirectory: AnyObject {
    /// The live nodes as `Node` objects (openapi.yaml), or why they cannot be listed.
    func listNodes() -> Result<[JSONValue], NodeDirectoryError>
    /// Why this node is not ready (Redis unreachable), nil when it is.
    func unready() -> String?
    /// Sends a call on a live room to the node running it and returns that node's response; nil when
    /// the room is live here or on no node (the call is answered here).
    func forward(_ request: HTTPRequest, room: RoomID) -> HTTPResponse?
}

public struct NodeDirectoryError: Error, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}
