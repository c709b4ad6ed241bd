public import AtriumHTTP
public import AtriumLog
internal import CAtriumSupport
internal import CWebSockets

#if canImport(Glibc)
    import Glibc
#endif

/// The HTTP and WebSocket edge on libwebsockets: one listening port, one service thread (the caller of
/// `run`). It turns lws callbacks into complete `HTTPRequest`s and WebSocket events and writes responses
/// back from writeable callbacks (a further `lws_write` in the same callback only while
/// `lws_send_pipe_choked` says the socket has room). Nothing here knows routes or JSON.
public final class EdgeServer {
    let options: EdgeOptions
    let http: any HTTPHandler
    let webSockets: [String: any WebSocketHandler]
    let logger: Logger
    private var context: OpaquePointer?
    private var protocols: UnsafeMutablePointer<lws_protocols>?
    private var cStrings: [UnsafeMutablePointer<CChar>] = []
    var exchanges: [UInt: HTTPExchange] = [:]
    var sockets: [UInt: EdgeWebSocket] = [:]
    /// Upgrade requests seen in FILTER_PROTOCOL_CONNECTION, waiting for ESTABLISHED.
    var pendingUpgrades: [UInt: (handler: any WebSocketHandler, query: [(name: String, value: String)])] = [:]
    /// Replies to connections lws adopted as raw (a CONNECT request), written once and closed.
    var rawReplies: [UInt: [UInt8]] = [:]
    var nextSocketID: UInt64 = 1
    let writeChunk = 64 * 1024
    /// The connection caps in effect (set by `start`) and the source address of every counted connection.
    var limits = ConnectionLimits(maxTotal: 1, maxPerAddress: 1)
    var peers: [UInt: String] = [:]
    /// Connections refused at accept for the caps, since start.
    public internal(set) var refusedConnections = 0
    /// Connections open now (counted against the caps: HTTP and WebSocket).
    public var connectionCount: Int { limits.total }
    var lastRefusalLog = time_t(0)
    /// Connections closed because their request missed the deadline.
    public internal(set) var deadlineClosures = 0

    public private(set) var boundPort = 0
    /// Called on the service thread about twice a second (room timers, resume windows, request expiry).
    public var onTick: (() -> Void)?
    /// Called on the service thread after another thread used `waker`.
    public var onWake: (() -> Void)?
    /// Wakes the service thread from another thread (nil before `start`).
    public var waker: EdgeWaker? { context.map { EdgeWaker(context: UInt(bitPattern: $0)) } }
    public var webSocketCount: Int { sockets.count }

    public init(options: EdgeOptions, http: any HTTPHandler, webSockets: [any WebSocketHandler], logger: Logger) {
        self.options = options
        self.http = http
        self.webSockets = Dictionary(webSockets.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        self.logger = logger
    }

    deinit {
        atrium_lws_log_install(Int32(LLL_ERR), nil, nil, 10, 10)
        if let context { lws_context_destroy(context) }
        protocols?.deallocate()
        cStrings.forEach { free($0) }
    }

    private func cString(_ s: String) -> UnsafeMutablePointer<CChar>? {
        guard let p = strdup(s) else { return nil }
        cStrings.append(p)
        return p
    }

    /// Creates the lws context and binds the port. Returns the port bound.
    public func start() throws(EdgeError) -> Int {
        // lws's own errors go through our logger, at most 10 lines per 10 s (`accept: errno 24` repeats
        // on every poll round while it lasts).
        atrium_lws_log_install(Int32(LLL_ERR), edgeLogSink, Unmanaged.passUnretained(self).toOpaque(), 10, 10)
        // Connections stay below the descriptor limit, so that accept never meets EMFILE; lws stops
        // polling the listening socket a little above our own cap (its accept modulation), which keeps
        // descriptors free for the 503 answers to connections over the cap.
        let openMax = sysconf(Int32(_SC_OPEN_MAX))
        let descriptorLimit = openMax > 0 ? Int(openMax) : 1 << 20
        limits = ConnectionLimits(
            maxTotal: ConnectionLimits.effectiveTotal(
                configured: options.maxConnections, descriptorLimit: descriptorLimit),
            maxPerAddress: options.maxConnectionsPerAddress)
        let protos = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 2)
        protos.initialize(repeating: lws_protocols(), count: 2)
        // One protocol serves HTTP and WebSocket alike: an upgrade without a subprotocol binds to
        // protocols[0], so browsers' `new WebSocket(url)` reaches us.
        protos[0].name = UnsafePointer(cString("atrium"))
        protos[0].callback = edgeCallback
        protos[0].per_session_data_size = 0
        protos[0].rx_buffer_size = 0
        protocols = protos

        var info = lws_context_creation_info()
        info.port = Int32(options.port)
        info.iface = UnsafePointer(cString(options.bindAddress))
        info.protocols = UnsafePointer(protos)
        info.gid = -1
        info.uid = -1
        info.max_http_header_data = UInt16(clamping: options.maxHeaderBytes)
        info.timeout_secs = UInt32(options.idleTimeoutSeconds)
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.fd_limit_per_thread = UInt32(clamping: limits.maxTotal + 16)
        var opts: UInt64 = UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8)
        if !options.bindAddress.contains(":") { opts |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6) }
        if let cert = options.tlsCertificatePath, let key = options.tlsPrivateKeyPath {
            opts |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            info.ssl_cert_filepath = UnsafePointer(cString(cert))
            info.ssl_private_key_filepath = UnsafePointer(cString(key))
            // HTTP/2 is not served (Debian's lws offers it): ALPN names only HTTP/1.1.
            info.alpn = UnsafePointer(cString("http/1.1"))
        }
        info.options = opts
        guard let ctx = lws_create_context(&info) else {
            throw .cannotListen("cannot listen on \(options.bindAddress):\(options.port)")
        }
        context = ctx
        if let vh = lws_get_vhost_by_name(ctx, "default") { boundPort = Int(lws_get_vhost_listen_port(vh)) }
        if boundPort <= 0 { boundPort = options.port }
        atrium_install_stop_signals(ctx)
        atrium_tick_start(ctx, 500_000, edgeTick, Unmanaged.passUnretained(self).toOpaque())
        return boundPort
    }

    /// Serves until SIGINT, SIGTERM or `requestStop`. Returns the signal number that stopped it (0 if none).
    public func run() -> Int32 {
        guard let ctx = context else { return 0 }
        while atrium_stop_requested() == 0 {
            if lws_service(ctx, 0) < 0 { break }
        }
        return atrium_stop_signal()
    }

    /// Serves on after `run` returned (a drain): until `done` says so or `seconds` have passed,
    /// whatever signals arrive meanwhile.
    public func serve(until done: () -> Bool, seconds: Double, monotonic: () -> Double) {
        guard let ctx = context else { return }
        let end = monotonic() + seconds
        while !done() && monotonic() < end {
            if lws_service(ctx, 0) < 0 { break }
        }
    }

    /// Closes every WebSocket with `code` (e.g. 1001 going away), then the listening socket and the rest.
    public func closeWebSockets(code: UInt16, reason: String) {
        for s in sockets.values { s.close(code: code, reason: reason) }
        // Let lws write the close frames before the context goes.
        if let ctx = context {
            for _ in 0..<4 { _ = lws_service(ctx, -1) }
        }
    }

    /// Closes the listening socket and every connection (WebSockets get 1001 going away from lws).
    public func shutdown() {
        atrium_clear_stop_context()
        atrium_lws_log_install(Int32(LLL_ERR), nil, nil, 10, 10)
        for s in sockets.values { s.isClosed = true }
        if let ctx = context { lws_context_destroy(ctx) }
        context = nil
    }

    /// Asks `run` to return; safe from any thread.
    public static func requestStop() { atrium_request_stop() }

    // MARK: - Responses

    /// Writes the status line and headers now; the body follows in writeable callbacks.
    func respond(_ wsi: OpaquePointer, _ ex: HTTPExchange, _ response: HTTPResponse) -> Int32 {
        ex.response = response
        if logger.level <= .debug {
            logger.debug(
                "http", ("method", ex.headOnly ? "HEAD" : ex.request.method.rawValue), ("path", ex.request.path),
                ("status", String(response.status)))
        }
        let pre = atrium_lws_pre()
        var buf = [UInt8](repeating: 0, count: pre + 4096)
        let ok: Bool = buf.withUnsafeMutableBufferPointer { b in
            guard let base = b.baseAddress else { return false }
            let start = base + pre
            var p: UnsafeMutablePointer<UInt8>? = start
            let end = base + b.count - 1
            if lws_add_http_header_status(wsi, UInt32(response.status), &p, end) != 0 { return false }
            let noBody = response.status == 204 || response.status == 304
            if !noBody && lws_add_http_header_content_length(wsi, lws_filepos_t(response.body.count), &p, end) != 0 {
                return false
            }
            var headers = response.headers
            if response.closeConnection { headers.append(("connection", "close")) }
            for (name, value) in headers {
                let n = Array((name.lowercased() + ":").utf8) + [0]
                let v = Array(value.utf8)
                let rc = n.withUnsafeBufferPointer { nb in
                    v.withUnsafeBufferPointer { vb in
                        lws_add_http_header_by_name(
                            wsi, nb.baseAddress, vb.baseAddress ?? nb.baseAddress,
                            Int32(vb.count), &p, end)
                    }
                }
                if rc != 0 { return false }
            }
            return lws_finalize_write_http_header(wsi, start, &p, end) == 0
        }
        if !ok { return -1 }
        if ex.headOnly || response.body.isEmpty { return finish(wsi, ex) }
        lws_callback_on_writable(wsi)
        return 0
    }

    /// Ends the transaction: keep-alive for the next request, or close.
    func finish(_ wsi: OpaquePointer, _ ex: HTTPExchange) -> Int32 {
        let close = ex.response?.closeConnection ?? false
        exchanges[key(wsi)] = nil
        if close { return -1 }
        if lws_http_transaction_completed(wsi) != 0 { return -1 }
        armRequestDeadline(wsi)
        return 0
    }

    func writeBody(_ wsi: OpaquePointer) -> Int32 {
        guard let ex = exchanges[key(wsi)], let response = ex.response else { return 0 }
        let remaining = response.body.count - ex.sent
        let n = min(remaining, writeChunk)
        let last = n == remaining
        let written = lwsWrite(
            wsi, response.body[ex.sent..<(ex.sent + n)], last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP)
        if written < 0 { return -1 }
        ex.sent += n
        if last { return finish(wsi, ex) }
        lws_callback_on_writable(wsi)
        return 0
    }

    // MARK: - WebSocket output

    /// Writes queued messages while the socket takes them, up to a batch per callback; lws allows
    /// another `lws_write` in the same callback once `lws_send_pipe_choked` says the socket has room.
    func writeWebSocket(_ ws: EdgeWebSocket) -> Int32 {
        if ws.queuedCount > 0 {
            let now = EdgeClock.now()
            var messages = 0
            var bytes = 0
            while let msg = ws.popOutbound(now: now) {
                if lwsWrite(ws.wsi, msg[...], LWS_WRITE_TEXT) < 0 { return -1 }
                messages += 1
                bytes += msg.count
                if ws.queuedCount == 0 || messages >= options.webSocketWriteBatch
                    || bytes >= options.webSocketWriteBatchBytes || lws_send_pipe_choked(ws.wsi) != 0
                {
                    break
                }
            }
            if ws.queuedCount > 0 || ws.closing != nil { lws_callback_on_writable(ws.wsi) }
            return 0
        }
        if let (code, reason) = ws.closing {
            var r = Array(reason.utf8.prefix(123))
            r.withUnsafeMutableBufferPointer { b in
                lws_close_reason(ws.wsi, lws_close_status(rawValue: UInt32(code)), b.baseAddress, b.count)
            }
            return -1
        }
        return 0
    }

    /// Writes `payload` through lws, which needs LWS_PRE bytes of headroom in front of every buffer.
    func lwsWrite(_ wsi: OpaquePointer, _ payload: ArraySlice<UInt8>, _ kind: lws_write_protocol) -> Int32 {
        let pre = atrium_lws_pre()
        var buf = [UInt8](repeating: 0, count: pre)
        buf.append(contentsOf: payload)
        return buf.withUnsafeMutableBufferPointer { b in
            guard let base = b.baseAddress else { return -1 }
            return lws_write(wsi, base + pre, payload.count, kind)
        }
    }

    /// A WebSocket asked to close that could not write its close frame within `closeGraceSeconds` is
    /// dropped: lws closes the socket on its next timeout pass (within a second) and reports `CLOSED`,
    /// so the session ends however the peer behaves.
    func dropStuckClosings() {
        let now = EdgeClock.now()
        for ws in sockets.values where !ws.isClosed && !ws.dropRequested {
            guard let asked = ws.closeRequestedAt, now - asked >= options.closeGraceSeconds else { continue }
            ws.dropRequested = true
            lws_set_timeout(ws.wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC)
        }
    }

    func key(_ wsi: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(wsi))) }
}

/// The ticker's C callback: finds the server, drops closing sockets past their grace, calls `onTick`.
private func edgeTick(_ user: UnsafeMutableRawPointer?) {
    guard let user else { return }
    let server = Unmanaged<EdgeServer>.fromOpaque(user).takeUnretainedValue()
    server.dropStuckClosings()
    server.onTick?()
}

/// lws's log lines, already rate-limited by `atrium_lws_log_install`, go to the server's logger.
private func edgeLogSink(_ user: UnsafeMutableRawPointer?, _ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let user, let line else { return }
    var text = String(cString: line)
    while text.last == "\n" { text.removeLast() }
    let server = Unmanaged<EdgeServer>.fromOpaque(user).takeUnretainedValue()
    server.logger.log(level & Int32(LLL_ERR) != 0 ? .error : .warn, "lws", [("line", text)])
}
