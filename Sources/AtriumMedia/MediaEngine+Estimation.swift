import AtriumCongestion
import AtriumLog
import AtriumRTP
import AtriumUDP

/// Bandwidth estimation toward subscribers: every packet sent to a subscriber transport
/// that negotiated transport-cc carries a transport-wide sequence number (written over the
/// publisher's own element, renumbered, so nothing grows), and the subscriber's feedback drives a
/// trendline estimator and rate controller per transport, and the probe clusters' packets (tagged in
/// `SentPacket.cluster`) the probe estimator. The estimate goes to the coordinator (`MediaEvent.estimate`),
/// whose allocator fits the viewer's layers into it (`MediaEngine+Allocation`).
extension MediaEngine {
    /// The sent ring starts at 256 packets and doubles (up to 4096) when it would overwrite a packet
    /// sent within `sentRingHold`, which feedback may still report: a viewer of a few small streams
    /// keeps 5 KiB, not 72.
    static let sentRingFirst = 256
    static let sentRingMaximum = 4096
    static let sentRingHold = 2.0

    /// Writes the next transport-wide sequence number into the packet in `slot` (whose extension
    /// value at `range` is the publisher's), and notes when and how big it went and the probe cluster
    /// it belongs to (-1: none). Returns the number (-1 when the range cannot hold one).
    @discardableResult
    func numberForEstimation(slot: Int, range: Range<Int>, on t: Transport, cluster: Int16 = -1) -> Int32 {
        guard range.count == 2 else { return -1 }
        if t.downlink.sent.isEmpty {
            t.downlink.sent = [SentPacket](repeating: SentPacket(), count: Self.sentRingFirst)
            t.downlink.estimating = true
            t.downlink.rembEstimate = false
        }
        let seq = t.downlink.sendSequence
        t.downlink.sendSequence &+= 1
        egress.tx[slot].payload[range.lowerBound] = UInt8(seq >> 8)
        egress.tx[slot].payload[range.lowerBound + 1] = UInt8(seq & 0xFF)
        let t0 = now
        let i = SequenceTable.slot(
            seq, in: &t.downlink.sent, now: t0, hold: Self.sentRingHold, maximum: Self.sentRingMaximum)
        t.downlink.sent[i] = SentPacket(
            tag: Int32(seq), size: Int32(truncatingIfNeeded: egress.tx[slot].payload.count), cluster: cluster, at: t0)
        return Int32(seq)
    }

    /// A subscriber's transport-wide feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01):
    /// arrivals in send order to the trendline, the acknowledged rate every half second and the loss
    /// every second to the rate controller.
    func receiveTransportFeedback(_ fb: TransportWideFeedback, on t: Transport) {
        guard t.downlink.estimating else { return }
        let t0 = now
        // Arrival times in the receiver's clock: the reference (64 ms units) plus 250 us deltas.
        var arrival = Double(fb.referenceTime) * 0.064
        for p in fb.packets {
            let sent = SequenceTable.find(p.sequenceNumber, in: t.downlink.sent)
            guard let delta = p.delta else {
                if let sent {
                    t.downlink.feedbackLost += 1
                    probeFeedback(t, sent, arrived: nil, now: t0)
                }
                continue
            }
            arrival += Double(delta) * 0.000_25
            guard let sent else { continue }
            t.downlink.feedbackReceived += 1
            t.downlink.ackedBytes += Int(sent.size)
            _ = t.downlink.trend.packet(sent: sent.at, arrived: arrival)
            probeFeedback(t, sent, arrived: arrival, now: t0)
        }
        let last = t.downlink.lastRateUpdate ?? t0
        if t.downlink.lastRateUpdate == nil { t.downlink.lastRateUpdate = t0 }
        if t0 - last >= 0.5 {
            t.downlink.rate.update(
                signal: t.downlink.trend.signal, acknowledged: Double(t.downlink.ackedBytes * 8) / (t0 - last), now: t0)
            t.downlink.ackedBytes = 0
            t.downlink.lastRateUpdate = t0
        }
        if t0 - t.downlink.lastLossUpdate >= 1, t.downlink.feedbackReceived + t.downlink.feedbackLost > 0 {
            t.downlink.rate.update(
                loss: Double(t.downlink.feedbackLost) / Double(t.downlink.feedbackReceived + t.downlink.feedbackLost),
                now: t0)
            t.downlink.feedbackReceived = 0
            t.downlink.feedbackLost = 0
            t.downlink.lastLossUpdate = t0
        }
    }
}

extension MediaEngine {
    /// A reported packet (nil arrival: lost) of a probe cluster, if it belonged to one: the cluster's
    /// result, once it is complete, raises the estimate (if the rate controller takes it) and tells
    /// the probe controller what was learned.
    func probeFeedback(_ t: Transport, _ sent: SentPacket, arrived: Double?, now t0: Double) {
        let cluster = Int(sent.cluster)
        guard cluster >= 0,
            let probed = t.downlink.probeEstimator.packet(
                cluster: cluster, sent: sent.at, arrived: arrived, size: Int(sent.size),
                expectedBytes: t.downlink.probeCluster.cluster == cluster ? t.downlink.probeCluster.bytes : 0)
        else { return }
        let before = t.downlink.rate.estimate
        t.downlink.rate.probed(probed, now: t0)
        // A result the rate controller did not take (near a bottleneck) is no reason to probe further.
        t.downlink.probes.result(cluster: cluster, bitrate: min(probed, t.downlink.rate.estimate), now: t0)
        // About one a second per probed transport at most (the probe controller's pace).
        logger.debug(
            "probe result", ("transport", t.label), ("cluster", "\(cluster)"), ("measured", "\(probed.rounded())"),
            ("estimate_before", "\(before.rounded())"), ("estimate", "\(t.downlink.rate.estimate.rounded())"),
            ("capacity", "\(t.downlink.rate.capacity.map { $0.rounded() } ?? 0)"),
            ("bottleneck", "\(t.downlink.rate.bottleneckSuspected(now: t0))"))
    }
}

extension MediaEngine {
    /// A subscriber's REMB (draft-alvestrand-rmcat-remb): its own estimate of what reaches it, used
    /// when it negotiated no transport-wide feedback (a receiver that offers only `goog-remb`, as
    /// aiortc does): its reports added up over their SSRCs (`REMBEstimate`) are its estimate, which
    /// the allocator shares out (`reportEstimates`). Such a viewer is neither paced nor probed.
    func receiveREMB(_ remb: ReceiverEstimatedMaximumBitrate, on t: Transport) {
        guard !t.downlink.estimating, !t.consumers.isEmpty else { return }
        t.downlink.rembEstimate = true
        let t0 = now
        t.downlink.rembs.received(bitrate: Double(min(remb.bitrate, 1 << 40)), ssrcs: remb.ssrcs, now: t0)
        if let e = t.downlink.rembs.estimate(now: t0) { t.downlink.rate.received(e) }
    }

    /// Every tick: an estimate that moved by more than a tenth since the coordinator last heard of it
    /// is reported as what the allocator may fill: a transport-wide estimate less the headroom
    /// (`Allocator.transportWideShare`), a REMB viewer's as `REMBEstimate.forAllocation` reads it.
    func reportEstimates() {
        for t in transports.values where t.downlink.estimating || t.downlink.rembEstimate {
            let bottleneck = t.downlink.estimating && t.downlink.rate.bottleneckSuspected(now: now)
            if bottleneck != t.downlink.reportedBottleneck {
                t.downlink.reportedBottleneck = bottleneck
                events.append(.bottleneck(transport: t.id, suspected: bottleneck))
            }
            let e =
                t.downlink.estimating
                ? t.downlink.rate.estimate * Allocator.transportWideShare
                : t.downlink.rembs.forAllocation(remb: t.downlink.rate.estimate, needed: t.downlink.needed, now: now)
            if let last = t.downlink.reportedEstimate, abs(e - last) <= 0.1 * last { continue }
            t.downlink.reportedEstimate = e
            events.append(.estimate(transport: t.id, bitrate: e))
        }
    }
}
