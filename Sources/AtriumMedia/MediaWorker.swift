import AtriumDTLS
public import AtriumLog
import AtriumSync
public import AtriumUDP
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The media plane's thread: it owns the UDP socket and every transport, producer and consumer, and runs
/// the packet path without locks. Other threads talk to it through `submit` (a command queue with an
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
    private let wakeup: Wakeup
    private let box: EngineBox
    private let thread = Locked<pthread_t?>(nil)
    private let notifier = Locked<(@Sendable () -> Void)?>(nil)

    /// Binds the socket and makes the certificate; `start()` runs the thread.
    public init(configuration: MediaConfiguration, logger: Logger) throws {
        let engine = try MediaEngine(config: configuration, logger: logger)
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
        wakeup = engine.poller.wakeup
        box = EngineBox(engine)
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
        let context = Unmanaged.passRetained(self).toOpaque()
        var handle = pthread_t()
        let rc = pthread_create(
            &handle, nil,
            { raw in
                guard let raw else { return nil }
                let worker = Unmanaged<MediaWorker>.fromOpaque(raw).takeRetainedValue()
                worker.run()
                return nil
            }, context)
        guard rc == 0 else {
            Unmanaged<MediaWorker>.fromOpaque(context).release()
            throw .threadStart(errno: rc)
        }
        thread.withLock { $0 = handle }
    }

    /// Stops the thread and waits for it.
    public func stop() {
        stopping.store(true, ordering: .releasing)
        wakeup.wake()
        if let handle = thread.withLock({ t in
            defer { t = nil }
            return t
        }) {
            pthread_join(handle, nil)
        }
    }

    private func run() {
        let engine = box.engine
        var lastSnapshot = 0.0
        while !stopping.load(ordering: .acquiring) {
            let woken: Bool
            do {
                woken = try engine.runOnce(timeout: .milliseconds(engine.hasPendingSends ? 2 : 20))
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
