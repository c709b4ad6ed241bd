import Foundation

@testable import AtriumRedis

/// A real `redis-server` (Debian's) started by a test on 127.0.0.1 on a free port, without persistence,
/// stopped when the value is released. Tests that need one skip when the binary is missing, except in
/// the gate (`make test` sets ATRIUM_GATE=1 and installs it), where a missing binary fails them.
final class LiveRedis {
    static let binary = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static var available: Bool { binary != nil || ProcessInfo.processInfo.environment["ATRIUM_GATE"] == "1" }

    let port: Int
    private var process: Process?

    var url: RedisURL { RedisURL(host: "127.0.0.1", port: port) }

    init(port: Int? = nil) throws {
        self.port = try port ?? Self.freePort()
        try start()
    }

    deinit { stop() }

    /// Starts the server (again, on the same port) and waits until it answers.
    func start() throws {
        guard let binary = Self.binary else { throw LiveRedisError.missing }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = [
            "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no",
            "--loglevel", "warning",
        ]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        for _ in 0..<100 {
            if let c = try? RedisConnection(url: url, connectTimeoutMillis: 100, commandTimeoutMillis: 500),
                (try? c.command(["PING"])) == .status("PONG")
            {
                return
            }
            usleep(50_000)
        }
        throw LiveRedisError.notAnswering
    }

    /// Kills the server (SIGKILL: what an outage looks like to clients) and waits for it to go.
    func stop() {
        guard let p = process else { return }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        process = nil
    }

    /// A TCP port nobody listens on now (bound to 127.0.0.1 and released).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0
            }
        }
        guard ok else { throw LiveRedisError.noPort }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}

enum LiveRedisError: Error {
    case missing
    case notAnswering
    case noPort
}
