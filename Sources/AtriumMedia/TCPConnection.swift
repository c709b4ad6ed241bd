import AtriumUDP

/// Why the worker closed an ICE-TCP connection; each is a label of `atrium_media_tcp_closed_total`.
public enum TCPCloseReason: Int, Sendable, CaseIterable {
    /// The peer closed its side, or the connection failed (a reset).
    case closed
    /// A frame longer than a datagram slot, or something other than a STUN check before a valid one:
    /// not an ICE-TCP peer.
    case garbage
    /// No valid check within `checkTimeout`, or no byte at all within `idleTimeout`.
    case idle
    /// Output waited `stallTimeout` without the peer taking a byte, or the kernel had what it sent
    /// unacknowledged that long (TCP_USER_TIMEOUT).
    case stalled
    /// Over `maxConnections` at accept.
    case limit
    /// The transport it carried closed.
    case shutdown

    /// Why a failed read or write ends a connection: the kernel's unacknowledged-data timeout is a
    /// stalled peer; anything else (a reset, a broken pipe) is a closed one.
    init(failure: UDPError) {
        self = failure.timedOut ? .stalled : .closed
    }

    public var label: String {
        switch self {
        case .closed: "closed"
        case .garbage: "garbage"
        case .idle: "idle"
        case .stalled: "stalled"
        case .limit: "limit"
        case .shutdown: "shutdown"
        }
    }
}

/// One accepted ICE-TCP connection (RFC 6544 passive side): the stream, the RFC 4571 reassembly of what
/// it sends and the queue of what goes to it, both bounded, and the times that decide when a peer that
/// does not behave is dropped. Owned by the worker thread.
final class TCPConnection {
    let stream: TCPStream
    let token: UInt64
    /// The peer's address: the ICE pair's remote side, and the key outbound datagrams are found by.
    let remote: SocketAddress
    var input: FrameReassembler
    var output: FrameQueue
    /// Set once a STUN check on the connection was answered with success: its frames may now be DTLS
    /// and SRTP.
    var checked = false
    let openedAt: Double
    var lastInput: Double
    /// When the peer last took a byte, or when output began waiting.
    var lastDrain: Double
    /// True while the poller also reports writability.
    var watchingWritable = false
    /// Queued in the current flush and not yet written.
    var dirty = false
    /// Set when the connection must go; the engine closes it after the round in hand.
    var closing: TCPCloseReason?

    init(stream: TCPStream, token: UInt64, maxFrame: Int, limits: TCPLimits, now: Double) {
        self.stream = stream
        self.token = token
        remote = stream.remoteAddress
        input = FrameReassembler(maxFrame: maxFrame, capacity: 4 * maxFrame)
        output = FrameQueue(capacity: limits.outputQueueBytes)
        openedAt = now
        lastInput = now
        lastDrain = now
    }

    /// The reason this connection should be dropped at `now`, if any.
    func expired(now: Double, limits: TCPLimits) -> TCPCloseReason? {
        if !checked && now - openedAt >= limits.checkTimeout { return .idle }
        if now - lastInput >= limits.idleTimeout { return .idle }
        if !output.isEmpty && now - lastDrain >= limits.stallTimeout { return .stalled }
        return nil
    }
}
