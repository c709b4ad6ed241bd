internal import Glibc

/// CLOCK_MONOTONIC in nanoseconds: the clock the publisher stamps with and the viewers read, the same
/// on one machine for every process.
public enum MonotonicClock {
    public static func nanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// CLOCK_REALTIME minus CLOCK_MONOTONIC now, nanoseconds (wrapping): what turns a kernel receive
    /// timestamp (SO_TIMESTAMPNS, on CLOCK_REALTIME) into this clock. Read again for every batch, so
    /// that a step or slew of the wall clock between batches does not skew the latencies.
    public static func realtimeOffset() -> UInt64 {
        var real = timespec()
        clock_gettime(CLOCK_REALTIME, &real)
        let realtime =
            UInt64(truncatingIfNeeded: real.tv_sec) &* 1_000_000_000 &+ UInt64(truncatingIfNeeded: real.tv_nsec)
        return realtime &- nanoseconds()
    }
}
