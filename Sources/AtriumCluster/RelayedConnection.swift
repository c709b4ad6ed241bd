public import AtriumHTTP

/// The owner node's side of a session relayed from another node: a `WebSocketConnection` whose
/// messages travel back over Redis to the entry node, which writes them to the client's socket.
/// The owner's signaling endpoint handles it like any socket.
public final class RelayedConnection: WebSocketConnection {
    public let id: UInt64
    public let query: [(name: String, value: String)]
    /// The session's key (entry node and its connection id) and the entry node.
    let session: String
    let peer: String
    weak var relay: ClusterRelay?
    /// The endpoint greets the connection with `welcome`, which the entry node already sent the client.
    var welcomeSkipped = false
    var closed = false

    init(id: UInt64, session: String, peer: String, token: String, relay: ClusterRelay) {
        self.id = id
        self.session = session
        self.peer = peer
        self.query = [("access_token", token)]
        self.relay = relay
    }

    public func send(text: [UInt8]) -> Bool {
        guard !closed, let relay else { return false }
        if !welcomeSkipped {
            welcomeSkipped = true
            if text.starts(with: Array(#"{"type":"welcome""#.utf8)) { return true }
        }
        return relay.sendToEntry(self, text)
    }

    public func close(code: UInt16, reason: String) {
        guard !closed else { return }
        closed = true
        relay?.closeFromOwner(self, code: code, reason: reason)
    }

    /// Relayed sessions authenticate with the entry node's token at once: no auth timer to run.
    public func setTimer(seconds: Double) {}
}
