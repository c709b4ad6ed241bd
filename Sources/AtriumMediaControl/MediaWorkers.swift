public import AtriumMedia
public import AtriumUDP

/// Several media workers behind one `MediaPlane` (issue 14): each room (router) is placed on the
/// least-loaded worker when it is first named (its candidates asked for an answer or offer, or its
/// first transport opened), and every later command about it, its transports, producers, consumers
/// and recorders goes to that worker. Events and transport figures are the workers' together.
///
/// It lives on the service thread, like the coordinator that drives it: the maps are not locked.
/// A command naming an id it does not know (already closed) goes to every worker, which ignore ids
/// they do not have, as one worker does.
public final class MediaWorkers: MediaPlane {
    /// The workers, in the order of their ports; a worker's index is its `worker` metrics label.
    public let workers: [any MediaPlane]

    private var roomWorker: [String: Int] = [:]
    private var transportWorker: [String: Int] = [:]
    private var transportRoom: [String: String] = [:]
    /// Producers and consumers by the transport they were made on; recorders by their worker.
    private var producerTransport: [String: String] = [:]
    private var consumerTransport: [String: String] = [:]
    private var recorderWorker: [String: Int] = [:]
    private var loads: [WorkerPlacement.Load]

    /// `workers` must not be empty; they share one DTLS certificate, so one fingerprint.
    public init(_ workers: [any MediaPlane]) {
        precondition(!workers.isEmpty, "MediaWorkers needs at least one worker")
        self.workers = workers
        loads = Array(repeating: WorkerPlacement.Load(), count: workers.count)
    }

    /// The certificate's fingerprint (the same on every worker).
    public var fingerprint: [UInt8] { workers[0].fingerprint }
    /// Every worker's candidate addresses (for a cluster's node record and the startup log).
    public var candidateAddresses: [SocketAddress] { workers.flatMap(\.candidateAddresses) }
    public var tcpCandidateAddresses: [SocketAddress] { workers.flatMap(\.tcpCandidateAddresses) }

    public func candidateAddresses(room: String) -> [SocketAddress] {
        workers[place(room)].candidateAddresses
    }

    public func tcpCandidateAddresses(room: String) -> [SocketAddress] {
        workers[place(room)].tcpCandidateAddresses
    }

    /// The worker that owns a room, if it is placed.
    public func worker(ofRoom room: String) -> Int? { roomWorker[room] }

    /// What each worker carries, by index.
    public var placementLoads: [WorkerPlacement.Load] { loads }

    public func events() -> [MediaEvent] { workers.flatMap { $0.events() } }

    public var transportStats: [TransportStats] { workers.flatMap(\.transportStats) }

    public func submit(_ command: MediaCommand) {
        switch command {
        case .openTransport(let spec):
            let w = place(spec.router)
            if transportWorker[spec.id] == nil {
                loads[w].transports += 1
                transportWorker[spec.id] = w
                transportRoom[spec.id] = spec.router
            }
            workers[w].submit(command)
        case .updateTransport(let id, _, _, _): route(command, transportWorker[id])
        case .closeTransport(let id):
            route(command, transportWorker[id])
            forgetTransport(id)
        case .closeRouter(let id):
            route(command, roomWorker[id])
            if let w = roomWorker.removeValue(forKey: id) {
                loads[w].rooms -= 1
                for (t, r) in transportRoom where r == id { forgetTransport(t) }
            }
        case .reject(let transport, _, _): route(command, transportWorker[transport])
        case .allocate(let transport, _): route(command, transportWorker[transport])
        case .addProducer(let spec):
            if transportWorker[spec.transport] != nil { producerTransport[spec.id] = spec.transport }
            route(command, transportWorker[spec.transport])
        case .pauseProducer(let id, _): route(command, worker(ofProducer: id))
        case .closeProducer(let id):
            route(command, worker(ofProducer: id))
            producerTransport[id] = nil
        case .addConsumer(let spec):
            if transportWorker[spec.transport] != nil { consumerTransport[spec.id] = spec.transport }
            route(command, transportWorker[spec.transport])
        case .setPreference(let consumer, _): route(command, worker(ofConsumer: consumer))
        case .closeConsumer(let id):
            route(command, worker(ofConsumer: id))
            consumerTransport[id] = nil
        case .addRecorder(let spec):
            let w = worker(ofProducer: spec.producer)
            if let w { recorderWorker[spec.id] = w }
            route(command, w)
        case .closeRecorder(let id): route(command, recorderWorker.removeValue(forKey: id))
        }
    }

    /// The worker a producer was made on, while its transport is open.
    public func worker(ofProducer id: String) -> Int? { producerTransport[id].flatMap { transportWorker[$0] } }

    /// The worker a consumer was made on, while its transport is open.
    public func worker(ofConsumer id: String) -> Int? { consumerTransport[id].flatMap { transportWorker[$0] } }

    /// The room's worker, placing it on the least-loaded one when it has none.
    private func place(_ room: String) -> Int {
        if let w = roomWorker[room] { return w }
        let w = WorkerPlacement.leastLoaded(loads) ?? 0
        roomWorker[room] = w
        loads[w].rooms += 1
        return w
    }

    private func route(_ command: MediaCommand, _ worker: Int?) {
        if let worker {
            workers[worker].submit(command)
        } else {
            for w in workers { w.submit(command) }
        }
    }

    /// Drops a closed transport and what was made on it (a worker closes a transport's producers
    /// and consumers with it).
    private func forgetTransport(_ id: String) {
        guard let w = transportWorker.removeValue(forKey: id) else { return }
        transportRoom[id] = nil
        loads[w].transports -= 1
        producerTransport = producerTransport.filter { $0.value != id }
        consumerTransport = consumerTransport.filter { $0.value != id }
    }
}
