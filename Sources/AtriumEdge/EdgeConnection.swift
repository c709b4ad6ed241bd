import AtriumHTTP
internal import CWebSockets

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
final class EdgeWebSocket: WebSocketConnection {
    let id: UInt64
    let query: [(name: String, value: String)]
    let wsi: OpaquePointer
    let maxQueue: Int
    var outbound: [[UInt8]] = []
    var inbound: [UInt8] = []
    var inboundTooBig = false
    var closing: (code: UInt16, reason: String)?
    var isClosed = false
    weak var handler: (any WebSocketHandler)?

    init(
        id: UInt64, query: [(name: String, value: String)], wsi: OpaquePointer, maxQueue: Int,
        handler: any WebSocketHandler
    ) {
        self.id = id
        self.query = query
        self.wsi = wsi
        self.maxQueue = maxQueue
        self.handler = handler
    }

    @discardableResult
    func send(text: [UInt8]) -> Bool {
        guard !isClosed, closing == nil, outbound.count < maxQueue else { return false }
        outbound.append(text)
        lws_callback_on_writable(wsi)
        return true
    }

    func close(code: UInt16, reason: String) {
        guard !isClosed, closing == nil else { return }
        closing = (code, reason)
        lws_callback_on_writable(wsi)
    }

    func setTimer(seconds: Double) {
        guard !isClosed else { return }
        lws_set_timer_usecs(wsi, seconds < 0 ? -1 : lws_usec_t(seconds * 1_000_000))
    }
}
