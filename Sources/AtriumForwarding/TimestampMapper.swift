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
        let ticks = UInt32(truncatingIfNeeded: UInt64((elapsed * Double(clockRate)).rounded()))
        offset = input &- (last &+ max(1, ticks))
    }

    /// A switch whose new source's `input` was captured at the same instant as `equivalent` of the
    /// source forwarded so far (both sources' sender reports say so): `input` gets the output that
    /// `equivalent` would have had, so frames keep their capture spacing. Refused (false, nothing
    /// changed) when that output would not come after the last one sent; `sync` then.
    public mutating func align(_ input: UInt32, as equivalent: UInt32, now: Double) -> Bool {
        guard let last = lastOutput else { return false }
        let output = equivalent &- offset
        let ahead = Int32(bitPattern: output &- last)
        // More than 10 s ahead is a report that does not describe this stream: not trusted.
        guard ahead > 0, Int64(ahead) < Int64(clockRate) * 10 else { return false }
        offset = input &- output
        return true
    }

    /// Notes an output sent without `map` (a timeline its owner wrote itself), so that a later
    /// `sync` continues after it.
    public mutating func note(_ output: UInt32, now: Double) {
        if lastOutput == nil || Int32(bitPattern: output &- (lastOutput ?? 0)) > 0 {
            lastOutput = output
            lastSentAt = now
        }
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
