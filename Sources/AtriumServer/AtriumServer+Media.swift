import AtriumConfig
import AtriumDTLS
import AtriumLog
import AtriumMedia
import AtriumUDP
import CAtriumSupport

/// The media workers: how many, on which ports, made with one certificate and started.
extension AtriumServer {
    /// `--media-workers`, with 0 meaning the cores this process may run on, at most
    /// `MediaPortPlan.defaultMaxWorkers` (docs/media-workers.md: past that each worker adds ports and
    /// memory for rooms that rarely need them; a larger explicit count is taken as given).
    var mediaWorkerCount: Int {
        config.mediaWorkers > 0
            ? config.mediaWorkers : min(CPUAffinity.usableCores(), MediaPortPlan.defaultMaxWorkers)
    }

    /// Each worker's UDP and ICE-TCP ports, or the startup error naming the flag to change.
    func mediaPortPlan() throws(ServerError) -> MediaPortPlan {
        switch MediaPortPlan.make(
            workers: mediaWorkerCount, udpPort: config.udpPort, range: config.udpPortRange,
            tcpPort: config.mediaTCPPort)
        {
        case .success(let plan): return plan
        case .failure(let problem): throw .startup(problem.description)
        }
    }

    /// Refuses a media port this machine cannot bind, before anything starts.
    func probeMediaPorts() throws(ServerError) {
        let portFlag = config.udpPortRange == nil ? "--udp-port" : "--udp-ports"
        for ports in try mediaPortPlan().workers {
            if let p = ListenProbe.check(address: config.mediaBind, port: ports.udp, udp: true) {
                throw .startup(
                    ListenProbe.message(
                        p, address: config.mediaBind, port: ports.udp, addressFlag: "--media-bind",
                        portFlag: portFlag, proto: "UDP"))
            }
            if ports.tcp >= 0, let p = ListenProbe.check(address: config.mediaBind, port: ports.tcp) {
                throw .startup(
                    ListenProbe.message(
                        p, address: config.mediaBind, port: ports.tcp, addressFlag: "--media-bind",
                        portFlag: "--media-tcp-port", proto: "TCP"))
            }
        }
    }

    /// Makes the DTLS certificate once, binds every worker's sockets and starts their threads; a
    /// worker that cannot start stops the ones before it.
    func makeMediaWorkers() throws(ServerError) -> ([MediaWorker], DTLSCertificate) {
        let plan = try mediaPortPlan()
        var announced: [SocketAddress] = []
        do throws(UDPError) {
            for a in config.mediaAnnounce { announced.append(try SocketAddress(parsing: Self.hostPort(a, 0))) }
        } catch {
            throw .startup("media address: \(error)")
        }
        if announced.isEmpty && (config.mediaBind == "0.0.0.0" || config.mediaBind == "::") {
            throw .startup("--media-bind \(config.mediaBind) needs --media-announce: the address peers reach")
        }
        let certificate: DTLSCertificate
        do throws(DTLSError) { certificate = try DTLSCertificate() } catch {
            throw .startup("cannot make the DTLS certificate: \(error)")
        }
        var workers: [MediaWorker] = []
        do throws(ServerError) {
            for (i, ports) in plan.workers.enumerated() {
                let w = try startWorker(i, ports, announced: announced, certificate: certificate)
                workers.append(w)
            }
        } catch {
            for w in workers { w.stop() }
            throw error
        }
        if config.mediaLossPercent > 0 {
            logger.warn("testing loss is on", ("percent", String(config.mediaLossPercent)))
        }
        return (workers, certificate)
    }

    private func startWorker(
        _ index: Int, _ ports: MediaPortPlan.Ports, announced: [SocketAddress], certificate: DTLSCertificate
    ) throws(ServerError) -> MediaWorker {
        let bind: SocketAddress
        do throws(UDPError) {
            bind = try SocketAddress(parsing: Self.hostPort(config.mediaBind, ports.udp))
        } catch {
            throw .startup("media address: \(error)")
        }
        var media = MediaConfiguration(
            bind: bind, announced: announced, lossPercent: config.mediaLossPercent,
            maxPublishBitrate: UInt64(config.maxPublishBitrate), keyFrameCacheBytes: config.keyFrameCacheBytes,
            keyFrameCacheSeconds: Double(config.keyFrameCacheSeconds))
        if ports.tcp >= 0, let tcp = UInt16(exactly: ports.tcp) { media.tcpBind = bind.withPort(tcp) }
        let worker: MediaWorker
        do {
            worker = try MediaWorker(configuration: media, logger: logger, certificate: certificate, index: index)
        } catch {
            if case .open(let e)? = error as? UDPError {
                throw .startup(
                    ListenProbe.message(
                        ListenProbe.problem(errno: e), address: config.mediaBind, port: ports.udp,
                        addressFlag: "--media-bind",
                        portFlag: config.udpPortRange == nil ? "--udp-port" : "--udp-ports",
                        proto: "UDP"))
            }
            throw .startup(
                "cannot start media worker \(index) on UDP \(ports.udp) / TCP \(ports.tcp) of \(config.mediaBind): \(error)"
            )
        }
        do throws(MediaWorkerError) { try worker.start() } catch { throw .startup("\(error)") }
        logger.info(
            "media listening", ("worker", String(index)), ("udp", "\(worker.localAddress)"),
            ("port", String(worker.localAddress.port)),
            ("candidates", worker.candidateAddresses.map { "\($0)" }.joined(separator: ",")),
            ("tcp_candidates", worker.tcpCandidateAddresses.map { "\($0)" }.joined(separator: ",")))
        return worker
    }
}

/// The CPUs the scheduler lets this process run on (`sched_getaffinity`, which a container's cpuset
/// or `taskset` narrows), at least 1.
enum CPUAffinity {
    static func usableCores() -> Int { Int(atrium_usable_cpus()) }
}
