internal import Glibc

func exitProcess(_ code: Int32) -> Never { exit(code) }

/// Standard input made non-blocking, read in whole lines by the loop between polls.
struct LineReader {
    private var pending: [UInt8] = []
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)
    private(set) var closed = false

    init() {
        let flags = fcntl(0, F_GETFL)
        _ = fcntl(0, F_SETFL, flags | O_NONBLOCK)
    }

    /// The complete lines waiting now.
    mutating func lines() -> [String] {
        while !closed {
            let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if n > 0 {
                pending += buffer[0..<n]
            } else if n == 0 {
                closed = true
            } else {
                break
            }
        }
        var out: [String] = []
        while let nl = pending.firstIndex(of: 10) {
            out.append(String(decoding: pending[..<nl], as: UTF8.self))
            pending.removeSubrange(...nl)
        }
        return out
    }
}

/// Writes one line to standard output, unbuffered.
func writeLine(_ text: String) {
    var bytes = Array(text.utf8)
    bytes.append(10)
    var offset = 0
    while offset < bytes.count {
        let n = bytes[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if n <= 0 { return }
        offset += n
    }
}

/// This process's CPU time, user + system, in seconds.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}
