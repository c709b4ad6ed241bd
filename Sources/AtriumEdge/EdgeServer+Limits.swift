import AtriumHTTP
import AtriumLog
internal import CWebSockets

#if canImport(Glibc)
    import Glibc
#endif

/// What bounds a client's hold on the server: the connection caps checked when lws has
/// accepted a connection, and the request deadline, one lws timer per connection from its first byte
/// (or the end of the previous response on a keep-alive connection) to a complete request.
extension EdgeServer {
    /// A connection lws just accepted: counted against the caps, or answered 503 and closed.
    func connectionAccepted(_ wsi: OpaquePointer) -> Int32 {
        let address = peerAddress(wsi)
        let admission = limits.admit(address)
        guard admission == .admitted else {
            noteRefusal(admission, address)
            // Over TLS nothing can be written before the handshake: the connection is only closed.
            if options.tlsCertificatePath == nil {
                var r = http.refuse(
                    HTTPRequest(method: .GET, path: "*"), status: 503, code: "too_many_connections",
                    message: admission == .tooManyFromAddress
                        ? "more than \(limits.maxPerAddress) connections from this address"
                        : "the server holds its maximum of \(limits.maxTotal) connections")
                r.headers.append(("retry-after", "1"))
                r.closeConnection = true
                _ = writeRaw(wsi, r)
            }
            return -1
        }
        peers[key(wsi)] = address
        armRequestDeadline(wsi)
        return 0
    }

    /// lws destroys every connection it accepted through `WSI_DESTROY`, whatever closed it.
    func connectionDestroyed(_ wsi: OpaquePointer) {
        if let address = peers.removeValue(forKey: key(wsi)) { limits.release(address) }
    }

    /// (Re)starts the request clock of an HTTP connection.
    func armRequestDeadline(_ wsi: OpaquePointer) {
        lws_set_timer_usecs(wsi, lws_usec_t(options.requestTimeoutSeconds) * 1_000_000)
    }

    /// The request clock ran out: an incomplete request (head or body) or an idle keep-alive connection
    /// is answered 408 and closed; a response still being written is cut.
    func requestDeadlinePassed(_ wsi: OpaquePointer) -> Int32 {
        let ex = exchanges[key(wsi)]
        if ex?.response == nil {
            var r = http.refuse(
                ex?.request ?? HTTPRequest(method: .GET, path: "*"), status: 408, code: "request_timeout",
                message: "the request was not complete within \(options.requestTimeoutSeconds) s")
            r.closeConnection = true
            _ = writeRaw(wsi, r)
        }
        exchanges[key(wsi)] = nil
        deadlineClosures += 1
        return -1
    }

    private func peerAddress(_ wsi: OpaquePointer) -> String {
        var buf = [CChar](repeating: 0, count: 64)
        guard let p = lws_get_peer_simple(wsi, &buf, buf.count) else { return "?" }
        return String(cString: p)
    }

    /// One warning per 10 s at most, however many connections are refused (a flood must not flood the log).
    private func noteRefusal(_ admission: ConnectionLimits.Admission, _ address: String) {
        refusedConnections += 1
        let now = time(nil)
        guard now - lastRefusalLog >= 10 else { return }
        lastRefusalLog = now
        logger.warn(
            "connections refused", ("reason", admission == .tooManyFromAddress ? "per_address" : "total"),
            ("address", address), ("refused_so_far", String(refusedConnections)),
            ("open", String(limits.total)))
    }
}
