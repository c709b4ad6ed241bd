public import AtriumDTLS
public import AtriumJSON
public import AtriumMedia
public import AtriumUDP

/// A node's media plane in a cluster whose big rooms spread over nodes (docs/cluster.md, one room
/// across nodes). Both roles at once:
///
/// - **Owner** of a room: once the room has `edgeAfter` transports on this node, its next
///   participant's transports open on another node (an *edge*, the less loaded of two drawn; a
///   publisher beside its subscriber), and every command about them (transports, tracks, consumers,
///   allocation, data) goes there as a media message. A producer a viewer there consumes is piped to
///   the edge once, through the relay link to it (made on first use: this node's end bound here, the
///   edge's address from its answer); a track published there comes up the same link
///   (`ClusterMediaPlane+Publishers`).
/// - **Edge** for rooms other nodes own: it runs what their messages say on its own workers (the
///   room spread over them as its own rooms are), feeds the pipe producers from the relay link, pipes the tracks
///   published here up to their owner, and sends back the events of what it runs for them.
///
/// Everything else is the local workers' (`local`). It lives on the service thread, like them.
public final class ClusterMediaPlane: MediaPlane {
    /// Another live node as placement sees it.
    public struct Peer: Sendable, Equatable {
        public var id: String
        public var mediaAddresses: [SocketAddress]
        /// SHA-256 digest of its media certificate (viewers placed there see it; its relay links show it).
        public var fingerprint: [UInt8]
        public var load: Double
        /// Its passive ICE-TCP candidates, offered beside the UDP ones to the viewers placed on it.
        public var tcpAddresses: [SocketAddress] = []

        public init(id: String, mediaAddresses: [SocketAddress], fingerprint: [UInt8], load: Double) {
            self.id = id
            self.mediaAddresses = mediaAddresses
            self.fingerprint = fingerprint
            self.load = load
        }
    }

    public let local: MediaWorkers
    public let me: String
    /// A room's transports on this node before its next viewer goes to an edge (0: never).
    public let edgeAfter: Int
    let certificate: DTLSCertificate
    /// Where relay links bind (port 0: any), and the address announced for them.
    let relayBind: SocketAddress
    let relayAnnounce: String
    /// Publishes a media message on a node's inbox.
    public var send: (JSONValue, String) -> Bool = { _, _ in false }
    /// The other live, non-draining nodes with media.
    public var peers: () -> [Peer] = { [] }
    public var random: (Int) -> Int = { Int.random(in: 0..<max(1, $0)) }
    /// Why something failed, for the log.
    public var log: (String) -> Void = { _ in }
    /// Monotonic seconds, for the bounds of kept connections (`orphanGrace`, `adoptionBound`).
    public var now: () -> Double = { 0 }
    /// How long a relay link may hear nothing from the other node before it has failed.
    public var linkSilence = RelayLink.defaultSilence

    // MARK: Owner

    struct Edge {
        var peer: Peer
        let link: RelayLink
        var started = false
        /// When the link was asked for (`now`): one the edge never answered fails after `linkSilence`.
        var openedAt = 0.0
        /// This node's pipe into the link from each home worker.
        var pipes: [Int: PipeLink] = [:]
        /// The pipe from the link into each worker, for the tracks of publishers placed there.
        var inPipes: [Int: PipeLink] = [:]
        /// The number of the last command sent to it over this link's life (`seq`).
        var sent: Int64 = 0
    }

    var edges: [String: Edge] = [:]
    /// Transports opened on an edge, by the edge's id; consumers on them likewise.
    var remoteTransports: [String: String] = [:]
    var remoteConsumers: [String: (node: String, transport: String)] = [:]
    /// Rooms (routers) with each local transport, and the count per room.
    var localTransportRoom: [String: String] = [:]
    var roomTransportsHere: [String: Int] = [:]
    var producerSpecs: [String: ProducerSpec] = [:]
    var producerRoom: [String: String] = [:]
    /// Each producer's tag on each edge it is piped to.
    var piped: [String: [String: UInt32]] = [:]
    /// Above the workers' own pipe tags (`MediaWorkers` counts from 1): the two never meet in a
    /// home worker's table.
    var nextTag: UInt32 = 0x8000_0000
    var remoteEvents: [MediaEvent] = []
    /// Pipes to an edge waiting for it to say it made the pipe producer (`piped`), by node and tag.
    var awaitingEdge: [String: [UInt32: (producer: String, home: Int, pipe: PipeLink)]] = [:]
    /// Edges a media message could not be sent to, until when they are given no viewer.
    var unreachable: [String: Double] = [:]
    /// Transports closed here whose edge has not reported them closed yet.
    var closingRemote: [String: String] = [:]
    /// Producers whose publisher is on an edge, by id: that edge and the tag it pipes them up with.
    var relayedFrom: [String: (node: String, tag: UInt32)] = [:]
    /// Each transport's room and participant (`room/participant`, from its label): a participant's
    /// publisher goes where its subscriber is.
    var transportParticipant: [String: String] = [:]
    /// Each edge's key among the audio level reports (one per worker there), apart from this node's.
    var levelKeys: [String: Int] = [:]
    /// The workers of each edge that reported audio levels (an empty report ends each when it is lost).
    var levelWorkers: [String: Set<Int>] = [:]
    /// Publisher transports opened on an edge, as opened; and those whose edge was lost, until the
    /// client's next offer (an ICE restart or a new connection) opens them again, placed afresh.
    var remotePublishers: [String: TransportSpec] = [:]
    var lostPublishers: [String: TransportSpec] = [:]

    // MARK: Edge

    struct Owner {
        let link: RelayLink
        var pipes: [Int: PipeLink] = [:]
        /// The owner's tag of each pipe producer here, by producer id, and ours.
        var tags: [String: (owner: UInt32, local: UInt32, worker: Int, room: String)] = [:]
        /// The pipe from each worker into the link, for the tracks of the owner's publishers here.
        var upPipes: [Int: PipeLink] = [:]
        /// Those tracks, by (scoped) producer id: their tag on the link, ours, their transport.
        var up: [String: (link: UInt32, local: UInt32, transport: String)] = [:]
        /// The number the owner's next command must have (nil: any, the first since the link).
        var expected: Int64?
    }

    var owners: [String: Owner] = [:]
    /// Transports run here for another node, by that node's id, and their rooms.
    var hostedTransports: [String: String] = [:]
    var hostedRoom: [String: String] = [:]
    /// The tracks of owners' publishers here (scoped ids), with their owner and transport: their
    /// events go to the owner.
    var hostedProducers: [String: (owner: String, transport: String)] = [:]
    /// The owners each worker's last audio level report spoke for (an empty report follows them).
    var levelOwners: [Int: Set<String>] = [:]
    /// The local ICE credentials of each transport run here for another node: a client that kept its
    /// connection proves it with them when its room's new owner takes the connection over.
    var hostedCredentials: [String: (ufrag: String, password: String)] = [:]
    /// Transports whose owner was lost, kept for `orphanGrace` for the room's new owner to take over
    /// (their clients keep their connections), by when they were orphaned.
    var orphans: [String: Double] = [:]

    // MARK: Taken over

    /// A transport taken over by another name than the one it was opened with (a new owner's, scoped
    /// on an edge, or this node's own): commands name it so, the workers know the first.
    var aliases: [String: String] = [:]
    var aliasOf: [String: String] = [:]
    /// Owner: take-overs asked of an edge, by transport id, with when they fail unanswered.
    var pendingAdoptions: [String: Double] = [:]
    var nextLocalTag: UInt32 = 0xC000_0000

    public init(
        local: MediaWorkers, me: String, edgeAfter: Int, certificate: DTLSCertificate, relayBind: SocketAddress,
        relayAnnounce: String
    ) {
        self.local = local
        self.me = me
        self.edgeAfter = edgeAfter
        self.certificate = certificate
        self.relayBind = relayBind
        self.relayAnnounce = relayAnnounce
    }

    /// Stops every relay link's thread.
    public func stop() {
        for e in edges.values { e.link.stop() }
        for o in owners.values { o.link.stop() }
    }

    /// Each relay link's figures, by the other node's id and this node's part in it.
    public var links: [(node: String, side: RelayLink.Side, figures: RelayLink.Counters)] {
        edges.map { ($0.key, RelayLink.Side.owner, $0.value.link.figures) }
            + owners.map { ($0.key, RelayLink.Side.edge, $0.value.link.figures) }
    }

    /// The edges each room's viewers are on, with how many transports each.
    public var roomEdges: [String: [String: Int]] {
        var out: [String: [String: Int]] = [:]
        for (t, node) in remoteTransports { out[remoteRoom[t] ?? "", default: [:]][node, default: 0] += 1 }
        return out
    }

    var remoteRoom: [String: String] = [:]

    /// The rooms other nodes own whose viewers run here, with their owner and viewer count.
    public var edgeRooms: [(room: String, owner: String, viewers: Int)] {
        var count: [String: (owner: String, viewers: Int)] = [:]
        for (t, owner) in hostedTransports {
            let room = hostedRoom[t] ?? ""
            count[room, default: (owner, 0)].viewers += 1
        }
        return count.map { ($0.key, $0.value.owner, $0.value.viewers) }
    }

    /// This node's transports of a room it owns and the room's viewers on each edge, by node id
    /// (empty for a room not live here).
    public func mediaNodes(ofRoom room: String) -> [String: Int] {
        var out = roomEdges[room] ?? [:]
        if let here = roomTransportsHere[room], here > 0 { out[me] = here }
        return out
    }

    // MARK: - MediaPlane

    public var fingerprint: [UInt8] { local.fingerprint }
    public var candidateAddresses: [SocketAddress] { local.candidateAddresses }
    public var tcpCandidateAddresses: [SocketAddress] { local.tcpCandidateAddresses }
    public var pipeWakeup: Wakeup? { nil }
    public var transportStats: [TransportStats] { local.transportStats }

    public func candidateAddresses(room: String) -> [SocketAddress] { local.candidateAddresses(room: room) }
    public func tcpCandidateAddresses(room: String) -> [SocketAddress] { local.tcpCandidateAddresses(room: room) }

    public func candidateAddresses(room: String, transport: String) -> [SocketAddress] {
        if let node = remoteTransports[transport] { return edges[node]?.peer.mediaAddresses ?? [] }
        return local.candidateAddresses(room: room, transport: aliases[transport] ?? transport)
    }

    public func tcpCandidateAddresses(room: String, transport: String) -> [SocketAddress] {
        if let node = remoteTransports[transport] { return edges[node]?.peer.tcpAddresses ?? [] }
        return local.tcpCandidateAddresses(room: room, transport: aliases[transport] ?? transport)
    }

    public func fingerprint(transport: String) -> [UInt8] {
        if let node = remoteTransports[transport], let e = edges[node] { return e.peer.fingerprint }
        return local.fingerprint
    }

    /// The local workers' events but those of transports run here for other nodes (sent to them),
    /// then the events edges sent about this node's viewers there.
    public func events() -> [MediaEvent] {
        var out: [MediaEvent] = []
        for raw in local.events() {
            let engineID = Self.transport(of: raw)
            var e = raw
            if let id = engineID, let alias = aliasOf[id] {
                e = Self.withTransport(raw) { _ in alias }
                if case .transportState(_, .closed) = raw {
                    aliasOf[id] = nil
                    aliases[alias] = nil
                }
            }
            if let id = engineID, orphans[id] != nil {
                // Its owner is gone and no one took it over yet: nobody to tell.
                if case .transportState(_, .closed) = raw { forgetHosted(id) }
                continue
            }
            if engineID == nil, let kept = toOwners(e) {
                if let kept { out.append(kept) }
                continue
            }
            if let id = engineID, let owner = hostedTransports[id] {
                if let body = RemoteMediaCoding.encode(Self.unscoped(e, owner)) {
                    _ = send(.object(["op": "event", "event": body]), owner)
                }
                if case .transportState(_, .closed) = e { forgetHosted(id) }
                continue
            }
            out.append(e)
        }
        adoptionsDue()
        out += remoteEvents
        remoteEvents.removeAll()
        out += edgesGone()
        ownersGone()
        return out
    }

    func forgetHosted(_ id: String) {
        forgetHostedProducers { $0.transport == id }
        hostedTransports[id] = nil
        hostedRoom[id] = nil
        hostedCredentials[id] = nil
        orphans[id] = nil
    }

    /// Edge: an owner whose relay link failed (nothing heard from it for `RelayLink.defaultSilence`:
    /// killed, cut off, or its link given up) leaves nothing behind here but its viewers'
    /// connections: its pipe producers are closed (their consumers end), its link ends, and the
    /// transports it ran here are kept for `orphanGrace`, for the room's new owner to take over when
    /// their clients join again; those not taken over by then are closed. The link decides, not the
    /// node records: this node's list of them is as old as its last heartbeat, and may not name an
    /// owner that started after it.
    func ownersGone() {
        let t0 = now()
        for (t, since) in orphans where t0 - since > Self.orphanGrace {
            log("a viewer's connection kept for its room's new owner was not taken over; closed")
            local.submit(.closeTransport(id: t))
            forgetHosted(t)
        }
        guard !owners.isEmpty else { return }
        for (node, o) in owners {
            let link = o.link.figures
            guard link.state == .failed else { continue }
            log("the relay link from owner \(node) failed (\(link.failure ?? "")); its viewers' connections kept")
            dropOwner(node, now: t0)
        }
    }

    /// Ends an owner's link here: its pipe producers closed, its viewers' transports kept as orphans.
    func dropOwner(_ node: String, now t0: Double) {
        guard let o = owners.removeValue(forKey: node) else { return }
        o.link.stop()
        for pipe in o.pipes.values { local.submit(.unpipe(link: pipe)) }
        for pipe in o.upPipes.values { local.submit(.unpipe(link: pipe)) }
        for id in o.tags.keys { local.submit(.closeProducer(id: id)) }
        // Its publishers' tracks here run on with their kept connections; nobody to report them to.
        for (id, h) in hostedProducers where h.owner == node { hostedProducers[id] = nil }
        for (w, spoken) in levelOwners where spoken.contains(node) { levelOwners[w]?.remove(node) }
        for (t, owner) in hostedTransports where owner == node {
            hostedTransports[t] = nil
            orphans[t] = t0
            if let alias = aliasOf.removeValue(forKey: t) { aliases[alias] = nil }
        }
    }

    /// An edge that left the cluster (its record expired: killed, cut off), or whose relay link
    /// failed (nothing heard from it for `RelayLink.defaultSilence`, or a handshake refused), takes its
    /// viewers' transports with it: each is reported failed, as a transport whose peer went silent
    /// is, and the coordinator renews its participant's subscriber connection (placed again, on a live
    /// node). Its link ends.
    func edgesGone() -> [MediaEvent] {
        guard !edges.isEmpty else { return [] }
        let live = Set(peers().map(\.id))
        var out: [MediaEvent] = []
        for (node, e) in edges {
            let failure = linkFailure(e)
            guard !live.contains(node) || failure != nil else { continue }
            log(
                live.contains(node)
                    ? "the relay link to edge \(node) failed (\(failure ?? "")); its viewers' transports failed"
                    : "edge \(node) left the cluster; its viewers' transports failed")
            out += dropEdge(node)
        }
        return out
    }

    /// Why a link to an edge failed, or nil while it holds (or is still being made, within
    /// `linkSilence` of the request).
    func linkFailure(_ e: Edge) -> String? {
        let f = e.link.figures
        if f.state == .failed { return f.failure ?? "failed" }
        if !e.started && now() - e.openedAt > linkSilence { return "the edge never answered the link request" }
        return nil
    }

    /// Ends the link to an edge: the viewers' transports there reported failed (and forgotten), what
    /// was piped there forgotten.
    func dropEdge(_ node: String) -> [MediaEvent] {
        guard let e = edges.removeValue(forKey: node) else { return [] }
        e.link.stop()
        // The home workers stop copying into the link's pipes, and reading from it.
        for pipe in e.pipes.values { local.submit(.unpipe(link: pipe)) }
        for pipe in e.inPipes.values { local.submit(.unpipe(link: pipe)) }
        awaitingEdge[node] = nil
        for p in piped.keys { piped[p]?[node] = nil }
        // Its publishers' tracks end here and on the other edges (a share stops as its capture ended).
        var out: [MediaEvent] = []
        for (id, from) in relayedFrom where from.node == node {
            forgetRelayed(id)
            out.append(.producerEnded(id: id, reason: .nodeLost))
        }
        // Its last audio level reports speak for nobody now.
        if let key = levelKeys[node] {
            for w in levelWorkers.removeValue(forKey: node) ?? [] { out.append(.audioLevels([], worker: key + w)) }
        }
        for (t, n) in remoteTransports where n == node {
            out.append(.transportState(id: t, state: .failed))
            if let spec = remotePublishers.removeValue(forKey: t) { lostPublishers[t] = spec }
            remoteTransports[t] = nil
            remoteRoom[t] = nil
            pendingAdoptions[t] = nil
            remoteConsumers = remoteConsumers.filter { $0.value.transport != t }
            transportParticipant[t] = nil
        }
        return out
    }

    static func transport(of e: MediaEvent) -> String? {
        switch e {
        case .transportState(let id, _), .estimate(let id, _), .bottleneck(let id, _), .dataChannel(let id, _, _, _),
            .dataMessage(let id, _, _):
            id
        case .audioLevels, .producerEnded, .layersWanted, .layers: nil
        }
    }

    public func submit(_ command: MediaCommand) {
        let command = aliases.isEmpty ? command : Self.withTransports(command) { aliases[$0] ?? $0 }
        switch command {
        case .openTransport(let spec):
            transportParticipant[spec.id] = Self.participant(spec)
            lostPublishers[spec.id] = nil
            if let node = edgeFor(spec) {
                remoteTransports[spec.id] = node
                remoteRoom[spec.id] = spec.router
                if spec.role == .publisher { remotePublishers[spec.id] = spec }
                toEdge(command, node)
            } else {
                localTransportRoom[spec.id] = spec.router
                roomTransportsHere[spec.router, default: 0] += 1
                local.submit(command)
            }
        case .updateTransport(let id, let remote, let ufrag, let password) where lostPublishers[id] != nil:
            // A publisher whose edge was lost offers again: its transport opens again, placed afresh.
            guard var spec = lostPublishers.removeValue(forKey: id) else { return }
            (spec.remote, spec.localUfrag, spec.localPassword) = (remote, ufrag, password)
            submit(.openTransport(spec))
        case .updateTransport(let id, _, _, _), .allocate(let id, _), .sendData(let id, _, _), .reject(let id, _, _):
            if let node = remoteTransports[id] { toEdge(command, node) } else { local.submit(command) }
        case .closeTransport(let id):
            transportParticipant[id] = nil
            lostPublishers[id] = nil
            remotePublishers[id] = nil
            if let node = remoteTransports.removeValue(forKey: id) {
                // Its tracks end with it: their pipe producers here and on the other edges.
                for (p, spec) in producerSpecs where spec.transport == id && relayedFrom[p] != nil { forgetRelayed(p) }
                remoteRoom[id] = nil
                closingRemote[id] = node
                // Its consumers end with it on the edge.
                remoteConsumers = remoteConsumers.filter { $0.value.transport != id }
                toEdge(command, node)
            } else {
                if let room = localTransportRoom.removeValue(forKey: id) { roomTransportsHere[room, default: 1] -= 1 }
                local.submit(command)
            }
        case .closeRouter(let id):
            local.submit(command)
            roomTransportsHere[id] = nil
            for node in remoteNodes(ofRoom: id) { toEdge(command, node) }
            for (p, room) in producerRoom where room == id && relayedFrom[p] != nil { forgetRelayed(p) }
            lostPublishers = lostPublishers.filter { $0.value.router != id }
            for (t, r) in remoteRoom where r == id {
                remotePublishers[t] = nil
                transportParticipant[t] = nil
                remoteRoom[t] = nil
                remoteTransports[t] = nil
                remoteConsumers = remoteConsumers.filter { $0.value.transport != t }
            }
        case .addProducer(let spec):
            if let node = remoteTransports[spec.transport] {
                relayUp(spec, from: node)
                return
            }
            local.submit(command)
            producerSpecs[spec.id] = spec
            producerRoom[spec.id] = localTransportRoom[spec.transport]
        case .pauseProducer(let id, let paused):
            local.submit(command)
            producerSpecs[id]?.paused = paused
            if let from = relayedFrom[id] { toEdge(command, from.node) }
            for node in piped[id].map({ Array($0.keys) }) ?? [] { toEdge(command, node) }
        case .closeProducer(let id):
            if let from = relayedFrom[id] {
                // Closed on its edge; its pipe producer here and on the other edges with it.
                toEdge(command, from.node)
                forgetRelayed(id)
                return
            }
            local.submit(command)
            unpipeFromEdges(id)
            producerSpecs[id] = nil
            producerRoom[id] = nil
        case .addConsumer(let spec):
            guard let node = remoteTransports[spec.transport] else {
                local.submit(command)
                return
            }
            // A track published on that edge is consumed there as it is.
            if relayedFrom[spec.producer]?.node != node { pipe(spec.producer, to: node) }
            remoteConsumers[spec.id] = (node, spec.transport)
            toEdge(command, node)
        case .setPreference(let id, _):
            if let c = remoteConsumers[id] { toEdge(command, c.node) } else { local.submit(command) }
        case .closeConsumer(let id):
            if let c = remoteConsumers.removeValue(forKey: id) {
                toEdge(command, c.node)
            } else {
                local.submit(command)
            }
        default: local.submit(command)
        }
    }

    func remoteNodes(ofRoom room: String) -> [String] {
        Array(Set(remoteRoom.compactMap { t, r in r == room ? remoteTransports[t] : nil }))
    }

    /// The edge for a new transport, if it goes to one: where the participant's other transport is
    /// (a publisher beside its subscriber), or else, in a room with `edgeAfter` transports here, the
    /// less loaded of two other nodes drawn at random.
    func edgeFor(_ spec: TransportSpec) -> String? {
        guard edgeAfter > 0 else { return nil }
        let t0 = now()
        unreachable = unreachable.filter { $0.value > t0 }
        if let who = transportParticipant[spec.id],
            let other = transportParticipant.first(where: { $0.key != spec.id && $0.value == who })?.key
        {
            guard let node = remoteTransports[other] else { return nil }
            if let e = edges[node], linkFailure(e) == nil, unreachable[node] == nil { return node }
        }
        guard roomTransportsHere[spec.router, default: 0] >= edgeAfter else { return nil }
        let live = peers().filter {
            $0.id != me && !$0.mediaAddresses.isEmpty && $0.fingerprint.count == 32 && unreachable[$0.id] == nil
        }
        guard !live.isEmpty else { return nil }
        let n = live.count
        let a = live[(random(n) % n + n) % n]
        let b = live[(random(n) % n + n) % n]
        let pick = Self.lessLoaded(a, b, placed: placedOn)
        // A failed link is made again (the edge replaces its end); what was piped through it is not.
        return ensureLink(to: pick) ? pick.id : nil
    }

    /// The viewers this node placed on each edge that are still there.
    var placedOn: [String: Int] {
        var out: [String: Int] = [:]
        for node in remoteTransports.values { out[node, default: 0] += 1 }
        return out
    }

    /// Of two nodes drawn, the one to place a viewer on: the smaller load, counting beside a node's
    /// record (as old as its last heartbeat, 5 s) the viewers this node has placed there, so that a
    /// burst of joins between two heartbeats does not all land on one node. A tie goes to the first.
    static func lessLoaded(_ a: Peer, _ b: Peer, placed: [String: Int]) -> Peer {
        let la = a.load + Double(placed[a.id] ?? 0)
        let lb = b.load + Double(placed[b.id] ?? 0)
        return la <= lb ? a : b
    }

    /// This node's end of a relay link to `peer`, and the message that asks the edge for its end.
    func openLink(to peer: Peer) -> Bool {
        let fingerprint = DTLSFingerprint(hashFunction: "sha-256", digest: peer.fingerprint)
        do {
            let link = try RelayLink(
                side: .owner, bind: relayBind, certificate: certificate, remoteFingerprint: fingerprint,
                client: me < peer.id, silence: linkSilence)
            let address = announced(link)
            let sent = send(
                .object([
                    "op": "link", "address": .string(address),
                    "fingerprint": .string(Self.hex(certificate.fingerprint.digest)),
                ]),
                peer.id)
            guard sent else {
                log("the relay link request to \(peer.id) was not sent")
                return false
            }
            edges[peer.id] = Edge(peer: peer, link: link, openedAt: now())
            return true
        } catch {
            log("relay link to \(peer.id): \(error)")
            return false
        }
    }

    /// Feeds producer `id` to an edge's pipe producer, once: a pipe from its home worker into the
    /// link, the home worker told to copy into it, the edge told to make the pipe producer.
    func pipe(_ id: String, to node: String) {
        guard piped[id]?[node] == nil, var edge = edges[node], let spec = producerSpecs[id],
            let room = producerRoom[id],
            let home = local.worker(ofProducer: id)
        else { return }
        let pipe =
            edge.pipes[home]
            ?? PipeLink(from: home, to: -1, wakeFar: edge.link.wakeup, wakeHome: local.workers[home].pipeWakeup)
        edge.pipes[home] = pipe
        edges[node] = edge
        nextTag &+= 1
        let tag = nextTag
        piped[id, default: [:]][node] = tag
        edge.link.route(tag: tag, pipe)
        // The edge makes the pipe producer before the consumer that follows.
        toEdge(.addPipeProducer(spec, router: room, link: pipe, tag: tag), node)
        // The home worker starts piping (its cached picture first) once the edge says its pipe
        // producer and route are in place: a packet before would find no route there and be lost,
        // and a sharer that answers no key-frame request would never send another.
        awaitingEdge[node, default: [:]][tag] = (id, home, pipe)
    }

    func toEdge(_ command: MediaCommand, _ node: String) {
        guard let body = RemoteMediaCoding.encode(command, relayed: { _ in true }) else { return }
        guard !send(numbered(.object(["op": "cmd", "command": body]), node), node) else { return }
        // Media messages are not retried: what the edge runs for this node is now unknown. Its
        // viewers fail (and are renewed), and it is given no viewer for a while (Redis away, most
        // likely: they go on this node meanwhile).
        log("a media command to \(node) was not sent; its viewers' transports failed")
        unreachable[node] = now() + Self.unreachableFor
        remoteEvents += dropEdge(node)
    }

    /// After a media message to an edge could not be sent, it is given no viewer for this long.
    static let unreachableFor = 10.0

    /// A command to an edge with its number on the link (`seq`, from 1 after each `link`): the edge
    /// notices one Redis accepted and lost (`gap`).
    func numbered(_ message: JSONValue, _ node: String) -> JSONValue {
        guard var e = edges[node], case .object(var o) = message else { return message }
        e.sent += 1
        edges[node] = e
        o["seq"] = .int(e.sent)
        return .object(o)
    }

    /// Edge: whether a numbered command from `owner` follows the one before; a gap (a command lost
    /// between the nodes) is told to the owner, which fails what it ran here (renewed elsewhere).
    func inSequence(_ body: JSONValue, from owner: String) {
        guard let seq = body["seq"]?.int64Value, var o = owners[owner] else { return }
        if let expected = o.expected, seq != expected {
            log("a media command from \(owner) was lost (number \(expected), then \(seq)); told")
            if !send(.object(["op": "gap", "expected": .int(expected), "got": .int(seq)]), owner) {
                log("the gap in \(owner)'s media commands was not told")
            }
        }
        o.expected = seq &+ 1
        owners[owner] = o
    }

    // MARK: - Messages from other nodes

    /// A media message from node `from`: a relay link asked for or answered, a command (this node is
    /// the edge), an event (this node is the owner).
    public func receive(from: String, _ body: JSONValue) {
        switch body["op"]?.stringValue {
        case "link":
            guard let address = body["address"]?.stringValue.flatMap({ try? SocketAddress(parsing: $0) }),
                let fp = body["fingerprint"]?.stringValue, let digest = Self.bytes(hex: fp), digest.count == 32
            else {
                log("a relay link request from \(from) that is not one")
                return
            }
            do {
                let link = try RelayLink(
                    side: .edge, bind: relayBind, certificate: certificate,
                    remoteFingerprint: DTLSFingerprint(hashFunction: "sha-256", digest: digest),
                    client: me < from, silence: linkSilence)
                try link.start(remote: address)
                // A new link from that owner (it restarted, or gave the old one up) replaces the old:
                // what ran through the old one goes as for a lost owner (its viewers' connections kept).
                if owners[from] != nil { dropOwner(from, now: now()) }
                owners[from] = Owner(link: link)
                if !send(.object(["op": "linked", "address": .string(announced(link))]), from) {
                    log("the answer to \(from)'s relay link was not sent")
                }
            } catch {
                log("relay link from \(from): \(error)")
            }
        case "piped":
            guard let tag = body["tag"]?.int64Value.flatMap({ UInt32(exactly: $0) }),
                let p = awaitingEdge[from]?.removeValue(forKey: tag), piped[p.producer]?[from] == tag
            else { return }
            local.workers[p.home].submit(.pipeProducer(id: p.producer, link: p.pipe, tag: tag))
        case "linked":
            guard var e = edges[from], !e.started,
                let address = body["address"]?.stringValue.flatMap({ try? SocketAddress(parsing: $0) })
            else { return }
            do {
                try e.link.start(remote: address)
                e.started = true
                edges[from] = e
            } catch {
                log("relay link to \(from): \(error)")
            }
        case "cmd":
            guard let c = body["command"] else { return }
            inSequence(body, from: from)
            run(c, for: from)
        case "gap":
            // The edge lost a command of this node's: what it runs for this node is unknown.
            guard edges[from] != nil else { return }
            log("edge \(from) lost a media command; its viewers' transports failed")
            unreachable[from] = now() + Self.unreachableFor
            remoteEvents += dropEdge(from)
        case "adopt": adoptAsked(from: from, body)
        case "adopted", "adopt_refused": adoptionAnswered(from: from, body)
        case "pipe_up": pipeUp(from: from, body)
        case "event":
            guard let e = body["event"], let event = try? RemoteMediaCoding.decodeEvent(e) else { return }
            // Only about a transport this node placed on that node (or closed there, until it says so),
            // or a track published there.
            guard let id = Self.transport(of: event) else {
                if let kept = fromEdge(event, from) { remoteEvents.append(kept) }
                return
            }
            if remoteTransports[id] == from {
                remoteEvents.append(event)
            } else if closingRemote[id] == from {
                remoteEvents.append(event)
                if case .transportState(_, .closed) = event { closingRemote[id] = nil }
            }
        default: log("a media message from \(from) that is not one")
        }
    }

    /// An owner's id for something it made here: its own, under its node's id, so that two owners'
    /// (or this node's own) transports, consumers and producers never share one.
    static func scope(_ id: String, _ owner: String) -> String { "\(owner)/\(id)" }

    /// A command of `owner` with its ids scoped.
    static func scoped(_ c: MediaCommand, _ owner: String) -> MediaCommand {
        let s = { (id: String) in scope(id, owner) }
        switch c {
        case .openTransport(var spec):
            spec.id = s(spec.id)
            return .openTransport(spec)
        case .updateTransport(let id, let remote, let ufrag, let password):
            return .updateTransport(id: s(id), remote: remote, localUfrag: ufrag, localPassword: password)
        case .closeTransport(let id): return .closeTransport(id: s(id))
        case .allocate(let t, var a):
            for i in a.entries.indices { a.entries[i].consumer = s(a.entries[i].consumer) }
            return .allocate(transport: s(t), a)
        case .addConsumer(var spec):
            (spec.id, spec.transport, spec.producer) = (s(spec.id), s(spec.transport), s(spec.producer))
            return .addConsumer(spec)
        case .setPreference(let id, let p): return .setPreference(consumer: s(id), p)
        case .closeConsumer(let id): return .closeConsumer(id: s(id))
        case .sendData(let t, let lossy, let payload): return .sendData(transport: s(t), lossy: lossy, payload: payload)
        case .addPipeProducer(var spec, let router, let link, let tag):
            spec.id = s(spec.id)
            return .addPipeProducer(spec, router: router, link: link, tag: tag)
        case .pauseProducer(let id, let paused): return .pauseProducer(id: s(id), paused: paused)
        case .closeProducer(let id): return .closeProducer(id: s(id))
        case .addProducer(var spec):
            (spec.id, spec.transport) = (s(spec.id), s(spec.transport))
            return .addProducer(spec)
        case .reject(let t, let mids, let ssrcs): return .reject(transport: s(t), mids: mids, ssrcs: ssrcs)
        default: return c
        }
    }

    /// An id `scope` made, back to the owner's own.
    static func unscope(_ id: String, _ owner: String) -> String {
        let prefix = scope("", owner)
        return id.hasPrefix(prefix) ? String(id.dropFirst(prefix.count)) : id
    }

    /// An event of a transport or a track run here for `owner`, with the owner's own ids.
    static func unscoped(_ e: MediaEvent, _ owner: String) -> MediaEvent {
        let f = { (id: String) in unscope(id, owner) }
        switch e {
        case .producerEnded(let id, let reason): return .producerEnded(id: f(id), reason: reason)
        case .layersWanted(let id, let rids): return .layersWanted(producer: f(id), rids: rids)
        case .layers(let id, let layers): return .layers(producer: f(id), layers)
        case .audioLevels(let levels, let worker):
            return .audioLevels(levels.map { AudioLevel(producer: f($0.producer), dBov: $0.dBov) }, worker: worker)
        default: return withTransport(e, f)
        }
    }

    /// An event with its transport id changed by `f` (events about no transport as they are).
    static func withTransport(_ e: MediaEvent, _ f: (String) -> String) -> MediaEvent {
        switch e {
        case .transportState(let id, let state): .transportState(id: f(id), state: state)
        case .estimate(let id, let b): .estimate(transport: f(id), bitrate: b)
        case .bottleneck(let id, let b): .bottleneck(transport: f(id), suspected: b)
        case .dataChannel(let id, let label, let lossy, let open):
            .dataChannel(transport: f(id), label: label, lossy: lossy, open: open)
        case .dataMessage(let id, let lossy, let payload):
            .dataMessage(transport: f(id), lossy: lossy, payload: payload)
        case .audioLevels, .producerEnded, .layersWanted, .layers: e
        }
    }

    /// The transport a command acts on (nil for one that makes a transport or acts on none).
    static func transportCommanded(_ c: MediaCommand) -> String? {
        var named: String?
        _ = withTransports(c) { id in
            named = id
            return id
        }
        return named
    }

    /// A command with the transport ids it names changed by `f`.
    static func withTransports(_ c: MediaCommand, _ f: (String) -> String) -> MediaCommand {
        switch c {
        case .updateTransport(let id, let remote, let ufrag, let password):
            return .updateTransport(id: f(id), remote: remote, localUfrag: ufrag, localPassword: password)
        case .closeTransport(let id): return .closeTransport(id: f(id))
        case .reject(let t, let mids, let ssrcs): return .reject(transport: f(t), mids: mids, ssrcs: ssrcs)
        case .addConsumer(var spec):
            spec.transport = f(spec.transport)
            return .addConsumer(spec)
        case .allocate(let t, let a): return .allocate(transport: f(t), a)
        case .sendData(let t, let lossy, let payload): return .sendData(transport: f(t), lossy: lossy, payload: payload)
        case .addProducer(var spec):
            spec.transport = f(spec.transport)
            return .addProducer(spec)
        default: return c
        }
    }

    /// A command an owner sent: run on the local workers (its room spread over them as this node's own
    /// rooms are: a pipe producer fed by the link is piped on to the workers of its viewers), its ids
    /// scoped to the owner. Only a pipe producer needs the owner's relay link.
    func run(_ body: JSONValue, for owner: String) {
        guard var o = owners[owner] else {
            if let c = try? RemoteMediaCoding.decode(body, link: { _, _ in nil }) {
                apply(Self.scoped(c, owner), owner)
            }
            return
        }
        var made: (local: UInt32, worker: Int)?
        let command: MediaCommand
        do {
            command = try RemoteMediaCoding.decode(body) { tag, router in
                let w = local.home(ofRoom: router)
                let pipe =
                    o.pipes[w]
                    ?? PipeLink(from: -1, to: w, wakeFar: local.workers[w].pipeWakeup, wakeHome: o.link.wakeup)
                o.pipes[w] = pipe
                nextLocalTag &+= 1
                made = (nextLocalTag, w)
                o.link.route(tag: tag, pipe, local: nextLocalTag)
                return pipe
            }
        } catch {
            log("a media command from \(owner): \(error)")
            return
        }
        switch Self.scoped(command, owner) {
        case .addPipeProducer(let spec, let router, let link, let tag):
            guard let made else { return }
            o.tags[spec.id] = (tag, made.local, made.worker, router)
            local.addRelayedProducer(spec, router: router, link: link, tag: made.local)
            // The owner may start piping: the route and the pipe producer are in place.
            if !send(.object(["op": "piped", "tag": .int(Int64(tag))]), owner) {
                log("the answer to \(owner)'s pipe producer was not sent")
            }
        case .closeProducer(let id):
            local.submit(.closeProducer(id: id))
            if let t = o.tags.removeValue(forKey: id) { o.link.unroute(tag: t.owner) }
            if let u = o.up.removeValue(forKey: id) { o.link.unroute(tag: u.link, direction: .outbound) }
            hostedProducers[id] = nil
        case .closeRouter(let room):
            for (id, t) in o.tags where t.room == room {
                local.submit(.closeProducer(id: id))
                o.link.unroute(tag: t.owner)
                o.tags[id] = nil
            }
            apply(.closeRouter(id: room), owner)
        case let c: apply(c, owner)
        }
        owners[owner] = o
    }

    /// A link's address as the other node reaches it.
    func announced(_ link: RelayLink) -> String {
        let port = link.socket.localAddress.port
        return relayAnnounce.contains(":") ? "[\(relayAnnounce)]:\(port)" : "\(relayAnnounce):\(port)"
    }

    /// A scoped command that needs no link.
    func apply(_ command: MediaCommand, _ owner: String) {
        let c = aliases.isEmpty ? command : Self.withTransports(command) { aliases[$0] ?? $0 }
        // Only the transport's owner drives it: once another owner took it over, what the old one
        // still sends for it (under its old name) is dropped.
        if let t = Self.transportCommanded(c), hostedTransports[t] != owner {
            log("a media command from \(owner) for a transport it does not run here, dropped")
            return
        }
        switch c {
        case .closeRouter(let room):
            // The room's router here may hold other owners' transports, or this node's own room:
            // only what this owner ran in it closes.
            for (t, o) in hostedTransports where o == owner && hostedRoom[t] == room {
                local.submit(.closeTransport(id: t))
            }
            return
        case .openTransport(let spec):
            guard hostedTransports[spec.id] == nil, orphans[spec.id] == nil else {
                log("\(owner) opened a transport whose id is in use here, refused")
                return
            }
            hostedTransports[spec.id] = owner
            hostedRoom[spec.id] = spec.router
            hostedCredentials[spec.id] = (spec.localUfrag, spec.localPassword)
        case .updateTransport(let id, _, let ufrag, let password) where hostedTransports[id] == owner:
            hostedCredentials[id] = (ufrag, password)
        case .addProducer(let spec):
            hostedProducers[spec.id] = (owner, spec.transport)
        default: break
        }
        if case .addPipeProducer = c { return }
        local.submit(c)
    }

    /// Lower-case hex, two digits a byte (node records, relay link requests, media messages).
    public static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { b in (b < 16 ? "0" : "") + String(b, radix: 16) }.joined()
    }

    public static func bytes(hex: String) -> [UInt8]? {
        let u = Array(hex.utf8)
        guard u.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        for i in stride(from: 0, to: u.count, by: 2) {
            guard let b = UInt8(String(decoding: u[i..<(i + 2)], as: UTF8.self), radix: 16) else { return nil }
            out.append(b)
        }
        return out
    }
}
