import Foundation

/// The real server for AtriumKit's tests: `atrium serve --dev` (the binary `make build` made) on an
/// ephemeral port, in-memory rooms, no media; tokens from `atrium token create`. Stopped by PID.
final class LiveServer: @unchecked Sendable {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static var binary: String {
        ProcessInfo.processInfo.environment["ATRIUM_BIN"] ?? root.appendingPathComponent(".build/debug/atrium").path
    }

    let process = Process()
    let dir: URL
    private(set) var port = 0
    private(set) var key = ""
    private(set) var secret = ""

    var url: String { "ws://127.0.0.1:\(port)" }

    /// Another server on `other`'s data directory (its dev key) and on `port`: the first one restarted.
    convenience init(sameAs other: LiveServer, port: Int, _ extra: [String] = []) throws {
        try self.init(extra, dir: other.dir, port: port)
    }

    init(_ extra: [String] = [], dir existing: URL? = nil, port wanted: Int = 0) throws {
        dir =
            existing ?? FileManager.default.temporaryDirectory.appendingPathComponent("atriumkit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let out = dir.appendingPathComponent("out.log")
        let err = dir.appendingPathComponent("err.log")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments =
            [
                "serve", "--dev", "--store", "memory", "--port", String(wanted), "--udp-port", "-1",
                "--auto-create-rooms", "any",
                "--data-dir", dir.appendingPathComponent("data").path,
            ] + extra
        // The server's configuration is its arguments only, as the e2e harness does it.
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ATRIUM_") }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            let e = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
            let o = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
            if let m = e.firstMatch(of: #/msg=listening .*port=(\d+)/#), port == 0 { port = Int(m.output.1) ?? 0 }
            if let k = o.firstMatch(of: #/API key:\s+(\S+)/#), let s = o.firstMatch(of: #/API secret:\s+(\S+)/#) {
                key = String(k.output.1)
                secret = String(s.output.1)
            }
            if port > 0 && !key.isEmpty { return }
            guard process.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        stop()
        throw ServerError(message: "atrium did not start: \((try? String(contentsOf: err, encoding: .utf8)) ?? "")")
    }

    struct ServerError: Error { var message: String }

    /// A participant token for `room`.
    func token(_ room: String, _ identity: String, role: String? = nil, sources: String? = nil, ttl: Int? = nil)
        throws -> String
    {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.binary)
        var args = ["token", "create", "--key", key, "--secret", secret, "--room", room, "--identity", identity]
        if let role { args += ["--role", role] }
        if let sources { args += ["--sources", sources] }
        if let ttl { args += ["--ttl", String(ttl)] }
        p.arguments = args
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// SIGTERM, then (after a 10 s hang guard) SIGKILL. Not `waitUntilExit`: inside an async test it
    /// spins a run loop nobody serves.
    func stop(keepData: Bool = false) {
        let pid = process.processIdentifier
        if pid > 0 && kill(pid, 0) == 0 {
            kill(pid, SIGTERM)
            let deadline = Date().addingTimeInterval(10)
            func gone() -> Bool {
                var status: Int32 = 0
                let r = waitpid(pid, &status, WNOHANG)
                return r == pid || (r < 0 && errno == ECHILD)
            }
            while !gone() && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            if !gone() { kill(pid, SIGKILL) }
        }
        if !keepData { try? FileManager.default.removeItem(at: dir) }
    }

    deinit { stop(keepData: kept) }

    /// Set when another server took over the directory.
    var kept = false

    /// Creates a room through the admin API (`POST /v1/rooms`, curl with an admin token): its status.
    func createRoom(_ body: String) throws -> Int {
        let mint = Process()
        mint.executableURL = URL(fileURLWithPath: Self.binary)
        mint.arguments = ["token", "create", "--key", key, "--secret", secret, "--identity", "tests", "--admin"]
        let out = Pipe()
        mint.standardOutput = out
        try mint.run()
        let admin =
            String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").last.map(String.init) ?? ""
        mint.waitUntilExit()
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = [
            "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Authorization: Bearer \(admin)",
            "-H", "Content-Type: application/json", "--data", body, "http://127.0.0.1:\(port)/v1/rooms",
        ]
        let status = Pipe()
        curl.standardOutput = status
        try curl.run()
        let code = String(decoding: status.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        curl.waitUntilExit()
        return Int(code) ?? 0
    }
}
