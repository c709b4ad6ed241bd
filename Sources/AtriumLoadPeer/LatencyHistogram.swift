/// Latencies in 10 microsecond buckets up to one second (beyond: the last bucket), summed over every
/// viewer of a process, so percentiles cost nothing per packet but an increment.
public struct LatencyHistogram: Sendable {
    public static let bucketMicroseconds: UInt64 = 10
    public static let bucketCount = 100_000
    private var buckets = [UInt32](repeating: 0, count: bucketCount)
    public private(set) var count = 0

    public init() {}

    public mutating func record(nanoseconds: UInt64) {
        let bucket = min(Int(clamping: nanoseconds / 1000 / Self.bucketMicroseconds), Self.bucketCount - 1)
        buckets[bucket] &+= 1
        count += 1
    }

    /// The latency at quantile `q` (0...1), microseconds (the bucket's upper edge); nil when empty.
    public func quantile(_ q: Double) -> Double? {
        guard count > 0 else { return nil }
        let rank = max(1, Int((q * Double(count)).rounded(.up)))
        var seen = 0
        for (i, n) in buckets.enumerated() {
            seen += Int(n)
            if seen >= rank { return Double(UInt64(i + 1) * Self.bucketMicroseconds) }
        }
        return Double(UInt64(Self.bucketCount) * Self.bucketMicroseconds)
    }

    public mutating func reset() {
        for i in buckets.indices { buckets[i] = 0 }
        count = 0
    }
}
