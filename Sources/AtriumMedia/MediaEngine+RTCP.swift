import AtriumDTLS
import AtriumICE
import AtriumLog
import AtriumRTP

#if canImport(Glibc)
    import Glibc
#endif

/// RTCP: feedback from subscribers (NACK, PLI, FIR, receiver reports) and the reports and requests the
/// server sends (receiver reports and REMB to publishers, PLI and NACK to publishers, sender reports to
/// subscribers), and the timers that drive them.
extension MediaEngine {
    func receiveRTCP(_ bytes: [UInt8], on t: Transport) {
        let packets: [RTCPPacket]
        do {
            packets = try RTCPCompound.parse(bytes)
        } catch {
            counters.drop(.malformed)
            return
        }
        for packet in packets {
            switch packet {
            case .senderReport(let sr):
                if let p = t.listener.producer(ssrc: sr.ssrc), let (k, _) = p.stream(ssrc: sr.ssrc) {
                    p.streams[k].stats.lastSR = UInt32(truncatingIfNeeded: sr.ntpTimestamp >> 16)
                    p.streams[k].stats.lastSRArrival = now
                    p.streams[k].reportNTP =
                        Double(sr.ntpTimestamp >> 32) + Double(sr.ntpTimestamp & 0xFFFF_FFFF) / 4_294_967_296
                    p.streams[k].reportRTP = sr.rtpTimestamp
                    // Activity only when the sender says it sent media since its last report (its RTP
                    // may have been lost on the way); the first report sets the count.
                    if let before = p.streams[k].reportOctets, before != sr.octetCount {
                        p.lastActivity = now
                    }
                    p.streams[k].reportOctets = sr.octetCount
                    if !p.pipes.isEmpty { pipeSenderReport(p, stream: k) }
                }
                receiveReports(sr.reports, on: t)
            case .receiverReport(let rr):
                receiveReports(rr.reports, on: t)
            case .nack(let nack):
                counters.nacksReceived += 1
                guard let c = t.consumersBySSRC[nack.sources.mediaSSRC], c.spec.nack else { continue }
                for s in nack.sequenceNumbers { retransmit(c, output: s) }
            case .pictureLossIndication(let pli):
                counters.plisReceived += 1
                if let c = t.consumersBySSRC[pli.sources.mediaSSRC] {
                    c.producer.requestKeyFrame(stream: c.keyFrameStream ?? c.currentStream)
                }
            case .fullIntraRequest(let fir):
                counters.firsReceived += 1
                for e in fir.entries {
                    if let c = t.consumersBySSRC[e.ssrc] {
                        c.producer.requestKeyFrame(stream: c.keyFrameStream ?? c.currentStream)
                    }
                }
            case .transportWideFeedback(let fb):
                receiveTransportFeedback(fb, on: t)
            case .receiverEstimatedMaximumBitrate(let remb):
                receiveREMB(remb, on: t)
            case .goodbye(let bye):
                // The publisher's sender for this SSRC stopped (RFC 3550 section 6.6).
                // A simulcast track ends when every stream it learned said so.
                for ssrc in bye.sources {
                    guard let p = t.listener.producer(ssrc: ssrc), let (k, _) = p.stream(ssrc: ssrc) else { continue }
                    p.byes |= 1 << k
                    let known = p.streams.indices.reduce(UInt8(0)) { p.streams[$1].ssrc == nil ? $0 : $0 | 1 << $1 }
                    if p.byes & known == known { producerEnded(p, .bye) }
                }
            default:
                break
            }
        }
    }

    /// Reports a producer whose sender stopped; the room decides (a share stops with
    /// `capture_ended`) and the reconcile closes it.
    func producerEnded(_ p: Producer, _ reason: ProducerEndReason) {
        // A pipe producer's end is its home worker's to report.
        guard !p.endReported, p.pipeInput == nil else { return }
        p.endReported = true
        events.append(.producerEnded(id: p.spec.id, reason: reason))
        logger.info("media producer ended", ("track", p.spec.id), ("reason", reason.rawValue))
    }

    /// A screen share's producer that sent something once and then neither RTP nor a sender report with
    /// an octet count that moved for `captureTimeout` while its transport was still heard from (paused shares are not checked: their
    /// time starts again on resume). A transport silent as a whole is a network or a client gone, which
    /// ICE consent decides: at `disconnected` (30 s) its shares end too (`now` infinite).
    func checkInactivity(_ p: Producer, now t0: Double) {
        guard p.spec.source == "screen_share", !p.paused, let last = p.lastActivity else { return }
        let transportAlive = t0 - p.transport.lastHeard < Self.transportSilence
        if t0 - last >= config.captureTimeout && (transportAlive || t0 == .infinity) {
            producerEnded(p, .inactive)
        }
    }

    /// A transport not heard from for this long is silent as a whole (consent checks come every few
    /// seconds at most, media far more often).
    static let transportSilence = 3.0

    /// Asks a publisher for a key frame now (a subscriber just became able to receive), unless one was
    /// asked for within the throttle interval: that one's key frame is on its way.
    func requestKeyFrameNow(_ p: Producer, stream k: Int) {
        guard p.isVideo, p.streams.indices.contains(k) else { return }
        let t0 = now
        guard let ssrc = p.streams[k].ssrc ?? (p.pipeInput == nil ? nil : 0), p.transport.isSecure,
            t0 - p.streams[k].lastKeyFrameRequest >= Producer.keyFrameRequestInterval
        else {
            p.requestKeyFrame(stream: k)
            return
        }
        sendPLI(p, stream: k, ssrc: ssrc, now: t0)
    }

    /// Key frames for every stream a consumer waits for (the first stream of a single-stream track
    /// when none does), at the next tick.
    func requestKeyFrames(_ p: Producer) {
        var any = false
        for c in p.consumers {
            if let k = c.keyFrameStream {
                p.requestKeyFrame(stream: k)
                any = true
            }
        }
        if !any && !p.isSimulcast { p.requestKeyFrame(stream: 0) }
    }

    /// A PLI to the publisher for one stream of its track (RFC 4585 section 6.3.1), noted for the
    /// throttle.
    func sendPLI(_ p: Producer, stream k: Int, ssrc: UInt32, now t0: Double) {
        p.streams[k].keyFrameWanted = false
        p.streams[k].lastKeyFrameRequest = t0
        if let input = p.pipeInput {
            // Asked of the home worker, which throttles and sends the PLI to the publisher; not before
            // the pipe carried some of the stream: its home is sending the picture it holds first (or
            // asked for one itself), and a sharer may answer no request.
            if p.streams[k].pipeCarried { pipeKeyFrameRequest(input, stream: k) }
            return
        }
        p.plisSent += 1
        counters.plisSent += 1
        p.streams[k].keyFrameRequested(now: t0)
        sendRTCP(
            [.pictureLossIndication(PictureLossIndication(senderSSRC: p.transport.rtcpSSRC, mediaSSRC: ssrc))],
            on: p.transport)
    }

    /// Round-trip time from a report block about one of our streams (RFC 3550 section 6.4.1), and the
    /// worst fraction lost the peer reports about them (section 6.4.1, "fraction lost"), for
    /// `network_quality`.
    func receiveReports(_ reports: [ReceptionReport], on t: Transport) {
        var worst: UInt8?
        for r in reports where t.consumersBySSRC[r.ssrc] != nil { worst = max(worst ?? 0, r.fractionLost) }
        if let worst { t.loss = Double(worst) / 256 }
        for r in reports where r.lastSenderReport != 0 && t.consumersBySSRC[r.ssrc] != nil {
            let middle = UInt32(truncatingIfNeeded: Self.ntpNow() >> 16)
            let delta = middle &- r.lastSenderReport &- r.delaySinceLastSenderReport
            if delta < 0x8000_0000 { t.rtt = Double(delta) / 65536 }
        }
    }

    /// The wall clock as a 64-bit NTP timestamp (RFC 5905: seconds since 1900, 32.32 fixed point).
    static func ntpNow() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let seconds = UInt64(ts.tv_sec) &+ 2_208_988_800
        let fraction = (UInt64(ts.tv_nsec) << 32) / 1_000_000_000
        return seconds << 32 | fraction
    }

    /// Every 20 ms: key-frame requests, NACKs, DTLS retransmissions; every second: reports, REMB,
    /// consent.
    func tick(_ t0: Double) {
        // Borrowed, by index: every 20 ms over every transport, without reference counting each.
        var n = 0
        while n < transportRefs.count {
            let ref = transportRefs[n]
            n += 1
            ref.with { tick($0, now: t0) }
        }
        advanceReplays()
        checkFreshStarts()
        fillLines()
        reportEstimates()
        drainPacers()
        startProbes()
        advanceProbes()
        if t0 - lastLevels >= 0.5 {
            lastLevels = t0
            var levels: [AudioLevel] = []
            for p in producers.values where p.levelCount > 0 && p.pipeInput == nil {
                levels.append(AudioLevel(producer: p.spec.id, dBov: p.levelSum / p.levelCount))
                p.levelSum = 0
                p.levelCount = 0
            }
            if !levels.isEmpty || reportedLevels { events.append(.audioLevels(levels)) }
            reportedLevels = !levels.isEmpty
        }
        guard t0 - lastSecond >= 1 else { return }
        let elapsed = lastSecond == 0 ? 1 : t0 - lastSecond
        lastSecond = t0
        let instant = self.instant
        holdForViewers(now: t0)
        for p in producers.values where p.isVideo {
            let hold = farthestViewerHold(p)
            for k in p.streams.indices {
                if hold > 0 { p.streams[k].buffer?.hold = hold }
                p.streams[k].framesPerSecond = Int((Double(p.streams[k].frames) / elapsed).rounded())
                p.streams[k].frames = 0
                p.streams[k].buffer?.trim(now: t0)
            }
        }
        reportLayers(elapsed: elapsed)
        if t0 - lastSparesTrim >= PictureSpares.trimInterval {
            lastSparesTrim = t0
            pictureSpares.trim()
        }
        for t in transports.values where t.pipe == nil {
            t.downlink.paced.trim(now: t0)
            perform(t.session.ice.tick(now: instant), on: t)
            guard t.isSecure else { continue }
            for p in t.listener.producers { checkInactivity(p, now: t0) }
            if !t.listener.producers.isEmpty { sendReceiverReports(t, elapsed: elapsed, now: t0) }
            if !t.consumers.isEmpty { sendSenderReports(t, now: t0) }
        }
    }

    /// Once a second: how long each viewer may still ask for a packet, from its round trip and the
    /// longest its packets waited in its pacer over the second (`RetransmissionBuffer.hold`).
    func holdForViewers(now t0: Double) {
        for t in transports.values where t.pipe == nil {
            // Read on every transport, so that a transport's next consumer starts from this second's.
            let peak = t.downlink.paced.takePeak()
            guard !t.consumers.isEmpty else { continue }
            let queued = t.downlink.estimating && peak > 0 ? Double(peak) * 8 / pacingRate(t, now: t0) : 0
            t.nackHold = RetransmissionBuffer.hold(rtt: t.rtt, queued: queued)
        }
    }

    /// How long `p`'s streams hold what they sent: the longest hold of its viewers on this worker (a far
    /// worker's viewers are answered by their own), for every layer (a viewer may step to another at
    /// any time); 0 with none.
    func farthestViewerHold(_ p: Producer) -> Double {
        var hold = 0.0
        for c in p.consumers where c.transport.pipe == nil { hold = max(hold, c.nackHold) }
        return hold
    }

    /// A transport's share of the 20 ms timer: DTLS retransmissions, key-frame requests and NACKs
    /// toward its publisher, transport-wide feedback.
    func tick(_ t: Transport, now t0: Double) {
        if let dtls = t.session.dtls, let wait = dtls.nextTimeout, wait <= .zero, let peer = t.session.peer {
            if let out = try? dtls.timeout() { for d in out { enqueue(d, to: peer) } }
        }
        guard t.isSecure else { return }
        // Checked first: a `for ... in` retains even an empty array (a subscriber's).
        if !t.listener.producers.isEmpty {
            for p in t.listener.producers {
                if p.isSimulcast { streamsChanged(p) }
                requestRepairs(p, on: t, now: t0)
            }
        }
        if t.twccExtensionID != nil && t0 - t.lastTransportFeedback >= 0.05 {
            t.lastTransportFeedback = t0
            let media = t.listener.producers.first?.streams.first?.ssrc ?? 0
            while let fb = t.twcc.feedback(senderSSRC: t.rtcpSSRC, mediaSSRC: media) {
                sendRTCP([.transportWideFeedback(fb)], on: t)
            }
        }
    }

    func requestRepairs(_ p: Producer, on t: Transport, now t0: Double) {
        for k in p.streams.indices {
            p.streams[k].checkAnswer(now: t0)
            guard let ssrc = p.streams[k].ssrc ?? (p.pipeInput == nil ? nil : 0) else { continue }
            if t0 - p.streams[k].lastKeyFrameRequest >= 1,
                p.consumers.contains(where: { $0.keyFrameStream == k && $0.transport.isSecure })
                    || (k == 0 && p.sinks.contains(where: \.waitingForKeyFrame))
            {
                p.streams[k].keyFrameWanted = true
            }
            if p.streams[k].keyFrameWanted && t0 - p.streams[k].lastKeyFrameRequest >= Producer.keyFrameRequestInterval
            {
                sendPLI(p, stream: k, ssrc: ssrc, now: t0)
            }
            guard p.isVideo, !p.streams[k].nacks.entries.isEmpty else { continue }
            let lost = p.streams[k].nacks.due(now: t0, interval: max(0.02, (t.rtt ?? 0.02) * 1.5))
            // A pipe producer's losses are the home worker's to repair.
            guard !lost.isEmpty, t.pipe == nil else { continue }
            p.nacksSent += 1
            counters.nacksSent += 1
            sendRTCP([.nack(GenericNACK(senderSSRC: t.rtcpSSRC, mediaSSRC: ssrc, lost: lost))], on: t)
        }
    }

    /// A receiver report for every producer of a publisher transport, with a REMB: while loss stays
    /// under 2 % the estimate is the larger of 1.5 times the received rate and 8 % more than the last
    /// one; it holds up to 10 % loss and drops towards the received rate above.
    func sendReceiverReports(_ t: Transport, elapsed: Double, now t0: Double) {
        var blocks: [ReceptionReport] = []
        var worst: UInt8 = 0
        var ssrcs: [UInt32] = []
        for p in t.listener.producers {
            for k in p.streams.indices {
                guard let ssrc = p.streams[k].ssrc, p.streams[k].stats.started else { continue }
                let r = p.streams[k].stats.report(ssrc: ssrc, now: t0)
                worst = max(worst, r.fraction)
                ssrcs.append(ssrc)
                blocks.append(
                    ReceptionReport(
                        ssrc: ssrc, fractionLost: r.fraction, cumulativeLost: r.lost,
                        extendedHighestSequence: p.streams[k].stats.extendedMax, jitter: r.jitter,
                        lastSenderReport: p.streams[k].stats.lastSR, delaySinceLastSenderReport: r.dlsr))
            }
        }
        guard !blocks.isEmpty else { return }
        let incoming = Double(t.bytesSinceReport * 8) / max(elapsed, 0.001)
        t.bytesSinceReport = 0
        let loss = Double(worst) / 256
        t.loss = loss
        if loss < 0.02 {
            // Headroom over what arrives, growing slowly beyond it: an encoder held back by the
            // estimate gets room to climb, one limited by its content is not pushed.
            t.estimate = min(Double(config.maxPublishBitrate), max(t.estimate * 1.08, incoming * 1.5))
        } else if loss > 0.10 {
            t.estimate = max(150_000, incoming * (1 - 0.5 * loss))
        }
        sendRTCP(
            [
                .receiverReport(ReceiverReport(ssrc: t.rtcpSSRC, reports: blocks)),
                .receiverEstimatedMaximumBitrate(
                    ReceiverEstimatedMaximumBitrate(senderSSRC: t.rtcpSSRC, bitrate: UInt64(t.estimate), ssrcs: ssrcs)),
            ], on: t)
    }

    /// A sender report for every consumer of a subscriber transport that has sent something.
    func sendSenderReports(_ t: Transport, now t0: Double) {
        let ntp = Self.ntpNow()
        var packets: [RTCPPacket] = []
        for c in t.consumers where c.packetsOut > 0 {
            let ticks = UInt32(truncatingIfNeeded: Int64((t0 - c.lastSentAt) * Double(c.producer.spec.clockRate)))
            packets.append(
                .senderReport(
                    SenderReport(
                        ssrc: c.spec.ssrc, ntpTimestamp: ntp, rtpTimestamp: c.lastTimestamp &+ ticks,
                        packetCount: UInt32(truncatingIfNeeded: c.packetsOut),
                        octetCount: UInt32(truncatingIfNeeded: c.bytesOut))))
            if packets.count == 16 {
                sendRTCP(packets, on: t)
                packets.removeAll()
            }
        }
        sendRTCP(packets, on: t)
    }
}
