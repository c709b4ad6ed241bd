import AtriumCrypto
import AtriumModel
import AtriumRecording
import AtriumRedis

#if canImport(Glibc)
    import Glibc
#endif

/// TLS to Redis (`rediss://`) through Debian's stunnel, since hiredis 0.14 has none: a child process in
/// client mode that accepts on a Unix socket in a private directory (0700) of its own in the data
/// directory (`redis-tls-` and a random name, locked while in use: nodes may share a data directory,
/// each as PID 1 of its container) and connects to Redis, checking its certificate against the CA
/// (`--redis-ca`, else the system's) and its host name or address; a client certificate when Redis
/// asks for one (`--redis-cert`, `--redis-key`). Every Redis connection of this node goes to that
/// socket. Started again when it exits (`check`, on the housekeeping tick; the wait doubles from 1 s
/// to a minute while it keeps exiting), stopped by PID with the node; in its own session (a terminal's
/// Ctrl-C or a unit's SIGTERM reaches the node alone, which still needs Redis while it drains) and
/// ended by the kernel if the node dies.
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
    var lockPath: String { directory + "/lock" }
    /// What a tunnel's directory holds.
    static let files = ["redis.sock", "stunnel.conf", "stunnel.log", "lock"]
    private(set) var child: ChildProcess?
    /// Between `start` and `stop`: an exited stunnel is started again.
    private var wanted = false
    private var lastSpawn = -Double.infinity
    private var backoff = 1.0
    private var configuration = ""

    let dataDir: String
    static let prefix = "redis-tls-"
    /// A directory without a lock file (a node between making it and locking it, or debris) is left
    /// alone until it is this old.
    static let staleAfter = 60.0
    /// `lock` in the directory, held (flock) for as long as this tunnel is wanted: a directory whose
    /// lock anyone can take belongs to a node that is gone.
    private var lockFD: Int32 = -1

    /// `remote`: the `rediss://` URL; `dataDir`: where the tunnel's directory goes (made absolute:
    /// stunnel reads an `accept` that does not start with `/` as a host and port).
    init(remote: RedisURL, dataDir: String, options: Options) {
        self.remote = remote
        self.options = options
        self.dataDir = AtriumServer.absolute(dataDir)
        directory = self.dataDir + "/" + Self.prefix + Base32.encode(SecureRandom.uint64(), count: 10)
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
        guard socket.hasPrefix("/") else { return .failure(.unsafe("the relative socket path \(socket)")) }
        // `delay`: the name is looked up at each connection (a Redis that fails over by DNS). No SNI
        // for an address (RFC 6066 has none for them). Warnings and errors only: a line per connection
        // otherwise.
        var lines = [
            "foreground = yes", "pid =", "syslog = no", "debug = 4",
            "[redis]", "client = yes", "accept = \(socket)", "connect = \(remote.host):\(remote.port)",
            "delay = yes", "verifyChain = yes", options.ca.map { "CAfile = \($0)" } ?? "CApath = /etc/ssl/certs",
            isAddress ? "checkIP = \(remote.host)" : "checkHost = \(remote.host)", "sslVersionMin = TLSv1.2",
        ]
        if isAddress { lines.append("sni =") }
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
        removeStale()
        configuration = text
        wanted = true
        guard writeConfiguration() else {
            stop()
            throw .failed("cannot write \(configPath) in a private directory")
        }
        guard spawn() else {
            stop()
            throw .failed("cannot start stunnel (Debian's stunnel4)")
        }
        var waited = 0.0
        while waited < timeout {
            if let c = child, c.poll() != nil {
                let why = logTail()
                stop()
                let missing = why.isEmpty || why.contains("failed to execute")
                throw .failed("stunnel exited" + (missing ? " (is Debian's stunnel4 installed?)" : "") + ": \(why)")
            }
            if acceptsConnections(socketPath) { return }
            usleep(20_000)
            waited += 0.02
        }
        let why = logTail()
        stop()
        throw .failed("stunnel's socket did not open within \(Int(timeout)) s: \(why)")
    }

    /// The private directory (made if missing), its lock taken, and the configuration in it.
    private func writeConfiguration() -> Bool {
        guard makeDirectories(dataDir) else { return false }
        if mkdir(directory, 0o700) != 0 && errno != EEXIST { return false }
        guard chmod(directory, 0o700) == 0 else { return false }
        if lockFD < 0 {
            let fd = open(lockPath, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return false }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                close(fd)
                return false
            }
            lockFD = fd
        }
        return writeFile(configPath, Array(configuration.utf8), mode: 0o600)
    }

    /// The directories of tunnels whose node is gone (killed, crashed): their lock is free, or, without
    /// one, they are older than `staleAfter`.
    private func removeStale() {
        guard let dir = opendir(dataDir) else { return }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix(Self.prefix) { names.append(name) }
        }
        closedir(dir)
        for name in names {
            let path = dataDir + "/" + name
            let fd = open(path + "/lock", O_RDWR | O_CLOEXEC)
            if fd >= 0 {
                defer { close(fd) }
                guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }
            } else {
                var info = stat()
                guard stat(path, &info) == 0, Double(time(nil)) - Double(info.st_mtim.tv_sec) > Self.staleAfter
                else { continue }
            }
            Self.remove(path)
        }
    }

    /// Starts stunnel (in its own session, SIGTERM when the thread that started it ends) without
    /// waiting for its socket; false when it could not be started at all.
    private func spawn() -> Bool {
        unlink(socketPath)
        lastSpawn = Clock.monotonic()
        child = ChildProcess(
            arguments: ["setpriv", "--pdeathsig", "TERM", "setsid", "stunnel", configPath], logPath: logPath)
        return child != nil
    }

    /// On the housekeeping tick: an stunnel that exited is started again, the wait between starts
    /// doubling from one second to a minute while it keeps exiting (back to one once it ran a minute).
    /// Returns, for the node's log, what its log said last when it had exited.
    func check() -> (restarted: Bool, why: String)? {
        guard wanted else { return nil }
        let now = Clock.monotonic()
        if let c = child {
            guard c.poll() != nil else {
                if now - lastSpawn > 60 { backoff = 1 }
                return nil
            }
            child = nil
        }
        guard now - lastSpawn >= backoff else { return nil }
        let why = logTail()
        lastSpawn = now
        backoff = min(60, backoff * 2)
        // Written again: another node's start may have taken the directory of a tunnel down this long
        // for one a dead node left.
        guard writeConfiguration(), spawn() else { return (false, why) }
        return (true, why)
    }

    /// Stops stunnel (SIGTERM, a second to exit, then SIGKILL; reaped) and removes its directory.
    func stop() {
        wanted = false
        if let c = child, c.poll() == nil {
            c.signal(SIGTERM)
            var waited = 0
            while c.poll() == nil && waited < 50 {
                usleep(20_000)
                waited += 1
            }
        }
        child = nil
        Self.remove(directory)
        if lockFD >= 0 {
            close(lockFD)
            lockFD = -1
        }
    }

    /// A tunnel's directory and what it holds.
    static func remove(_ directory: String) {
        for file in files { unlink(directory + "/" + file) }
        rmdir(directory)
    }

    private func acceptsConnections(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
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
