internal import CAtriumSpawn

#if canImport(Glibc)
    import Glibc
#endif

/// A process the server started (ffmpeg), supervised without a thread: `poll` reaps it when it has
/// exited. The `final class` owns the pid: `deinit` kills a child still running.
public final class ChildProcess {
    public let pid: Int32
    public private(set) var exitStatus: Int32?

    /// Spawns `arguments[0]` (looked up in PATH) with stdin and stdout on /dev/null, stderr into
    /// `logPath` and no other descriptor. Signal handlers and the signal mask are reset in the child.
    public init?(arguments: [String], logPath: String) {
        guard !arguments.isEmpty else { return nil }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        argv.append(nil)
        defer { for a in argv { free(a) } }
        var child: Int32 = 0
        guard atrium_spawn(argv, logPath, &child) == 0 else { return nil }
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
