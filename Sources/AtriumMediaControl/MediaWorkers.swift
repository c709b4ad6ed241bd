public import AtriumMedia
public import AtriumUDP

/// Several media workers behind one `MediaPlane`: each room (router) is placed on the
/// least-loaded worker when it is first named (its candidates asked for an answer or offer, or its
/// first transport opened), and every later command about it, its transports, producers, consumers
/// and recorders goes to the worker that holds them. Events and transport figures are the workers'
/// together.
///
/// A room with more than `spread` transports on its home worker spreads: later viewers' transports
/// open on another worker (`WorkerPlacement.subscriber`), and a consumer there of a producer at home
/// makes the producer piped (once per far worker): the far worker gets a pipe producer
/// (`addPipeProducer`) fed through the `PipeLink` of that ordered pair of workers, made here on
/// first use and kept (about 1.5 MiB each), and the home worker starts copying into it
/// (`pipeProducer`). Pausing and closing a piped producer reach its pipe producers too.
///
/// It lives on the service thread, like the coordinator that drives it: the maps are not locked.
/// A command naming an id it does not know (already closed) goes to every worker, which ignore ids
/// they do not have, as one worker does.
public final class MediaWorkers: MediaPlane {
    /// The workers, in the order of their ports; a worker's index is its `worker` metrics label.
    public let workers: [any MediaPlane]
    /// A room's transports on one worker before its new viewers go to another (0: never).
    public let spread: Int

    /// Each placed room's workers, home first, with the room's transports on each.
    private var roomWorkers: [String: [(worker: Int, transports: Int)]] = [:]
    private var transportWorker: [String: Int] = [:]
    private var transportRoom: [String: String] = [:]
    /// Producers and consumers by the transport they were made on; recorders by their worker.
    private var producerTransport: [String: String] = [:]
    private var consumerTransport: [String: String] = [:]
    private var recorderWorker: [String: Int] = [:]
    private var lineWorker: [String: Int] = [:]
    /// Producers' specs (a pipe producer is made from it) and their pipes: far worker -> tag.
    private var producerSpecs: [String: ProducerSpec] = [:]
    private var pipes: [String: [Int: UInt32]] = [:]
    private var links: [Int: PipeLink] = [:]
    private var nextTag: UInt32 = 0
    private var loads: [WorkerPlacement.Load]
    /// Producers whose publisher is on another node (a pipe producer fed by a relay link), by id:
    /// the worker they were made on and their room.
    private var relayed: [String: (worker: Int, room: String)] = [:]

    /// `workers` must not be empty; they share one DTLS certificate, so one fingerprint.
    public init(_ workers: [any MediaPlane], spread: Int = 0) {
        precondition(!workers.isEmpty, "MediaWorkers needs at least one worker")
        self.workers = workers
        self.spread = spread
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

    public func candidateAddresses(room: String, transport: String) -> [SocketAddress] {
        workers[transportWorker[transport] ?? place(room)].candidateAddresses
    }

    public func tcpCandidateAddresses(room: String, transport: String) -> [SocketAddress] {
        workers[transportWorker[transport] ?? place(room)].tcpCandidateAddresses
    }

    public var pipeWakeup: Wakeup? { nil }

    /// The worker that owns a room (its home), placing it when it has none.
    public func home(ofRoom room: String) -> Int { place(room) }

    /// The worker that owns a room (its home), if it is placed.
    public func worker(ofRoom room: String) -> Int? { roomWorkers[room]?.first?.worker }

    /// Every worker a room is on, home first.
    public func workers(ofRoom room: String) -> [Int] { roomWorkers[room]?.map(\.worker) ?? [] }

    /// The worker a transport opened on.
    public func worker(ofTransport id: String) -> Int? { transportWorker[id] }

    /// The far workers a producer is piped to.
    public func pipedWorkers(ofProducer id: String) -> [Int] { pipes[id].map { $0.keys.sorted() } ?? [] }

    /// What each worker carries, by index.
    public var placementLoads: [WorkerPlacement.Load] { loads }

    /// Every worker's events, an audio level report tagged with the worker it came from.
    public func events() -> [MediaEvent] {
        workers.indices.flatMap { w in
            workers[w].events().map { event in
                guard case .audioLevels(let levels, _) = event else { return event }
                return .audioLevels(levels, worker: w)
            }
        }
    }

    public var transportStats: [TransportStats] { workers.flatMap(\.transportStats) }

    public func submit(_ command: MediaCommand) {
        switch command {
        case .openTransport(let spec):
            let w = transportWorker[spec.id] ?? open(spec)
            workers[w].submit(command)
        case .updateTransport(let id, _, _, _): route(command, transportWorker[id])
        case .closeTransport(let id):
            // Its producers' pipe producers go with them.
            for (p, t) in producerTransport where t == id { closePipes(of: p) }
            route(command, transportWorker[id])
            forgetTransport(id)
        case .closeRouter(let id):
            let on = workers(ofRoom: id)
            if on.isEmpty { route(command, nil) }
            for w in on { workers[w].submit(command) }
            for (p, r) in relayed where r.room == id {
                relayed[p] = nil
                producerSpecs[p] = nil
                pipes[p] = nil
            }
            if let placed = roomWorkers.removeValue(forKey: id), let home = placed.first {
                loads[home.worker].rooms -= 1
                for (t, r) in transportRoom where r == id { forgetTransport(t) }
            }
        case .reject(let transport, _, _): route(command, transportWorker[transport])
        case .allocate(let transport, _): route(command, transportWorker[transport])
        case .sendData(let transport, _, _): route(command, transportWorker[transport])
        case .addProducer(let spec):
            if transportWorker[spec.transport] != nil {
                producerTransport[spec.id] = spec.transport
                producerSpecs[spec.id] = spec
            }
            route(command, transportWorker[spec.transport])
        case .pauseProducer(let id, let paused):
            route(command, worker(ofProducer: id))
            if var spec = producerSpecs[id] {
                spec.paused = paused
                producerSpecs[id] = spec
            }
            for w in pipedWorkers(ofProducer: id) { workers[w].submit(command) }
        case .closeProducer(let id):
            route(command, worker(ofProducer: id))
            closePipes(of: id)
            producerTransport[id] = nil
            producerSpecs[id] = nil
            relayed[id] = nil
        case .addConsumer(let spec):
            let at = transportWorker[spec.transport]
            if at != nil { consumerTransport[spec.id] = spec.transport }
            if let at, let home = worker(ofProducer: spec.producer), home != at {
                pipe(spec.producer, from: home, to: at)
            }
            route(command, at)
        case .setPreference(let consumer, _): route(command, worker(ofConsumer: consumer))
        case .closeConsumer(let id):
            route(command, worker(ofConsumer: id))
            consumerTransport[id] = nil
        case .addRecorder(let spec):
            let w = worker(ofProducer: spec.producer)
            if let w { recorderWorker[spec.id] = w }
            route(command, w)
        case .closeRecorder(let id): route(command, recorderWorker.removeValue(forKey: id))
        case .openRecorderLine(let spec):
            // On the room's home worker, with the room's producers.
            let w = worker(ofRoom: spec.router)
            if let w { lineWorker[spec.id] = w }
            route(command, w)
        case .closeRecorderLine(let id): route(command, lineWorker.removeValue(forKey: id))
        case .pipeProducer, .addPipeProducer:
            // The set of workers' own commands, made here.
            break
        case .unpipe:
            // Whichever worker holds it.
            route(command, nil)
        case .restate(let id): route(command, transportWorker[id])
        }
    }

    /// The worker a producer was made on, while its transport is open (or, relayed, until closed).
    public func worker(ofProducer id: String) -> Int? {
        producerTransport[id].flatMap { transportWorker[$0] } ?? relayed[id]?.worker
    }

    /// A producer whose publisher is on another node: a pipe producer on the room's home worker, fed
    /// through `link` (a relay link's, into that worker) under `tag`: on an owner, a track published
    /// on an edge; on an edge, a track of the owner's. Consumed, piped to other workers, paused and
    /// closed like a local producer.
    public func addRelayedProducer(_ spec: ProducerSpec, router: String, link: PipeLink, tag: UInt32) {
        let w = place(router)
        relayed[spec.id] = (w, router)
        producerSpecs[spec.id] = spec
        workers[w].submit(.addPipeProducer(spec, router: router, link: link, tag: tag))
    }

    /// The worker a consumer was made on, while its transport is open.
    public func worker(ofConsumer id: String) -> Int? { consumerTransport[id].flatMap { transportWorker[$0] } }

    /// The worker a new transport opens on: a publisher's on the room's home, a viewer's by the
    /// spread rule.
    private func open(_ spec: TransportSpec) -> Int {
        let home = place(spec.router)
        var w = home
        if spec.role == .subscriber, let room = roomWorkers[spec.router] {
            w = WorkerPlacement.subscriber(room: room, loads: loads, spread: spread) ?? home
        }
        if let i = roomWorkers[spec.router]?.firstIndex(where: { $0.worker == w }) {
            roomWorkers[spec.router]?[i].transports += 1
        } else {
            roomWorkers[spec.router, default: []].append((w, 1))
        }
        loads[w].transports += 1
        transportWorker[spec.id] = w
        transportRoom[spec.id] = spec.router
        return w
    }

    /// The room's home worker, placing it on the least-loaded one when it has none.
    private func place(_ room: String) -> Int {
        if let w = roomWorkers[room]?.first?.worker { return w }
        let w = WorkerPlacement.leastLoaded(loads) ?? 0
        roomWorkers[room] = [(w, 0)]
        loads[w].rooms += 1
        return w
    }

    /// Feeds producer `id` of worker `home` to a pipe producer on worker `far`, once.
    private func pipe(_ id: String, from home: Int, to far: Int) {
        guard pipes[id]?[far] == nil, let spec = producerSpecs[id],
            let room = producerTransport[id].flatMap({ transportRoom[$0] }) ?? relayed[id]?.room
        else { return }
        let link = self.link(from: home, to: far)
        nextTag &+= 1
        let tag = nextTag
        pipes[id, default: [:]][far] = tag
        // The pipe producer exists before the consumer that follows this command on the far worker.
        workers[far].submit(.addPipeProducer(spec, router: room, link: link, tag: tag))
        workers[home].submit(.pipeProducer(id: id, link: link, tag: tag))
    }

    private func link(from: Int, to: Int) -> PipeLink {
        let key = from * workers.count + to
        if let l = links[key] { return l }
        let l = PipeLink(from: from, to: to, wakeFar: workers[to].pipeWakeup, wakeHome: workers[from].pipeWakeup)
        links[key] = l
        return l
    }

    /// Closes a producer's pipe producers (their viewers' consumers end with them).
    private func closePipes(of id: String) {
        guard let piped = pipes.removeValue(forKey: id) else { return }
        for w in piped.keys.sorted() { workers[w].submit(.closeProducer(id: id)) }
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
        if let room = transportRoom.removeValue(forKey: id),
            let i = roomWorkers[room]?.firstIndex(where: { $0.worker == w })
        {
            roomWorkers[room]?[i].transports -= 1
        }
        loads[w].transports -= 1
        for (p, t) in producerTransport where t == id {
            producerSpecs[p] = nil
            pipes[p] = nil
        }
        producerTransport = producerTransport.filter { $0.value != id }
        consumerTransport = consumerTransport.filter { $0.value != id }
    }
}
