import AtriumICE
import AtriumRTP
import AtriumUDP

/// A room spread over several media workers (mediasoup's pipe between routers, inside one
/// process). On the room's home worker a piped producer copies each packet it received, decrypted,
/// into the ring of every link to a far worker with its viewers (once per worker, not per viewer)
/// and wakes that worker once per receive batch. The far worker's pipe producer, on a pipe
/// transport of its own router for the room, runs each packet through the same forwarding path as a
/// local producer's (key-frame gate, layer selection, `SeqManager`, SRTP, `sendmmsg`); its viewers'
/// key-frame requests and wanted layers go home through the link's reverse ring.
extension MediaEngine {
    /// The slot of `rx` a piped packet is copied into before it is forwarded.
    static var pipeSlot: Int { 34 }

    // MARK: - Commands

    /// Home: starts handing producer `id`'s packets to `link`'s far worker, first the picture each
    /// piped stream's key-frame cache holds (its key frame and every packet since): the far pipe
    /// producer then has a picture for its first viewer and its own cache, even of a share whose
    /// sender answers no key-frame request, and the live packets follow on from it. A stream with no
    /// such picture has a key frame asked of its publisher here: the far side asks for none of a
    /// stream before the pipe has carried some of it.
    func pipeProducer(id: String, link: PipeLink, tag: UInt32) {
        // A pipe producer is piped on too: a publisher on an edge node reaches the owner's viewers
        // through a pipe producer there, and the other edges' through it.
        guard let p = producers[id], !p.pipes.contains(where: { $0.tag == tag }) else { return }
        p.pipes.append(PipeOutput(link: link, tag: tag))
        pipeTags[tag] = p
        if !pipesOut.contains(where: { $0 === link }) { pipesOut.append(link) }
        guard p.isVideo, !p.paused else { return }
        for k in p.streams.indices where !p.isSimulcast || k == 0 {
            startPipedStream(p, stream: k, link: link, tag: tag)
        }
        link.wakeFarIfPending()
    }

    /// Home: the first picture of stream `k` toward one far worker, from the cache, or else a key
    /// frame asked of the publisher.
    func startPipedStream(_ p: Producer, stream k: Int, link: PipeLink, tag: UInt32) {
        guard p.streams[k].cache.isServable(now: now) else {
            requestKeyFrameNow(p, stream: k)
            return
        }
        var header = PipePacket(kind: .rtp, tag: tag, stream: UInt8(truncatingIfNeeded: k))
        header.twccExtensionID = p.transport.twccExtensionID ?? 0
        for i in 0..<p.streams[k].cache.count {
            let pushed =
                p.streams[k].cache.withPacket(i) { slice in
                    slice.withUnsafeBytes { link.packets.push($0, header) }
                } ?? false
            if pushed {
                counters.pipePacketsOut += 1
                link.farPending = true
            } else {
                counters.drop(.pipeFull)
            }
        }
    }

    /// Far: a pipe producer on the room's pipe transport from `link.from`.
    func addPipeProducer(_ spec: ProducerSpec, router id: String, link: PipeLink, tag: UInt32) {
        guard producers[spec.id] == nil else { return }
        let key = "pipe/\(link.from)/\(id)"
        let t = transports[key] ?? makePipeTransport(key, router: id, link: link)
        var s = spec
        s.transport = key
        let p = Producer(spec: s, transport: t, cache: config.keyFrameCache)
        p.pipeInput = PipeInput(link: link, tag: tag)
        producers[s.id] = p
        t.router.producers[s.id] = p
        t.listener.add(p)
        pipeTags[tag] = p
        if !pipesIn.contains(where: { $0 === link }) { pipesIn.append(link) }
    }

    private func makePipeTransport(_ key: String, router id: String, link: PipeLink) -> Transport {
        let router = routers[id] ?? Router(id: id)
        routers[id] = router
        // Its agent never hears a check: the transport has no peer and is in no address table.
        let ice = ICELiteAgent(
            localAddress: iceAddress, localCredentials: ICECredentials(ufrag: key, password: key),
            remoteUfrag: nil, remotePassword: nil, now: instant)
        let t = Transport(
            spec: TransportSpec(
                id: key, router: id, label: "pipe/\(link.from)", localUfrag: key, localPassword: key, remote: nil),
            router: router, ice: ice, rtcpSSRC: random.nonzero32())
        t.pipe = link
        t.session.connected = true
        transports[key] = t
        router.transports[key] = t
        return t
    }

    /// A pipe ends: the producers that fed it stop, its pipe producers here forget it (they close with
    /// their room or owner), and neither ring is polled any more.
    func unpipe(_ link: PipeLink) {
        for p in producers.values where p.pipes.contains(where: { $0.link === link }) {
            for o in p.pipes where o.link === link && pipeTags[o.tag] === p { pipeTags[o.tag] = nil }
            p.pipes.removeAll { $0.link === link }
            // The layers that far side wanted are no longer asked of the publisher.
            reportWanted(p)
        }
        pipesOut.removeAll { $0 === link }
        pipesIn.removeAll { $0 === link }
    }

    /// A producer leaves the pipe tables with it.
    func forgetPipes(of p: Producer) {
        for o in p.pipes where pipeTags[o.tag] === p { pipeTags[o.tag] = nil }
        p.pipes.removeAll()
        if let i = p.pipeInput, pipeTags[i.tag] === p { pipeTags[i.tag] = nil }
    }

    // MARK: - Home side

    /// Hands `packet` (`rx[i]`'s, decrypted, an RTX repair restored, borrowed) to every far worker of
    /// `p` whose viewers want its stream: of a simulcast producer, only the streams some far viewer's
    /// preference asks for cross (the bottom one always), as the far worker last said.
    func pipe(_ packet: UnsafeRawBufferPointer, producer p: Producer, stream k: Int, recovered: Bool, on t: Transport) {
        var header = PipePacket()
        header.stream = UInt8(truncatingIfNeeded: k)
        header.recovered = recovered
        header.twccExtensionID = t.twccExtensionID ?? 0
        let bit: UInt8 = k < 8 ? 1 << UInt8(k) : 0
        for o in p.pipes where !p.isSimulcast || o.wanted & bit != 0 {
            header.tag = o.tag
            if o.link.packets.push(packet, header) {
                counters.pipePacketsOut += 1
                o.link.farPending = true
            } else {
                counters.drop(.pipeFull)
            }
        }
    }

    /// Hands a sender report of stream k to every far worker of `p` (their viewers' sender reports
    /// map its timeline to the wall clock as the home worker's do).
    func pipeSenderReport(_ p: Producer, stream k: Int) {
        var header = PipePacket()
        header.kind = .senderReport
        header.stream = UInt8(truncatingIfNeeded: k)
        header.ntp = p.streams[k].reportNTP ?? 0
        header.rtpTimestamp = p.streams[k].reportRTP
        for o in p.pipes {
            header.tag = o.tag
            if o.link.packets.push(UnsafeRawBufferPointer(start: nil, count: 0), header) {
                o.link.farPending = true
            } else {
                counters.drop(.pipeFull)
            }
        }
    }

    /// What a far worker's viewers asked: key frames (throttled as the home worker's own requests) and
    /// the streams they want (the publisher is told the union).
    func receiveFeedback(_ f: PipeFeedback) {
        guard let p = pipeTags[f.tag], let o = p.pipes.firstIndex(where: { $0.tag == f.tag }) else { return }
        switch f.kind {
        case .keyFrame(let k): requestKeyFrameNow(p, stream: k)
        case .wanted(let mask):
            let gained = mask & ~p.pipes[o].wanted
            p.pipes[o].wanted = mask
            reportWanted(p)
            guard gained != 0, p.isVideo, !p.paused else { return }
            for k in p.streams.indices where k < 8 && gained & (1 << UInt8(k)) != 0 {
                startPipedStream(p, stream: k, link: p.pipes[o].link, tag: f.tag)
            }
        }
    }

    // MARK: - Far side

    /// Forwards what the links brought (at most a ring's worth each, so a busy home cannot starve
    /// this worker's own socket), takes the feedback for the producers piped from here, and wakes the
    /// other side of every link pushed to.
    func drainPipes() {
        var any = false
        for link in pipesIn {
            var n = 0
            while n < link.packets.capacity, link.packets.pop({ receivePiped($0, $1) }) {
                n += 1
                if egress.isFull { flush() }
            }
            if n > 0 { any = true }
        }
        if any {
            drainPacers()
            flush()
        }
        for link in pipesOut {
            while let f = link.feedback.pop() { receiveFeedback(f) }
        }
        wakePipes()
    }

    /// Wakes the far worker of every outgoing link with new packets and the home worker of every
    /// incoming one with new feedback: one eventfd write per link and batch.
    func wakePipes() {
        // Every round: an empty array's `for ... in` still retains it.
        guard !pipesOut.isEmpty || !pipesIn.isEmpty else { return }
        for link in pipesOut { link.wakeFarIfPending() }
        for link in pipesIn { link.wakeHomeIfPending() }
    }

    func receivePiped(_ h: PipePacket, _ bytes: UnsafeRawBufferPointer) {
        guard let p = pipeTags[h.tag], p.pipeInput?.tag == h.tag else {
            counters.drop(.pipeUnknown)
            return
        }
        let k = Int(h.stream)
        guard p.streams.indices.contains(k) else {
            counters.drop(.malformed)
            return
        }
        let t = p.transport
        switch h.kind {
        case .senderReport:
            p.streams[k].reportNTP = h.ntp
            p.streams[k].reportRTP = h.rtpTimestamp
            p.lastActivity = now
            if !p.pipes.isEmpty { pipeSenderReport(p, stream: k) }
        case .rtp:
            let i = Self.pipeSlot
            rx[i].payload.removeAll(keepingCapacity: true)
            rx[i].payload.append(contentsOf: bytes)
            guard let header = try? RTPHeader(parsing: bytes) else {
                counters.drop(.malformed)
                return
            }
            // The stream's SSRC as the publisher sends it (learned at home from the mid and rid).
            if p.streams[k].ssrc != header.ssrc { p.streams[k].ssrc = header.ssrc }
            p.streams[k].pipeCarried = true
            t.twccExtensionID = h.twccExtensionID == 0 ? nil : h.twccExtensionID
            counters.pipePacketsIn += 1
            let length = bytes.count
            forward(
                i, on: t, producer: p, stream: k, sequence: header.sequenceNumber, timestamp: header.timestamp,
                headerInfo: header, recovered: h.recovered)
            // Received once, on the home worker: the far worker counts it as piped only.
            counters.packetsIn -= 1
            counters.bytesIn -= length
        }
    }

    /// A pipe producer's key-frame request goes home (the home worker throttles and sends the PLI).
    func pipeKeyFrameRequest(_ input: PipeInput, stream k: Int) {
        if input.link.feedback.push(PipeFeedback(tag: input.tag, kind: .keyFrame(stream: k))) {
            input.link.homePending = true
        } else {
            counters.drop(.pipeFull)
        }
    }

    /// A pipe producer's wanted streams go home when they changed. A stream dropped from them stops
    /// crossing; when it is wanted again its home sends its first picture.
    func pipeWanted(_ p: Producer, _ input: PipeInput, mask: UInt8) {
        guard mask != p.pipeWanted else { return }
        if input.link.feedback.push(PipeFeedback(tag: input.tag, kind: .wanted(mask: mask))) {
            for k in p.streams.indices where k < 8 && mask & (1 << UInt8(k)) == 0 { p.streams[k].pipeCarried = false }
            p.pipeWanted = mask
            input.link.homePending = true
        } else {
            counters.drop(.pipeFull)
        }
    }
}
