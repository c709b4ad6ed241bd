internal import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// OpenSSL's client context (one `SSL_CTX`, freed in `deinit`): TLS 1.2 or later, peers verified
/// against the system's CA store.
final class TLSClientContext {
    let ctx: OpaquePointer

    init?() {
        guard let c = SSL_CTX_new(TLS_client_method()) else { return nil }
        ctx = c
        _ = atrium_ssl_ctx_set_min_proto_version(c, TLS1_2_VERSION)
        SSL_CTX_set_verify(c, SSL_VERIFY_PEER, nil)
        SSL_CTX_set_default_verify_paths(c)
    }

    deinit { SSL_CTX_free(ctx) }
}

/// One TLS connection over a connected non-blocking socket (its `SSL` freed in `deinit`); the
/// handshake runs in `init` within the deadline, checking the certificate against `host`.
final class TLSStream: ByteStream {
    private let ssl: OpaquePointer
    private let fd: Int32

    init(context: TLSClientContext, fd: Int32, host: String, deadline: Deadline) throws(HTTPClientError) {
        guard let s = SSL_new(context.ctx) else { throw .tls("SSL_new failed") }
        ssl = s
        self.fd = fd
        SSL_set_fd(s, fd)
        if Self.isIPLiteral(host) {
            // An address is checked against the certificate's IP SANs, and is never sent as SNI
            // (RFC 6066 section 3).
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s), host)
        } else {
            _ = atrium_ssl_set_tlsext_host_name(s, host)
            SSL_set1_host(s, host)
        }
        while true {
            let rc = SSL_connect(s)
            if rc == 1 { break }
            try step(rc, deadline: deadline, what: "handshake")
        }
    }

    deinit {
        SSL_shutdown(ssl)
        SSL_free(ssl)
    }

    static func isIPLiteral(_ host: String) -> Bool {
        host.contains(":") || (!host.isEmpty && host.allSatisfy { $0 == "." || $0.isNumber })
    }

    /// After a call returned `rc` <= 0: waits for the socket when OpenSSL wants it, else fails.
    private func step(_ rc: Int32, deadline: Deadline, what: String) throws(HTTPClientError) {
        let e = SSL_get_error(ssl, rc)
        switch e {
        case SSL_ERROR_WANT_READ: try HTTPClient.wait(fd, events: Int16(POLLIN), deadline: deadline)
        case SSL_ERROR_WANT_WRITE: try HTTPClient.wait(fd, events: Int16(POLLOUT), deadline: deadline)
        case SSL_ERROR_ZERO_RETURN: throw .closed
        default:
            let code = ERR_get_error()
            var buf = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buf, buf.count)
            let verify = SSL_get_verify_result(ssl)
            let detail =
                verify != X509_V_OK
                ? String(cString: X509_verify_cert_error_string(verify))
                : String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw .tls("\(what): \(detail)")
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer, deadline: Deadline) throws(HTTPClientError) -> Int {
        while true {
            let rc = SSL_write(ssl, bytes.baseAddress, Int32(clamping: bytes.count))
            if rc > 0 { return Int(rc) }
            try step(rc, deadline: deadline, what: "write")
        }
    }

    func read(_ into: UnsafeMutableRawBufferPointer, deadline: Deadline) throws(HTTPClientError) -> Int {
        while true {
            let rc = SSL_read(ssl, into.baseAddress, Int32(clamping: into.count))
            if rc > 0 { return Int(rc) }
            if SSL_get_error(ssl, rc) == SSL_ERROR_ZERO_RETURN { return 0 }
            try step(rc, deadline: deadline, what: "read")
        }
    }
}
