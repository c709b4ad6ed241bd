import AtriumCongestion
import AtriumForwarding

/// The media plane's side of the allocation: the coordinator decides each viewer's layers
/// from its estimate (`MediaCommand.allocate`); the engine only follows. A consumer's allocated layer
/// is a ceiling on what its viewer asked for (`Consumer.desiredLayer`), so the existing switching
/// does the rest (a key frame of the new stream is asked for, the switch waits for it); a ceiling
/// below the stream forwarded leaves that stream at once (`dropPaced`). A paused
/// consumer forwards nothing (`bandwidth`) and starts again on a key frame when resumed. What the
/// allocator needs to know comes back as events: estimates and the producers' measured layers.
extension MediaEngine {
    func allocate(_ t: Transport, _ a: TransportAllocation) {
        t.downlink.allocated = a.allocated
        t.downlink.wanted = a.wanted
        t.downlink.needed = a.needed > 0 ? a.needed : nil
        t.downlink.pausedTracks = a.entries.filter(\.paused).count
        var touched: [Producer] = []
        for e in a.entries {
            guard let c = consumers[e.consumer], c.transport === t else { continue }
            let resumed = c.bandwidthPaused && !e.paused
            c.bandwidthPaused = e.paused
            c.ceiling = e.ceiling
            if !touched.contains(where: { $0 === c.producer }) { touched.append(c.producer) }
            if e.paused { continue }
            if resumed {
                c.restart()
                c.reselect(available: c.producer.availableMask)
                if t.isSecure, let k = c.keyFrameStream { startViewer(c, stream: k) }
            } else if let k = c.reselect(available: c.producer.availableMask) {
                if c.leaveAboveCeiling() { dropPaced(c) }
                switchLayer(c, to: k)
            }
        }
        for p in touched { reportWanted(p) }
    }

    /// A consumer that left its stream for a lower one (a step down at a bottleneck): its packets
    /// still waiting in the pacer go too (counted `other_layer`), so the target's key frame neither
    /// waits behind them nor finds the queue full. The viewer's NACKs for them are refused while it
    /// waits for that key frame (`retransmit`).
    func dropPaced(_ c: Consumer) {
        counters.dropped[DropReason.otherLayer.rawValue] += c.transport.downlink.paced.remove(
            ssrc: c.spec.ssrc, rtxSSRC: c.spec.rtxSSRC)
    }

    /// Once a second: each video producer's layers as they arrive, reported when they changed enough
    /// to matter to an allocation.
    func reportLayers(elapsed: Double) {
        for p in producers.values where p.isVideo && p.pipeInput == nil {
            var layers: [LayerStats] = []
            layers.reserveCapacity(p.streams.count)
            let t0 = now
            for k in p.streams.indices {
                let rate = Double(p.streams[k].bytes * 8) / max(elapsed, 0.001)
                p.streams[k].bytes = 0
                p.streams[k].bitrate = rate
                if rate > 0 { p.streams[k].lastBitrate = rate }
                let temporal = p.streams[k].takeTemporal(elapsed: elapsed)
                let s = p.streams[k]
                let arriving = s.lastPacketAt.map { t0 - $0 < Producer.streamTimeout } ?? false
                let width = s.width > 0 ? s.width : s.size.width
                let height = s.height > 0 ? s.height : s.size.height
                layers.append(
                    LayerStats(
                        bitrate: rate, lastBitrate: s.lastBitrate, width: width, height: height,
                        framesPerSecond: s.framesPerSecond, arriving: arriving, keyFrameBytes: s.keyFrameBytes,
                        temporal: temporal))
            }
            if let top = p.svcLayers.last, layers.count == 1, top.width > 0 {
                layers[0].width = top.width
                layers[0].height = top.height
            }
            guard Self.layersMoved(p.reportedLayers, layers) else { continue }
            p.reportedLayers = layers
            events.append(.layers(producer: p.spec.id, layers))
        }
    }

    static func layersMoved(_ old: [LayerStats], _ new: [LayerStats]) -> Bool {
        guard old.count == new.count else { return true }
        for (a, b) in zip(old, new) {
            if a.arriving != b.arriving || a.width != b.width || a.height != b.height { return true }
            if abs(b.keyFrameBytes - a.keyFrameBytes) > max(a.keyFrameBytes, 1) / 4 { return true }
            if abs(a.framesPerSecond - b.framesPerSecond) > max(2, a.framesPerSecond / 5) { return true }
            let ra = max(a.bitrate, 1)
            if abs(b.bitrate - a.bitrate) > 0.2 * ra { return true }
            if a.temporal.count != b.temporal.count { return true }
            for (x, y) in zip(a.temporal, b.temporal) where abs(y.bitrate - x.bitrate) > 0.2 * max(x.bitrate, 1) {
                return true
            }
        }
        return false
    }
}
