internal import CAtriumUDP

#if canImport(Glibc)
    import Glibc
#endif

/// The name of a worker thread as the system shows it (`top -H`, `perf`, `/proc/PID/task/*/comm`).
public enum ThreadName {
    /// The kernel's limit on a thread name, in bytes (16 with the terminating zero).
    public static let maxBytes = 15

    /// Names the calling thread, cut to `maxBytes`; false when the system refused.
    @discardableResult
    public static func set(_ name: String) -> Bool { atrium_set_thread_name(name) == 0 }

    /// The calling thread's name as the kernel holds it (`/proc/thread-self/comm`).
    public static func current() -> String? {
        let fd = open("/proc/thread-self/comm", O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        let bytes = buffer[0..<n]
        return String(decoding: bytes.last == 0x0A ? bytes.dropLast() : bytes, as: UTF8.self)
    }
}
