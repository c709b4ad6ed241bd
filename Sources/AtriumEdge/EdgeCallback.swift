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

    /// What the request head says: a request to handle once `bodyLength` bytes are read, or a refusal.
    enum RequestHead {
        case ready(HTTPRequest, headOnly: Bool, bodyLength: Int)
        case refused(HTTPRequest, HTTPResponse, headOnly: Bool)
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

    /// `Upgrade: h2c` (HTTP/2 over cleartext, deprecated by RFC 9113 section 3.1) is not served: the
    /// request is answered in HTTP/1.1 as if the header were absent (RFC 9110 section 7.8 lets a server
    /// ignore Upgrade). lws only lets us answer here in one write, so a request with a body is refused
    /// `400 bad_request` and the connection closed; lws would otherwise switch to HTTP/2 and run the
    /// request with an empty body.
    private func answerWithoutH2C(_ wsi: OpaquePointer) -> Int32 {
        let path = requestMethod(wsi).flatMap { uriToken(of: $0) }.flatMap { header(wsi, $0) } ?? "/"
        var response: HTTPResponse
        var headOnly = false
        switch readHead(wsi, path: path) {
        case .refused(_, let r, let h):
            response = r
            headOnly = h
        case .ready(let request, let h, let length):
            headOnly = h
            if length > 0 {
                response = http.refuse(
                    request, status: 400, code: "bad_request",
                    message: "HTTP/2 is not served: send the request without Upgrade: h2c")
                response.closeConnection = true
            } else {
                response = http.handle(request)
            }
        }
        guard writeRaw(wsi, response, headOnly: headOnly), !response.closeConnection else { return -1 }
        // 1 tells lws the answer is written: it completes the transaction and keeps the connection.
        armRequestDeadline(wsi)
        return 1
    }

    private func uriToken(of method: HTTPMethod) -> lws_token_indexes? {
        Self.methodTokens.first { $0.1 == method }?.0
    }

    /// Reads the method, the headers Atrium uses and the query, and checks the framing of the body.
    private func readHead(_ wsi: OpaquePointer, path: String) -> RequestHead {
        guard let method = requestMethod(wsi) else {
            // A method lws parsed but we do not serve (CONNECT): answer 405 and close.
            var r = http.refuse(
                HTTPRequest(method: .GET, path: path), status: 405, code: "method_not_allowed",
                message: "this method is not served")
            r.closeConnection = true
            return .refused(HTTPRequest(method: .GET, path: path), r, headOnly: false)
        }
        var headers: [String: String] = [:]
        let tokens: [(String, lws_token_indexes)] = [
            ("authorization", WSI_TOKEN_HTTP_AUTHORIZATION), ("content-type", WSI_TOKEN_HTTP_CONTENT_TYPE),
            ("content-length", WSI_TOKEN_HTTP_CONTENT_LENGTH), ("origin", WSI_TOKEN_ORIGIN),
            ("transfer-encoding", WSI_TOKEN_HTTP_TRANSFER_ENCODING),
        ]
        for (name, token) in tokens {
            if let v = header(wsi, token) { headers[name] = v }
        }
        for name in ["access-control-request-method", "access-control-request-headers"] {
            if let v = customHeader(wsi, name) { headers[name] = v }
        }
        let request = HTTPRequest(
            method: method == .HEAD ? .GET : method, path: path, query: queryArgs(wsi),
            headers: headers)
        let headOnly = method == .HEAD
        // lws does not de-chunk request bodies (FACTS): refuse them before reading.
        if headers["transfer-encoding"] != nil {
            var r = http.refuse(
                request, status: 411, code: "length_required",
                message: "chunked request bodies are not accepted; send Content-Length")
            r.closeConnection = true
            return .refused(request, r, headOnly: headOnly)
        }
        var length = 0
        if let text = headers["content-length"] {
            length = Self.contentLength(text.trimmingCharacters(in: " ")) ?? -1
        }
        if length < 0 {
            var r = http.refuse(request, status: 400, code: "bad_request", message: "invalid Content-Length")
            r.closeConnection = true
            return .refused(request, r, headOnly: headOnly)
        }
        if length > options.maxDrainBytes {
            var r = tooLarge(request)
            r.closeConnection = true
            return .refused(request, r, headOnly: headOnly)
        }
        return .ready(request, headOnly: headOnly, bodyLength: length)
    }

    /// `Content-Length = 1*DIGIT` (RFC 9110 section 8.6): no sign, no spaces inside, at most 18 digits
    /// so the value always fits (a longer one reads as `Int.max`, far above every body limit).
    static func contentLength(_ text: String) -> Int? {
        let digits = Array(text.utf8)
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        guard digits.count <= 18 else { return .max }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    private func tooLarge(_ request: HTTPRequest) -> HTTPResponse {
        http.refuse(
            request, status: 413, code: "payload_too_large",
            message: "the request body exceeds \(options.maxBodyBytes) bytes")
    }

    static let methodTokens: [(lws_token_indexes, HTTPMethod)] = [
        (WSI_TOKEN_GET_URI, .GET), (WSI_TOKEN_POST_URI, .POST), (WSI_TOKEN_PUT_URI, .PUT),
        (WSI_TOKEN_PATCH_URI, .PATCH), (WSI_TOKEN_DELETE_URI, .DELETE), (WSI_TOKEN_OPTIONS_URI, .OPTIONS),
        (WSI_TOKEN_HEAD_URI, .HEAD),
    ]

    private func requestMethod(_ wsi: OpaquePointer) -> HTTPMethod? {
        Self.methodTokens.first { lws_hdr_total_length(wsi, $0.0) > 0 }?.1
    }

    func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let n = lws_hdr_total_length(wsi, token)
        guard n > 0 else { return nil }
        var buf = [CChar](repeating: 0, count: Int(n) + 1)
        guard lws_hdr_copy(wsi, &buf, Int32(buf.count), token) >= 0 else { return nil }
        return String(decoding: buf.prefix(Int(n)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A header lws has no token for (LWS_WITH_CUSTOM_HEADERS); `name` is lower-case, without the colon.
    func customHeader(_ wsi: OpaquePointer, _ name: String) -> String? {
        let key = name + ":"
        let klen = Int32(key.utf8.count)
        let n = lws_hdr_custom_length(wsi, key, klen)
        guard n > 0 else { return nil }
        var buf = [CChar](repeating: 0, count: Int(n) + 1)
        guard lws_hdr_custom_copy(wsi, &buf, Int32(buf.count), key, klen) >= 0 else { return nil }
        return String(decoding: buf.prefix(Int(n)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The query arguments, which lws splits at `&` and URL-decodes. The buffer holds the whole query,
    /// so that no argument is dropped for its length (an `access_token` over 8 KiB must reach the
    /// token check and be refused `malformed_token`, not vanish into an `auth_timeout`).
    func queryArgs(_ wsi: OpaquePointer) -> [(name: String, value: String)] {
        var out: [(name: String, value: String)] = []
        let total = Int(lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS))
        guard total > 0 else { return out }
        var buf = [CChar](repeating: 0, count: total + 1)
        var i: Int32 = 0
        while i < 64 {
            let n = lws_hdr_copy_fragment(wsi, &buf, Int32(buf.count), WSI_TOKEN_HTTP_URI_ARGS, i)
            if n < 0 { break }
            let frag = String(decoding: buf.prefix(Int(n)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let eq = frag.firstIndex(of: "=") {
                out.append((String(frag[..<eq]), String(frag[frag.index(after: eq)...])))
            } else if !frag.isEmpty {
                out.append((frag, ""))
            }
            i += 1
        }
        return out
    }

    /// Reassembles fragmented messages (FACTS: lws delivers fragments) and enforces the size cap.
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

extension String {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.first == set { s.removeFirst() }
        while s.last == set { s.removeLast() }
        return String(s)
    }
}
