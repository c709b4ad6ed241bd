#if canImport(Glibc)
    import Glibc
#endif

/// A process the server started (ffmpeg), supervised without a thread: `poll` reaps it when it has
/// exited. The `final class` owns the pid: `deinit` kills a child still running.
public final class ChildProcess {
    public let pid: Int32
    public private(set) var exitStatus: Int32?

    /// Spawns `arguments[0]` (looked up in PATH) with stdin and stdout on /dev/null and stderr into
    /// `logPath`. Signal handlers and the signal mask are reset in the child.
    public init?(arguments: [String], logPath: String) {
        guard !arguments.isEmpty else { return nil }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGINT, SIGTERM, SIGPIPE, SIGHUP] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        argv.append(nil)
        defer { for a in argv { free(a) } }
        var child: Int32 = 0
        let rc = posix_spawnp(&child, arguments[0], &actions, &attr, argv, environ)
        guard rc == 0 else { return nil }
        pid = child
    }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
    }

    /// Sends a signal (SIGINT asks ffmpeg to finish the file and exit).
    public func signal(_ sig: Int32) {
        if exitStatus == nil { kill(pid, sig) }
    }

    /// Reaps the child if it exited; returns its status: the exit code, or 128 + the signal that
    /// ended it. Nil while it runs.
    @discardableResult
    public func poll() -> Int32? {
        if let s = exitStatus { return s }
        var status: Int32 = 0
        let r = waitpid(pid, &status, WNOHANG)
        guard r == pid else { return nil }
        let signalled = status & 0x7F
        exitStatus = signalled == 0 ? (status >> 8) & 0xFF : 128 + signalled
        return exitStatus
    }
}
