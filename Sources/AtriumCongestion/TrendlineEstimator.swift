/// The delay-based half of Google's congestion control (draft-ietf-rmcat-gcc, libwebrtc's
/// `TrendlineEstimator`): packets are grouped by send time into bursts, each group's delay variation
/// (arrival spacing minus send spacing) is accumulated and smoothed, and the slope of a linear fit
/// over the last groups tells whether the path's queue is growing. Pure value: times in seconds.
public struct TrendlineEstimator: Equatable, Sendable {
    public enum Signal: Equatable, Sendable {
        case normal, overusing, underusing
    }

    /// Packets sent within this much of a group's first make one group (a burst).
    public static let burst = 0.005
    static let windowSize = 20
    static let smoothing = 0.9
    static let gain = 4.0

    private var groupSend: Double?
    private var groupArrival: Double?
    private var previousSend: Double?
    private var previousArrival: Double?
    private var accumulated = 0.0
    private var smoothed = 0.0
    private var firstArrival: Double?
    private var history: [(x: Double, y: Double)] = []
    private var deltas = 0
    /// The adaptive threshold on the modified trend (libwebrtc's units: the slope is unitless, scaled
    /// by the number of deltas and the gain, and compared with 12.5 at first), its last update, and the
    /// overuse run.
    private var threshold = 12.5
    private var lastThresholdUpdate: Double?
    private var overuseSince: Double?
    private var overuseCount = 0
    public private(set) var signal = Signal.normal
    /// The last fitted slope (unitless: seconds of delay per second), for tests and metrics.
    public private(set) var slope = 0.0

    public init() {}

    public static func == (a: TrendlineEstimator, b: TrendlineEstimator) -> Bool {
        a.signal == b.signal && a.slope == b.slope && a.accumulated == b.accumulated && a.deltas == b.deltas
    }

    /// One received packet, in send order: when it was sent and when it arrived.
    public mutating func packet(sent: Double, arrived: Double) -> Signal {
        guard let gs = groupSend, let ga = groupArrival else {
            groupSend = sent
            groupArrival = arrived
            return signal
        }
        if sent - gs <= Self.burst {
            // Same burst: the group ends with its last arrival.
            groupArrival = max(ga, arrived)
            return signal
        }
        // A new group: the previous one is complete.
        if let ps = previousSend, let pa = previousArrival {
            update(sendDelta: gs - ps, arrivalDelta: ga - pa, arrival: ga)
        }
        previousSend = gs
        previousArrival = ga
        groupSend = sent
        groupArrival = arrived
        return signal
    }

    private mutating func update(sendDelta: Double, arrivalDelta: Double, arrival: Double) {
        let variation = arrivalDelta - sendDelta
        deltas = min(deltas + 1, 1000)
        accumulated += variation
        smoothed = Self.smoothing * smoothed + (1 - Self.smoothing) * accumulated
        if firstArrival == nil { firstArrival = arrival }
        history.append((arrival - (firstArrival ?? arrival), smoothed))
        if history.count > Self.windowSize { history.removeFirst() }
        if history.count == Self.windowSize, let s = Self.fit(history) { slope = s }
        detect(trend: slope, sendDelta: sendDelta, now: arrival)
    }

    /// The least-squares slope of y over x, nil when the points do not spread in x.
    static func fit(_ points: [(x: Double, y: Double)]) -> Double? {
        let n = Double(points.count)
        let mx = points.reduce(0) { $0 + $1.x } / n
        let my = points.reduce(0) { $0 + $1.y } / n
        var num = 0.0
        var den = 0.0
        for p in points {
            num += (p.x - mx) * (p.y - my)
            den += (p.x - mx) * (p.x - mx)
        }
        return den > 0 ? num / den : nil
    }

    private mutating func detect(trend: Double, sendDelta: Double, now: Double) {
        let modified = min(Double(deltas), 60) * trend * Self.gain
        if modified > threshold {
            if overuseSince == nil { overuseSince = now }
            overuseCount += 1
            // Overuse when the trend stayed above the threshold for 10 ms and more than one group.
            if let since = overuseSince, now - since >= 0.01, overuseCount > 1 { signal = .overusing }
        } else {
            overuseSince = nil
            overuseCount = 0
            signal = modified < -threshold ? .underusing : .normal
        }
        adaptThreshold(modified, now: now)
    }

    /// The threshold follows the trend (slowly up, faster down) so that a competing flow does not
    /// starve this one, within 6-600.
    private mutating func adaptThreshold(_ modified: Double, now: Double) {
        let last = lastThresholdUpdate ?? now
        lastThresholdUpdate = now
        guard abs(modified) <= threshold + 15 else { return }
        let k = abs(modified) < threshold ? 0.039 : 0.0087
        let elapsed = min(now - last, 0.1)
        threshold += k * (abs(modified) - threshold) * elapsed * 1000
        threshold = min(max(threshold, 6), 600)
    }
}
