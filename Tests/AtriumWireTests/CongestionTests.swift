import AtriumTestSupport
import Testing

@testable import AtriumCongestion

/// The estimators in a closed loop with a simulated bottleneck (a queue drained at the link's rate,
/// 20 ms of propagation, a 300 ms queue limit, seeded random loss): a sender paced at the estimate,
/// feedback every 100 ms, loss reports every second. Rows: a steady link, a drop to 300 kbit/s, the
/// recovery, 5 % random loss.
@Suite struct CongestionTests {
    struct Link {
        /// (from second, capacity in bits per second, random loss fraction)
        var phases: [(Double, Double, Double)]

        func at(_ t: Double) -> (Double, Double) {
            let p = phases.last { $0.0 <= t } ?? phases[0]
            return (p.1, p.2)
        }
    }

    /// Runs `seconds` of the loop; returns the estimate at each whole second and the queueing delay
    /// of the last packet.
    static func run(_ link: Link, seconds: Int, demand: Double = 5_000_000) -> (estimates: [Double], queue: Double) {
        var rng = SeededGenerator(seed: 42)
        var trend = TrendlineEstimator()
        var rate = RateController(initial: 800_000)
        let size = 1200.0
        var t = 0.0
        var linkFree = 0.0
        var pending: [(sent: Double, arrived: Double, bytes: Double)] = []
        var received: [(arrived: Double, bytes: Double)] = []
        var sentInSecond = 0
        var lostInSecond = 0
        var nextFeedback = 0.1
        var nextReport = 1.0
        var estimates: [Double] = []
        var queue = 0.0
        while t < Double(seconds) {
            let (capacity, loss) = link.at(t)
            sentInSecond += 1
            let queued = max(linkFree - t, 0)
            if queued > 0.3 || Double.random(in: 0..<1, using: &rng) < loss {
                lostInSecond += 1
            } else {
                linkFree = max(linkFree, t) + size * 8 / capacity
                queue = linkFree - t
                pending.append((t, linkFree + 0.02, size))
            }
            t += size * 8 / min(rate.estimate, demand)
            if t >= nextFeedback {
                for p in pending where p.arrived <= t {
                    _ = trend.packet(sent: p.sent, arrived: p.arrived)
                    received.append((p.arrived, p.bytes))
                }
                pending.removeAll { $0.arrived <= t }
                received.removeAll { $0.arrived < t - 0.5 }
                let acknowledged = received.reduce(0) { $0 + $1.bytes } * 8 / min(0.5, t)
                rate.update(signal: trend.signal, acknowledged: acknowledged, now: t)
                nextFeedback += 0.1
            }
            if t >= nextReport {
                rate.update(loss: Double(lostInSecond) / Double(max(sentInSecond, 1)), now: t)
                estimates.append(rate.estimate)
                sentInSecond = 0
                lostInSecond = 0
                nextReport += 1
            }
        }
        return (estimates, queue)
    }

    @Test func aSteadyLinkIsFilledWithoutAStandingQueue() {
        let (e, queue) = Self.run(Link(phases: [(0, 2_000_000, 0)]), seconds: 30)
        #expect(e[29] > 1_200_000 && e[29] < 2_600_000, "\(e.map { Int($0 / 1000) })")
        #expect(queue < 0.2)
    }

    @Test func aDropTo300KbitsIsFollowedAndTheQueueDrains() {
        let (e, queue) = Self.run(Link(phases: [(0, 2_000_000, 0), (15, 300_000, 0)]), seconds: 30)
        #expect(e[13] > 1_000_000, "\(e.map { Int($0 / 1000) })")
        #expect(e[29] < 450_000 && e[29] > 120_000, "\(e.map { Int($0 / 1000) })")
        #expect(queue < 0.3)
    }

    @Test func theEstimateRecoversWhenTheLinkDoes() {
        let (e, _) = Self.run(
            Link(phases: [(0, 2_000_000, 0), (10, 300_000, 0), (20, 2_000_000, 0)]), seconds: 60)
        #expect(e[19] < 450_000, "\(e.map { Int($0 / 1000) })")
        #expect(e[59] > 1_200_000, "\(e.map { Int($0 / 1000) })")
    }

    @Test func fivePercentRandomLossHoldsTheEstimate() {
        let (e, _) = Self.run(Link(phases: [(0, 2_000_000, 0.05)]), seconds: 30)
        #expect(e[29] > 800_000, "\(e.map { Int($0 / 1000) })")
    }

    @Test func aTrendIsTheSlopeOfTheSmoothedDelay() {
        #expect(TrendlineEstimator.fit([(0, 0), (1, 2), (2, 4)]) == 2)
        #expect(TrendlineEstimator.fit([(1, 0), (1, 5)]) == nil)
        // A queue that grows by 1 ms per 5 ms group: overuse.
        var t = TrendlineEstimator()
        var signal = TrendlineEstimator.Signal.normal
        for i in 0..<200 { signal = t.packet(sent: Double(i) * 0.01, arrived: Double(i) * 0.012) }
        #expect(signal == .overusing)
        // Steady spacing: normal.
        var s = TrendlineEstimator()
        for i in 0..<200 { signal = s.packet(sent: Double(i) * 0.01, arrived: 0.02 + Double(i) * 0.01) }
        #expect(signal == .normal)
    }
}
