import AtriumTestSupport
import Testing

@testable import AtriumCongestion

/// Probing as libwebrtc does it: a cluster's feedback measured (`ProbeBitrateEstimator`), when to
/// probe (`ProbeController`), the start value and a probe's result in the rate controller, and the
/// whole loop against a simulated bottleneck: a viewer held back by its estimate finds the link's
/// capacity within seconds instead of creeping up by 8 % a second.
@Suite struct ProbeTests {
    /// (name, packets, send spacing, arrival spacing, expected estimate or nil)
    static let clusters: [(String, Int, Double, Double, Double?)] = [
        ("unsaturated: the send rate", 10, 0.004, 0.004, 2_400_000),
        ("saturated: 95 % of the arrival rate", 10, 0.004, 0.016, 0.95 * 600_000),
        ("arrivals a little slower: the lower rate", 10, 0.004, 0.0042, 2_400_000 * 0.004 / 0.0042),
        ("too few packets reported", 3, 0.004, 0.004, nil),
        ("arrivals over twice as fast: a measurement error", 10, 0.004, 0.001, nil),
        ("all sent at once: no send interval", 10, 0, 0.004, nil),
    ]

    @Test(arguments: clusters)
    func aClusterIsJudgedFromItsFeedback(_ row: (String, Int, Double, Double, Double?)) {
        let (name, count, sendSpacing, arrivalSpacing, expected) = row
        var e = ProbeBitrateEstimator()
        var result: Double?
        for i in 0..<count {
            let r = e.packet(
                cluster: 3, sent: 1 + Double(i) * sendSpacing, arrived: 1.05 + Double(i) * arrivalSpacing,
                size: 1200)
            result = result ?? r
        }
        if let expected {
            let r = result ?? 0
            #expect(abs(r - expected) < expected * 0.01, "\(name): \(Int(r))")
        } else {
            #expect(result == nil, "\(name)")
        }
    }

    /// A 250 kbit/s token bucket that was idle lets its 1.6 kB burst through at once: a cluster at
    /// 500 kbit/s reads as twice the link over all its packets, but its later half tells the link's
    /// rate; it is judged only once complete (lost packets count as reported).
    @Test func aTokenBucketsBurstIsNotReadAsRoom() {
        var e = ProbeBitrateEstimator()
        var result: Double?
        let size = 260
        let expected = 16 * size
        for i in 0..<16 {
            let sent = 1 + Double(i) * Double(size * 8) / 500_000
            let arrived = 1.02 + (i < 6 ? 0 : Double(i - 5) * Double(size * 8) / 250_000)
            let r = e.packet(
                cluster: 1, sent: sent, arrived: i == 15 ? nil : arrived, size: size, expectedBytes: expected)
            if i < 15 { #expect(r == nil, "judged before complete at \(i)") }
            result = result ?? r
        }
        let r = result ?? 0
        #expect(r > 200_000 && r < 260_000, "\(Int(r))")
    }

    @Test func nearABottleneckThePacerSendsAtAboutTheEstimate() {
        var r = RateController(initial: 1_000_000)
        #expect(r.pacingRate(now: 0) == 1_500_000, "an open path: one and a half times the estimate")
        r.update(signal: .overusing, acknowledged: 250_000, now: 1)
        #expect(r.bottleneckSuspected(now: 2))
        #expect(abs(r.estimate - 212_500) < 1)
        #expect(r.pacingRate(now: 2) == r.estimate, "the estimate, not the rate the path carried")
        #expect(!r.bottleneckSuspected(now: 11.5))
        #expect(r.pacingRate(now: 11.5) == 1.5 * r.estimate)
        // A probe that finds far more than what overused: the bottleneck is gone.
        r.update(signal: .overusing, acknowledged: 250_000, now: 12)
        r.probed(1_000_000, now: 12.5)
        #expect(!r.bottleneckSuspected(now: 13))
    }

    /// A loaded receiver's feedback reads a cluster on an open path at three quarters of its target:
    /// that is still a probe to follow soon (at 60 %; libwebrtc: 70 %), not one to wait three seconds after.
    @Test func aProbeAtThreeQuartersOfItsTargetIsFollowedSoon() {
        var c = ProbeController()
        let first = c.probe(estimate: 400_000, wanted: 3_000_000, overusing: false, now: 0)
        #expect(first?.bitrate == 800_000)
        c.result(cluster: first?.cluster ?? -1, bitrate: 600_000, now: 0.1)
        let next = c.probe(estimate: 600_000, wanted: 3_000_000, overusing: false, now: 0.4)
        #expect(next?.bitrate == 1_200_000, "twice the estimate the first one found, 0.3 s later")
        c.result(cluster: next?.cluster ?? -1, bitrate: 700_000, now: 0.5)
        #expect(c.probe(estimate: 700_000, wanted: 3_000_000, overusing: false, now: 3.4) == nil, "under 60 %: 3 s")
    }

    /// Two thirds of the target, as a loaded Chromium's feedback read clusters on a lifted link
    /// (2026-12-02): followed 0.3 s later, not after the 3 s backoff.
    @Test func aProbeAtTwoThirdsOfItsTargetIsFollowedSoon() {
        var c = ProbeController()
        let first = c.probe(estimate: 376_000, wanted: 3_000_000, overusing: false, now: 0)
        c.result(cluster: first?.cluster ?? -1, bitrate: 507_000, now: 0.1)
        #expect(c.probe(estimate: 507_000, wanted: 3_000_000, overusing: false, now: 0.41)?.bitrate == 1_014_000)
    }

    /// Near a bottleneck (it overused at 250 kbit/s) a probe that reads a little more than the link
    /// carried (a loaded receiver's feedback bunches a cluster's arrivals) is not taken: taken, it
    /// stepped a track up into overuse. One well past it (a lifted limit) is taken at once.
    @Test(arguments: [(300_000.0, false), (360_000, false), (380_000, true), (900_000, true)])
    func nearABottleneckOnlyAProbeWellPastItIsTaken(_ result: Double, _ taken: Bool) {
        var r = RateController(initial: 1_000_000)
        r.update(signal: .overusing, acknowledged: 250_000, now: 1)
        let before = r.estimate
        r.probed(result, now: 2)
        #expect(r.estimate == (taken ? result : before), "\(Int(r.estimate))")
        #expect(r.bottleneckSuspected(now: 2.5) == !taken)
        // Past the bottleneck's memory any higher result is taken again.
        var later = RateController(initial: 1_000_000)
        later.update(signal: .overusing, acknowledged: 250_000, now: 1)
        later.probed(300_000, now: 1 + RateController.bottleneckMemory + 0.1)
        #expect(later.estimate == 300_000)
    }

    /// Near a bottleneck only a result past `RateController.probeTakenFrom` is taken: a probe aims
    /// high enough that two thirds of its target (a loaded receiver's reading) still reaches it.
    @Test func nearABottleneckAProbeAimsPastWhatWouldBeTaken() {
        var r = RateController(initial: 1_000_000)
        #expect(r.probeTakenFrom(now: 0) == nil)
        r.update(signal: .overusing, acknowledged: 235_000, now: 1)
        let bar = r.probeTakenFrom(now: 2)
        #expect(bar == 352_500)
        #expect(r.probeTakenFrom(now: 1 + RateController.bottleneckMemory + 0.1) == nil)
        var c = ProbeController()
        let p = c.probe(estimate: 207_000, wanted: 2_000_000, takenFrom: bar, overusing: false, now: 2)
        #expect(p?.bitrate == 352_500 / 0.6, "not twice the estimate (414 kbit/s)")
        // Read at two thirds of that target after the limit is lifted, it is taken.
        r.probed(2.0 / 3 * (p?.bitrate ?? 0), now: 2.5)
        #expect(abs(r.estimate - 2.0 / 3 * 352_500 / 0.6) < 1)
        // A bar below twice the estimate changes nothing.
        var d = ProbeController()
        #expect(
            d.probe(estimate: 207_000, wanted: 1_000_000, takenFrom: 200_000, overusing: false, now: 2)?.bitrate
                == 414_000)
    }

    /// A due probe waits for the viewer's pacer to empty, but not for ever: a pacer that sends at
    /// an estimate the lifted link is far above never empties.
    @Test func aDueProbeWaitsForTheViewersPacerAtMostASecond() {
        var c = ProbeController()
        #expect(c.probe(estimate: 200_000, wanted: 2_000_000, queuedSince: 5, overusing: false, now: 5.5) == nil)
        #expect(c.probe(estimate: 200_000, wanted: 2_000_000, queuedSince: 5, overusing: false, now: 5.99) == nil)
        #expect(c.probe(estimate: 200_000, wanted: 2_000_000, queuedSince: 5, overusing: false, now: 6.0) != nil)
        var empty = ProbeController()
        #expect(empty.probe(estimate: 200_000, wanted: 2_000_000, queuedSince: nil, overusing: false, now: 5.5) != nil)
    }

    @Test func probesOnlyWhileTheEstimateLimitsTheViewer() {
        var c = ProbeController()
        #expect(c.probe(estimate: 1_000_000, wanted: 800_000, overusing: false, now: 0) == nil, "not limited")
        var covered = ProbeController()
        #expect(
            covered.probe(estimate: 2_240_000, wanted: 2_210_000, overusing: false, now: 0) != nil,
            "covered, but without the room a step up needs")
        #expect(c.probe(estimate: 1_000_000, wanted: 3_000_000, overusing: true, now: 0) == nil, "overusing")
        let first = c.probe(estimate: 1_000_000, wanted: 3_000_000, overusing: false, now: 0)
        #expect(first?.bitrate == 2_000_000, "twice the estimate")
        #expect(c.probe(estimate: 1_000_000, wanted: 3_000_000, overusing: false, now: 0.1) == nil, "one at a time")
        // A result near the target: probing further soon.
        c.result(cluster: first?.cluster ?? -1, bitrate: 1_900_000, now: 0.2)
        #expect(c.probe(estimate: 1_900_000, wanted: 3_000_000, overusing: false, now: 0.45) == nil)
        let second = c.probe(estimate: 1_900_000, wanted: 3_000_000, overusing: false, now: 0.51)
        #expect(second?.bitrate == 3_800_000, "twice the estimate, below what is wanted with its margin")
        // A result far below: the next waits three seconds.
        c.result(cluster: second?.cluster ?? -1, bitrate: 2_000_000, now: 0.8)
        #expect(c.probe(estimate: 2_000_000, wanted: 3_000_000, overusing: false, now: 3.7) == nil)
        #expect(c.probe(estimate: 2_000_000, wanted: 3_000_000, overusing: false, now: 3.81) != nil)
        #expect(c.probesSent == 3)
        // What a step up to the top needs (its key frame) keeps probing past the margin.
        var needs = ProbeController()
        #expect(needs.probe(estimate: 3_000_000, wanted: 2_000_000, overusing: false, now: 0) == nil)
        let far = needs.probe(estimate: 3_000_000, wanted: 2_000_000, needed: 4_000_000, overusing: false, now: 0)
        #expect(far?.bitrate == 5_000_000, "a quarter more than needed")
        // A few percent short of what a step up needs is still short: probed (a browser test's viewer
        // stayed below its top layer at 3.04 Mbit/s for 3.12 when this waited for 5 %).
        var short = ProbeController()
        let near = short.probe(
            estimate: 3_036_052, wanted: 2_211_840 / 0.85, needed: 2_654_208 / 0.85, overusing: false, now: 0)
        #expect(near.map { Int($0.bitrate) } == Int(1.25 * 2_654_208 / 0.85), "a quarter past the room")
        var covers = ProbeController()
        #expect(
            covers.probe(
                estimate: 3_130_000, wanted: 2_211_840 / 0.85, needed: 2_654_208 / 0.85, overusing: false, now: 0)
                == nil)
        // At a low rate a cluster lasts long enough for 16 packets.
        var low = ProbeController()
        let slow = low.probe(estimate: 200_000, wanted: 2_000_000, overusing: false, now: 0)
        #expect(abs((slow?.duration ?? 0) - 16.0 * 260 * 8 / 400_000) < 0.001)
    }

    @Test func theStartValueHoldsWhileLittleIsSentAndAProbeRaisesIt() {
        var r = RateController()
        #expect(r.estimate == RateController.initialEstimate)
        // Only audio goes out (40 kbit/s acknowledged): the estimate is not cut to 1.5 times that.
        for i in 1...20 { r.update(signal: .normal, acknowledged: 40_000, now: Double(i) * 0.5) }
        #expect(r.estimate >= RateController.initialEstimate, "\(Int(r.estimate))")
        r.probed(2_500_000, now: 11)
        #expect(r.estimate == 2_500_000)
        r.probed(1_000_000, now: 12)
        #expect(r.estimate == 2_500_000, "a lower result teaches nothing")
        r.received(300_000)
        #expect(r.estimate == 300_000, "a receiver's REMB is taken as it is")
    }

    @Test func aViewerHeldBackFindsTheLinkWithinSeconds() {
        // Starting low (300 kbit/s) on a 4 Mbit/s link, with 2.5 Mbit/s of layers wanted.
        let e = ClosedLoop.run(phases: [(0, 4_000_000)], seconds: 10, demand: 2_500_000, initial: 300_000)
        #expect(e[4] >= 2_000_000, "\(e.map { Int($0 / 1000) })")
    }

    @Test func aLinkThatOpensAgainIsFoundWithinTenSeconds() {
        // 250 kbit/s for 15 s, then 5 Mbit/s: back above the demand's 80 % within 10 s.
        let e = ClosedLoop.run(
            phases: [(0, 250_000), (15, 5_000_000)], seconds: 26, demand: 2_500_000, initial: 1_000_000)
        #expect(e[13] < 400_000, "\(e.map { Int($0 / 1000) })")
        #expect(e[24] >= 2_000_000, "\(e.map { Int($0 / 1000) })")
    }
}
