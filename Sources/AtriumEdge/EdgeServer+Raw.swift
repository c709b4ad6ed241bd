import AtriumHTTP
internal import CWebSockets

/// Complete HTTP/1.1 responses written in one `lws_write` outside lws's response path: when a
/// connection is refused at accept, when a request misses its deadline, when a CONNECT was adopted as a
/// raw tunnel, and when an `Upgrade: h2c` request is answered in HTTP/1.1. The socket's send buffer
/// takes such a short answer whole; lws keeps any remainder and sends it before closing.
extension EdgeServer {
    static func statusText(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 426: "Upgrade Required"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }

    /// The status line, headers and (unless `headOnly`) body of `response`.
    static func http1Bytes(_ response: HTTPResponse, headOnly: Bool = false) -> [UInt8] {
        var head = "HTTP/1.1 \(response.status) \(statusText(response.status))\r\n"
        for (name, value) in response.headers { head += "\(name.lowercased()): \(value)\r\n" }
        if response.status != 204 && response.status != 304 { head += "content-length: \(response.body.count)\r\n" }
        if response.closeConnection { head += "connection: close\r\n" }
        head += "\r\n"
        return Array(head.utf8) + (headOnly ? [] : response.body)
    }

    /// Writes `response` whole on `wsi`; false when lws refused the write.
    func writeRaw(_ wsi: OpaquePointer, _ response: HTTPResponse, headOnly: Bool = false) -> Bool {
        lwsWrite(wsi, Self.http1Bytes(response, headOnly: headOnly)[...], LWS_WRITE_HTTP) >= 0
    }
}
