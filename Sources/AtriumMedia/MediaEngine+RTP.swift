import AtriumBytes
import AtriumForwarding
import AtriumRTP
import AtriumSRTP
import AtriumUDP

/// The forwarding path: a publisher's packet in, one rewritten and encrypted copy per consumer out.
extension MediaEngine {
    func receiveRTP(_ i: Int, on t: Transport) {
        guard let header = parseRTP(i, on: t) else { return }
        guard let (ref, k, isRTX) = producer(for: header, packet: i, on: t) else { return }
        ref.with { p in receiveRTP(i, on: t, producer: p, stream: k, header: header, isRTX: isRTX) }
    }

    /// A packet of stream `k` of `p`: an RTX one unwrapped to its original, then forwarded.
    func receiveRTP(_ i: Int, on t: Transport, producer p: Producer, stream k: Int, header: RTPHeader, isRTX: Bool) {
        if isRTX {
            // RFC 4588 section 4: the original sequence number leads the payload. Padding-only RTX
            // packets (bandwidth probes) carry none.
            let start = header.payloadRange.lowerBound
            guard header.payloadRange.count >= 2 else { return }
            let osn = UInt16(rx[i].payload[start]) << 8 | UInt16(rx[i].payload[start + 1])
            // A repair is a packet this server asked for and still waits for. Anything else is a
            // copy of one that arrived (a publisher's RTX padding, a second repair) or one given up
            // on: viewers have it, or ask this server for it. (Not the retransmission buffer: a
            // layer nobody watches holds nothing there.)
            if !p.streams[k].nacks.awaits(osn) {
                counters.drop(.duplicate)
                return
            }
            rx[i].payload.removeSubrange(start..<start + 2)
            guard let primary = p.streams[k].ssrc,
                (try? RTPPacketWriter.rewrite(
                    &rx[i].payload,
                    RTPPacketWriter.Rewrite(ssrc: primary, sequenceNumber: osn, payloadType: p.spec.payloadType)))
                    != nil
            else { return }
            forward(
                i, on: t, producer: p, stream: k, sequence: osn, timestamp: header.timestamp, headerInfo: header,
                recovered: true)
        } else {
            forward(
                i, on: t, producer: p, stream: k, sequence: header.sequenceNumber, timestamp: header.timestamp,
                headerInfo: header, recovered: false)
        }
    }

    /// Calls `body` with the bytes of the packet in `rx[i]`, read in place (no reference
    /// counting per received packet). Through a mutating access though nothing is written: a read of
    /// an array out of a class's storage copies it first, `withUnsafeBytes` too (a retain and a
    /// release), where a mutating access borrows the slot for the call (the array is not shared, so
    /// nothing is copied). While `body` runs, `rx` is not to be touched (a second access traps).
    @inline(__always)
    func withPacket<Result>(_ i: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        rx[i].payload.withUnsafeMutableBytes { body(UnsafeRawBufferPointer($0)) }
    }

    /// The header of the RTP packet in `rx[i]`, its transport-wide sequence number recorded. The
    /// packet is let go with this function, before an RTX packet is unwrapped in place.
    func parseRTP(_ i: Int, on t: Transport) -> RTPHeader? {
        withPacket(i) { parseRTP($0, on: t) }
    }

    func parseRTP(_ packet: UnsafeRawBufferPointer, on t: Transport) -> RTPHeader? {
        let header: RTPHeader
        do {
            header = try RTPHeader(parsing: packet)
        } catch {
            counters.drop(.malformed)
            return nil
        }
        if let id = t.twccExtensionID, let r = header.extensionValueRange(id: id, in: packet), r.count == 2 {
            let seq = UInt16(packet[r.lowerBound]) << 8 | UInt16(packet[r.lowerBound + 1])
            t.twcc.record(seq, at: Int64(now * 1_000_000))
        }
        return header
    }

    /// The producer and stream a packet belongs to, and whether it is RTX (the transport's
    /// `RtpListener`); a packet it drops is counted. Borrowed: a returned class reference is retained.
    func producer(for header: RTPHeader, packet i: Int, on t: Transport) -> (Borrowed<Producer>, Int, Bool)? {
        switch t.listener.find(header) ?? t.listener.bind(header, in: rx[i].payload, midExtensionID: t.midExtensionID) {
        case .found(let ref, let k, let rtx): return (ref, k, rtx)
        case .dropped(let reason):
            counters.drop(reason)
            return nil
        }
    }

    /// Forwards the packet in `rx[i]` (decrypted, an RTX repair restored), read in place.
    func forward(
        _ i: Int, on t: Transport, producer p: Producer, stream k: Int, sequence: UInt16, timestamp: UInt32,
        headerInfo: RTPHeader, recovered: Bool
    ) {
        withPacket(i) {
            forward(
                $0, on: t, producer: p, stream: k, sequence: sequence, timestamp: timestamp, headerInfo: headerInfo,
                recovered: recovered)
        }
    }

    /// Counts, buffers, caches and hands `packet` to the pipes, the consumers and the recorders. It
    /// is `rx`'s, borrowed: nothing here touches `rx`.
    func forward(
        _ packet: UnsafeRawBufferPointer, on t: Transport, producer p: Producer, stream k: Int, sequence: UInt16,
        timestamp: UInt32, headerInfo: RTPHeader, recovered: Bool
    ) {
        let length = packet.count
        let t0 = now
        p.packetsIn += 1
        p.bytesIn += length
        p.lastActivity = t0
        counters.packetsIn += 1
        counters.bytesIn += length
        t.bytesSinceReport += length
        t.packetsIn += 1
        t.bytesIn += length
        p.streams[k].packetsIn += 1
        p.streams[k].bytes += length
        p.streams[k].lastPacketAt = t0
        if headerInfo.marker { p.streams[k].frames += 1 }
        if p.availableMask & (1 << k) == 0 { streamsChanged(p) }
        if let gap = p.streams[k].stats.update(
            sequence: sequence, timestamp: timestamp, clockRate: p.spec.clockRate, now: t0), p.isVideo
        {
            p.streams[k].nacks.missed(from: gap.0, to: gap.1, now: t0)
        } else if recovered || p.isVideo {
            p.streams[k].nacks.arrived(sequence)
        }
        if let id = p.spec.audioLevelID, let r = headerInfo.extensionValueRange(id: id, in: packet), !r.isEmpty {
            p.levelSum += Int(packet[r.lowerBound] & 0x7F)
            p.levelCount += 1
        }
        let cacheable = p.isVideo && p.streams[k].cache.isEnabled
        let caching = cacheable && cachesPicture(p, stream: k)
        if p.paused {
            if cacheable { p.streams[k].cache.invalidate() }
            counters.drop(.paused)
            return
        }
        if !p.pipes.isEmpty { pipe(packet, producer: p, stream: k, recovered: recovered, on: t) }
        guard !p.consumers.isEmpty || cacheable || !p.sinks.isEmpty else { return }
        let recording = !p.sinks.isEmpty
        let info = classify(
            packet, producer: p, header: headerInfo, recovered: recovered,
            keyFrameNeeded: cacheable || (recording && p.sinks.contains(where: \.waitingForKeyFrame)))
        if p.isSimulcast {
            p.streams[k].measureKeyFrame(bytes: packet.count, timestamp: timestamp, starts: info.keyFrame)
            p.streams[k].countTemporal(info.vp8?.temporalLayer, bytes: length, marker: headerInfo.marker)
        }
        if caching {
            // Whether to let go of the picture is looked at only once it is older than a camera keeps
            // one: the rest of the time this costs a comparison.
            var keep = Double.infinity
            if let at = p.streams[k].cache.keyFrameAt, t0 - at > ViewerStart.cameraKeep {
                keep = cacheKeep(p, stream: k)
            }
            if p.streams[k].cache.store(
                packet, sequence: sequence, startsKeyFrame: info.keyFrame, now: t0, keepFor: keep,
                spares: &pictureSpares)
            {
                // Past its bound: a key frame refills it (throttled as every request).
                requestKeyFrameNow(p, stream: k)
            }
        }
        if cacheable && info.keyFrame {
            p.streams[k].noteKeyFrame(packet, media: info.media, codec: p.codec, now: t0)
            p.streams[k].keyFrameArrived(now: t0)
        }
        // By index: a `for ... in` over the array goes through the generic iterator, which a debug
        // build does not specialize and which then allocates per element. Borrowed: no reference
        // counting per consumer.
        // Only a packet some consumer was sent is held for retransmission: a layer nobody watches
        // (a camera's middle layer, a non-speaker's top one) holds no buffer, which `trim` returns.
        // (A far worker's viewers are answered from its pipe producer's own buffer.)
        var sent = false
        var j = 0
        while j < p.consumerRefs.count {
            let ref = p.consumerRefs[j]
            j += 1
            ref.with { c in
                // A consumer started from the cache takes the stream's packets from there until it
                // caught up.
                if c.replay != nil { return }
                if c.bandwidthPaused {
                    counters.drop(.bandwidth)
                    return
                }
                if deliver(
                    packet, to: c, producer: p, stream: k, info: info, header: headerInfo, sequence: sequence,
                    timestamp: timestamp, now: t0)
                {
                    sent = true
                }
            }
        }
        if sent { p.streams[k].buffer?.store(packet, sequence: sequence, now: t0) }
        if recording {
            record(packet, producer: p, stream: k, keyFrame: info.keyFrame, sequence: sequence, timestamp: timestamp)
        }
    }

    /// What the forwarding decisions need of a packet: whether it starts a key frame, its VP8
    /// descriptor (simulcast), its SVC layers (VP9, AV1), and where its media payload lies.
    struct PacketInfo {
        var keyFrame = false
        var vp8: VP8Descriptor?
        var svc: SVCPacket?
        var media: Range<Int>
    }

    func classify(
        _ packet: UnsafeRawBufferPointer, producer p: Producer, header: RTPHeader, recovered: Bool,
        keyFrameNeeded: Bool
    ) -> PacketInfo {
        let payload = header.payloadRange
        let media = recovered ? payload.lowerBound..<max(payload.lowerBound, payload.upperBound - 2) : payload
        var info = PacketInfo(media: media)
        guard let codec = p.codec else { return info }
        if p.isSVC {
            if codec == .vp9 {
                let d = VP9Descriptor(UnsafeRawBufferPointer(rebasing: packet[media]))
                if let d, let at = d.scalabilityOffset { learnLayers(p, packet, media, at) }
                info.svc = d.map(SVCPacket.init)
            } else {
                info.svc = dependencyLayers(p, packet, header)
            }
            info.keyFrame = info.svc?.keyPicture ?? false
            return info
        }
        if codec == .vp8 && p.isSimulcast {
            info.vp8 = VP8Descriptor(UnsafeRawBufferPointer(rebasing: packet[media]))
        }
        if keyFrameNeeded || p.isSimulcast || p.hasConsumerWaitingForKeyFrame {
            info.keyFrame = KeyFrame.starts(UnsafeRawBufferPointer(rebasing: packet[media]), codec: codec)
        }
        return info
    }

    /// Offers `packet` (`rx[i]`'s, borrowed) to one consumer: its layer decision, sequence and timestamp
    /// mapping, VP8 rewrite and marker, then encryption into the send batch. Returns whether it was
    /// sent (the viewer may ask for it again).
    @discardableResult
    func deliver(
        _ packet: UnsafeRawBufferPointer, to c: Consumer, producer p: Producer, stream k: Int, info: PacketInfo,
        header: RTPHeader, sequence: UInt16, timestamp: UInt32, now t0: Double
    ) -> Bool {
        // Before its DTLS completes a consumer admits nothing: it starts on the first key frame it
        // can actually send.
        guard let srtp = c.transport.session.srtpOutRef, let peer = c.transport.session.peer else {
            counters.drop(.notConnected)
            return false
        }
        return srtp.with {
            deliver(
                packet, to: c, producer: p, stream: k, info: info, header: header, sequence: sequence,
                timestamp: timestamp, now: t0, srtp: $0, peer: peer)
        }
    }

    /// `deliver` on a connected transport.
    func deliver(
        _ packet: UnsafeRawBufferPointer, to c: Consumer, producer p: Producer, stream k: Int, info: PacketInfo,
        header: RTPHeader, sequence: UInt16, timestamp: UInt32, now t0: Double, srtp: SRTPSession, peer: SocketAddress
    ) -> Bool {
        let admission: Consumer.Admission
        switch c.layering {
        case .simulcast:
            let vp8 = info.vp8
            admission = c.admit(
                stream: k, sequence: sequence, timestamp: timestamp, keyFrame: info.keyFrame,
                frameStart: vp8?.startsFrame ?? info.keyFrame, temporal: vp8?.temporalLayer.map(Int.init),
                layerSync: vp8?.layerSync ?? false, vp8: vp8, now: t0)
        case .svc:
            guard let d = info.svc else {
                counters.drop(.malformed)
                return false
            }
            admission = c.admit(
                svcSpatial: d.spatial, temporal: d.temporal, pictureStart: d.pictureStart, keyPicture: info.keyFrame,
                switchingUp: d.switchingUp, endOfFrame: d.endOfFrame, sequence: sequence, timestamp: timestamp,
                now: t0)
        case .simple:
            admission = c.admit(sequence: sequence, timestamp: timestamp, keyFrame: info.keyFrame, now: t0)
        }
        guard case .send(let outSeq, let outTS) = admission else {
            // Key frames are asked for when the consumer starts and re-asked every second
            // (`requestRepairs`), not per packet.
            if case .drop(let reason) = admission { counters.drop(reason) }
            return false
        }
        let length = packet.count
        if egress.isFull { flush() }
        let slot = egress.count
        egress.tx[slot].payload.removeAll(keepingCapacity: true)
        egress.tx[slot].payload.append(contentsOf: packet)
        var shifts: UInt32 = 0
        if let d = info.vp8, c.vp8 != nil {
            let media = info.media
            shifts =
                egress.tx[slot].payload.withUnsafeMutableBytes {
                    c.rewriteVP8(UnsafeMutableRawBufferPointer(rebasing: $0[media]), d)
                } ?? 0
        }
        let marked = c.svc != nil && c.endsPicture
        c.amend(outSeq) {
            $0.shifts = shifts
            $0.marked = marked
        }
        if injectedLoss() {
            // Lost as on the wire, after it was sent (rewritten and recorded): the viewer's NACK for
            // it is answered.
            counters.drop(.injectedLoss)
            return true
        }
        guard
            send(
                slot: slot, consumer: c, producer: p, header: header, srtp: srtp, to: peer,
                fields: RTPPacketWriter.Rewrite(
                    ssrc: c.spec.ssrc, sequenceNumber: outSeq, timestamp: outTS, payloadType: c.spec.payloadType,
                    marker: marked ? true : nil))
        else { return false }
        if c.firstSentAt == nil {
            c.firstSentAt = t0
            counters.firstFrame.observe(t0 - c.createdAt, fromCache: c.replay != nil)
        }
        c.lastTimestamp = outTS
        c.lastSentAt = t0
        let t = c.transport
        t.retransmission.earn(length)
        return true
    }

    /// An SVC stream's scalability structure (sent with key pictures): its spatial layers' sizes.
    /// When they changed, every consumer's selector is pointed again.
    func learnLayers(_ p: Producer, _ packet: UnsafeRawBufferPointer, _ media: Range<Int>, _ offset: Int) {
        guard let sizes = VP9Scalability.layers(UnsafeRawBufferPointer(rebasing: packet[media]), at: offset),
            sizes != p.svcLayers
        else { return }
        p.svcLayers = sizes
        for c in p.consumers { c.reselect(available: 1) }
    }

    /// An AV1 packet's layer by its dependency descriptor, learning the template structure a key
    /// frame carries; nil when the packet has no descriptor or names a template not known yet.
    func dependencyLayers(_ p: Producer, _ packet: UnsafeRawBufferPointer, _ header: RTPHeader) -> SVCPacket? {
        guard let id = p.spec.dependencyDescriptorID,
            let range = header.extensionValueRange(id: id, in: packet),
            let d = DependencyDescriptor(UnsafeRawBufferPointer(rebasing: packet[range]))
        else { return nil }
        if let s = d.structure, s != p.structure {
            p.structure = s
            let sizes =
                s.resolutions.isEmpty
                ? [LayerChoice.Size](repeating: LayerChoice.Size(width: 0, height: 0), count: s.spatialLayers)
                : s.resolutions
            if sizes != p.svcLayers {
                p.svcLayers = sizes
                for c in p.consumers { c.reselect(available: 1) }
            }
        }
        guard let layer = p.structure?.layer(templateID: d.templateID) else { return nil }
        return SVCPacket(
            spatial: layer.spatial, temporal: layer.temporal, pictureStart: d.startOfFrame && layer.spatial == 0,
            keyPicture: d.structure != nil && d.startOfFrame && layer.spatial == 0, switchingUp: false,
            endOfFrame: d.endOfFrame)
    }

    enum Retransmission { case sent, missing, refused }

    /// Answers a subscriber's NACK for one of its sequence numbers from the producer's buffer, as RTX
    /// when the subscriber negotiated it.
    ///
    /// NACK storms make congestion worse: a sequence number is answered at most once per round trip
    /// (counted from when its last copy left the pacer), and retransmissions stay within the
    /// transport's budget (`RetransmissionBudget.share` of its media) and its pacer's
    /// (`pacerTakesRetransmission`); what is refused is counted.
    func retransmit(_ c: Consumer, output: UInt16) {
        guard let srtp = c.transport.session.srtpOut, let peer = c.transport.session.peer,
            let record = c.record(output), case let (input, k) = (record.input, Int(record.stream)),
            c.producer.streams.indices.contains(k), let buffer = c.producer.streams[k].buffer
        else {
            counters.retransmissionMisses += 1
            return
        }
        let t = c.transport
        // A simulcast viewer waiting for a key frame (it left its stream at a step down), or asking
        // for a packet of a higher stream it left: the repair would only take the room of the key
        // frame it waits for.
        if let s = c.selector, s.current == nil || k > c.currentStream {
            counters.drop(.otherLayer)
            t.retransmission.refused += 1
            return
        }
        let t0 = now
        // A copy may still wait in the pacer: the round trip counts from when it leaves.
        let queued = t.downlink.estimating ? Double(t.downlink.paced.bytes) * 8 / pacingRate(t, now: t0) : 0
        if record.retransmittedAt >= 0 && t0 - record.retransmittedAt < max(0.02, t.rtt ?? 0.1) + queued {
            counters.drop(.retransmissionRepeat)
            t.retransmission.refused += 1
            return
        }
        func resend(_ packet: UnsafeRawBufferPointer) -> Retransmission {
            guard t.retransmission.allowance >= packet.count, pacerTakesRetransmission(t, bytes: packet.count) else {
                counters.drop(.retransmissionBudget)
                t.retransmission.refused += 1
                return .refused
            }
            _ = t.retransmission.spend(packet.count)
            c.amend(output) { $0.retransmittedAt = t0 }
            guard let header = try? RTPHeader(parsing: packet) else { return .missing }
            if egress.isFull { flush() }
            let txSlot = egress.count
            egress.tx[txSlot].payload.removeAll(keepingCapacity: true)
            // Sent again as it was sent first: its timestamp, marker and VP8 rewrite.
            var fields = RTPPacketWriter.Rewrite(
                ssrc: c.spec.ssrc, sequenceNumber: output, timestamp: record.timestamp,
                payloadType: c.spec.payloadType, marker: record.marked ? true : nil)
            var media = header.payloadRange
            if let rtxPT = c.spec.rtxPayloadType, let rtxSSRC = c.spec.rtxSSRC {
                media = media.lowerBound + 2..<media.upperBound + 2
                let split = header.payloadRange.lowerBound
                egress.tx[txSlot].payload.append(contentsOf: packet[0..<split])
                egress.tx[txSlot].payload.appendBigEndian(output)
                egress.tx[txSlot].payload.append(contentsOf: packet[split...])
                fields.ssrc = rtxSSRC
                fields.payloadType = rtxPT
                fields.sequenceNumber = c.rtxSequence
                c.rtxSequence &+= 1
            } else {
                egress.tx[txSlot].payload.append(contentsOf: packet)
            }
            if c.vp8 != nil, media.upperBound <= egress.tx[txSlot].payload.count {
                let shift = record.shifts
                egress.tx[txSlot].payload.withUnsafeMutableBytes { raw in
                    let m = UnsafeMutableRawBufferPointer(rebasing: raw[media])
                    if let d = VP8Descriptor(UnsafeRawBufferPointer(m)) {
                        VP8Rewriter.apply(
                            m, d, pictureOffset: UInt16(truncatingIfNeeded: shift >> 8),
                            tl0Offset: UInt8(truncatingIfNeeded: shift))
                    }
                }
            }
            return send(
                slot: txSlot, consumer: c, producer: c.producer, header: header, srtp: srtp, to: peer,
                fields: fields) ? .sent : .missing
        }
        // The buffer holds what its viewers may still ask for (`RetransmissionBuffer.hold`); a viewer
        // started from the cache may ask for older packets.
        let outcome: Retransmission =
            buffer.withPacket(input, resend)
            ?? c.producer.streams[k].cache.withPacket(sequence: input) { $0.withUnsafeBytes(resend) } ?? .missing
        switch outcome {
        case .sent: counters.retransmissions += 1
        case .missing: counters.retransmissionMisses += 1
        case .refused: break
        }
    }
}
