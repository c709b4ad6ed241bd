internal import AtriumSRTP
internal import COpenSSL

/// One DTLS-SRTP association (RFC 5764, RFC 8827) as a state machine without sockets or clocks of
/// its own: the owner feeds it datagrams and timer expiries and sends what it returns. Built on
/// OpenSSL's DTLS 1.2 over a memory read BIO and a datagram-preserving write BIO.
///
/// Both sides accept any certificate during the handshake, as WebRTC certificates are self-signed;
/// once it completes, the peer's certificate must hash to the fingerprint signaled in its SDP, or
/// the endpoint fails with `fingerprintMismatch` and never hands out keys. A server may start
/// before it knows that fingerprint (a subscriber's ClientHello can arrive before its SDP answer):
/// the handshake then completes, and the keys come out of `verify(remoteFingerprint:)`.
///
/// Invalid records on an association are discarded silently (RFC 6347 section 4.1.2.7) and
/// counted in `DTLSOutput.discarded`; only an authenticated fatal alert or close_notify ends it.
///
/// Not thread-safe: an endpoint belongs to the worker that owns its transport.
public final class DTLSEndpoint {
    public enum State: Sendable, Equatable {
        case idle, handshaking, connected, closed, failed
    }

    public let role: DTLSRole
    /// The fingerprint from the peer's SDP; nil while a server waits for it.
    public private(set) var remoteFingerprint: DTLSFingerprint?
    public private(set) var state: State = .idle
    /// The keys of the completed handshake; nil before.
    public private(set) var keys: SRTPKeys?

    private let connection: SSLHandle
    /// OpenSSL finished the handshake; `state` turns `connected` once the fingerprint matched too.
    private var handshakeDone = false
    /// What records the established association accepts (set when the handshake completes).
    private var established: DTLSRecordCheck.Established?
    /// Reused for every `SSL_read`, so application data costs no buffer allocation per datagram; made
    /// at the first record after the handshake (a transport without data channels rarely has one).
    private var readBuffer: [UInt8] = []
    /// The owner's shared context this endpoint was made on; nil when it has its own.
    public let context: DTLSContext?
    /// The bytes of the application-data buffer (0 until the first record with data).
    public var applicationBufferBytes: Int { readBuffer.count }
    /// OpenSSL's record buffers (a 16 KiB read buffer and the write buffer, about 21 KiB together) are
    /// let go once the handshake is done and made again for a record in or out. A transport that
    /// carries only SRTP (no data channels) rarely sees one; the first application data keeps them.
    public private(set) var recordBuffersReleased = false
    /// Application data went one way or the other: the record buffers stay.
    private var carriesData = false

    /// The largest datagram accepted: a DTLS record is at most 2^14 + 2048 bytes of payload plus
    /// its header (RFC 6347 section 4.1), and UDP caps a datagram below 64 KiB.
    static let maximumDatagramLength = 0xFFFF

    /// - Parameters:
    ///   - certificate: this endpoint's identity, whose fingerprint went into the local SDP.
    ///   - remoteFingerprint: the peer's `a=fingerprint` from the remote SDP; nil for a server that
    ///     starts before it has the peer's SDP (a client always knows it).
    ///   - context: the owner's shared context for `certificate` and `options` (`DTLSContext`); nil
    ///     makes one for this endpoint alone.
    public init(
        role: DTLSRole, certificate: DTLSCertificate, remoteFingerprint: DTLSFingerprint?,
        options: DTLSOptions = DTLSOptions(), context: DTLSContext? = nil
    ) throws(DTLSError) {
        self.role = role
        guard role == .server || remoteFingerprint != nil else {
            throw .invalidState("a client needs the peer's fingerprint")
        }
        self.remoteFingerprint = remoteFingerprint
        self.context = context
        let shared: SSLContextHandle
        if let context {
            guard context.certificate === certificate, context.profiles == options.profiles else {
                throw .invalidState("the shared context is for another certificate or profiles")
            }
            shared = context.handle
        } else {
            shared = try Self.makeContext(certificate: certificate, options: options)
        }
        self.connection = try Self.makeConnection(context: shared, role: role, options: options)
    }

    /// Whether a datagram opens a handshake: a record of content type handshake (22), epoch 0, whose
    /// message is a ClientHello (1) (RFC 6347 sections 4.1 and 4.2.2). After a handshake completed, one
    /// means the peer started a new association.
    public static func isClientHello(_ datagram: [UInt8]) -> Bool {
        datagram.count > 13 && datagram[0] == 22 && datagram[3] == 0 && datagram[4] == 0 && datagram[13] == 1
    }

    /// Begins the handshake. A client returns its ClientHello flight; a server returns nothing and
    /// waits for one.
    public func start() throws(DTLSError) -> [[UInt8]] {
        guard state == .idle else { throw .invalidState("start() called in state \(state)") }
        state = .handshaking
        guard role == .client else { return [] }
        return try handshake().datagrams
    }

    /// Feeds one received datagram (already demultiplexed as DTLS, RFC 7983) and returns what to
    /// send and what happened. Malformed records never reach OpenSSL (`DTLSRecordCheck`); records it
    /// cannot authenticate are discarded (RFC 6347 section 4.1.2.7). Both are counted in
    /// `discarded`. A failed handshake fails the endpoint with a typed error; nothing traps.
    public func receive(_ datagram: [UInt8]) throws(DTLSError) -> DTLSOutput {
        guard datagram.count <= Self.maximumDatagramLength else { throw .datagramTooLarge(datagram.count) }
        switch state {
        case .idle:
            guard role == .server else { throw .invalidState("a client must start() before receiving") }
            state = .handshaking
        case .handshaking, .connected: break
        case .closed, .failed: return DTLSOutput()
        }
        guard !datagram.isEmpty else { return DTLSOutput() }
        if DTLSRecordCheck.problem(in: datagram, established: established) != nil { return DTLSOutput(discarded: 1) }
        ERR_clear_error()
        let written = datagram.withUnsafeBytes { bytes in
            BIO_write(SSL_get_rbio(connection.pointer), bytes.baseAddress, Int32(bytes.count))
        }
        guard written == Int32(datagram.count) else { throw .openSSL("BIO_write") }
        guard handshakeDone else { return try handshake() }
        // Reading makes the record buffers again if they were let go.
        recordBuffersReleased = false
        defer { releaseRecordBuffersIfIdle() }
        var output = try readApplicationData()
        // After the handshake a datagram that yields nothing, neither data nor an answer (OpenSSL
        // answers a retransmitted final flight), was discarded: a bad tag, a replay.
        if output.events.isEmpty && output.datagrams.isEmpty { output.discarded = 1 }
        return output
    }

    /// Supplies the peer's fingerprint to a server that started without it. When the handshake has
    /// completed already, checks the certificate now and returns `.connected` with the keys (or
    /// fails with `fingerprintMismatch`); otherwise the check happens when it completes.
    public func verify(remoteFingerprint fingerprint: DTLSFingerprint) throws(DTLSError) -> [DTLSEvent] {
        guard remoteFingerprint == nil else {
            guard remoteFingerprint == fingerprint else { throw .invalidState("fingerprint already set") }
            return []
        }
        remoteFingerprint = fingerprint
        guard handshakeDone, state == .handshaking else { return [] }
        return try finish()
    }

    /// How long until `timeout()` should be called, while OpenSSL's retransmission timer runs; nil
    /// when no flight awaits an answer. OpenSSL measures the interval with its own clock. Once the
    /// handshake is done no timer runs (both sides stop it at their last flight, and nothing
    /// renegotiates), so an established association answers without asking OpenSSL: its owner reads
    /// this for every transport on every tick.
    public var nextTimeout: Duration? {
        guard state == .handshaking, !handshakeDone else { return nil }
        let microseconds = atrium_dtls_get_timeout_us(connection.pointer)
        return microseconds < 0 ? nil : .microseconds(microseconds)
    }

    /// Retransmits the last flight if its timer expired (RFC 6347 section 4.2.4) and returns it.
    /// Calling it early is harmless: it returns nothing.
    public func timeout() throws(DTLSError) -> [[UInt8]] {
        guard state == .handshaking || state == .connected else { return [] }
        restoreRecordBuffers()
        defer { releaseRecordBuffersIfIdle() }
        ERR_clear_error()
        guard atrium_dtls_handle_timeout(connection.pointer) >= 0 else {
            state = .failed
            throw .handshakeFailed("retransmission limit reached: " + drainOpenSSLErrors())
        }
        return connection.sink.take()
    }

    /// Sends application data over the established association (for SCTP, RFC 8261).
    public func send(_ data: [UInt8]) throws(DTLSError) -> [[UInt8]] {
        guard state == .connected else { throw .invalidState("send() called in state \(state)") }
        guard !data.isEmpty else { return [] }
        guard data.count <= Self.maximumSendFragment else {
            throw .invalidState("\(data.count) bytes: a record carries at most \(Self.maximumSendFragment)")
        }
        carriesData = true
        restoreRecordBuffers()
        ERR_clear_error()
        let written = data.withUnsafeBytes { bytes in
            SSL_write(connection.pointer, bytes.baseAddress, Int32(bytes.count))
        }
        guard written == Int32(data.count) else {
            throw .connectionFailed("SSL_write: " + drainOpenSSLErrors())
        }
        return connection.sink.take()
    }

    /// Ends the association with close_notify (RFC 5246 section 7.2.1) and returns the alert.
    public func close() -> [[UInt8]] {
        defer { state = .closed }
        guard state == .handshaking || state == .connected else { return [] }
        restoreRecordBuffers()
        ERR_clear_error()
        _ = SSL_shutdown(connection.pointer)
        drainOpenSSLErrors()
        return connection.sink.take()
    }

    // MARK: - Handshake

    private func handshake() throws(DTLSError) -> DTLSOutput {
        let result = SSL_do_handshake(connection.pointer)
        var output = DTLSOutput(datagrams: connection.sink.take())
        guard result == 1 else {
            let error = SSL_get_error(connection.pointer, result)
            if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE {
                drainOpenSSLErrors()
                return output
            }
            state = .failed
            throw .handshakeFailed(drainOpenSSLErrors())
        }
        handshakeDone = true
        established = DTLSRecordCheck.Established(minimumProtectedLength: minimumProtectedLength())
        if remoteFingerprint != nil { output.events += try finish() }
        // Application data may have arrived in the same datagram as the last handshake message.
        let more = try readApplicationData()
        output.datagrams += more.datagrams
        output.events += more.events
        releaseRecordBuffersIfIdle()
        return output
    }

    /// Lets OpenSSL's record buffers go while the association carries no application data. Reading
    /// makes them again by itself (the next `SSL_peek`/`SSL_read`); writing does not (see
    /// `restoreRecordBuffers`).
    private func releaseRecordBuffersIfIdle() {
        guard handshakeDone, !carriesData, !recordBuffersReleased, state == .connected || state == .handshaking
        else { return }
        // Refused (0) while a record is half read or half written; the next call tries again.
        if SSL_free_buffers(connection.pointer) == 1 { recordBuffersReleased = true }
    }

    /// Makes the record buffers again before a write: OpenSSL 3.0's DTLS write path (`SSL_write`,
    /// `SSL_shutdown`'s alert, a timer's retransmission) writes into its buffer without making it, and
    /// after `SSL_free_buffers` that is a null pointer; its read path makes both first. A one-byte peek
    /// with nothing to read (every datagram's records were read when it came) makes them and returns
    /// "want read".
    private func restoreRecordBuffers() {
        guard recordBuffersReleased else { return }
        var probe: UInt8 = 0
        ERR_clear_error()
        _ = SSL_peek(connection.pointer, &probe, 1)
        drainOpenSSLErrors()
        recordBuffersReleased = false
    }

    /// The least a protected record of the negotiated cipher carries: explicit nonce and tag for
    /// AES-GCM (RFC 5288), the tag alone for ChaCha20-Poly1305 (RFC 7905). The context offers AEAD
    /// suites only.
    private func minimumProtectedLength() -> Int {
        guard let cipher = SSL_get_current_cipher(connection.pointer) else { return 24 }
        return SSL_CIPHER_get_cipher_nid(cipher) == NID_chacha20_poly1305 ? 16 : 24
    }

    /// The handshake is done and the fingerprint known: check it and hand out the keys.
    private func finish() throws(DTLSError) -> [DTLSEvent] {
        do {
            let keys = try completeHandshake()
            self.keys = keys
            state = .connected
            return [.connected(keys)]
        } catch {
            state = .failed
            throw error
        }
    }

    /// Checks the peer's fingerprint, then exports the SRTP keys for the negotiated profile.
    private func completeHandshake() throws(DTLSError) -> SRTPKeys {
        guard let remoteFingerprint else { throw .invalidState("no remote fingerprint") }
        guard let peer = SSL_get1_peer_certificate(connection.pointer) else { throw .noPeerCertificate }
        let certificate = X509Handle(peer)
        let actual = try DTLSFingerprint.of(certificate.pointer, hashFunction: remoteFingerprint.hashFunction)
        guard actual == remoteFingerprint else { throw .fingerprintMismatch }
        guard let selected = SSL_get_selected_srtp_profile(connection.pointer) else { throw .noSRTPProfile }
        let id = selected.pointee.id
        guard let profile = SRTPProfile.allCases.first(where: { UInt($0.dtlsProfileID) == id }) else {
            throw .unsupportedSRTPProfile(id)
        }
        let length = 2 * (profile.keyLength + profile.saltLength)
        var material = [UInt8](repeating: 0, count: length)
        let label = "EXTRACTOR-dtls_srtp"
        let exported = label.withCString { labelPointer in
            SSL_export_keying_material(
                connection.pointer, &material, length, labelPointer, label.utf8.count, nil, 0, 0)
        }
        guard exported == 1, material.count == length else { throw .keyExportFailed }
        defer { for i in material.indices { material[i] = 0 } }
        return SRTPKeys(profile: profile, material: material, role: role)
    }

    /// Reads every record the last datagram completed. OpenSSL answers retransmitted handshake
    /// flights from here too, so the returned datagrams can be non-empty.
    private func readApplicationData() throws(DTLSError) -> DTLSOutput {
        var output = DTLSOutput()
        let ssl = connection.pointer
        readLoop: while true {
            // A peek of one byte first: the read buffer is made only once application data came.
            var probe: UInt8 = 0
            var count = SSL_peek(ssl, &probe, 1)
            if count > 0 {
                if readBuffer.isEmpty { readBuffer = [UInt8](repeating: 0, count: 1 << 14) }
                count = readBuffer.withUnsafeMutableBytes { bytes in
                    SSL_read(ssl, bytes.baseAddress, Int32(bytes.count))
                }
            }
            if count > 0 {
                carriesData = true
                output.events.append(.applicationData(Array(readBuffer.prefix(Int(count)))))
                continue
            }
            switch SSL_get_error(connection.pointer, count) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                drainOpenSSLErrors()
                break readLoop
            case SSL_ERROR_SYSCALL where ERR_peek_error() == 0:
                // OpenSSL 3.0.19 reports a record it discarded (one too short to carry its cipher's
                // nonce and tag, for one) this way, with nothing queued, and the association goes on.
                // Earlier 3.0 releases answered WANT_READ.
                output.discarded = 1
                break readLoop
            case SSL_ERROR_ZERO_RETURN:
                state = .closed
                output.events.append(.closed)
                drainOpenSSLErrors()
                break readLoop
            default:
                state = .failed
                output.datagrams += connection.sink.take()
                throw .connectionFailed(drainOpenSSLErrors())
            }
        }
        output.datagrams += connection.sink.take()
        return output
    }
}

/// An `SSL_CTX` with one certificate and the SRTP profiles offered, made once and shared by the
/// endpoints of one owner (a media worker): each `SSL` only reads it. A context per endpoint held
/// about 30 KiB more per transport. Not thread-safe to share across owners' threads by contract:
/// each worker makes its own.
public final class DTLSContext {
    let handle: SSLContextHandle
    let certificate: DTLSCertificate
    let profiles: [SRTPProfile]

    public init(certificate: DTLSCertificate, options: DTLSOptions = DTLSOptions()) throws(DTLSError) {
        handle = try DTLSEndpoint.makeContext(certificate: certificate, options: options)
        self.certificate = certificate
        profiles = options.profiles
    }
}
