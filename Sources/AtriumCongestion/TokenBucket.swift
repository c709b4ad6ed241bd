/// The pacer's budget toward one viewer: tokens (bytes) accrue at `rate` up to `capacity`; a packet
/// leaves when there are tokens for it, else it waits in the pacer's queue. Audio is never held: it
/// takes its tokens even into debt, which the video after it pays back. Pure value: times in seconds.
public struct TokenBucket: Equatable, Sendable {
    /// Bits per second.
    public private(set) var rate: Double
    /// Bytes.
    public private(set) var capacity: Double
    public private(set) var tokens: Double
    private var last: Double

    /// The bucket holds `burst` seconds of the rate, and never less than `minimumCapacity` bytes (a
    /// few full packets, so that a slow rate still lets one through per loop).
    public static let burst = 0.04
    public static let minimumCapacity = 4_000.0

    public init(rate: Double, now: Double) {
        self.rate = rate
        capacity = max(Self.minimumCapacity, rate / 8 * Self.burst)
        tokens = capacity
        last = now
    }

    public mutating func setRate(_ rate: Double) {
        self.rate = rate
        capacity = max(Self.minimumCapacity, rate / 8 * Self.burst)
        tokens = min(tokens, capacity)
    }

    public mutating func refill(now: Double) {
        let elapsed = min(max(now - last, 0), 1)
        last = now
        tokens = min(capacity, tokens + rate / 8 * elapsed)
    }

    /// Takes `bytes` if there are tokens for them (a packet may take the bucket below zero when it
    /// starts with tokens left, so large packets pass a small bucket).
    public mutating func take(_ bytes: Int, now: Double) -> Bool {
        refill(now: now)
        guard tokens > 0 else { return false }
        tokens -= Double(bytes)
        return true
    }

    /// Takes `bytes` whatever is left (audio).
    public mutating func force(_ bytes: Int, now: Double) {
        refill(now: now)
        tokens = max(tokens - Double(bytes), -capacity)
    }
}
