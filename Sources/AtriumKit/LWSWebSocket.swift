internal import CWebSockets
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A `SignalSocket` on libwebsockets' client: its own lws context, served by its own thread. Frames
/// to send wait in a queue the service thread drains when lws says the socket is writable;
/// `lws_cancel_service` wakes it from the caller's thread. A message that arrives in fragments is
/// put back together before it is reported.
public final class LWSWebSocket: SignalSocket, @unchecked Sendable {
    struct Shared {
        var outgoing: [[UInt8]] = []
        var closing = false
        var closed = false
    }

    /// Whether a `wss://` server's certificate may be self-signed (tests, a development server).
    public let allowSelfSigned: Bool
    let shared = Mutex(Shared())
    // Touched by the service thread only, once `open` has started it.
    var context: OpaquePointer?
    var wsi: OpaquePointer?
    var events: (@Sendable (SocketEvent) -> Void)?
    var partial: [UInt8] = []
    var reported = false
    var thread: pthread_t?
    var protocols: UnsafeMutablePointer<lws_protocols>?
    var strings: [UnsafeMutablePointer<CChar>] = []

    public init(allowSelfSigned: Bool = false) {
        self.allowSelfSigned = allowSelfSigned
    }

    deinit {
        for s in strings { free(s) }
        protocols?.deallocate()
    }

    func cString(_ s: String) -> UnsafePointer<CChar>? {
        guard let p = strdup(s) else { return nil }
        strings.append(p)
        return UnsafePointer(p)
    }

    public func open(url: String, events: @escaping @Sendable (SocketEvent) -> Void) throws(AtriumError) {
        guard context == nil else { throw AtriumError(code: "already_open", message: "the socket is already open") }
        guard let u = WebSocketURL(url) else {
            throw AtriumError(code: "invalid_url", message: "expected a ws:// or wss:// URL, got \(url)")
        }
        self.events = events
        lws_set_log_level(Int32(LLL_ERR), nil)
        let protos = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 2)
        protos.initialize(repeating: lws_protocols(), count: 2)
        protos[0].name = cString("atrium-client")
        protos[0].callback = lwsClientCallback
        protocols = protos
        var info = lws_context_creation_info()
        info.port = CONTEXT_PORT_NO_LISTEN
        info.protocols = UnsafePointer(protos)
        info.gid = -1
        info.uid = -1
        info.user = Unmanaged.passUnretained(self).toOpaque()
        if u.secure { info.options = UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT) }
        guard let ctx = lws_create_context(&info) else {
            throw AtriumError(code: "socket_failed", message: "libwebsockets could not create a client context")
        }
        context = ctx
        var ci = lws_client_connect_info()
        ci.context = ctx
        ci.address = cString(u.host)
        ci.port = Int32(u.port)
        ci.path = cString(u.path)
        ci.host = cString(u.host.contains(":") ? "[\(u.host)]" : u.host)
        ci.origin = ci.host
        ci.ietf_version_or_minus_one = -1
        ci.local_protocol_name = protos[0].name
        if u.secure {
            ci.ssl_connection = Int32(LCCSCF_USE_SSL.rawValue)
            if allowSelfSigned {
                ci.ssl_connection |=
                    Int32(LCCSCF_ALLOW_SELFSIGNED.rawValue)
                    | Int32(LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue)
            }
        }
        guard let w = lws_client_connect_via_info(&ci) else {
            lws_context_destroy(ctx)
            context = nil
            throw AtriumError(code: "socket_failed", message: "cannot connect to \(u.host):\(u.port)")
        }
        wsi = w
        // The service loop: until the connection ended; then the context goes.
        let retained = Unmanaged.passRetained(self)
        var t = pthread_t()
        let rc = pthread_create(
            &t, nil,
            { raw in
                if let raw { Unmanaged<LWSWebSocket>.fromOpaque(raw).takeRetainedValue().serve() }
                return nil
            }, retained.toOpaque())
        guard rc == 0 else {
            retained.release()
            throw AtriumError(code: "socket_failed", message: "cannot start the socket's thread")
        }
        pthread_detach(t)
    }

    func serve() {
        guard let ctx = context else { return }
        while !shared.withLock({ $0.closed }) {
            if lws_service(ctx, 0) < 0 { break }
        }
        lws_context_destroy(ctx)
        context = nil
        report(.closed(code: 1006, reason: "the connection ended"))
    }

    public func send(_ text: String) {
        let queued = shared.withLock { s -> Bool in
            guard !s.closing && !s.closed else { return false }
            s.outgoing.append(Array(text.utf8))
            return true
        }
        if queued, let ctx = context { lws_cancel_service(ctx) }
    }

    public func close() {
        shared.withLock { $0.closing = true }
        if let ctx = context { lws_cancel_service(ctx) }
    }

    /// Reports once: `.closed` is the last event.
    func report(_ e: SocketEvent) {
        guard !reported else { return }
        if case .closed = e { reported = true }
        events?(e)
    }

    func dispatch(
        _ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ input: UnsafeMutableRawPointer?, _ len: Int
    ) -> Int32 {
        switch reason {
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            report(.opened)
            if shared.withLock({ !$0.outgoing.isEmpty || $0.closing }) { lws_callback_on_writable(wsi) }
        case LWS_CALLBACK_CLIENT_RECEIVE:
            if let input, len > 0 { partial.append(contentsOf: UnsafeRawBufferPointer(start: input, count: len)) }
            if lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0 {
                report(.text(String(decoding: partial, as: UTF8.self)))
                partial.removeAll(keepingCapacity: true)
            }
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            if let w = self.wsi, shared.withLock({ !$0.outgoing.isEmpty || $0.closing }) {
                lws_callback_on_writable(w)
            }
        case LWS_CALLBACK_CLIENT_WRITEABLE:
            let (next, closing) = shared.withLock { s -> ([UInt8]?, Bool) in
                s.outgoing.isEmpty ? (nil, s.closing) : (s.outgoing.removeFirst(), false)
            }
            if let next {
                let pre = atrium_lws_pre()
                var buffer = [UInt8](repeating: 0, count: pre + next.count)
                buffer.replaceSubrange(pre..<(pre + next.count), with: next)
                let n = buffer[pre...].withUnsafeMutableBufferPointer { b in
                    b.baseAddress.map { lws_write(wsi, $0, next.count, LWS_WRITE_TEXT) } ?? -1
                }
                if n < next.count { return -1 }
                if shared.withLock({ !$0.outgoing.isEmpty || $0.closing }) { lws_callback_on_writable(wsi) }
            } else if closing {
                lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, nil, 0)
                return -1
            }
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            var code: UInt16 = 1005
            var text = ""
            if let input, len >= 2 {
                let b = UnsafeRawBufferPointer(start: input, count: len)
                code = UInt16(b[0]) << 8 | UInt16(b[1])
                text = String(decoding: b[2...], as: UTF8.self)
            }
            report(.closed(code: code, reason: text))
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            let why = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection failed"
            report(.closed(code: 1006, reason: why))
            self.wsi = nil
            shared.withLock { $0.closed = true }
        case LWS_CALLBACK_CLIENT_CLOSED:
            report(.closed(code: shared.withLock { $0.closing } ? 1000 : 1006, reason: ""))
            self.wsi = nil
            shared.withLock { $0.closed = true }
        default:
            break
        }
        return 0
    }
}

/// libwebsockets' protocol callback for the client: finds the socket through the context's user
/// pointer.
func lwsClientCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?, _ len: Int
) -> Int32 {
    guard let wsi, let ctx = lws_get_context(wsi), let raw = lws_context_user(ctx) else {
        return lws_callback_http_dummy(wsi, reason, user, input, len)
    }
    return Unmanaged<LWSWebSocket>.fromOpaque(raw).takeUnretainedValue().dispatch(wsi, reason, input, len)
}
