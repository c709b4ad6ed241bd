import AtriumCongestion
import AtriumLog
import AtriumRTP
import AtriumUDP

/// Bandwidth estimation toward subscribers: every packet sent to a subscriber transport
/// that negotiated transport-cc carries a transport-wide sequence number (written over the
/// publisher's own element, renumbered, so nothing grows), and the subscriber's feedback drives a
/// trendline estimator and rate controller per transport, and the probe clusters' packets (tagged in
/// `sentCluster`) the probe estimator. The estimate goes to the coordinator (`MediaEvent.estimate`),
/// whose allocator fits the viewer's layers into it (`MediaEngine+Allocation`).
extension MediaEngine {
    static let sentRing = 4096

    /// Writes the next transport-wide sequence number into the packet in `slot` (whose extension
    /// value at `range` is the publisher's), and notes when and how big it went and the probe cluster
    /// it belongs to (-1: none). Returns the number (-1 when the range cannot hold one).
    @discardableResult
    func numberForEstimation(slot: Int, range: Range<Int>, on t: Transport, cluster: Int16 = -1) -> Int32 {
        guard range.count == 2 else { return -1 }
        if t.sentAt.isEmpty {
            t.sentAt = [Double](repeating: 0, count: Self.sentRing)
            t.sentSize = [Int32](repeating: 0, count: Self.sentRing)
            t.sentTag = [Int32](repeating: -1, count: Self.sentRing)
            t.sentCluster = [Int16](repeating: -1, count: Self.sentRing)
            t.estimating = true
            t.rembEstimate = false
        }
        let seq = t.sendSequence
        t.sendSequence &+= 1
        tx[slot].payload[range.lowerBound] = UInt8(seq >> 8)
        tx[slot].payload[range.lowerBound + 1] = UInt8(seq & 0xFF)
        let i = Int(seq) & (Self.sentRing - 1)
        t.sentAt[i] = now
        t.sentSize[i] = Int32(truncatingIfNeeded: tx[slot].payload.count)
        t.sentTag[i] = Int32(seq)
        t.sentCluster[i] = cluster
        return Int32(seq)
    }

    /// A subscriber's transport-wide feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01):
    /// arrivals in send order to the trendline, the acknowledged rate every half second and the loss
    /// every second to the rate controller.
    func receiveTransportFeedback(_ fb: TransportWideFeedback, on t: Transport) {
        guard t.estimating else { return }
        let t0 = now
        // Arrival times in the receiver's clock: the reference (64 ms units) plus 250 us deltas.
        var arrival = Double(fb.referenceTime) * 0.064
        for p in fb.packets {
            let i = Int(p.sequenceNumber) & (Self.sentRing - 1)
            let known = t.sentTag[i] == Int32(p.sequenceNumber)
            guard let delta = p.delta else {
                if known {
                    t.feedbackLost += 1
                    probeFeedback(t, ring: i, arrived: nil, now: t0)
                }
                continue
            }
            arrival += Double(delta) * 0.000_25
            guard known else { continue }
            t.feedbackReceived += 1
            t.ackedBytes += Int(t.sentSize[i])
            _ = t.trend.packet(sent: t.sentAt[i], arrived: arrival)
            probeFeedback(t, ring: i, arrived: arrival, now: t0)
        }
        let last = t.lastRateUpdate ?? t0
        if t.lastRateUpdate == nil { t.lastRateUpdate = t0 }
        if t0 - last >= 0.5 {
            t.rate.update(signal: t.trend.signal, acknowledged: Double(t.ackedBytes * 8) / (t0 - last), now: t0)
            t.ackedBytes = 0
            t.lastRateUpdate = t0
        }
        if t0 - t.lastLossUpdate >= 1, t.feedbackReceived + t.feedbackLost > 0 {
            t.rate.update(
                loss: Double(t.feedbackLost) / Double(t.feedbackReceived + t.feedbackLost), now: t0)
            t.feedbackReceived = 0
            t.feedbackLost = 0
            t.lastLossUpdate = t0
        }
    }
}

extension MediaEngine {
    /// A reported packet (nil arrival: lost) of a probe cluster, if it belonged to one: the cluster's
    /// result, once it is complete, raises the estimate (if the rate controller takes it) and tells
    /// the probe controller what was learned.
    func probeFeedback(_ t: Transport, ring i: Int, arrived: Double?, now t0: Double) {
        let cluster = Int(t.sentCluster[i])
        guard cluster >= 0,
            let probed = t.probeEstimator.packet(
                cluster: cluster, sent: t.sentAt[i], arrived: arrived, size: Int(t.sentSize[i]),
                expectedBytes: t.probeCluster.cluster == cluster ? t.probeCluster.bytes : 0)
        else { return }
        let before = t.rate.estimate
        t.rate.probed(probed, now: t0)
        // A result the rate controller did not take (near a bottleneck) is no reason to probe further.
        t.probes.result(cluster: cluster, bitrate: min(probed, t.rate.estimate), now: t0)
        // About one a second per probed transport at most (the probe controller's pace).
        logger.debug(
            "probe result", ("transport", t.label), ("cluster", "\(cluster)"), ("measured", "\(probed.rounded())"),
            ("estimate_before", "\(before.rounded())"), ("estimate", "\(t.rate.estimate.rounded())"),
            ("capacity", "\(t.rate.capacity.map { $0.rounded() } ?? 0)"),
            ("bottleneck", "\(t.rate.bottleneckSuspected(now: t0))"))
    }
}

extension MediaEngine {
    /// A subscriber's REMB (draft-alvestrand-rmcat-remb): its own estimate of what reaches it, used
    /// when it negotiated no transport-wide feedback (a receiver that offers only `goog-remb`, as
    /// aiortc does): its reports added up over their SSRCs (`REMBEstimate`) are its estimate, which
    /// the allocator shares out (`reportEstimates`). Such a viewer is neither paced nor probed.
    func receiveREMB(_ remb: ReceiverEstimatedMaximumBitrate, on t: Transport) {
        guard !t.estimating, !t.consumers.isEmpty else { return }
        t.rembEstimate = true
        let t0 = now
        t.rembs.received(bitrate: Double(min(remb.bitrate, 1 << 40)), ssrcs: remb.ssrcs, now: t0)
        if let e = t.rembs.estimate(now: t0) { t.rate.received(e) }
    }

    /// Every tick: an estimate that moved by more than a tenth since the coordinator last heard of it
    /// is reported as what the allocator may fill: a transport-wide estimate less the headroom
    /// (`Allocator.transportWideShare`), a REMB viewer's as `REMBEstimate.forAllocation` reads it.
    func reportEstimates() {
        for t in transports.values where t.estimating || t.rembEstimate {
            let bottleneck = t.estimating && t.rate.bottleneckSuspected(now: now)
            if bottleneck != t.reportedBottleneck {
                t.reportedBottleneck = bottleneck
                events.append(.bottleneck(transport: t.id, suspected: bottleneck))
            }
            let e =
                t.estimating
                ? t.rate.estimate * Allocator.transportWideShare
                : t.rembs.forAllocation(remb: t.rate.estimate, needed: t.needed, now: now)
            if let last = t.reportedEstimate, abs(e - last) <= 0.1 * last { continue }
            t.reportedEstimate = e
            events.append(.estimate(transport: t.id, bitrate: e))
        }
    }
}
