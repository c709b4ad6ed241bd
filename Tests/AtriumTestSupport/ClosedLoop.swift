import AtriumCongestion

/// The estimation loop toward one viewer, simulated: what the probing tests check and the bandwidth
/// bench measures.
public enum ClosedLoop {
    /// The loop with probing: media at the smaller of the estimate and the demand, clusters when the
    /// controller asks (media sent meanwhile counts toward them), through a queue drained at the
    /// link's capacity (20 ms propagation); feedback every 100 ms. Returns the estimate each second.
    public static func run(phases: [(Double, Double)], seconds: Int, demand: Double, initial: Double) -> [Double] {
        var trend = TrendlineEstimator()
        var rate = RateController(initial: initial)
        var probes = ProbeController()
        var judge = ProbeBitrateEstimator()
        var linkFree = 0.0
        var pending: [(sent: Double, arrived: Double, bytes: Int, cluster: Int)] = []
        var acked: [(Double, Int)] = []
        var probe: (cluster: Int, bitrate: Double, start: Double, sent: Int)?
        var mediaCredit = 0.0
        var out: [Double] = []
        let step = 0.001
        var t = 0.0
        var nextFeedback = 0.1
        while t < Double(seconds) {
            let capacity = phases.last { $0.0 <= t }?.1 ?? phases[0].1
            func send(_ bytes: Int) {
                let cluster = probe?.cluster ?? -1
                if probe != nil { probe?.sent += bytes }
                guard linkFree - t < 0.3 else { return }  // tail drop
                linkFree = max(linkFree, t) + Double(bytes * 8) / capacity
                pending.append((t, linkFree + 0.02, bytes, cluster))
            }
            mediaCredit += min(rate.estimate, demand) / 8 * step
            while mediaCredit >= 1200 {
                send(1200)
                mediaCredit -= 1200
            }
            if probe == nil,
                let p = probes.probe(
                    estimate: rate.estimate, wanted: demand, overusing: trend.signal == .overusing, now: t)
            {
                probe = (p.cluster, p.bitrate, t, 0)
            }
            if let p = probe {
                while let q = probe, Double(q.sent) < p.bitrate / 8 * (t - p.start + step) { send(260) }
                if t - p.start >= ProbeController.duration { probe = nil }
            }
            if t >= nextFeedback {
                nextFeedback += 0.1
                for p in pending where p.arrived <= t {
                    _ = trend.packet(sent: p.sent, arrived: p.arrived)
                    acked.append((p.arrived, p.bytes))
                    if p.cluster >= 0,
                        let r = judge.packet(cluster: p.cluster, sent: p.sent, arrived: p.arrived, size: p.bytes)
                    {
                        rate.probed(r, now: t)
                        probes.result(cluster: p.cluster, bitrate: min(r, rate.estimate), now: t)
                    }
                }
                pending.removeAll { $0.arrived <= t }
                acked.removeAll { $0.0 < t - 0.5 }
                rate.update(
                    signal: trend.signal, acknowledged: Double(acked.reduce(0) { $0 + $1.1 } * 8) / min(0.5, t), now: t)
            }
            t += step
            if Int(t / step) % 1000 == 0 { out.append(rate.estimate) }
        }
        return out
    }
}
