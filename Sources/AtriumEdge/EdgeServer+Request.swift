import AtriumHTTP
internal import CWebSockets

/// Reading a request head out of lws: the method, the headers Atrium uses, the query, the framing of
/// the body (with its refusals), and the `Upgrade: h2c` requests answered in HTTP/1.1.
extension EdgeServer {
    /// What the request head says: a request to handle once `bodyLength` bytes are read, or a refusal.
    enum RequestHead {
        case ready(HTTPRequest, headOnly: Bool, bodyLength: Int)
        case refused(HTTPRequest, HTTPResponse, headOnly: Bool)
    }

    /// `Upgrade: h2c` (HTTP/2 over cleartext, deprecated by RFC 9113 section 3.1) is not served: the
    /// request is answered in HTTP/1.1 as if the header were absent (RFC 9110 section 7.8 lets a server
    /// ignore Upgrade). lws only lets us answer here in one write, so a request with a body is refused
    /// `400 bad_request` and the connection closed; lws would otherwise switch to HTTP/2 and run the
    /// request with an empty body.
    func answerWithoutH2C(_ wsi: OpaquePointer) -> Int32 {
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
    func readHead(_ wsi: OpaquePointer, path: String) -> RequestHead {
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
            // A WHIP session's PATCH names its ETag (RFC 9725 section 4.3).
            ("if-match", WSI_TOKEN_HTTP_IF_MATCH),
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
        // lws does not de-chunk request bodies: refuse them before reading.
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

    func tooLarge(_ request: HTTPRequest) -> HTTPResponse {
        http.refuse(
            request, status: 413, code: "payload_too_large",
            message: "the request body exceeds \(options.maxBodyBytes) bytes")
    }

    static let methodTokens: [(lws_token_indexes, HTTPMethod)] = [
        (WSI_TOKEN_GET_URI, .GET), (WSI_TOKEN_POST_URI, .POST), (WSI_TOKEN_PUT_URI, .PUT),
        (WSI_TOKEN_PATCH_URI, .PATCH), (WSI_TOKEN_DELETE_URI, .DELETE), (WSI_TOKEN_OPTIONS_URI, .OPTIONS),
        (WSI_TOKEN_HEAD_URI, .HEAD),
    ]

    func requestMethod(_ wsi: OpaquePointer) -> HTTPMethod? {
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
}

extension String {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.first == set { s.removeFirst() }
        while s.last == set { s.removeLast() }
        return String(s)
    }
}
