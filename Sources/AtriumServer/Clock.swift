#if canImport(Glibc)
    import Glibc
#endif

/// The process's clocks, injected into the pure layers.
public enum Clock {
    /// Wall-clock seconds since the Unix epoch.
    public static func unixSeconds() -> Int64 { Int64(time(nil)) }

    public static func unixMillis() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1000 + UInt64(ts.tv_nsec / 1_000_000)
    }

    /// Monotonic seconds, for durations.
    public static func monotonic() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// Flushes standard output (so banners appear before the service loop blocks).
public func fflushStdout() { fflush(nil) }
