import AtriumCongestion
import AtriumSRTP
import AtriumUDP

/// The pacer per subscriber transport: once a transport has an estimate, its video leaves
/// at most at the rate controller's pacing rate (a token bucket: one and a half times the estimate on
/// an open path, about the estimate near a bottleneck), so a key frame or a burst of retransmissions
/// is spread over tens of milliseconds instead of overflowing a slow link's queue at once. Audio is
/// never held (it takes its tokens anyway). What waits sits unencrypted in a bounded ring of
/// preallocated buffers (`PacerQueue`) and is numbered and encrypted when it leaves; a full queue
/// drops (`pacer_overflow`, counted per transport), and the viewer's NACK asks again if it must.
extension MediaEngine {
    static let minimumPacingRate = 200_000.0
    static let allocatedHeadroom = 1.1
    static let maximumDelay = 0.5
    static let minimumQueueBytes = 64_000.0

    /// The rate `t`'s pacer lets video out at: the rate controller's, and never below what the
    /// allocator chose to send (a share's floor may pass the estimate): the pacer smooths bursts, it
    /// does not decide what the viewer gets.
    func pacingRate(_ t: Transport, now t0: Double) -> Double {
        let floor = max(Self.minimumPacingRate, (t.downlink.allocated ?? 0) * Self.allocatedHeadroom)
        return max(t.downlink.rate.pacingRate(now: t0), floor)
    }

    /// What `t`'s pacer holds at most, bytes: half a second at its rate, but a key frame's worth
    /// always fits.
    func pacerLimit(_ t: Transport, rate: Double) -> Double {
        max(rate / 8 * Self.maximumDelay, Self.minimumQueueBytes)
    }

    /// Whether a retransmission of `bytes` toward `t` may join its pacer: only while the queue stays
    /// within half its bound, so repairs never take the room live packets need. Behind a slow link,
    /// the NACKs for one loss burst (asked again every round trip while the first copies wait) would
    /// otherwise fill the queue, and the live packets behind them overflow it: the browser test's
    /// viewer at 250 kbit/s had 37 kB of a share's RTX waiting (2.3 s at its rate) when its pacer
    /// dropped. A repair refused now is asked for again at the viewer's next NACK.
    func pacerTakesRetransmission(_ t: Transport, bytes: Int) -> Bool {
        guard t.downlink.estimating, !t.downlink.paced.isEmpty else { return true }
        let limit = pacerLimit(t, rate: pacingRate(t, now: now)) / 2
        return Double(t.downlink.paced.bytes + bytes + SRTPSession.maximumTrailerLength) <= limit
    }

    /// Whether the packet in `slot` toward `t` may leave now; if not it waits in the pacer (or is
    /// dropped when the pacer is full) and the slot is free again.
    func pace(slot: Int, on t: Transport, video: Bool, twccOffset: Int32) -> Bool {
        guard t.downlink.estimating else { return true }
        let t0 = now
        let rate = pacingRate(t, now: t0)
        var bucket = t.downlink.bucket ?? TokenBucket(rate: rate, now: t0)
        defer { t.downlink.bucket = bucket }
        if bucket.rate != rate { bucket.setRate(rate) }
        let bytes = egress.tx[slot].payload.count + SRTPSession.maximumTrailerLength
        guard video else {
            bucket.force(bytes, now: t0)
            return true
        }
        if t.downlink.paced.isEmpty && bucket.take(bytes, now: t0) { return true }
        // Bounded in time too: what would wait longer than `maximumDelay` at the pacing rate (but a
        // key frame's worth always fits) is dropped rather than delaying everything after it.
        let limit = pacerLimit(t, rate: rate)
        if Double(t.downlink.paced.bytes + bytes) <= limit,
            t.downlink.paced.push(
                egress.tx[slot].payload, to: egress.tx[slot].address, twccOffset: twccOffset, now: t0)
        {
            t.downlink.pacerDelayed += 1
            if t.downlink.paced.count == 1 { egress.pacing.append(t) }
        } else {
            t.downlink.pacerDropped += 1
            counters.drop(.pacerOverflow)
        }
        return false
    }

    /// Sends what the pacers' budgets allow now (every loop round and tick).
    func drainPacers() {
        guard !egress.pacing.isEmpty else { return }
        let t0 = now
        // By index, and compacted by hand below: `for ... in` and `removeAll(where:)` go through
        // generic iterators, which allocate in a debug build.
        var n = 0
        while n < egress.pacing.count {
            let t = egress.pacing[n]
            n += 1
            guard var bucket = t.downlink.bucket, let srtp = t.session.srtpOutRef else {
                t.downlink.paced.removeAll()
                continue
            }
            while let size = t.downlink.paced.headSize, bucket.take(size + SRTPSession.maximumTrailerLength, now: t0) {
                if egress.isFull { flush() }
                let slot = egress.count
                guard let (address, offset) = t.downlink.paced.pop(into: &egress.tx[slot].payload) else { break }
                egress.tx[slot].address = address
                _ = srtp.with { seal(slot: slot, on: t, srtp: $0, twccOffset: offset) }
            }
            t.downlink.bucket = bucket
        }
        var kept = 0
        var k = 0
        while k < egress.pacing.count {
            if !egress.pacing[k].downlink.paced.isEmpty {
                egress.pacing.swapAt(kept, k)
                kept += 1
            }
            k += 1
        }
        egress.pacing.removeLast(egress.pacing.count - kept)
    }
}
