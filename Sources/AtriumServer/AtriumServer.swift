import AtriumAdminAPI
import AtriumAuth
import AtriumCluster
public import AtriumConfig
import AtriumCrypto
import AtriumEdge
public import AtriumLog
import AtriumMedia
import AtriumMediaControl
import AtriumMetrics
import AtriumModel
import AtriumRecording
import AtriumRooms
import AtriumSignal
import AtriumStore
import AtriumUDP
import AtriumWeb
import AtriumWebhook
import CAtriumSupport

#if canImport(Glibc)
    import Glibc
#endif

public enum ServerError: Error, CustomStringConvertible {
    case startup(String)

    public var description: String {
        switch self {
        case .startup(let m): m
        }
    }
}

/// The composition root: builds the store, the verifier, the admin API, the signaling endpoint and the
/// edge from a resolved configuration, serves until SIGINT/SIGTERM, then shuts down in order
/// (stop accepting and close sockets, then flush and close the store).
public final class AtriumServer {
    public static let version = "0.1.0"

    let config: ServerConfig
    let logger: Logger
    var edge: EdgeServer?
    var store: (any RoomStore)?
    var devCredentials: DevCredentials?
    /// The media workers, each a thread with its own sockets; empty with `--udp-port -1`.
    var media: [MediaWorker] = []
    /// With `--redis` and `--edge-after`: the plane that spreads big rooms over nodes.
    var clusterPlane: ClusterMediaPlane?
    var cluster: ClusterParts?
    var signalEndpoint: SignalEndpoint?
    var hub: Hub?
    var webhooks: Webhooks?
    var recordings: RecordingManager?
    var streams: StreamManager?

    public init(config: ServerConfig, logger: Logger) {
        self.config = config
        self.logger = logger
    }

    /// Serves until stopped; returns the process exit code.
    public func run() -> Int32 {
        // Large blocks back to the system when freed (a stream's buffers after it ends).
        _ = atrium_keep_large_blocks_returnable()
        do throws(ServerError) {
            try start()
        } catch {
            logger.error("cannot start", ("error", error.description))
            cluster?.stopTunnel()
            return 1
        }
        let signal = edge?.run() ?? 0
        if let cluster, let edge, let endpoint = signalEndpoint, let hub {
            drain(cluster, edge, endpoint, hub)
        }
        logger.info("shutting down", ("signal", String(signal)))
        cluster?.stop()
        edge?.closeWebSockets(code: 1001, reason: "server shutting down")
        for w in media { w.onEvents(nil) }
        recordings?.shutdown()
        streams?.shutdown()
        edge?.shutdown()
        for w in media { w.stop() }
        clusterPlane?.stop()
        webhooks?.stop()
        if webhooks != nil {
            cluster?.releaseWebhookLeases(config.webhooks.compactMap { WebhookURL($0.url)?.description })
        }
        store?.close()
        cluster?.stopTunnel()
        logger.info("stopped")
        return 0
    }

    /// Builds the parts in order and starts the edge: each step is one builder below.
    func start() throws(ServerError) {
        try probeAddresses()
        try checkFiles()
        let keys = try apiKeys()
        let store = try openStore()
        self.store = store
        let metrics = MetricsRegistry(version: Self.version, swiftVersion: "6")
        let verifier = TokenVerifier(keys: keys.mapValues { Array($0.utf8) }, leeway: Int64(config.tokenLeeway))
        let makeRoomID = { RoomID.make(millis: Clock.unixMillis(), random: SecureRandom.uint64()) }
        let api = AdminAPI(
            store: store, verifier: verifier, metrics: metrics, corsOrigins: config.corsOrigins,
            environment: .init(
                now: Clock.unixSeconds, monotonic: Clock.monotonic, makeRoomID: makeRoomID,
                nowMillis: { Int64(clamping: Clock.unixMillis()) }))
        let hub = Hub(
            store: store, ids: IDGenerator(random: SecureRandom.uint64),
            autoCreate: AutoCreate(rawValue: config.autoCreateRooms) ?? .grant, makeRoomID: makeRoomID)
        hub.registerMetrics(metrics)
        let signal = makeSignal(verifier: verifier, hub: hub)
        signal.registerMetrics(metrics)
        api.hub = hub
        signalEndpoint = signal
        self.hub = hub
        if !config.webhooks.isEmpty {
            let w = try startWebhooks()
            hub.observers.append(w)
            w.registerMetrics(metrics)
            webhooks = w
        }
        if config.udpPort >= 0 { try startMedia(signal: signal, hub: hub, api: api, metrics: metrics) }
        // WHIP ingest and WHEP playback (docs/whip-whep.md) answer their routes; everything else goes on
        // to the admin API.
        let whip = WHIPEndpoint(
            signal: signal, verifier: verifier, next: api, makeID: { Base64URL.encode(SecureRandom.bytes(12)) })
        metrics.gauge("atrium_whip_sessions", help: "WHIP publishing sessions live on this node.") {
            Double(whip.sessionCount(.whip))
        }
        metrics.gauge("atrium_whep_sessions", help: "WHEP playing sessions live on this node.") {
            Double(whip.sessionCount(.whep))
        }
        let web = WebHandler(root: config.webDir, next: whip, devToken: devTokenMinter())
        let edge = EdgeServer(options: edgeOptions(), http: web, webSockets: [signal], logger: logger)
        edge.registerMetrics(metrics)
        metrics.gauge("atrium_rooms", help: "Rooms in the store.") { Double((try? store.count()) ?? 0) }
        cluster?.register(metrics)
        let cluster = self.cluster
        let rec = recordings
        let live = streams
        edge.onTick = {
            signal.tick()
            whip.tick()
            cluster?.tick()
            rec?.tick()
            live?.tick()
        }
        let port: Int
        do throws(EdgeError) { port = try edge.start() } catch {
            throw .startup("\(error)")
        }
        self.edge = edge
        edge.onWake = {
            signal.drainMedia()
            cluster?.relay.drain()
        }
        if let waker = edge.waker { for w in media { w.onEvents { waker.wake() } } }
        let scheme = config.tlsCert == nil ? "http" : "https"
        let host = config.bind.contains(":") ? "[\(config.bind)]" : config.bind
        let base = "\(scheme)://\(host):\(port)"
        logger.info(
            "listening", ("url", base), ("port", String(port)),
            ("store", config.redis == nil ? config.store.rawValue : "redis"),
            ("version", Self.version))
        // Before the first heartbeat: the node record says it takes edges from the start.
        if let cluster, let clusterPlane {
            cluster.attach(plane: clusterPlane)
            api.mediaNodes = { [weak clusterPlane] room in clusterPlane?.mediaNodes(ofRoom: room.rawValue) ?? [:] }
        }
        cluster?.attach(
            hub: hub, signal: signal, http: web, api: api, store: store, media: media, url: config.publicURL ?? base,
            waker: edge.waker, logger: logger)
        whip.nodes = api.nodes
        if let creds = devCredentials { printDevBanner(creds, base: base, keys: keys) }
    }

    /// The data directory exists (SQLite, dev credentials) and the TLS files can be read.
    func checkFiles() throws(ServerError) {
        if config.store == .sqlite || config.dev {
            guard makeDirectories(config.dataDir) else {
                throw .startup("cannot create data directory \(config.dataDir)")
            }
        }
        for path in [config.tlsCert, config.tlsKey].compactMap({ $0 }) where readFile(path) == nil {
            throw .startup("cannot read TLS file \(path)")
        }
    }

    /// The API keys: the configured ones, and with `--dev` the development key (made on first use).
    func apiKeys() throws(ServerError) -> [String: String] {
        var keys = config.keys
        if config.dev {
            let (creds, created) = try DevCredentials.loadOrCreate(in: config.dataDir)
            keys[creds.key] = creds.secret
            devCredentials = creds
            if created {
                logger.info(
                    "created dev API key", ("key", creds.key), ("file", config.dataDir + "/" + DevCredentials.fileName))
            }
        }
        guard !keys.isEmpty else {
            throw .startup("no API keys configured: pass --keys KEY:SECRET (or ATRIUM_KEYS), or --dev")
        }
        // Like the keys, the TURN secret belongs in the environment, so `config check` cannot see it.
        if !config.turnURLs.isEmpty && config.turnSecret == nil {
            throw .startup("turn.urls needs turn.secret (ATRIUM_TURN_SECRET): coturn's static-auth-secret")
        }
        return keys
    }

    /// The room store: Redis in a cluster (shared by every node, the cluster's parts made with it),
    /// else memory or SQLite.
    func openStore() throws(ServerError) -> any RoomStore {
        if config.redis != nil {
            let parts = try ClusterParts(config: config)
            cluster = parts
            return RedisRoomStore(redis: parts.redis, keys: parts.keys)
        }
        switch config.store {
        case .memory: return MemoryRoomStore()
        case .sqlite:
            let path = config.dataDir + "/atrium.sqlite"
            do throws(StoreError) { return try SQLiteRoomStore(path: path) } catch {
                throw .startup("cannot open the room store \(path): \(error)")
            }
        }
    }

    /// The signaling endpoint with the configured timers and TURN.
    func makeSignal(verifier: TokenVerifier, hub: Hub) -> SignalEndpoint {
        var options = SignalOptions()
        options.authTimeout = Double(config.signalAuthTimeout)
        options.idleTimeout = Int64(config.signalIdleTimeout)
        options.resumeWindow = Int64(config.resumeWindow)
        if let secret = config.turnSecret, !config.turnURLs.isEmpty {
            options.turn = TURNSettings(urls: config.turnURLs, secret: Array(secret.utf8), ttl: Int64(config.turnTTL))
        }
        return SignalEndpoint(
            verifier: verifier, hub: hub, options: options, now: Clock.unixSeconds, monotonic: Clock.monotonic,
            nowMillis: { Int64(clamping: Clock.unixMillis()) },
            makeToken: { Base64URL.encode(SecureRandom.bytes(24)) })
    }

    /// The media workers behind the coordinator that follows the rooms, and the recordings they feed.
    func startMedia(signal: SignalEndpoint, hub: Hub, api: AdminAPI, metrics: MetricsRegistry) throws(ServerError) {
        let (workers, certificate) = try makeMediaWorkers()
        media = workers
        let plane = MediaWorkers(workers, spread: config.mediaRoomSpread)
        var top: any MediaPlane = plane
        if let cluster, config.edgeAfter > 0 {
            let announce = config.mediaAnnounce.first ?? config.mediaBind
            do throws(UDPError) {
                let p = ClusterMediaPlane(
                    local: plane, me: cluster.node.id.rawValue, edgeAfter: config.edgeAfter, certificate: certificate,
                    relayBind: try SocketAddress(parsing: Self.hostPort(config.mediaBind, 0)), relayAnnounce: announce)
                p.log = { [logger] in logger.warn("relay", ("detail", $0)) }
                metrics.text { [weak p] in p.map { Self.relayMetrics($0.links) } ?? "" }
                clusterPlane = p
                top = p
            } catch {
                throw .startup("relay address: \(error)")
            }
        }
        let coordinator = MediaCoordinator(plane: top)
        signal.media = coordinator
        metrics.gauge("atrium_media_workers", help: "Media worker threads.") { Double(workers.count) }
        metrics.text { MediaStats.prometheus(workers: workers.map(\.stats)) }
        plane.registerMetrics(metrics)
        coordinator.registerMetrics(metrics)
        let rec = RecordingManager(
            directory: Self.absolute(config.dataDir) + "/recordings", ffmpeg: config.ffmpeg,
            plane: MediaRecordingPlane(coordinator: coordinator, plane: top), logger: logger,
            now: { Int64(Clock.unixMillis()) }, monotonic: Clock.monotonic,
            makeID: { "rec_" + Base64URL.encode(SecureRandom.bytes(9)) },
            random32: { UInt32(truncatingIfNeeded: SecureRandom.uint64()) })
        let hooks = webhooks
        rec.onEvent = { type, room, name, data in
            hooks?.emit(type: type, room: room, roomName: name, data: data, now: Clock.unixSeconds())
        }
        hub.observers.append(rec)
        api.recordings = rec
        recordings = rec
        let live = StreamManager(
            directory: Self.absolute(config.dataDir) + "/streams", ffmpeg: config.ffmpeg,
            plane: MediaRecordingPlane(coordinator: coordinator, plane: top), logger: logger,
            now: { Int64(Clock.unixMillis()) }, monotonic: Clock.monotonic,
            makeID: { "str_" + Base64URL.encode(SecureRandom.bytes(9)) },
            random32: { UInt32(truncatingIfNeeded: SecureRandom.uint64()) }, rooms: { [unowned hub] in hub.state($0) })
        live.onEvent = { type, room, name, data in
            hooks?.emit(type: type, room: room, roomName: name, data: data, now: Clock.unixSeconds())
        }
        hub.observers.append(live)
        metrics.gauge("atrium_live_streams", help: "Live streams (RTMP, HLS) not ended on this node.") {
            Double(live.liveCount)
        }
        api.streams = live
        streams = live
    }

    /// The HTTP and WebSocket edge's limits.
    func edgeOptions() -> EdgeOptions {
        var options = EdgeOptions()
        options.bindAddress = config.bind
        options.port = config.port
        options.tlsCertificatePath = config.tlsCert
        options.tlsPrivateKeyPath = config.tlsKey
        options.maxBodyBytes = config.maxBodyBytes
        options.requestTimeoutSeconds = config.requestTimeout
        options.maxConnections = config.maxConnections
        options.maxConnectionsPerAddress = config.maxConnectionsPerAddress
        options.webSocketStallSeconds = Double(config.signalStallTimeout)
        return options
    }

    /// With `--dev`, the meeting page's token minter (signed with the development key).
    func devTokenMinter() -> WebHandler.DevTokenMinter? {
        guard let creds = devCredentials else { return nil }
        let issuer = TokenIssuer(key: creds.key, secret: Array(creds.secret.utf8))
        return { room, identity, name, role in
            guard ParticipantIdentity.isValid(identity), let r = ParticipantRole(rawValue: role) else { return nil }
            var g = Grants()
            g.room = room
            g.roomJoin = true
            g.roomCreate = true
            g.canPublish = r != .viewer
            g.canSubscribe = true
            g.role = r
            return issuer.token(identity: identity, name: name, grants: g, ttl: 24 * 3600, now: Clock.unixSeconds())
        }
    }

    /// Opens the webhook outbox (in the room store's SQLite file, in memory, or in a cluster's Redis) and starts one delivery
    /// thread per endpoint; what a previous run left queued is delivered first.
    func startWebhooks() throws(ServerError) -> Webhooks {
        var endpoints: [WebhookEndpoint] = []
        for w in config.webhooks {
            guard let url = WebhookURL(w.url) else { throw .startup("webhook url \(w.url) is not a valid http(s) URL") }
            endpoints.append(WebhookEndpoint(url: url, secret: w.secret, chat: w.chat))
        }
        let path = config.dataDir + "/atrium.sqlite"
        let memory = config.store == .memory ? MemoryWebhookOutbox() : nil
        // A cluster shares one outbox in Redis (docs/webhooks.md, "In a cluster").
        let cluster = self.cluster
        let timeout = config.webhookTimeout
        let hooks: Webhooks
        do throws(StoreError) {
            let outbox: any WebhookOutbox
            if let cluster {
                outbox = cluster.webhookOutbox(timeout: timeout)
            } else if let memory {
                outbox = memory
            } else {
                outbox = try SQLiteWebhookOutbox(path: path)
            }
            hooks = try Webhooks(
                endpoints: endpoints, outbox: outbox,
                makeOutbox: { () throws(StoreError) -> any WebhookOutbox in
                    if let cluster { return cluster.webhookOutbox(timeout: timeout) }
                    if let memory { return memory }
                    return try SQLiteWebhookOutbox(path: path)
                },
                options: WebhookOptions(timeout: Double(config.webhookTimeout), now: { Int64(Clock.unixMillis()) }),
                logger: logger, makeID: { "evt_" + Base64URL.encode(SecureRandom.bytes(15)) })
        } catch {
            throw .startup("cannot open the webhook outbox \(path): \(error)")
        }
        guard hooks.start() else { throw .startup("cannot start the webhook delivery threads") }
        logger.info(
            "webhooks on", ("endpoints", String(endpoints.count)), ("queued", String(hooks.queueLength)))
        return hooks
    }

    /// Refuses an HTTP or media address this machine cannot bind (not one of its addresses, a port in
    /// use) before anything starts, naming the port and the flag that changes it.
    func probeAddresses() throws(ServerError) {
        if let p = ListenProbe.check(address: config.bind, port: config.port) {
            throw .startup(
                ListenProbe.message(
                    p, address: config.bind, port: config.port, addressFlag: "--bind", portFlag: "--port", proto: "TCP")
            )
        }
        if config.udpPort >= 0 { try probeMediaPorts() }
    }

    /// The directory as an absolute path (recordings report where their files are; stunnel reads an
    /// `accept` that does not start with `/` as a host and port): resolved, or joined to the working
    /// directory when it does not exist yet.
    static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        guard let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        let base = String(cString: cwd)
        return (base == "/" ? "" : base) + "/" + path
    }

    static func hostPort(_ host: String, _ port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// What `--dev` prints: the key, its secret, a ready admin token and a curl that creates a room.
    func printDevBanner(_ creds: DevCredentials, base: String, keys: [String: String]) {
        var grants = Grants()
        grants.roomCreate = true
        grants.roomList = true
        grants.roomAdmin = true
        grants.role = .host
        let ttl: Int64 = 24 * 3600
        let token = TokenIssuer(key: creds.key, secret: Array(creds.secret.utf8))
            .token(identity: "dev-admin", grants: grants, ttl: ttl, now: Clock.unixSeconds())
        let text = """

            Atrium \(Self.version) is running in development mode at \(base)
              Meeting page: \(base)/  (open it in two browser windows; tokens come from /dev/token)
              API key:     \(creds.key)
              API secret:  \(creds.secret)
              Admin token (valid 24 h):
                \(token)

            Create a room:
              curl -s -X POST \(base)/v1/rooms -H 'Authorization: Bearer \(token)' -H 'Content-Type: application/json' -d '{"name":"demo"}'
            List rooms:
              curl -s \(base)/v1/rooms -H 'Authorization: Bearer \(token)'
            Mint a participant token:
              .build/debug/atrium token create --key \(creds.key) --secret \(creds.secret) --room demo --identity alice

            """
        print(text)
        fflushStdout()
    }
}
