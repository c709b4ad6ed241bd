/// The rate that a delay signal and loss reports allow toward one receiver: Google congestion
/// control's AIMD rate control (draft-ietf-rmcat-gcc section 5.5) and its loss-based controller
/// (section 6). Pure value: the owner feeds it the trendline's signal, the acknowledged rate and the
/// loss fraction, with times in seconds, and reads `estimate` (bits per second).
public struct RateController: Equatable, Sendable {
    public private(set) var estimate: Double
    public let minimum: Double
    public let maximum: Double
    private var delayBased: Double
    private var lossBased: Double
    private var lastUpdate: Double?
    /// The acknowledged rate at the last decrease: near it, the increase is additive.
    private var lastDecreaseRate: Double?
    private var holdUntil = 0.0
    /// The acknowledged rate at the last decrease on overuse (what the path carried when its queue
    /// grew) and when: for `bottleneckMemory` after it, the path is known to be narrow.
    public private(set) var capacity: Double?
    private var capacityAt = -Double.infinity

    /// How long an overuse keeps the path suspected of a bottleneck (the pacer's rate, `pacingRate`).
    public static let bottleneckMemory = 10.0
    /// On an open path the pacer lets video out at this multiple of the estimate (libwebrtc paces at
    /// 2.5 times its target; here the estimate is already the link's, so one and a half).
    public static let openPacingFactor = 1.5

    /// The estimate before any feedback: 1 Mbit/s, in the range libwebrtc starts a call at, so a
    /// viewer starts on a usable layer and probing takes it up (or the first overuse down).
    public static let initialEstimate = 1_000_000.0

    public init(
        initial: Double = RateController.initialEstimate, minimum: Double = 100_000, maximum: Double = 20_000_000
    ) {
        self.minimum = minimum
        self.maximum = maximum
        estimate = initial
        delayBased = initial
        lossBased = initial
    }

    /// A delay signal with the rate the receiver acknowledged over the last half second.
    public mutating func update(signal: TrendlineEstimator.Signal, acknowledged: Double, now: Double) {
        let elapsed = min(max(now - (lastUpdate ?? now), 0), 1)
        lastUpdate = now
        let before = delayBased
        switch signal {
        case .overusing:
            // Back off below what gets through; hold a moment before growing again.
            if now >= holdUntil || delayBased > 0.85 * acknowledged {
                delayBased = max(minimum, 0.85 * acknowledged)
                lastDecreaseRate = acknowledged
                capacity = acknowledged
                capacityAt = now
                holdUntil = now + 0.2
            }
        case .underusing:
            // The queue drains: hold the rate.
            break
        case .normal:
            guard now >= holdUntil else { break }
            if let near = lastDecreaseRate, abs(acknowledged - near) < 0.3 * near {
                // Near the last congestion point: about one packet per round trip more.
                delayBased += max(8_000, 0.05 * delayBased) * elapsed
            } else {
                delayBased *= 1 + 0.08 * elapsed
            }
            // Never growing far above what is acknowledged (an estimate that grows in the void is no
            // estimate), but never cut for it either: a viewer that is sent little (its layers held
            // back, only audio) keeps the estimate it had (libwebrtc's AimdRateControl clamp).
            let cap = 1.5 * acknowledged + 10_000
            if acknowledged > 0, delayBased > cap { delayBased = max(before, cap) }
        }
        delayBased = min(max(delayBased, minimum), maximum)
        estimate = min(delayBased, lossBased)
    }

    /// A receiver's loss fraction (0...1) over its last report interval. Up to 10 % the loss is taken
    /// as the link's own (radio, a lossy hop) and the delay side decides; above, the rate backs off in
    /// proportion. (Plain GCC only holds between 2 and 10 %, so one congested moment on a lossy link
    /// ratchets the rate down for good.)
    public mutating func update(loss: Double, now: Double) {
        if loss <= 0.10 {
            lossBased = min(maximum, lossBased * 1.05 + 1_000)
        } else {
            lossBased = max(minimum, estimate * (1 - 0.5 * loss))
        }
        lossBased = max(lossBased, minimum)
        // The loss side never holds the estimate far above the delay side's.
        lossBased = min(lossBased, max(delayBased, minimum) * 1.5)
        estimate = min(delayBased, lossBased)
    }

    /// A probe cluster's result (`ProbeBitrateEstimator`): the path carried this much, so the
    /// estimate takes it at once when it is higher (libwebrtc's `SetEstimate` after a probe), on both
    /// sides; nothing is learned from a lower one (the delay side backs off by itself). Near a
    /// bottleneck (it overused within `bottleneckMemory`) only a result well past what it carried
    /// then (`openedRatio` times `capacity`: a lifted limit) is taken: a cluster is a dozen small
    /// packets whose arrival times a loaded receiver's scheduling bunches, and on a saturated
    /// 250 kbit/s link they read as up to 300 kbit/s; taken, the estimate stepped a track up, the
    /// link overused, and the track was held down for seconds.
    public mutating func probed(_ bitrate: Double, now: Double) {
        guard bitrate > estimate else { return }
        if bottleneckSuspected(now: now), let c = capacity, bitrate < Self.openedRatio * c { return }
        let b = min(bitrate, maximum)
        delayBased = max(delayBased, b)
        lossBased = max(lossBased, b)
        lastDecreaseRate = nil
        // Well past what overused: the bottleneck is gone (a lifted limit).
        if let c = capacity, b >= Self.openedRatio * c { capacityAt = -.infinity }
        estimate = min(delayBased, lossBased)
    }

    /// A probe result at least this multiple of the bottleneck's `capacity` says it is gone.
    public static let openedRatio = 1.5

    /// The least probe result `probed` takes now: near a bottleneck, `openedRatio` times what it
    /// carried; nil when any result above the estimate is taken.
    public func probeTakenFrom(now: Double) -> Double? {
        guard bottleneckSuspected(now: now), let c = capacity else { return nil }
        return Self.openedRatio * c
    }

    /// A receiver's own estimate (REMB, from a subscriber that offers no transport-wide feedback):
    /// taken as it is, within the bounds.
    public mutating func received(_ bitrate: Double) {
        let b = min(max(bitrate, minimum), maximum)
        delayBased = b
        lossBased = b
        estimate = b
    }

    /// Whether the path overused within the last `bottleneckMemory` seconds.
    public func bottleneckSuspected(now: Double) -> Bool { now - capacityAt < Self.bottleneckMemory }

    /// The rate the pacer lets video out at (bits per second). On an open path one and a half times
    /// the estimate, so a key frame leaves fast; near a bottleneck the estimate: a burst then waits in
    /// the pacer, whose queue is bounded, instead of overflowing the bottleneck's queue, which loses
    /// whatever comes next (libwebrtc paces at its target there too). Not the rate the path carried
    /// when it overused: measured over half a second of a loaded receiver's bunched feedback, that
    /// reads a 250 kbit/s link as up to 300, and paced at it the link's 30-packet queue overflowed.
    /// (The allocator fills only part of the estimate, `Allocator.transportWideShare`, so the pacer
    /// keeps up with what it is given.)
    public func pacingRate(now: Double) -> Double {
        bottleneckSuspected(now: now) ? estimate : estimate * Self.openPacingFactor
    }
}
