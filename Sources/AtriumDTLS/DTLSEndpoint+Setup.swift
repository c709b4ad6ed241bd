internal import AtriumSRTP
internal import COpenSSL

extension DTLSEndpoint {
    /// The largest record this side writes (application data: SCTP packets, within its path MTU).
    static let maximumSendFragment = 4096
    static let cipherSuites =
        "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305"

    /// A DTLS 1.2+ context with the certificate, `use_srtp` offering `options.profiles`, and a
    /// verify callback that accepts any certificate: trust comes from the SDP fingerprint, checked
    /// after the handshake (RFC 8827 section 6.5).
    static func makeContext(certificate: DTLSCertificate, options: DTLSOptions) throws(DTLSError)
        -> SSLContextHandle
    {
        guard let raw = SSL_CTX_new(DTLS_method()) else { throw .openSSL("SSL_CTX_new") }
        let context = SSLContextHandle(raw)
        guard atrium_ssl_ctx_set_min_proto_version(raw, atrium_dtls1_2_version()) == 1 else {
            throw .openSSL("SSL_CTX_set_min_proto_version")
        }
        // AEAD suites only (what browsers and aiortc offer first): the record check knows their
        // expansion. No renegotiation: one epoch per association.
        guard SSL_CTX_set_cipher_list(raw, Self.cipherSuites) == 1 else { throw .openSSL("SSL_CTX_set_cipher_list") }
        _ = SSL_CTX_set_options(raw, atrium_ssl_op_no_renegotiation())
        // No resumption (WebRTC peers make a new association each time): no tickets, and no session
        // cache, which a context shared by a worker's transports would fill with every handshake.
        _ = SSL_CTX_set_options(raw, atrium_ssl_op_no_ticket())
        _ = atrium_ssl_ctx_set_session_cache_off(raw)
        guard SSL_CTX_use_certificate(raw, certificate.certificate.pointer) == 1 else {
            throw .openSSL("SSL_CTX_use_certificate")
        }
        guard SSL_CTX_use_PrivateKey(raw, certificate.key.pointer) == 1 else {
            throw .openSSL("SSL_CTX_use_PrivateKey")
        }
        guard SSL_CTX_check_private_key(raw) == 1 else { throw .openSSL("SSL_CTX_check_private_key") }
        guard !options.profiles.isEmpty else { throw .invalidState("no SRTP profile to offer") }
        let names = options.profiles.map(\.openSSLName).joined(separator: ":")
        // Unlike most of OpenSSL, this one returns 0 on success.
        guard SSL_CTX_set_tlsext_use_srtp(raw, names) == 0 else { throw .openSSL("SSL_CTX_set_tlsext_use_srtp") }
        SSL_CTX_set_verify(raw, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT) { _, _ in 1 }
        return context
    }

    /// An `SSL` in the role's state with a memory read BIO (one datagram written per `receive`) and
    /// the datagram write BIO, an MTU that is never queried from a socket, and the timer callback.
    static func makeConnection(context: SSLContextHandle, role: DTLSRole, options: DTLSOptions) throws(DTLSError)
        -> SSLHandle
    {
        guard options.mtu >= 256, options.mtu <= 0xFFFF else { throw .invalidState("MTU \(options.mtu) out of range") }
        guard let raw = SSL_new(context.pointer) else { throw .openSSL("SSL_new") }
        let micro = options.initialRetransmitTimeout / .microseconds(1)
        let sink = DatagramSink(initialTimeoutMicroseconds: UInt32(max(1000, min(micro, 60_000_000))))
        let connection = SSLHandle(raw, sink: sink)
        guard let method = DatagramBIOMethod.shared, let writeBIO = method.makeBIO(sink: sink) else {
            throw .openSSL("BIO_meth_new")
        }
        guard let readBIO = BIO_new(BIO_s_mem()) else {
            BIO_free(writeBIO)
            throw .openSSL("BIO_new")
        }
        // An empty read BIO means "no datagram yet" (retry), not end of file.
        _ = atrium_bio_set_mem_eof_return(readBIO, -1)
        SSL_set_bio(raw, readBIO, writeBIO)
        atrium_ssl_set_no_query_mtu(raw)
        // SSL_CTRL_SET_MTU answers the MTU it set, or 0 below the minimum.
        guard atrium_ssl_set_mtu(raw, options.mtu) > 0 else { throw .openSSL("SSL_set_mtu") }
        // Records this side writes stay within a datagram (SCTP's packets are within its path MTU),
        // so the write buffer is sized for one, not for a 16 KiB record.
        guard atrium_ssl_set_max_send_fragment(raw, Self.maximumSendFragment) == 1 else {
            throw .openSSL("SSL_set_max_send_fragment")
        }
        DTLS_set_timer_cb(raw) { ssl, previous in dtlsTimerCallback(ssl, previous) }
        switch role {
        case .client: SSL_set_connect_state(raw)
        case .server: SSL_set_accept_state(raw)
        }
        return connection
    }
}
