public import AtriumDTLS
public import AtriumLog
import AtriumSync
public import AtriumUDP
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One media worker's thread (a server runs one per core): it owns its UDP socket and every
/// transport, producer and consumer of the rooms placed on it, and runs the packet path without locks. Other threads talk to it through `submit` (a command queue with an
/// eventfd wakeup) and read what it reports through `events()` and `stats` (copied once a second).
public final class MediaWorker: Sendable {
    /// The bound address (its port is the one the kernel chose when configured with 0).
    public let localAddress: SocketAddress
    /// The addresses announced as ICE candidates.
    public let candidateAddresses: [SocketAddress]
    /// The addresses announced as passive ICE-TCP candidates (the announced addresses with the bound
    /// TCP port); empty without ICE-TCP.
    public let tcpCandidateAddresses: [SocketAddress]
    /// `sha-256` digest of the worker's DTLS certificate, for `a=fingerprint`.
    public let fingerprint: [UInt8]

    private let commands = Locked<[MediaCommand]>([])
    private let reported = Locked<[MediaEvent]>([])
    private let snapshot = Locked<MediaStats>(MediaStats())
    private let stopping = Atomic<Bool>(false)
    private let engineWakeup: Wakeup
    private let box: EngineBox
    private let thread = Locked<JoinableThread?>(nil)
    private let notifier = Locked<(@Sendable () -> Void)?>(nil)

    /// The worker's place among the process's workers (its `worker` label in the metrics).
    public let index: Int

    /// Binds the socket; `start()` runs the thread. `certificate` is shared by every worker of the
    /// process (one fingerprint in every answer); nil makes one for this worker.
    public init(
        configuration: MediaConfiguration, logger: Logger, certificate: DTLSCertificate? = nil, index: Int = 0
    ) throws {
        self.index = index
        let engine = try MediaEngine(config: configuration, logger: logger, certificate: certificate)
        localAddress = engine.io.localAddress
        let port = localAddress.port
        candidateAddresses =
            configuration.announced.isEmpty ? [localAddress] : configuration.announced.map { $0.withPort(port) }
        if let tcp = engine.tcpListener?.localAddress {
            tcpCandidateAddresses =
                configuration.announced.isEmpty ? [tcp] : configuration.announced.map { $0.withPort(tcp.port) }
        } else {
            tcpCandidateAddresses = []
        }
        fingerprint = engine.certificate.fingerprint.digest
        engineWakeup = engine.poller.wakeup
        box = EngineBox(engine)
    }

    /// The worker thread's wakeup, for the pipes of rooms spread over several workers (`PipeLink`).
    public var wakeup: Wakeup { engineWakeup }

    /// The name its thread shows in `top -H`, `perf` and `/proc/PID/task/*/comm` (at most 15 bytes, the
    /// kernel's limit).
    public static func threadName(index: Int) -> String {
        String(decoding: "atrium-media-\(index)".utf8.prefix(ThreadName.maxBytes), as: UTF8.self)
    }

    /// Queues a command for the worker thread and wakes it.
    public func submit(_ command: MediaCommand) {
        commands.withLock { $0.append(command) }
        wakeup.wake()
    }

    /// Events reported since the last call.
    public func events() -> [MediaEvent] {
        reported.withLock { e in
            defer { e.removeAll() }
            return e
        }
    }

    /// Called on the worker thread whenever events were reported, so that the service thread drains
    /// them at once (a transport's `media_state` the moment DTLS completes) rather than on its timer.
    /// It must only wake that thread.
    /// nil removes it (before the thread it wakes goes away); no call begins after that returns.
    public func onEvents(_ notify: (@Sendable () -> Void)?) {
        notifier.withLock { $0 = notify }
    }

    /// The counters as of the last second.
    public var stats: MediaStats { snapshot.withLock { $0 } }

    /// Starts the thread; a failed `pthread_create` is an error (a server without its media thread
    /// must not start as if it had one).
    public func start() throws(MediaWorkerError) {
        do {
            let started = try JoinableThread.start { self.run() }
            thread.withLock { $0 = started }
        } catch {
            throw .threadStart(errno: error.errno)
        }
    }

    /// Stops the thread and waits for it.
    public func stop() {
        stopping.store(true, ordering: .releasing)
        wakeup.wake()
        thread.withLock { t in
            defer { t = nil }
            return t
        }?.join()
    }

    private func run() {
        ThreadName.set(Self.threadName(index: index))
        let engine = box.engine
        var lastSnapshot = 0.0
        while !stopping.load(ordering: .acquiring) {
            let woken: Bool
            do {
                woken = try engine.runOnce(timeout: engine.pollTimeout)
            } catch {
                engine.logger.error("media worker poll failed", ("error", "\(error)"))
                break
            }
            if woken {
                let pending = commands.withLock { c in
                    defer { c.removeAll() }
                    return c
                }
                for c in pending { engine.apply(c) }
                engine.flush()
            }
            if !engine.events.isEmpty {
                reported.withLock { $0 += engine.events }
                engine.events.removeAll(keepingCapacity: true)
                notifier.withLock { $0?() }
            }
            let t = engine.now
            if t - lastSnapshot >= 1 {
                lastSnapshot = t
                let s = engine.snapshot()
                snapshot.withLock { $0 = s }
            }
        }
    }
}

public enum MediaWorkerError: Error, CustomStringConvertible {
    case threadStart(errno: Int32)

    public var description: String {
        switch self {
        case .threadStart(let e): "cannot start the media thread (pthread_create: \(e))"
        }
    }
}

/// Hands the engine to the worker thread. The engine is touched only there after `start()`; its
/// constructor ran on the caller's thread before the thread existed.
private final class EngineBox: @unchecked Sendable {
    let engine: MediaEngine
    init(_ engine: MediaEngine) { self.engine = engine }
}
