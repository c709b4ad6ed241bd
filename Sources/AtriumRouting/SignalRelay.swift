public import AtriumHTTP

/// Carries a client's session to the node that runs its room (the cluster; absent on one node). The
/// endpoint hands over a connection whose `join` or `resume` belongs elsewhere, with the token it
/// authenticated with and that first request; from then on it forwards the client's messages, and
/// the relay writes the owner's messages and close back to the connection.
public protocol SignalRelay: AnyObject {
    /// Starts relaying `connection` to `node`; false when that node cannot be reached.
    func open(_ connection: any WebSocketConnection, node: String, token: String, first: [UInt8]) -> Bool
    func forward(_ connection: any WebSocketConnection, message: [UInt8])
    /// The client's socket closed.
    func closed(_ connection: any WebSocketConnection)
}
