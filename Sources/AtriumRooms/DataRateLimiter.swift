/// What one participant may send as data messages: two token buckets, messages and payload bytes per
/// second, refilled by elapsed time (seconds, any monotonic origin). Over either, a message is refused
/// (`data_rate_limited`) and costs nothing; the connection stays. Pure: time comes in.
public struct DataRateLimiter: Equatable, Sendable {
    public static let messagesPerSecond = 30.0
    public static let messageBurst = 60.0
    public static let bytesPerSecond = 64.0 * 1024
    public static let byteBurst = 256.0 * 1024

    public private(set) var messages = messageBurst
    public private(set) var bytes = byteBurst
    private var last: Double

    public init(now: Double) { last = now }

    /// Admits a message of `size` payload bytes at `now`, taking from both buckets, or refuses it.
    public mutating func admit(size: Int, now: Double) -> Bool {
        let elapsed = max(0, now - last)
        last = max(last, now)
        messages = min(Self.messageBurst, messages + elapsed * Self.messagesPerSecond)
        bytes = min(Self.byteBurst, bytes + elapsed * Self.bytesPerSecond)
        let cost = Double(max(0, size))
        guard messages >= 1, bytes >= cost else { return false }
        messages -= 1
        bytes -= cost
        return true
    }
}
