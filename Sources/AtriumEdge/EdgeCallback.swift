import AtriumHTTP
internal import CWebSockets

#if canImport(Glibc)
    import Glibc
#endif

/// The lws protocol callback. lws calls it on the service thread for every event on every connection;
/// it finds the `EdgeServer` through the context's user pointer and dispatches.
func edgeCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?, _ len: Int
) -> Int32 {
    guard let wsi, let ctx = lws_get_context(wsi), let raw = lws_context_user(ctx) else {
        return lws_callback_http_dummy(wsi, reason, user, input, len)
    }
    let server = Unmanaged<EdgeServer>.fromOpaque(raw).takeUnretainedValue()
    return server.dispatch(wsi, reason, user, input, len)
}

extension EdgeServer {
    func dispatch(
        _ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
        _ input: UnsafeMutableRawPointer?, _ len: Int
    ) -> Int32 {
        switch reason {
        case LWS_CALLBACK_HTTP:
            let path = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "/"
            return beginHTTP(wsi, path: path)
        case LWS_CALLBACK_HTTP_BODY:
            guard let ex = exchanges[key(wsi)], ex.response == nil, let input else { return 0 }
            if ex.tooLarge || ex.request.body.count + len > options.maxBodyBytes {
                ex.tooLarge = true
                ex.request.body = []
            } else {
                ex.request.body.append(contentsOf: UnsafeRawBufferPointer(start: input, count: len))
            }
            return 0
        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            // lws also signals completion for requests answered before any body was read (a POST
            // without Content-Length, a refused chunked body): answer each request exactly once.
            guard let ex = exchanges[key(wsi)], ex.response == nil else { return 0 }
            if ex.tooLarge { return respond(wsi, ex, tooLarge(ex.request)) }
            return respond(wsi, ex, http.handle(ex.request))
        case LWS_CALLBACK_HTTP_WRITEABLE:
            return writeBody(wsi)
        case LWS_CALLBACK_CLOSED_HTTP:
            exchanges[key(wsi)] = nil
            return 0
        case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
            return connectionAccepted(wsi)
        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            let upgrade = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? ""
            return upgrade.lowercased() == "h2c" ? answerWithoutH2C(wsi) : 0
        case LWS_CALLBACK_RAW_ADOPT:
            // lws turns a CONNECT request into a raw tunnel bound to our protocol: answer 405 and close.
            var r = http.refuse(
                HTTPRequest(method: .GET, path: "*"), status: 405, code: "method_not_allowed",
                message: "CONNECT is not served")
            r.headers.append(("allow", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"))
            r.closeConnection = true
            rawReplies[key(wsi)] = Self.http1Bytes(r)
            lws_callback_on_writable(wsi)
            return 0
        case LWS_CALLBACK_RAW_WRITEABLE:
            guard let reply = rawReplies.removeValue(forKey: key(wsi)) else { return -1 }
            _ = lwsWrite(wsi, reply[...], LWS_WRITE_HTTP)
            return -1
        case LWS_CALLBACK_RAW_RX:
            return 0
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            // Once per protocol for each wake: the handler must be idempotent.
            onWake?()
            return 0
        case LWS_CALLBACK_RAW_CLOSE:
            rawReplies[key(wsi)] = nil
            return 0
        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            let path = header(wsi, WSI_TOKEN_GET_URI) ?? ""
            guard let handler = webSockets[path] else { return 1 }
            pendingUpgrades[key(wsi)] = (handler, queryArgs(wsi))
            return 0
        case LWS_CALLBACK_ESTABLISHED:
            guard let pending = pendingUpgrades.removeValue(forKey: key(wsi)) else { return -1 }
            // A WebSocket leaves the request deadline; its handler sets its own timers.
            lws_set_timer_usecs(wsi, -1)
            let ws = EdgeWebSocket(
                id: nextSocketID, query: pending.query, wsi: wsi,
                limits: .init(
                    messages: options.maxWebSocketQueue, bytes: options.maxWebSocketQueueBytes,
                    stallSeconds: options.webSocketStallSeconds),
                handler: pending.handler)
            nextSocketID += 1
            sockets[key(wsi)] = ws
            pending.handler.opened(ws)
            return 0
        case LWS_CALLBACK_RECEIVE:
            guard let ws = sockets[key(wsi)], let input else { return 0 }
            return receive(ws, UnsafeRawBufferPointer(start: input, count: len))
        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let ws = sockets[key(wsi)] else { return 0 }
            return writeWebSocket(ws)
        case LWS_CALLBACK_TIMER:
            guard let ws = sockets[key(wsi)] else { return requestDeadlinePassed(wsi) }
            if !ws.isClosed { ws.handler?.timerFired(ws) }
            return 0
        case LWS_CALLBACK_CLOSED:
            if let ws = sockets.removeValue(forKey: key(wsi)) {
                ws.isClosed = true
                ws.handler?.closed(ws)
            }
            return 0
        case LWS_CALLBACK_WSI_DESTROY:
            connectionDestroyed(wsi)
            exchanges[key(wsi)] = nil
            pendingUpgrades[key(wsi)] = nil
            rawReplies[key(wsi)] = nil
            if let ws = sockets.removeValue(forKey: key(wsi)) {
                ws.isClosed = true
                ws.handler?.closed(ws)
            }
            return 0
        default:
            return lws_callback_http_dummy(wsi, reason, user, input, len)
        }
    }

    /// Starts an HTTP exchange: reads the request head, refuses what cannot be read safely, and either
    /// answers at once or waits for the body.
    private func beginHTTP(_ wsi: OpaquePointer, path: String) -> Int32 {
        switch readHead(wsi, path: path) {
        case .refused(let request, let response, let headOnly):
            let ex = HTTPExchange(request: request)
            ex.headOnly = headOnly
            exchanges[key(wsi)] = ex
            return respond(wsi, ex, response)
        case .ready(let request, let headOnly, let length):
            let ex = HTTPExchange(request: request)
            ex.headOnly = headOnly
            exchanges[key(wsi)] = ex
            if length > 0 { return 0 }
            return respond(wsi, ex, http.handle(request))
        }
    }

    /// Reassembles fragmented messages (lws delivers a message in fragments) and enforces the size cap.
    private func receive(_ ws: EdgeWebSocket, _ data: UnsafeRawBufferPointer) -> Int32 {
        if lws_is_first_fragment(ws.wsi) != 0 {
            ws.inbound.removeAll(keepingCapacity: true)
            ws.inboundTooBig = false
        }
        if ws.inbound.count + data.count > options.maxWebSocketMessageBytes {
            ws.inboundTooBig = true
            ws.inbound = []
        } else if !ws.inboundTooBig {
            ws.inbound.append(contentsOf: data)
        }
        guard lws_is_final_fragment(ws.wsi) != 0, lws_remaining_packet_payload(ws.wsi) == 0 else { return 0 }
        if ws.inboundTooBig {
            ws.close(code: 1009, reason: "message larger than \(options.maxWebSocketMessageBytes) bytes")
            return 0
        }
        let message = ws.inbound
        ws.inbound = []
        ws.handler?.received(ws, message: message, binary: lws_frame_is_binary(ws.wsi) != 0)
        return 0
    }
}
