internal import Glibc

/// CLOCK_MONOTONIC in nanoseconds: the clock the publisher stamps with and the viewers read, the same
/// on one machine for every process.
public enum MonotonicClock {
    public static func nanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}
