import AtriumAdminAPI
import AtriumCluster
import AtriumConfig
import AtriumCrypto
import AtriumEdge
import AtriumHTTP
import AtriumLog
import AtriumMedia
import AtriumMediaControl
import AtriumMetrics
import AtriumModel
import AtriumProtocol
import AtriumRedis
import AtriumRooms
import AtriumSignal
import AtriumStore
import AtriumUDP

#if canImport(Glibc)
    import Glibc
#endif

/// The cluster's pieces (`--redis`), built by the composition root: the Redis client shared by the
/// store, the directory and the relay (all on the service thread), this node, the relay and its
/// subscriber thread.
final class ClusterParts {
    let url: RedisURL
    let redis: RedisClient
    let keys = ClusterKeys()
    let node: ClusterNode
    let relay: ClusterRelay
    var subscriber: RedisSubscriber?
    var cpu = CPUMeter()

    /// The TLS tunnel to a `rediss://` Redis, which every connection of this node goes through.
    let tunnel: RedisTunnel?
    var logger: Logger?

    init(config: ServerConfig) throws(ServerError) {
        guard let text = config.redis else { throw .startup("no Redis URL") }
        let remote: RedisURL
        do throws(RedisError) { remote = try RedisURL(parsing: text) } catch { throw .startup("--redis: \(error)") }
        if remote.tls {
            let t = RedisTunnel(
                remote: remote, dataDir: config.dataDir,
                options: .init(ca: config.redisCA, cert: config.redisCert, key: config.redisKey))
            do throws(RedisTunnel.TunnelError) { try t.start() } catch { throw .startup(error.description) }
            tunnel = t
            url = t.localURL
        } else {
            guard config.redisCA == nil && config.redisCert == nil && config.redisKey == nil else {
                throw .startup("--redis-ca, --redis-cert and --redis-key need a rediss:// URL")
            }
            tunnel = nil
            url = remote
        }
        redis = RedisClient(url: url, monotonic: Clock.monotonic)
        let id = NodeID(config.nodeID ?? "node-" + Base32.encode(SecureRandom.uint64(), count: 10))
        let directory = ClusterDirectory(redis: redis, keys: keys)
        let info = NodeInfo(id: id, url: "", mediaAddresses: [], startedAt: Clock.unixSeconds(), updatedAt: 0)
        node = ClusterNode(
            id: id, directory: directory, info: info, monotonic: Clock.monotonic, now: Clock.unixSeconds,
            random: { n in n <= 0 ? 0 : Int(SecureRandom.uint64() % UInt64(n)) })
        let secret = config.clusterSecret.map { Array($0.utf8) } ?? RelaySeal.secret(apiKeys: config.keys)
        do {
            relay = ClusterRelay(
                node: node, redis: redis, keys: keys,
                seal: try RelaySeal(secret: secret, now: { Int64(clamping: Clock.unixMillis()) }))
        } catch {
            throw .startup("the cluster's seal: \(error)")
        }
        // A relayed session's frames wait for Redis at most as long as its owner would keep it for a
        // resume; past that, the client is told `moved` and resumes through any node.
        relay.outageLimit = Double(max(1, min(config.resumeWindow, config.signalIdleTimeout)))
    }

    /// Webhook events waiting in memory while Redis is unreachable, shared by this node's outboxes.
    let webhookSpill = WebhookSpill()

    /// One webhook outbox in Redis for one thread. An endpoint's lease outlives two attempts of its
    /// holder (each bounded by the webhook timeout) and a heartbeat's expiry, so it only changes hands
    /// when the holder is gone.
    func webhookOutbox(timeout: Int) -> any WebhookOutbox {
        RedisWebhookOutbox(
            url: url, keys: keys, node: node.id, spill: webhookSpill,
            leaseMillis: ClusterTiming.expiryMillis + 2000 * max(1, timeout), monotonic: Clock.monotonic)
    }

    /// Gives up this node's webhook leases once its delivery threads have stopped.
    func releaseWebhookLeases(_ endpoints: [String]) {
        guard !endpoints.isEmpty else { return }
        RedisWebhookOutbox(
            url: url, keys: keys, node: node.id, spill: webhookSpill, leaseMillis: ClusterTiming.expiryMillis,
            monotonic: Clock.monotonic
        ).release(endpoints: endpoints)
    }

    /// Ties the node to the live rooms and starts listening on its inbox.
    func attach(
        hub: Hub, signal: SignalEndpoint, http: any HTTPHandler, api: AdminAPI, store: any RoomStore,
        media: [MediaWorker], url publicURL: String, waker: EdgeWaker?, logger: Logger
    ) {
        self.logger = logger
        hub.router = node
        signal.relay = relay
        relay.signal = signal
        relay.http = http
        relay.hub = hub
        node.sendCommand = { [weak relay] command, target in
            relay?.send(command, to: target) ?? .failure(.clusterUnavailable("the relay has stopped"))
        }
        api.nodes = ClusterAdmin(node: node, relay: relay, hub: hub)
        node.info.url = publicURL
        node.info.mediaAddresses = media.flatMap(\.candidateAddresses).map { "\($0)" }
        node.info.mediaTCPAddresses = media.flatMap(\.tcpCandidateAddresses).map { "\($0)" }
        node.info.mediaFingerprint = media.first.map { ClusterMediaPlane.hex($0.fingerprint) } ?? ""
        node.liveRooms = { Array(hub.rooms.keys) }
        node.load = { [self] in
            NodeLoad(
                rooms: hub.rooms.count, participants: hub.participantCount,
                forwardedPackets: UInt64(clamping: media.reduce(0) { $0 + $1.stats.counters.packetsOut }),
                cpuPercent: cpu.sample(Clock.monotonic()))
        }
        node.onRecordLost = {
            // Redis came back empty: write the settings of the rooms live here back.
            for live in hub.rooms.values { try? store.insert(live.state.room) }
            logger.warn("cluster record was lost; live rooms written back", ("rooms", String(hub.rooms.count)))
        }
        node.onRoomsLost = { rooms in
            // Another node runs these rooms now (this one was cut off from Redis): the clients here move
            // to it, and each room closes here by the one path, so the meeting never runs in two halves.
            logger.warn("rooms now owned by another node", ("rooms", rooms.map(\.rawValue).joined(separator: ",")))
            for room in rooms {
                signal.move(room: room, reason: "moved")
                hub.close(room, reason: .moved, now: Clock.unixSeconds())
            }
        }
        let sub = RedisSubscriber(url: url, channels: [keys.inbox(node.id)]) { waker?.wake() }
        if !sub.start() { logger.error("cannot start the cluster subscriber thread") }
        relay.subscriber = sub
        subscriber = sub
        node.beat(force: true)
        logger.info(
            "cluster node", ("id", node.id.rawValue), ("redis", (tunnel?.remote ?? url).description),
            ("url", publicURL),
            ("registered", String(node.isConnected)))
    }

    /// The plane that spreads big rooms over nodes: its media messages go through the relay, and
    /// it places viewers on the other live nodes.
    func attach(plane: ClusterMediaPlane) {
        let relay = relay, node = node
        node.info.takesEdges = true
        node.edgeRooms = { [weak plane] in
            (plane?.edgeRooms ?? []).map { NodeInfo.EdgeRoom(room: $0.room, owner: $0.owner, viewers: $0.viewers) }
        }
        relay.onMedia = { [weak plane] from, body in plane?.receive(from: from, body) }
        plane.send = { [weak relay] body, target in relay?.sendMedia(body, to: target) ?? false }
        plane.random = { n in n <= 0 ? 0 : Int(SecureRandom.uint64() % UInt64(n)) }
        plane.now = { Clock.monotonic() }
        plane.peers = { [weak node] in
            guard let node else { return [] }
            return node.knownNodes.compactMap { n -> ClusterMediaPlane.Peer? in
                guard n.id != node.id, !n.draining, n.takesEdges,
                    let digest = ClusterMediaPlane.bytes(hex: n.mediaFingerprint),
                    digest.count == 32
                else { return nil }
                let addresses = n.mediaAddresses.compactMap { try? SocketAddress(parsing: $0) }
                var peer = ClusterMediaPlane.Peer(
                    id: n.id.rawValue, mediaAddresses: addresses, fingerprint: digest, load: n.load.score)
                peer.tcpAddresses = n.mediaTCPAddresses.compactMap { try? SocketAddress(parsing: $0) }
                return peer
            }
        }
    }

    /// The cluster's gauges and counters on `/metrics` (docs/admin-api.md).
    func register(_ metrics: MetricsRegistry) {
        let node = node, relay = relay
        metrics.gauge("atrium_cluster_redis_up", help: "1 while the last call to the cluster's Redis succeeded.") {
            node.isConnected ? 1 : 0
        }
        metrics.gauge("atrium_cluster_nodes", help: "Live nodes as of the last heartbeat.") {
            Double(node.knownNodes.count)
        }
        metrics.gauge("atrium_cluster_relayed_out_sessions", help: "Sessions entered here, run on another node.") {
            Double(relay.relayedSessions)
        }
        metrics.gauge("atrium_cluster_relayed_in_sessions", help: "Sessions run here that entered elsewhere.") {
            Double(relay.ownedRelayedSessions)
        }
        metrics.gauge(
            "atrium_cluster_relay_backlog_frames", help: "Relayed signaling frames waiting for Redis to answer again."
        ) { Double(relay.backlogFrames) }
        metrics.counter(
            "atrium_cluster_relay_given_up_total",
            help: "Relayed sessions given up: their frames overflowed the backlog or waited past the limit."
        ) { Double(relay.givenUp) }
        metrics.counter(
            "atrium_cluster_relay_dropped_total",
            help: "Inbox messages that did not open or parse, or were for sessions gone."
        ) { Double(relay.dropped) }
    }

    func tick() {
        if let tunnel, let (restarted, why) = tunnel.check() {
            if restarted {
                logger?.warn("the TLS tunnel to Redis exited: started again", ("last", why))
            } else {
                logger?.error("the TLS tunnel to Redis exited and cannot be started", ("last", why))
            }
        }
        node.tick()
        relay.tick()
    }

    /// After the last use of Redis (the store's close): the tunnel's process ends.
    func stopTunnel() { tunnel?.stop() }

    func stop() {
        relay.closeAll(code: 1001, reason: "server shutting down")
        node.leave()
        subscriber?.stop()
    }
}

extension AtriumServer {
    /// SIGTERM in a cluster: stop taking rooms (the node record says `draining`, `/readyz` answers
    /// 503), give up the live rooms' ownership so that their next join places them on another node,
    /// tell every client to move, and serve on until they are gone or `ClusterTiming.drainGrace`
    /// seconds have passed.
    func drain(_ cluster: ClusterParts, _ edge: EdgeServer, _ signal: SignalEndpoint, _ hub: Hub) {
        logger.info("draining", ("sessions", String(signal.sessionCount)), ("grace", String(ClusterTiming.drainGrace)))
        cluster.node.draining = true
        hub.draining = true
        signal.moveAll(reason: "draining")
        // Each live room closes by the one path (its ownership released, its media freed).
        hub.closeAll(reason: .moved, now: Clock.unixSeconds())
        cluster.relay.closeAll(code: SignalCloseCode.moved, reason: "moved")
        edge.serve(
            until: { signal.sessionCount == 0 && cluster.relay.relayedSessions == 0 },
            seconds: ClusterTiming.drainGrace,
            monotonic: Clock.monotonic)
        logger.info("drained", ("sessions", String(signal.sessionCount)))
    }
}

/// Process CPU (user + system) between two samples, in percent of one core.
struct CPUMeter {
    var lastCPU = 0.0
    var lastWall = 0.0

    mutating func sample(_ wall: Double) -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu =
            Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
        defer {
            lastCPU = cpu
            lastWall = wall
        }
        guard lastWall > 0, wall > lastWall else { return 0 }
        return max(0, (cpu - lastCPU) / (wall - lastWall) * 100)
    }
}

extension AtriumServer {
    /// Each relay link's figures on `/metrics`, by the other node and this node's side (docs/cluster.md).
    static func relayMetrics(_ links: [(node: String, side: RelayLink.Side, figures: RelayLink.Counters)]) -> String {
        typealias Samples = (RelayLink.Counters) -> [(labels: String, value: String)]
        let metrics: [(name: String, type: String, help: String, samples: Samples)] = [
            (
                "atrium_relay_link_packets_total", "counter",
                "Media packets over relay links, by the other node and direction.",
                { f in [("direction=\"out\"", "\(f.packetsOut)"), ("direction=\"in\"", "\(f.packetsIn)")] }
            ),
            (
                "atrium_relay_link_bytes_total", "counter",
                "Media bytes over relay links, by the other node and direction.",
                { f in [("direction=\"out\"", "\(f.bytesOut)"), ("direction=\"in\"", "\(f.bytesIn)")] }
            ),
            (
                "atrium_relay_link_dropped_total", "counter", "Relay datagrams dropped, by the other node and reason.",
                { f in
                    [
                        ("stranger", f.strangers), ("unauthenticated", f.unauthenticated), ("malformed", f.malformed),
                        ("ring_full", f.ringFull), ("lost", f.lost),
                    ].map { ("reason=\"\($0.0)\"", "\($0.1)") }
                }
            ),
            (
                "atrium_relay_link_stream_packets_total", "counter",
                "Media packets over relay links by simulcast stream (0 the lowest), by the other node.",
                { f in (0..<4).map { ("stream=\"\($0)\"", "\(f.streamPackets[$0])") } }
            ),
            (
                "atrium_relay_link_tracks", "gauge", "Tracks (piped producers) routed through a relay link.",
                { f in [("", "\(f.tracks)")] }
            ),
            (
                "atrium_relay_link_up", "gauge", "1 while a relay link's handshake is done and it carries.",
                { f in [("", f.state == .connected ? "1" : "0")] }
            ),
            (
                "atrium_relay_link_rtt_seconds", "gauge", "A relay link's last round trip (its pings).",
                { f in f.rttMilliseconds.map { [("", "\($0 / 1000)")] } ?? [] }
            ),
        ]
        var out: [String] = []
        for m in metrics {
            out += ["# HELP \(m.name) \(m.help)", "# TYPE \(m.name) \(m.type)"]
            for l in links {
                let link = "node=\"\(l.node)\",side=\"\(l.side == .owner ? "owner" : "edge")\""
                for s in m.samples(l.figures) {
                    out.append("\(m.name){\(link)\(s.labels.isEmpty ? "" : "," + s.labels)} \(s.value)")
                }
            }
        }
        return out.joined(separator: "\n") + "\n"
    }
}
