public import AtriumStore

/// Retries: exponential backoff from `initialDelay`, doubling up to `maxDelay`, until `maxAttempts`
/// failed attempts (then the event is dropped and counted as failed). With the defaults an event is
/// tried 12 times over about 40 minutes.
public struct BackoffPolicy: Equatable, Sendable {
    /// Milliseconds.
    public var initialDelay: Int64
    public var maxDelay: Int64
    public var maxAttempts: Int

    public init(initialDelay: Int64 = 500, maxDelay: Int64 = 600_000, maxAttempts: Int = 12) {
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.maxAttempts = maxAttempts
    }

    /// The wait after the `attempts`-th failure (1-based): initialDelay * 2^(attempts-1), capped.
    public func delay(afterFailures attempts: Int) -> Int64 {
        let shift = min(max(attempts - 1, 0), 40)
        let (d, overflow) = initialDelay.multipliedReportingOverflow(by: Int64(1) << shift)
        return overflow ? maxDelay : min(d, maxDelay)
    }
}

/// Which entries of an endpoint's outbox to try now, keeping each room's order: only the oldest
/// entry of a room may go (the next waits until it is delivered or abandoned), so one room's failing
/// event never overtakes or delays another room's. Pure.
public enum DeliveryPlan {
    public struct Decision: Equatable, Sendable {
        /// The heads of their rooms that are due, oldest first.
        public var due: [OutboxEntry]
        /// When the earliest head that is not due yet will be (Unix ms); nil when none waits.
        public var nextWake: Int64?
    }

    public static func decide(_ pending: [OutboxEntry], now: Int64) -> Decision {
        var seen = Set<String>()
        var due: [OutboxEntry] = []
        var wake: Int64?
        for e in pending where seen.insert(e.room).inserted {
            if e.nextAttemptAt <= now {
                due.append(e)
            } else {
                wake = min(wake ?? e.nextAttemptAt, e.nextAttemptAt)
            }
        }
        return Decision(due: due, nextWake: wake)
    }
}
