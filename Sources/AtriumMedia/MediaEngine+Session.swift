import AtriumCongestion
import AtriumDTLS
import AtriumForwarding
import AtriumICE
import AtriumLog
import AtriumRTP
import AtriumSRTP
import AtriumSTUN
import AtriumUDP

#if canImport(Glibc)
    import Glibc
#endif

/// A transport's session with its peer as the worker drives it (`PeerSession`): ICE checks and the
/// pairs they validate, the DTLS handshake and the SRTP keys it yields, and SRTP and SRTCP decrypted
/// on the way in.
extension MediaEngine {
    // MARK: - ICE

    func receiveSTUN(_ bytes: [UInt8], from address: SocketAddress) {
        guard let message = try? STUNMessage(parsing: bytes) else {
            counters.drop(.malformed)
            return
        }
        counters.stunRequests += 1
        guard let username = message.usernameBytes, let colon = username.firstIndex(of: UInt8(ascii: ":")),
            let transport = byUfrag[String(decoding: username[..<colon], as: UTF8.self)]
        else {
            counters.drop(.unknownSource)
            return
        }
        let source = Self.stunAddress(address)
        let actions = transport.session.ice.receive(stun: message, from: source, now: instant)
        transport.lastHeard = now
        if transport.session.ice.validPairs.contains(source) && !transport.session.addresses.contains(address) {
            transport.session.addresses.insert(address)
            byAddress[address] = transport
            if transport.session.peer == nil { transport.session.peer = address }
            forgetStaleAddresses(of: transport)
        }
        perform(actions, on: transport)
    }

    /// A peer sending valid checks from ever new ports must not grow the address tables: they follow
    /// the agent's valid pairs (at most `maxValidPairs`), keeping the selected peer.
    func forgetStaleAddresses(of t: Transport) {
        guard t.session.addresses.count > t.session.ice.configuration.maxValidPairs else { return }
        for a in t.session.addresses
        where a != t.session.peer && !t.session.ice.validPairs.contains(Self.stunAddress(a)) {
            t.session.addresses.remove(a)
            if byAddress[a] === t { byAddress[a] = nil }
        }
    }

    func perform(_ actions: [ICEAction], on transport: Transport) {
        for action in actions {
            switch action {
            case .send(let bytes, let to):
                // A Binding error response (class 0b11, RFC 8489 section 5): a check refused.
                if bytes.count > 1 && bytes[0] == 0x01 && bytes[1] == 0x11 { counters.drop(.stunRejected) }
                enqueue(bytes, to: Self.socketAddress(to))
            case .selected(let a):
                let address = Self.socketAddress(a)
                transport.session.peer = address
                byAddress[address] = transport
                transport.session.addresses.insert(address)
                startDTLSIfClient(transport)
            case .disconnected:
                report(transport, .disconnected)
                // The peer is gone or cut off for the consent timeout: its screen shares are over.
                for p in transport.listener.producers where p.lastActivity != nil { checkInactivity(p, now: .infinity) }
            case .reconnected: report(transport, .connected)
            case .failed: report(transport, .failed)
            case .dropped: counters.drop(.stunRejected)
            }
        }
    }

    func report(_ t: Transport, _ state: MediaEvent.TransportState) {
        // A pipe transport is the engine's own, unknown to the coordinator.
        guard t.pipe == nil else { return }
        events.append(.transportState(id: t.id, state: state))
        logger.debug("media transport", ("transport", t.label), ("state", state.rawValue))
    }

    // MARK: - DTLS

    /// The worker's one DTLS context for its certificate (`DTLSContext`), made at the first transport.
    func sharedDTLSContext() throws(DTLSError) -> DTLSContext {
        if let dtlsContext { return dtlsContext }
        let made = try DTLSContext(certificate: certificate)
        dtlsContext = made
        return made
    }

    func makeDTLS(_ t: Transport) {
        guard let remote = t.session.remote, t.session.dtls == nil else { return }
        do {
            let endpoint = try DTLSEndpoint(
                role: remote.dtlsClient ? .client : .server, certificate: certificate,
                remoteFingerprint: DTLSFingerprint(hashFunction: "sha-256", digest: remote.fingerprint),
                context: try sharedDTLSContext())
            t.session.dtls = endpoint
            if !remote.dtlsClient { _ = try endpoint.start() }
        } catch {
            logger.warn("dtls setup failed", ("transport", t.label), ("error", "\(error)"))
        }
    }

    func startDTLSIfClient(_ t: Transport) {
        guard let dtls = t.session.dtls, dtls.role == .client, dtls.state == .idle, let peer = t.session.peer else {
            return
        }
        do {
            for d in try dtls.start() { enqueue(d, to: peer) }
        } catch {
            counters.dtlsFailures += 1
        }
    }

    func receiveDTLS(_ bytes: [UInt8], from address: SocketAddress) {
        guard let t = byAddress[address] else {
            counters.drop(.unknownSource)
            return
        }
        if t.session.dtls == nil, t.session.remote == nil, DTLSEndpoint.isClientHello(bytes) {
            // A subscriber's ClientHello on a checked ICE pair before its SDP answer reached us (the
            // WebSocket and UDP race): the peer is the DTLS client, so we are the server. The
            // fingerprint is checked when the answer arrives, before any media is sent.
            do {
                let early = try DTLSEndpoint(
                    role: .server, certificate: certificate, remoteFingerprint: nil, context: try sharedDTLSContext())
                _ = try early.start()
                t.session.dtls = early
                t.session.dtlsGeneration = t.session.iceGeneration
                t.session.dtlsAddress = address
            } catch {
                counters.dtlsFailures += 1
                return
            }
        }
        guard var dtls = t.session.dtls else {
            counters.drop(.unknownSource)
            return
        }
        if t.session.dtlsAddress == nil { t.session.dtlsAddress = address }
        // A ClientHello that starts a new association: after the handshake, from a peer that made a
        // new DTLS transport (a browser does when its BUNDLE transport was replaced, with new ICE
        // credentials; the old keys stay in use until it completes); on an association that failed;
        // or from another address than the handshake in progress (a second answerer of the same
        // offer, whose first never completed: the fingerprint decides which one is the peer).
        if dtls.role == .server, DTLSEndpoint.isClientHello(bytes),
            (dtls.state == .connected && t.session.iceGeneration != t.session.dtlsGeneration) || dtls.state == .failed
                || (dtls.state != .connected && address != t.session.dtlsAddress)
        {
            do {
                let fresh = try DTLSEndpoint(
                    role: .server, certificate: certificate,
                    remoteFingerprint: t.session.remote.map {
                        DTLSFingerprint(hashFunction: "sha-256", digest: $0.fingerprint)
                    },
                    context: try sharedDTLSContext()
                )
                _ = try fresh.start()
                t.session.dtls = fresh
                t.session.dtlsGeneration = t.session.iceGeneration
                t.session.dtlsAddress = address
                dtls = fresh
                logger.info("dtls restarted by the peer", ("transport", t.label))
            } catch {
                counters.dtlsFailures += 1
                return
            }
        }
        do {
            let out = try dtls.receive(bytes)
            for d in out.datagrams { enqueue(d, to: address) }
            if out.discarded > 0 { counters.drop(.dtlsInvalid) }
            try handle(out.events, on: t)
        } catch {
            counters.dtlsFailures += 1
            logger.warn("dtls failed", ("transport", t.label), ("error", "\(error)"))
        }
    }

    func handle(_ events: [DTLSEvent], on t: Transport) throws {
        for e in events {
            switch e {
            case .connected(let keys):
                t.session.srtpIn = try keys.inboundSession()
                t.session.srtpOut = try keys.outboundSession()
                t.session.connected = true
                counters.dtlsHandshakes += 1
                report(t, .connected)
                logger.info("media transport connected", ("transport", t.label), ("srtp", "\(keys.profile)"))
                for p in t.listener.producers { requestKeyFrames(p) }
                // A subscriber can decode nothing before a key frame: ask each publisher now, not on the
                // next periodic request.
                for c in t.consumers {
                    if let k = c.keyFrameStream { startViewer(c, stream: k) }
                }
                startData(t)
            case .closed:
                t.session.connected = false
                stopData(t)
                report(t, .closed)
            case .applicationData(let bytes): receiveData(bytes, on: t)
            }
        }
    }

    // MARK: - SRTP and SRTCP in

    func receiveSRTP(_ i: Int, from address: SocketAddress) {
        guard let t = transportRef(at: address) else {
            counters.drop(.unknownSource)
            return
        }
        t.with { t in
            guard let srtp = t.session.srtpInRef else {
                counters.drop(.unknownSource)
                return
            }
            srtp.with { receiveSRTP(i, on: t, srtp: $0) }
        }
    }

    /// An SRTP or SRTCP packet from the peer of `t`: decrypted in place, then handled.
    func receiveSRTP(_ i: Int, on t: Transport, srtp: SRTPSession) {
        let isRTCP = rx[i].payload.count > 1 && PacketDemultiplexer.isRTCP(secondByte: rx[i].payload[1])
        let length = rx[i].payload.count
        // Not a typed-throwing closure: through the stdlib's generic `withUnsafe...` one takes a heap
        // context in a debug build.
        let plain = rx[i].payload.withUnsafeMutableBytes { buf in
            (try? isRTCP ? srtp.unprotectRTCP(buf, length: length) : srtp.unprotect(srtp: buf, length: length)) ?? -1
        }
        guard plain >= 0 else {
            counters.drop(.srtp)
            return
        }
        rx[i].payload.removeLast(length - plain)
        t.lastHeard = now
        if isRTCP {
            counters.rtcpIn += 1
            receiveRTCP(rx[i].payload, on: t)
        } else {
            receiveRTP(i, on: t)
        }
    }
}
