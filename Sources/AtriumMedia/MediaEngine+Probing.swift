import AtriumBytes
import AtriumCongestion
import AtriumSRTP
import AtriumUDP

/// A probe cluster being sent: padding at `bitrate` from `start` for the controller's duration.
struct ProbeInProgress {
    var cluster: Int
    var bitrate: Double
    var start: Double
    var duration: Double
    var sentBytes = 0
    var packets = 0
}

/// Probing a subscriber's path for more bandwidth: while its allocation is held below what
/// its tracks would take by the estimate (`ProbeController`), clusters of padding-only RTP on one of
/// its video consumers' RTX SSRC are sent at twice the estimate for 40 ms (longer at low rates: 16
/// packets at least, `ProbeController.minimumPackets`). They carry the transport's
/// own sequence numbers and are tagged with their cluster, so its feedback measures what the path
/// carried (`ProbeBitrateEstimator`) and the estimate jumps there instead of creeping up by 8 % a
/// second. A receiver drops padding-only RTX after counting it for its feedback.
extension MediaEngine {
    /// RTP padding carries its own length in its last byte: at most 255 bytes.
    static let probePadding = 240
    /// A cluster is never fewer packets than the probe estimator needs to judge it.
    static let probeMinimumPackets = 6

    /// Every tick, after the pacers have sent what they may: starts the probes that are due, toward
    /// transports whose pacer holds nothing or has held packets for a while (`ProbeController`'s
    /// `queuedSince`). A packet waiting in the pacer says the link is used up to the pacing rate, and a
    /// cluster sent then goes on top of it into the bottleneck's queue: behind 250 kbit/s with a
    /// 30-packet queue, that queue overflowed when probes did not wait at all.
    func startProbes() {
        let t0 = now
        for t in transports.values where t.downlink.estimating && t.downlink.probing == nil && t.isSecure {
            t.downlink.queuedSince = t.downlink.paced.isEmpty ? nil : (t.downlink.queuedSince ?? t0)
            guard let wanted = t.downlink.wanted, probeCarrier(t) != nil else { continue }
            // The allocation's figures are in shares of the estimate (`Allocator.transportWideShare`):
            // the estimate they need is that much higher.
            let share = Allocator.transportWideShare
            if let probe = t.downlink.probes.probe(
                estimate: t.downlink.rate.estimate, wanted: wanted / share,
                needed: t.downlink.needed.map { $0 / share },
                takenFrom: t.downlink.rate.probeTakenFrom(now: t0), queuedSince: t.downlink.queuedSince,
                overusing: t.downlink.trend.signal == .overusing, now: t0)
            {
                t.downlink.probeCluster = (probe.cluster, Int(probe.bitrate / 8 * probe.duration))
                t.downlink.probing = ProbeInProgress(
                    cluster: probe.cluster, bitrate: probe.bitrate, start: t0, duration: probe.duration)
            }
        }
    }

    /// The consumer whose RTX SSRC carries the padding: a video consumer that has sent something.
    func probeCarrier(_ t: Transport) -> Consumer? {
        t.consumers.first {
            $0.producer.isVideo && $0.spec.rtxSSRC != nil && $0.spec.rtxPayloadType != nil && $0.packetsOut > 0
        }
    }

    /// Sends what the clusters in progress owe by now (called every loop round and tick).
    func advanceProbes() {
        guard isProbing else { return }
        let t0 = now
        for t in transports.values {
            guard var p = t.downlink.probing else { continue }
            guard let c = probeCarrier(t), let srtp = t.session.srtpOut, let peer = t.session.peer,
                let id = t.twccExtensionID
            else {
                t.downlink.probing = nil
                continue
            }
            let elapsed = t0 - p.start
            let due = Int(p.bitrate / 8 * min(elapsed + 0.005, p.duration))
            while p.sentBytes < due || (elapsed >= p.duration && p.packets < Self.probeMinimumPackets) {
                guard sendPadding(on: t, carrier: c, extensionID: id, srtp: srtp, to: peer, cluster: p.cluster)
                else { break }
                p.sentBytes += Self.probePadding + 20
                p.packets += 1
            }
            t.downlink.probing = elapsed >= p.duration ? nil : p
        }
    }

    /// One padding-only RTP packet (RFC 3550 section 5.1: P set, the last byte the padding's length)
    /// on the carrier's RTX SSRC with the transport-wide sequence number extension.
    func sendPadding(
        on t: Transport, carrier c: Consumer, extensionID: UInt8, srtp: SRTPSession, to peer: SocketAddress,
        cluster: Int
    ) -> Bool {
        guard let ssrc = c.spec.rtxSSRC, let pt = c.spec.rtxPayloadType else { return false }
        if egress.isFull { flush() }
        let slot = egress.count
        let seq = c.rtxSequence
        c.rtxSequence &+= 1
        let ts = c.lastTimestamp
        egress.tx[slot].payload.removeAll(keepingCapacity: true)
        // V=2, P, X; then the RFC 8285 one-byte header with one element of two bytes and a pad byte.
        egress.tx[slot].payload.append(0xB0)
        egress.tx[slot].payload.append(pt & 0x7F)
        egress.tx[slot].payload.appendBigEndian(seq)
        egress.tx[slot].payload.appendBigEndian(ts)
        egress.tx[slot].payload.appendBigEndian(ssrc)
        egress.tx[slot].payload.appendBigEndian(UInt32(0xBEDE_0001))
        egress.tx[slot].payload.append((extensionID & 0x0F) << 4 | 1)
        appendZeros(3, to: slot)
        appendZeros(Self.probePadding - 1, to: slot)
        egress.tx[slot].payload.append(UInt8(Self.probePadding))
        numberForEstimation(slot: slot, range: 17..<19, on: t, cluster: Int16(truncatingIfNeeded: cluster))
        let length = egress.tx[slot].payload.count
        appendZeros(SRTPSession.maximumTrailerLength, to: slot)
        do {
            let protected = try egress.tx[slot].payload.withUnsafeMutableBytes { buf throws(SRTPError) in
                try srtp.protect(rtp: buf, length: length)
            }
            egress.tx[slot].payload.removeLast(egress.tx[slot].payload.count - protected)
        } catch {
            return false
        }
        egress.tx[slot].address = peer
        egress.count += 1
        t.downlink.probeBytes += egress.tx[slot].payload.count
        t.packetsOut += 1
        t.bytesOut += egress.tx[slot].payload.count
        counters.packetsOut += 1
        counters.bytesOut += egress.tx[slot].payload.count
        return true
    }
}
