/// Rewrites RTP timestamps for a consumer so that a switch of source (another simulcast layer, another
/// share) continues the consumer's timeline instead of jumping (RFC 3550 section 5.1: timestamps of one
/// SSRC are monotonic). On `sync` the new source is mapped so that its first packet lands `elapsed`
/// after the last one sent, measured with the media clock. Pure value; time is passed in.
public struct TimestampMapper: Equatable, Sendable {
    public let clockRate: UInt32
    private var offset: UInt32 = 0
    private var lastOutput: UInt32?
    /// Wall-clock seconds when `lastOutput` was sent.
    private var lastSentAt: Double = 0

    public init(clockRate: UInt32) { self.clockRate = clockRate }

    /// The next input timestamp `input`, arriving at `now`, continues the consumer's timeline.
    public mutating func sync(_ input: UInt32, now: Double) {
        guard let last = lastOutput else {
            offset = 0
            return
        }
        let elapsed = max(now - lastSentAt, 1.0 / Double(clockRate))
        let ticks = UInt32(truncatingIfNeeded: UInt64(elapsed * Double(clockRate)))
        offset = input &- (last &+ max(1, ticks))
    }

    public mutating func map(_ input: UInt32, now: Double) -> UInt32 {
        let output = input &- offset
        if lastOutput == nil || Int32(bitPattern: output &- (lastOutput ?? 0)) > 0 {
            lastOutput = output
            lastSentAt = now
        }
        return output
    }
}
