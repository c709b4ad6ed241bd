import AtriumHTTP
internal import CWebSockets

#if canImport(Glibc)
    import Glibc
#endif

/// Per-connection HTTP state between the request line and the end of the response.
final class HTTPExchange {
    var request: HTTPRequest
    var tooLarge = false
    var response: HTTPResponse?
    var sent = 0
    var headOnly = false

    init(request: HTTPRequest) { self.request = request }
}

/// A WebSocket on lws. Its methods are called on the service thread only.
///
/// The outbound queue tells a burst from a slow consumer: it holds up to `limits.messages` messages and
/// `limits.bytes` bytes (one larger message when it is empty), and a queue that has waited
/// `limits.stallSeconds` without anything written is a stalled peer: `send` then fails too, even
/// below the caps. A healthy client that receives a burst (400 joins at once) drains several messages
/// per writable callback and keeps the queue moving.
final class EdgeWebSocket: WebSocketConnection {
    struct QueueLimits: Sendable {
        var messages = 4096
        var bytes = 2 << 20
        var stallSeconds = 5.0

        /// Whether a message of `incoming` bytes may join a queue holding `pending` messages of
        /// `queuedBytes` bytes that last moved `sinceProgress` seconds ago. An empty queue takes any
        /// one message (a large snapshot cannot be split); a stalled one takes nothing.
        func admits(pending: Int, queuedBytes: Int, incoming: Int, sinceProgress: Double) -> Bool {
            if pending == 0 { return true }
            if sinceProgress > stallSeconds { return false }
            return pending < messages && queuedBytes + incoming <= bytes
        }
    }

    let id: UInt64
    let query: [(name: String, value: String)]
    let wsi: OpaquePointer
    let limits: QueueLimits
    private var outbound: [[UInt8]] = []
    private var outboundHead = 0
    private(set) var queuedBytes = 0
    /// When the queue last moved: a message written, or the first one queued into an empty queue.
    private(set) var lastProgress = 0.0
    var inbound: [UInt8] = []
    var inboundTooBig = false
    var closing: (code: UInt16, reason: String)?
    /// When a close was asked for; after `EdgeOptions.closeGraceSeconds` the socket is dropped even if
    /// the peer never lets us write the close frame (a zero TCP window), so no session outlives it.
    var closeRequestedAt: Double?
    var dropRequested = false
    var isClosed = false
    weak var handler: (any WebSocketHandler)?

    init(
        id: UInt64, query: [(name: String, value: String)], wsi: OpaquePointer, limits: QueueLimits,
        handler: any WebSocketHandler
    ) {
        self.id = id
        self.query = query
        self.wsi = wsi
        self.limits = limits
        self.handler = handler
    }

    var queuedCount: Int { outbound.count - outboundHead }

    @discardableResult
    func send(text: [UInt8]) -> Bool {
        guard !isClosed, closing == nil else { return false }
        let now = EdgeClock.now()
        guard
            limits.admits(
                pending: queuedCount, queuedBytes: queuedBytes, incoming: text.count,
                sinceProgress: now - lastProgress)
        else { return false }
        if queuedCount == 0 { lastProgress = now }
        outbound.append(text)
        queuedBytes += text.count
        lws_callback_on_writable(wsi)
        return true
    }

    /// Takes the oldest queued message (the writer calls it once per `lws_write`).
    func popOutbound(now: Double) -> [UInt8]? {
        guard outboundHead < outbound.count else { return nil }
        let msg = outbound[outboundHead]
        outbound[outboundHead] = []
        outboundHead += 1
        queuedBytes -= msg.count
        lastProgress = now
        if outboundHead == outbound.count {
            outbound.removeAll(keepingCapacity: outbound.count <= 64)
            outboundHead = 0
        } else if outboundHead >= 1024 && outboundHead * 2 >= outbound.count {
            outbound.removeFirst(outboundHead)
            outboundHead = 0
        }
        return msg
    }

    func close(code: UInt16, reason: String) {
        guard !isClosed, closing == nil else { return }
        closing = (code, reason)
        closeRequestedAt = EdgeClock.now()
        lws_callback_on_writable(wsi)
    }

    func setTimer(seconds: Double) {
        guard !isClosed else { return }
        lws_set_timer_usecs(wsi, seconds < 0 ? -1 : lws_usec_t(seconds * 1_000_000))
    }
}

/// The edge's monotonic clock, in seconds.
enum EdgeClock {
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
