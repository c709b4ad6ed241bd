import AtriumLog
import AtriumRTP
import AtriumSRTP
import AtriumUDP

/// The send side (`Egress`): a forwarded packet's header rewritten in its send slot, paced or sealed
/// (numbered transport-wide, encrypted), and the batch flushed to the socket, ICE-TCP peers' datagrams
/// diverted to their connections first.
extension MediaEngine {

    /// Queues a datagram (copied into a preallocated slot); sends the batch when it is full.
    func enqueue(_ bytes: [UInt8], to address: SocketAddress) {
        if egress.isFull { flush() }
        egress.tx[egress.count].payload.removeAll(keepingCapacity: true)
        egress.tx[egress.count].payload.append(contentsOf: bytes)
        egress.tx[egress.count].address = address
        egress.count += 1
    }

    func flush() {
        guard egress.count > 0 else { return }
        if !tcpByAddress.isEmpty {
            divertToTCP()
            guard egress.count > 0 else { return }
        }
        guard let socket else {
            if case .memory(let m) = io { m.record(egress.tx[0..<egress.count]) }
            egress.count = 0
            return
        }
        do {
            let sent = try socket.send(egress.tx[0..<egress.count])
            if sent < egress.count {
                for _ in sent..<egress.count { counters.drop(.sendBufferFull) }
            }
            // Checked first: a `for ... in` retains even an empty array.
            if !socket.refusals.isEmpty {
                for r in socket.refusals {
                    counters.drop(.sendRefused)
                    byAddress[egress.tx[r.index].address]?.sendErrors += 1
                }
            }
            counters.udpMessages = socket.messagesSent
            counters.udpSegmentedDatagrams = socket.segmentedDatagrams
            if socket.segmentationFallbacks > counters.udpSegmentationFallbacks {
                counters.udpSegmentationFallbacks = socket.segmentationFallbacks
                logger.warn("the kernel refused UDP GSO; sending without it")
            }
        } catch {
            counters.sendFailures += 1
            if now - egress.lastSendFailureLog >= 10 {
                egress.lastSendFailureLog = now
                logger.warn("media send failed", ("error", "\(error)"))
            }
        }
        egress.count = 0
    }

    /// Encrypts an RTCP compound for a transport and queues it.
    func sendRTCP(_ packets: [RTCPPacket], on t: Transport) {
        guard let srtp = t.session.srtpOut, let peer = t.session.peer, !packets.isEmpty,
            var bytes = try? RTCPCompound.serialize(packets)
        else { return }
        do {
            try srtp.protectRTCP(&bytes)
        } catch {
            return
        }
        counters.rtcpOut += 1
        enqueue(bytes, to: peer)
    }

    /// Rewrites, strips or renumbers header extensions, encrypts and queues the packet in `slot`
    /// (video toward a paced subscriber may wait in its pacer first, unencrypted).
    func send(
        slot: Int, consumer c: Consumer, producer p: Producer, header: RTPHeader, srtp: SRTPSession,
        to peer: SocketAddress, fields: RTPPacketWriter.Rewrite
    ) -> Bool {
        var twccOffset: Int32 = -1
        do {
            try RTPPacketWriter.rewrite(&egress.tx[slot].payload, fields)
            // The publisher's transport-wide number is replaced by this transport's own (renumbered).
            let twccIn = p.transport.twccExtensionID
            let twccOut = c.transport.twccExtensionID
            if let twccIn, twccOut != nil, let r = header.extensionValueRange(id: twccIn, in: egress.tx[slot].payload),
                r.count == 2
            {
                twccOffset = Int32(r.lowerBound)
            }
            if let profile = header.extensionProfile {
                let audioIn = p.spec.audioLevelID
                let audioOut = c.spec.audioLevelID
                let absIn = p.spec.absSendTimeID
                let absOut = c.spec.absSendTimeID
                let ddIn = p.spec.dependencyDescriptorID
                let ddOut = c.spec.dependencyDescriptorID
                try RTPHeaderExtension.remapInPlace(
                    &egress.tx[slot].payload, range: header.extensionRange, profile: profile
                ) {
                    id in
                    if id == audioIn { return audioOut }
                    if id == absIn { return absOut }
                    if id == twccIn { return twccOut }
                    if id == ddIn { return ddOut }
                    return nil
                }
            }
        } catch {
            counters.drop(.malformed)
            return false
        }
        egress.tx[slot].address = peer
        let t = c.transport
        let plain = egress.tx[slot].payload.count
        c.packetsOut += 1
        c.bytesOut += plain
        p.packetsOut += 1
        p.bytesOut += plain
        if !pace(slot: slot, on: t, video: p.isVideo, twccOffset: twccOffset) { return true }
        return seal(slot: slot, on: t, srtp: srtp, twccOffset: twccOffset)
    }

    /// Appends `n` zero bytes (at most 256) to the packet in `slot`, from `zeros`: a buffer's bytes
    /// are copied at once (a `repeatElement` goes element by element through a generic iterator,
    /// which a debug build does not specialize and which then allocates per element), and neither
    /// allocated nor retained per packet (a slice of a static array is retained).
    func appendZeros(_ n: Int, to slot: Int) {
        let count = min(max(n, 0), egress.zeros.count)
        egress.tx[slot].payload.append(contentsOf: UnsafeRawBufferPointer(rebasing: egress.zeros[0..<count]))
    }

    /// Numbers (transport-wide), encrypts and counts the packet in `slot`, which joins the batch.
    func seal(slot: Int, on t: Transport, srtp: SRTPSession, twccOffset: Int32) -> Bool {
        if twccOffset >= 0 {
            // Media sent while a probe cluster is under way belongs to it (libwebrtc's way): the
            // padding only tops it up to the cluster's rate.
            let at = Int(twccOffset)
            let cluster = t.downlink.probing.map { Int16(truncatingIfNeeded: $0.cluster) } ?? -1
            if numberForEstimation(slot: slot, range: at..<at + 2, on: t, cluster: cluster) >= 0, cluster >= 0 {
                t.downlink.probing?.sentBytes += egress.tx[slot].payload.count
            }
        }
        let length = egress.tx[slot].payload.count
        appendZeros(SRTPSession.maximumTrailerLength, to: slot)
        // Not a typed-throwing closure: through the stdlib's generic `withUnsafe...` one takes a heap
        // context in a debug build.
        let protected = egress.tx[slot].payload.withUnsafeMutableBytes { buf in
            (try? srtp.protect(rtp: buf, length: length)) ?? -1
        }
        guard protected >= 0 else {
            counters.drop(.malformed)
            return false
        }
        egress.tx[slot].payload.removeLast(egress.tx[slot].payload.count - protected)
        egress.count += 1
        let bytes = egress.tx[slot].payload.count
        t.packetsOut += 1
        t.bytesOut += bytes
        counters.packetsOut += 1
        counters.bytesOut += bytes
        return true
    }
}
