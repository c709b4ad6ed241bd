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

/// The coordinator's commands, applied between rounds: transports, producers, consumers, recorders
/// and pipes made, updated and closed.
extension MediaEngine {
    // MARK: - Commands

    func apply(_ command: MediaCommand) {
        switch command {
        case .openTransport(let spec):
            guard transports[spec.id] == nil else { return }
            let ice = ICELiteAgent(
                localAddress: iceAddress,
                localCredentials: ICECredentials(ufrag: spec.localUfrag, password: spec.localPassword),
                remoteUfrag: spec.remote?.ufrag, remotePassword: spec.remote?.password, now: instant)
            let router = routers[spec.router] ?? Router(id: spec.router)
            routers[spec.router] = router
            let t = Transport(spec: spec, router: router, ice: ice, rtcpSSRC: random.nonzero32())
            transports[spec.id] = t
            router.transports[spec.id] = t
            byUfrag[spec.localUfrag] = t
            makeDTLS(t)
        case .updateTransport(let id, let remote, let ufrag, let password):
            guard let t = transports[id] else { return }
            update(t, remote: remote, ufrag: ufrag, password: password)
        case .closeTransport(let id):
            if let t = transports[id] { close(t) }
        case .closeRouter(let id):
            guard let router = routers[id] else { return }
            for t in router.transports.values { close(t) }
            routers[id] = nil
        case .reject(let id, let mids, let ssrcs):
            transports[id]?.listener.reject(mids: mids, ssrcs: ssrcs)
        case .addProducer(let spec):
            guard producers[spec.id] == nil, let t = transports[spec.transport] else { return }
            let p = Producer(spec: spec, transport: t, cache: config.keyFrameCache)
            producers[spec.id] = p
            t.router.producers[spec.id] = p
            t.listener.add(p)
            reportWanted(p)
        case .pauseProducer(let id, let paused):
            guard let p = producers[id], p.paused != paused else { return }
            p.paused = paused
            // A live stream's line shows the picture the share paused on.
            if paused { for sink in p.sinks { if let line = sink.line { capturePicture(line, of: p) } } }
            if !paused {
                if p.lastActivity != nil { p.lastActivity = now }
                for c in p.consumers { c.restart() }
                for sink in p.sinks { sink.restart() }
                requestKeyFrames(p)
            }
        case .closeProducer(let id):
            if let p = producers[id] { close(p) }
        case .addConsumer(let spec):
            guard consumers[spec.id] == nil, let p = producers[spec.producer], let t = transports[spec.transport]
            else { return }
            guard p.transport.router === t.router else {
                // The media layer's own check: another room's track is never forwarded.
                counters.consumersRefused += 1
                logger.warn("consumer refused: producer of another router", ("consumer", spec.id))
                return
            }
            let c = Consumer(spec: spec, producer: p, transport: t, random: &random)
            if spec.continuous, let k = t.continuations.removeValue(forKey: spec.ssrc) {
                c.continueOutput(k)
            }
            c.createdAt = now
            consumers[spec.id] = c
            t.router.consumers[spec.id] = c
            p.consumers.append(c)
            t.add(c)
            c.reselect(available: p.availableMask)
            reportWanted(p)
            // Started from the cached picture when there is one; else a key frame is asked for. Before
            // DTLS completes both wait for it (`handle(_:on:)`).
            if t.isSecure, let k = c.keyFrameStream { startViewer(c, stream: k) }
        case .setPreference(let id, let preference):
            guard let c = consumers[id], c.preference != preference else { return }
            c.preference = preference
            if let k = c.reselect(available: c.producer.availableMask) { switchLayer(c, to: k) }
            reportWanted(c.producer)
        case .closeConsumer(let id):
            if let c = consumers[id] {
                close(c, bye: true)
                reportWanted(c.producer)
            }
        case .allocate(let id, let allocation):
            if let t = transports[id] { allocate(t, allocation) }
        case .addRecorder(let spec): addRecorder(spec)
        case .closeRecorder(let id): closeRecorder(id: id)
        case .openRecorderLine(let spec): openLine(spec)
        case .closeRecorderLine(let id): closeLine(id: id)
        case .pipeProducer(let id, let link, let tag): pipeProducer(id: id, link: link, tag: tag)
        case .unpipe(let link): unpipe(link)
        case .restate(let id): restate(id)
        case .addPipeProducer(let spec, let router, let link, let tag):
            addPipeProducer(spec, router: router, link: link, tag: tag)
        case .sendData(let id, let lossy, let payload):
            if let t = transports[id] { sendData(payload, lossy: lossy, on: t) }
        }
    }

    /// The peer's latest description: ICE credentials (a restart when they changed), the DTLS peer (a
    /// new certificate means a new association), header extension ids.
    func update(_ t: Transport, remote: RemoteSpec, ufrag: String, password: String) {
        t.midExtensionID = remote.midExtensionID
        t.twccExtensionID = remote.transportWideCCExtensionID
        if t.session.remote == nil, !t.session.ice.validPairs.isEmpty, t.session.ice.state != .failed,
            t.session.ice.localCredentials.ufrag == ufrag
        {
            // Checks arrived before the answer (they need only our credentials): keep their pairs.
            t.session.ice.setRemoteCredentials(ufrag: remote.ufrag, password: remote.password)
        } else if t.session.remote == nil || t.session.ice.state == .failed {
            // The first answer (or one after the agent gave up): the agent starts waiting from now, not
            // from when the offer was made.
            byUfrag[t.session.ice.localCredentials.ufrag] = nil
            t.session.ice = ICELiteAgent(
                localAddress: iceAddress, localCredentials: ICECredentials(ufrag: ufrag, password: password),
                remoteUfrag: remote.ufrag, remotePassword: remote.password, now: instant)
            byUfrag[ufrag] = t
        } else if t.session.ice.remoteUfrag != remote.ufrag || t.session.ice.localCredentials.ufrag != ufrag {
            byUfrag[t.session.ice.localCredentials.ufrag] = nil
            t.session.ice.restart(
                localCredentials: ICECredentials(ufrag: ufrag, password: password), remoteUfrag: remote.ufrag,
                remotePwd: remote.password, now: instant)
            byUfrag[ufrag] = t
            t.session.iceGeneration += 1
            logger.info("ice restart", ("transport", t.label))
        }
        let newPeer = t.session.remote.map {
            $0.fingerprint != remote.fingerprint || $0.dtlsClient != remote.dtlsClient
        }
        let first = t.session.remote == nil
        t.session.remote = remote
        if first, let early = t.session.dtls, early.remoteFingerprint == nil {
            // The handshake began before the answer: check the peer's certificate now.
            if remote.dtlsClient {
                // The answer makes us the client after all: that handshake was not the peer's.
                t.session.dtls = nil
                t.session.dtlsAddress = nil
            } else {
                do {
                    try handle(
                        early.verify(
                            remoteFingerprint: DTLSFingerprint(hashFunction: "sha-256", digest: remote.fingerprint)),
                        on: t)
                } catch {
                    // The early handshake was not the answerer's (another peer answered the same offer
                    // first): a fresh association waits for the real one's ClientHello.
                    counters.dtlsFailures += 1
                    logger.warn("dtls failed", ("transport", t.label), ("error", "\(error)"))
                    t.session.dtls = nil
                    t.session.dtlsAddress = nil
                }
            }
        }
        if newPeer == true, let old = t.session.dtls {
            // Another RTCPeerConnection behind the same transport: a new DTLS association and SRTP keys.
            if let peer = t.session.peer { for d in old.close() { enqueue(d, to: peer) } }
            t.session.dtls = nil
            t.session.dtlsAddress = nil
            t.session.srtpIn = nil
            t.session.srtpOut = nil
            t.session.connected = false
            logger.info("dtls peer changed", ("transport", t.label))
        }
        if t.session.dtls == nil {
            makeDTLS(t)
            startDTLSIfClient(t)
        }
        // A later description that adds data channels to a connected transport.
        if remote.sctpPort != nil { startData(t) }
    }

    /// Ends a transport with everything on it; its router goes with its last transport.
    func close(_ t: Transport) {
        guard transports.removeValue(forKey: t.id) != nil else { return }
        stopData(t)
        for c in t.consumers { close(c, bye: false) }
        for p in t.listener.producers { close(p) }
        byUfrag = byUfrag.filter { $0.value !== t }
        for a in t.session.addresses where byAddress[a] === t {
            byAddress[a] = nil
            // Its ICE-TCP connections go with it (after the round in hand).
            if let c = tcpByAddress[a] { doom(c, .shutdown) }
        }
        if let dtls = t.session.dtls, let peer = t.session.peer { for d in dtls.close() { enqueue(d, to: peer) } }
        report(t, .closed)
        t.downlink.paced.removeAll()
        egress.pacing.removeAll { $0 === t }
        t.router.transports[t.id] = nil
        if t.router.transports.isEmpty, routers[t.router.id] === t.router { routers[t.router.id] = nil }
    }

    /// Ends a producer: its consumers end (their subscribers get RTCP BYE) and its mid and SSRCs count
    /// as ended (`Transport.remove`).
    func close(_ p: Producer) {
        forgetPipes(of: p)
        for c in p.consumers { close(c, bye: true) }
        p.consumers.removeAll()
        for sink in p.sinks {
            detach(sink)
            recorders[sink.spec.id] = nil
        }
        p.sinks.removeAll()
        p.transport.listener.remove(p)
        producers[p.spec.id] = nil
        p.transport.router.producers[p.spec.id] = nil
    }

    func close(_ c: Consumer, bye: Bool) {
        guard !c.closed else { return }
        c.closed = true
        stopReplay(c)
        if c.spec.continuous {
            c.transport.continuations[c.spec.ssrc] = c.continuation
        } else if bye {
            sendRTCP([.goodbye(Goodbye(sources: [c.spec.ssrc]))], on: c.transport)
        }
        c.producer.consumers.removeAll { $0 === c }
        c.transport.remove(c)
        consumers[c.spec.id] = nil
        c.transport.router.consumers[c.spec.id] = nil
    }
}
