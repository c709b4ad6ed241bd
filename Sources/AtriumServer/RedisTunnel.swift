import AtriumRecording
import AtriumRedis

#if canImport(Glibc)
    import Glibc
#endif

/// TLS to Redis (`rediss://`) through Debian's stunnel, since hiredis 0.14 has none: a child process in
/// client mode that accepts on a Unix socket in a private directory (0700) of the data directory and
/// connects to Redis, checking its certificate against the CA (`--redis-ca`, else the system's) and
/// its host name or address; a client certificate when Redis asks for one (`--redis-cert`,
/// `--redis-key`). Every Redis connection of this node goes to that socket. Restarted when it exits
/// (`check`, on the housekeeping tick), stopped by PID with the node.
final class RedisTunnel {
    struct Options: Equatable, Sendable {
        var ca: String?
        var cert: String?
        var key: String?
    }

    let remote: RedisURL
    let options: Options
    let directory: String
    var socketPath: String { directory + "/redis.sock" }
    var configPath: String { directory + "/stunnel.conf" }
    var logPath: String { directory + "/stunnel.log" }
    private(set) var child: ChildProcess?
    private(set) var restarts = 0

    /// `remote`: the `rediss://` URL; `dataDir`: where the tunnel's directory goes.
    init(remote: RedisURL, dataDir: String, options: Options) {
        self.remote = remote
        self.options = options
        directory = dataDir + "/redis-tls"
    }

    /// The URL every connection of this node uses: the tunnel's socket, the password and database of
    /// the remote one.
    var localURL: RedisURL {
        RedisURL(
            host: remote.host, port: remote.port, password: remote.password, database: remote.database,
            socketPath: socketPath)
    }

    /// stunnel's configuration, or why there is none: a host or path that could not be written into it
    /// as one value (a control character, a quote) is refused rather than escaped.
    static func configuration(remote: RedisURL, socket: String, options: Options) -> Result<String, TunnelError> {
        let hostSafe = remote.host.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2E || c == 0x2D
                || c == 0x3A || c == 0x5F
        }
        guard hostSafe, !remote.host.isEmpty else { return .failure(.unsafe("the Redis host \(remote.host)")) }
        for path in [socket, options.ca, options.cert, options.key].compactMap({ $0 })
        where path.isEmpty || path.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0x22 }) {
            return .failure(.unsafe("the path \(path)"))
        }
        if (options.cert == nil) != (options.key == nil) {
            return .failure(.unsafe("--redis-cert and --redis-key go together"))
        }
        // An address is checked as one (checkIP), a name against the certificate's names (checkHost).
        let isAddress =
            remote.host.contains(":") || remote.host.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E }
        var lines = [
            "foreground = yes", "pid =", "syslog = no", "debug = 5",
            "[redis]", "client = yes", "accept = \(socket)", "connect = \(remote.host):\(remote.port)",
            "verifyChain = yes", options.ca.map { "CAfile = \($0)" } ?? "CApath = /etc/ssl/certs",
            isAddress ? "checkIP = \(remote.host)" : "checkHost = \(remote.host)", "sslVersionMin = TLSv1.2",
        ]
        if let cert = options.cert, let key = options.key { lines += ["cert = \(cert)", "key = \(key)"] }
        return .success(lines.joined(separator: "\n") + "\n")
    }

    enum TunnelError: Error, Equatable, CustomStringConvertible {
        case unsafe(String)
        case failed(String)

        var description: String {
            switch self {
            case .unsafe(let what): "rediss://: \(what) cannot go into stunnel's configuration"
            case .failed(let why): "rediss://: \(why)"
            }
        }
    }

    /// Writes the configuration, starts stunnel and waits (up to `timeout` seconds) until its socket
    /// takes connections.
    func start(timeout: Double = 10) throws(TunnelError) {
        let text: String
        switch Self.configuration(remote: remote, socket: socketPath, options: options) {
        case .success(let t): text = t
        case .failure(let e): throw e
        }
        // sun_path holds 108 bytes with its terminating zero.
        guard socketPath.utf8.count < 108 else { throw .failed("the data directory's path is too long for a socket") }
        for path in [options.ca, options.cert, options.key].compactMap({ $0 }) where access(path, R_OK) != 0 {
            throw .failed("cannot read \(path)")
        }
        guard makeDirectories(directory), chmod(directory, 0o700) == 0 else {
            throw .failed("cannot make the private directory \(directory)")
        }
        guard writeFile(configPath, Array(text.utf8), mode: 0o600) else { throw .failed("cannot write \(configPath)") }
        try spawn(timeout: timeout)
    }

    private func spawn(timeout: Double) throws(TunnelError) {
        unlink(socketPath)
        guard let c = ChildProcess(arguments: ["stunnel", configPath], logPath: logPath) else {
            throw .failed("cannot start stunnel (Debian's stunnel4)")
        }
        child = c
        var waited = 0.0
        while waited < timeout {
            if c.poll() != nil {
                child = nil
                throw .failed("stunnel exited: \(logTail())")
            }
            if acceptsConnections() { return }
            usleep(20_000)
            waited += 0.02
        }
        stop()
        throw .failed("stunnel's socket did not open within \(Int(timeout)) s: \(logTail())")
    }

    /// Restarts stunnel if it exited (the housekeeping tick); false when that failed too.
    @discardableResult
    func check() -> Bool {
        guard let c = child, c.poll() != nil else { return true }
        child = nil
        restarts += 1
        do throws(TunnelError) { try spawn(timeout: 2) } catch { return false }
        return true
    }

    /// Stops stunnel (SIGTERM, then reaped by `ChildProcess`) and removes its socket.
    func stop() {
        if let c = child, c.poll() == nil { c.signal(SIGTERM) }
        child = nil
        unlink(socketPath)
    }

    private func acceptsConnections() -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(socketPath.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    private func logTail() -> String {
        let text = readFile(logPath).map { String(decoding: $0, as: UTF8.self) } ?? ""
        return String(text.split(separator: "\n").suffix(3).joined(separator: " | "))
    }
}
