/// How the edge listens and what it accepts. Limits exist so that no client can make the server hold
/// unbounded memory: bodies, header blocks, WebSocket messages and outbound queues are all capped.
public struct EdgeOptions: Sendable {
    public var bindAddress = "127.0.0.1"
    /// 0 asks the kernel for a free port; `EdgeServer.start` returns the one bound.
    public var port = 8800
    public var tlsCertificatePath: String?
    public var tlsPrivateKeyPath: String?
    /// Largest request body read; larger ones are answered 413.
    public var maxBodyBytes = 1 << 20
    /// Bodies announced larger than this are refused without being read and the connection closed.
    public var maxDrainBytes = 64 << 20
    /// lws's header buffer per connection. lws closes a connection whose request head exceeds it
    /// without answering (it has no 431 path); documented in docs/admin-api.md.
    public var maxHeaderBytes = 16 * 1024
    public var maxWebSocketMessageBytes = 64 * 1024
    /// Outbound WebSocket messages and bytes queued per connection before `send` reports failure (one
    /// larger message is accepted into an empty queue).
    public var maxWebSocketQueue = 4096
    public var maxWebSocketQueueBytes = 2 << 20
    /// Seconds a non-empty outbound queue may go without a write before `send` reports failure: what
    /// tells a slow consumer from a burst.
    public var webSocketStallSeconds = 5.0
    /// Messages and bytes written per writable callback at most (while the socket takes them).
    public var webSocketWriteBatch = 64
    public var webSocketWriteBatchBytes = 256 * 1024
    /// Seconds a WebSocket that is closing may wait for the chance to write its close frame; then the
    /// socket is dropped (a peer with a zero TCP window never becomes writable).
    public var closeGraceSeconds = 5.0
    /// Seconds lws waits on a stalled connection (headers, body, close handshake). lws restarts this
    /// clock on every byte, so it does not bound a client that trickles; `requestTimeoutSeconds` does.
    public var idleTimeoutSeconds = 10
    /// Seconds a connection has from its first byte (or the end of its previous response) to a complete
    /// request, head and body; at the deadline it is answered 408 and closed. WebSockets leave this
    /// clock when the upgrade completes.
    public var requestTimeoutSeconds = 10
    /// Open connections (HTTP and WebSocket) in total; held below the descriptor limit by
    /// `ConnectionLimits.effectiveTotal`.
    public var maxConnections = 4096
    /// Open connections from one source address.
    public var maxConnectionsPerAddress = 1024

    public init() {}
}

public enum EdgeError: Error, Equatable, Sendable {
    case cannotListen(String)
}
