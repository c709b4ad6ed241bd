#if canImport(Glibc)
    import Glibc
#endif

/// Free UDP port pairs on 127.0.0.1 for a recording's streams (RTP on an even port, RTCP on the
/// next), and whether a process has bound them yet (read from /proc/net/udp).
public enum LocalPorts {
    /// An even port whose pair is free now, or nil. The kernel picks it (an ephemeral port); it is
    /// released at once for ffmpeg to bind, so another process could take it first (the recording
    /// then fails and is reported).
    public static func freePair() -> Int? {
        for _ in 0..<64 {
            guard let (fd, port) = bind(0) else { return nil }
            close(fd)
            let even = port & ~1
            guard let (a, _) = bind(even) else { continue }
            guard let (b, _) = bind(even + 1) else {
                close(a)
                continue
            }
            close(a)
            close(b)
            return even
        }
        return nil
    }

    private static func bind(_ port: Int) -> (Int32, Int)? {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
        addr.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            close(fd)
            return nil
        }
        var bound = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        return (fd, Int(UInt16(bigEndian: bound.sin_port)))
    }

    /// The UDP ports bound on 127.0.0.1 or any address, from /proc/net/udp (`local_address` is
    /// `HEXADDR:HEXPORT`). Empty if the file cannot be read.
    public static func boundUDPPorts(_ text: String) -> Set<Int> {
        var out = Set<Int>()
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 1 else { continue }
            let local = fields[1].split(separator: ":")
            guard local.count == 2, local[0] == "0100007F" || local[0] == "00000000", let p = Int(local[1], radix: 16)
            else { continue }
            out.insert(p)
        }
        return out
    }

    public static func readProcNetUDP() -> String {
        guard let f = fopen("/proc/net/udp", "r") else { return "" }
        defer { fclose(f) }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = fread(&buf, 1, buf.count, f)
            if n <= 0 { break }
            out += buf[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
