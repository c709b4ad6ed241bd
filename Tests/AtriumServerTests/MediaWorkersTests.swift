import AtriumConfig
import AtriumDTLS
import AtriumForwarding
import AtriumJSON
import AtriumLog
import AtriumUDP
import Testing

@testable import AtriumMedia
@testable import AtriumMediaControl

/// Several media workers behind one plane: where rooms go, and that every command about a
/// room reaches the worker that owns it.
@Suite struct MediaWorkersTests {
    typealias Load = WorkerPlacement.Load

    static let placements: [([Load], Int?)] = [
        ([], nil),
        ([Load()], 0),
        ([Load(), Load()], 0),
        ([Load(transports: 1, rooms: 1), Load()], 1),
        ([Load(transports: 0, rooms: 1), Load()], 1),
        ([Load(transports: 2, rooms: 1), Load(transports: 2, rooms: 2)], 0),
        ([Load(transports: 5, rooms: 1), Load(transports: 3, rooms: 3), Load(transports: 3, rooms: 2)], 2),
        ([Load(transports: 4, rooms: 2), Load(transports: 4, rooms: 2), Load(transports: 4, rooms: 2)], 0),
        ([Load(transports: 9, rooms: 1), Load(transports: 1, rooms: 9)], 1),
    ]

    @Test(arguments: placements)
    func placementPicksTheLeastLoadedWorker(loads: [Load], expected: Int?) {
        #expect(WorkerPlacement.leastLoaded(loads) == expected)
    }

    /// A worker that records what it was handed.
    final class Recorder: MediaPlane {
        let fingerprint: [UInt8] = Array(repeating: 0xCD, count: 32)
        let candidateAddresses: [SocketAddress]
        var commands: [MediaCommand] = []
        var queued: [MediaEvent] = []

        init(port: UInt16) { candidateAddresses = [.loopbackV4(port: port)] }

        func submit(_ command: MediaCommand) { commands.append(command) }

        func events() -> [MediaEvent] {
            defer { queued.removeAll() }
            return queued
        }
    }

    static func transport(_ id: String, room: String) -> MediaCommand {
        .openTransport(TransportSpec(id: id, router: room, label: id, localUfrag: "u", localPassword: "p", remote: nil))
    }

    static func producer(_ id: String, on transport: String) -> MediaCommand {
        .addProducer(
            ProducerSpec(
                id: id, transport: transport, mid: "0", source: "camera", kind: .video, videoCodec: "VP8",
                clockRate: 90000, payloadType: 96, rtxPayloadType: nil, ssrc: nil, rtxSSRC: nil, audioLevelID: nil,
                absSendTimeID: nil, paused: false))
    }

    static func consumer(_ id: String, of producer: String, on transport: String) -> MediaCommand {
        .addConsumer(
            ConsumerSpec(
                id: id, producer: producer, transport: transport, ssrc: 1, rtxSSRC: nil, payloadType: 96,
                rtxPayloadType: nil, nack: true, audioLevelID: nil, absSendTimeID: nil))
    }

    @Test func roomsSpreadOverWorkersAndCommandsFollowTheirRoom() {
        let a = Recorder(port: 40000)
        let b = Recorder(port: 40001)
        let set = MediaWorkers([a, b])
        // The answer's candidates are asked first: that places the room.
        #expect(set.candidateAddresses(room: "r1") == [.loopbackV4(port: 40000)])
        #expect(set.candidateAddresses(room: "r2") == [.loopbackV4(port: 40001)])
        set.submit(Self.transport("t1", room: "r1"))
        set.submit(Self.transport("t2", room: "r2"))
        set.submit(Self.transport("t3", room: "r1"))
        set.submit(Self.producer("p1", on: "t1"))
        set.submit(Self.consumer("c1", of: "p1", on: "t3"))
        set.submit(.pauseProducer(id: "p1", paused: true))
        set.submit(.setPreference(consumer: "c1", LayerPreference(quality: .low)))
        set.submit(
            .addRecorder(
                RecorderSpec(id: "rec", producer: "p1", destination: .v4(address: 1, port: 9), ssrc: 5, payloadType: 96)
            ))
        set.submit(.closeRecorder(id: "rec"))
        #expect(a.commands.count == 8)
        #expect(b.commands.count == 1)
        #expect(set.worker(ofRoom: "r1") == 0 && set.worker(ofRoom: "r2") == 1)
        #expect(set.worker(ofProducer: "p1") == 0 && set.worker(ofConsumer: "c1") == 0)
        #expect(set.placementLoads == [Load(transports: 2, rooms: 1), Load(transports: 1, rooms: 1)])
        // A third room goes where there are fewer transports.
        set.submit(Self.transport("t4", room: "r3"))
        #expect(set.worker(ofRoom: "r3") == 1)
        #expect(b.commands.count == 2)
    }

    struct SpreadRow: Sendable, CustomTestStringConvertible {
        var room: [Int: Int]
        var order: [Int]
        var loads: [Load]
        var spread: Int
        var expected: Int?
        var testDescription: String { "room \(order.map { "\($0):\(room[$0] ?? 0)" }) spread \(spread)" }
    }

    /// Where a new viewer of a room goes: its home until the room has `spread` transports there, then
    /// the next of its workers with room, then the least-loaded worker it is not on, then the one of
    /// its workers with the fewest of its transports.
    @Test(arguments: [
        SpreadRow(room: [:], order: [], loads: [Load(transports: 3), Load()], spread: 2, expected: 1),
        SpreadRow(room: [0: 1], order: [0], loads: [Load(transports: 1), Load()], spread: 2, expected: 0),
        SpreadRow(room: [0: 2], order: [0], loads: [Load(transports: 2), Load()], spread: 2, expected: 1),
        SpreadRow(room: [0: 500], order: [0], loads: [Load(transports: 500), Load()], spread: 0, expected: 0),
        SpreadRow(
            room: [0: 2, 1: 1], order: [0, 1], loads: [Load(transports: 2), Load(transports: 1)], spread: 2,
            expected: 1),
        SpreadRow(
            room: [0: 2], order: [0], loads: [Load(transports: 2), Load(transports: 9), Load(transports: 4)],
            spread: 2, expected: 2),
        SpreadRow(
            room: [0: 2, 1: 2], order: [0, 1], loads: [Load(transports: 2), Load(transports: 2)], spread: 2,
            expected: 0),
        SpreadRow(
            room: [1: 3, 0: 2], order: [1, 0], loads: [Load(transports: 2), Load(transports: 3)], spread: 1,
            expected: 0),
        SpreadRow(room: [0: 1], order: [0], loads: [Load(transports: 1)], spread: 1, expected: 0),
    ])
    func viewersSpreadPastTheThreshold(_ row: SpreadRow) {
        let room = row.order.map { (worker: $0, transports: row.room[$0] ?? 0) }
        #expect(WorkerPlacement.subscriber(room: room, loads: row.loads, spread: row.spread) == row.expected)
    }

    static func viewerTransport(_ id: String, room: String) -> MediaCommand {
        .openTransport(
            TransportSpec(
                id: id, router: room, label: id, localUfrag: "u", localPassword: "p", remote: nil, role: .subscriber))
    }

    static func names(_ commands: [MediaCommand]) -> [String] {
        commands.map { c in
            switch c {
            case .openTransport(let s): "open \(s.id)"
            case .addProducer(let s): "producer \(s.id)"
            case .addConsumer(let s): "consumer \(s.id)"
            case .pipeProducer(let id, let link, let tag): "pipe \(id) \(link.from)->\(link.to) #\(tag)"
            case .addPipeProducer(let s, let router, let link, let tag):
                "pipe producer \(s.id) of \(router) \(link.from)->\(link.to) #\(tag)"
            case .pauseProducer(let id, let paused): "pause \(id) \(paused)"
            case .closeProducer(let id): "close producer \(id)"
            case .closeRouter(let id): "close router \(id)"
            case .closeTransport(let id): "close transport \(id)"
            default: "other"
            }
        }
    }

    @Test func aBigRoomsLaterViewersOpenOnAnotherWorkerFedThroughOnePipe() {
        let a = Recorder(port: 40000)
        let b = Recorder(port: 40001)
        let set = MediaWorkers([a, b], spread: 2)
        #expect(set.candidateAddresses(room: "r") == [.loopbackV4(port: 40000)])
        set.submit(Self.transport("pub", room: "r"))
        set.submit(Self.producer("p1", on: "pub"))
        set.submit(Self.viewerTransport("s1", room: "r"))
        set.submit(Self.viewerTransport("s2", room: "r"))
        set.submit(Self.viewerTransport("s3", room: "r"))
        // The publisher and the first viewer fill the home worker's share; the others go to worker 1,
        // whose port their offers carry.
        #expect(set.worker(ofTransport: "s1") == 0 && set.worker(ofTransport: "s2") == 1)
        #expect(set.worker(ofTransport: "s3") == 1)
        #expect(set.candidateAddresses(room: "r", transport: "s2") == [.loopbackV4(port: 40001)])
        #expect(set.candidateAddresses(room: "r", transport: "s1") == [.loopbackV4(port: 40000)])
        #expect(set.workers(ofRoom: "r") == [0, 1])
        set.submit(Self.consumer("c1", of: "p1", on: "s1"))
        set.submit(Self.consumer("c2", of: "p1", on: "s2"))
        set.submit(Self.consumer("c3", of: "p1", on: "s3"))
        #expect(set.pipedWorkers(ofProducer: "p1") == [1])
        set.submit(.pauseProducer(id: "p1", paused: true))
        set.submit(.closeProducer(id: "p1"))
        #expect(
            Self.names(a.commands) == [
                "open pub", "producer p1", "open s1", "consumer c1", "pipe p1 0->1 #1", "pause p1 true",
                "close producer p1",
            ])
        // The pipe producer comes before the consumer that needs it, once for both viewers.
        #expect(
            Self.names(b.commands) == [
                "open s2", "open s3", "pipe producer p1 of r 0->1 #1", "consumer c2", "consumer c3", "pause p1 true",
                "close producer p1",
            ])
        #expect(set.pipedWorkers(ofProducer: "p1").isEmpty)
        set.submit(.closeRouter(id: "r"))
        #expect(a.commands.count == 8 && b.commands.count == 8)
        #expect(set.placementLoads == [Load(), Load()])
    }

    /// A producer fed from another node (an edge's pipe producer of the owner's track, or the owner's
    /// of a track published on an edge) lives on its room's home worker and is piped on, once, to the
    /// worker of a viewer the room spread to; pausing and closing reach both.
    @Test func aRelayedProducerIsPipedOnToTheWorkersOfItsViewers() {
        let a = Recorder(port: 40000)
        let b = Recorder(port: 40001)
        let set = MediaWorkers([a, b], spread: 1)
        set.submit(Self.viewerTransport("s1", room: "r"))
        guard case .addProducer(let spec) = Self.producer("p1", on: "elsewhere") else { return }
        set.addRelayedProducer(spec, router: "r", link: PipeLink(from: -1, to: 0, wakeFar: nil, wakeHome: nil), tag: 77)
        set.submit(Self.viewerTransport("s2", room: "r"))
        set.submit(Self.viewerTransport("s3", room: "r"))
        #expect(set.worker(ofProducer: "p1") == 0 && set.worker(ofTransport: "s2") == 1)
        #expect(set.worker(ofTransport: "s3") == 0)
        for (c, t) in [("c1", "s1"), ("c2", "s2"), ("c3", "s3")] { set.submit(Self.consumer(c, of: "p1", on: t)) }
        set.submit(.pauseProducer(id: "p1", paused: true))
        set.submit(.closeProducer(id: "p1"))
        #expect(
            Self.names(a.commands) == [
                "open s1", "pipe producer p1 of r -1->0 #77", "open s3", "consumer c1", "pipe p1 0->1 #1",
                "consumer c3", "pause p1 true", "close producer p1",
            ])
        #expect(
            Self.names(b.commands) == [
                "open s2", "pipe producer p1 of r 0->1 #1", "consumer c2", "pause p1 true", "close producer p1",
            ])
        #expect(set.worker(ofProducer: "p1") == nil && set.pipedWorkers(ofProducer: "p1").isEmpty)
    }

    @Test func closingAPublisherTransportClosesItsPipeProducers() {
        let a = Recorder(port: 40000)
        let b = Recorder(port: 40001)
        let set = MediaWorkers([a, b], spread: 1)
        set.submit(Self.transport("pub", room: "r"))
        set.submit(Self.producer("p1", on: "pub"))
        set.submit(Self.viewerTransport("s1", room: "r"))
        set.submit(Self.consumer("c1", of: "p1", on: "s1"))
        set.submit(.closeTransport(id: "pub"))
        #expect(Self.names(b.commands).suffix(1) == ["close producer p1"])
        #expect(Self.names(a.commands).suffix(1) == ["close transport pub"])
    }

    @Test func withoutASpreadARoomStaysOnItsWorker() {
        let a = Recorder(port: 40000)
        let b = Recorder(port: 40001)
        let set = MediaWorkers([a, b])
        set.submit(Self.transport("pub", room: "r"))
        for i in 0..<5 { set.submit(Self.viewerTransport("s\(i)", room: "r")) }
        #expect(a.commands.count == 6 && b.commands.isEmpty)
    }

    @Test func closingARoomForgetsItAndFreesItsWorker() {
        let a = Recorder(port: 40000)
        let b = Recorder(port: 40001)
        let set = MediaWorkers([a, b])
        set.submit(Self.transport("t1", room: "r1"))
        set.submit(Self.producer("p1", on: "t1"))
        set.submit(.closeRouter(id: "r1"))
        #expect(a.commands.count == 3 && b.commands.isEmpty)
        #expect(set.worker(ofRoom: "r1") == nil && set.worker(ofProducer: "p1") == nil)
        #expect(set.placementLoads == [Load(), Load()])
        // An id no worker is known to have goes to every worker (they ignore ids they lack).
        set.submit(.closeProducer(id: "p1"))
        #expect(a.commands.count == 4 && b.commands.count == 1)
    }

    @Test func closingATransportLowersItsWorkersLoad() {
        let a = Recorder(port: 40000)
        let set = MediaWorkers([a, Recorder(port: 40001)])
        set.submit(Self.transport("t1", room: "r1"))
        set.submit(Self.transport("t2", room: "r1"))
        set.submit(.closeTransport(id: "t1"))
        #expect(set.placementLoads[0] == Load(transports: 1, rooms: 1))
        #expect(a.commands.count == 3)
    }

    @Test func eventsAndCandidatesAreEveryWorkers() {
        let a = Recorder(port: 40000)
        let b = Recorder(port: 40001)
        a.queued = [.transportState(id: "t1", state: .connected)]
        b.queued = [.transportState(id: "t2", state: .failed)]
        let set = MediaWorkers([a, b])
        #expect(set.events().count == 2)
        #expect(set.events().isEmpty)
        #expect(set.candidateAddresses == [.loopbackV4(port: 40000), .loopbackV4(port: 40001)])
        #expect(set.fingerprint == a.fingerprint)
    }

    typealias Ports = MediaPortPlan.Ports

    struct PortRow: Sendable, CustomTestStringConvertible {
        var workers: Int
        var udp: Int
        var range: ClosedRange<Int>?
        var tcp: Int
        var expected: [Ports]?
        var testDescription: String { "\(workers) workers, udp \(udp), range \(String(describing: range)), tcp \(tcp)" }
    }

    @Test(arguments: [
        PortRow(workers: 1, udp: 8801, range: nil, tcp: -1, expected: [Ports(udp: 8801, tcp: -1)]),
        PortRow(
            workers: 3, udp: 8801, range: nil, tcp: -1,
            expected: [Ports(udp: 8801, tcp: -1), Ports(udp: 8802, tcp: -1), Ports(udp: 8803, tcp: -1)]),
        PortRow(workers: 2, udp: 0, range: nil, tcp: 0, expected: [Ports(udp: 0, tcp: 0), Ports(udp: 0, tcp: 0)]),
        PortRow(
            workers: 2, udp: 8801, range: nil, tcp: 4443,
            expected: [Ports(udp: 8801, tcp: 4443), Ports(udp: 8802, tcp: 4444)]),
        PortRow(
            workers: 2, udp: 8801, range: 40000...40001, tcp: -1,
            expected: [Ports(udp: 40000, tcp: -1), Ports(udp: 40001, tcp: -1)]),
        // Too few ports in the range, past 65535, no workers: no plan.
        PortRow(workers: 3, udp: 8801, range: 40000...40001, tcp: -1, expected: nil),
        PortRow(workers: 2, udp: 65535, range: nil, tcp: -1, expected: nil),
        PortRow(workers: 1, udp: 65535, range: nil, tcp: -1, expected: [Ports(udp: 65535, tcp: -1)]),
        PortRow(workers: 2, udp: 8801, range: nil, tcp: 65535, expected: nil),
        PortRow(workers: 0, udp: 8801, range: nil, tcp: -1, expected: nil),
    ])
    func portPlan(_ row: PortRow) {
        let plan = try? MediaPortPlan.make(workers: row.workers, udpPort: row.udp, range: row.range, tcpPort: row.tcp)
            .get()
        #expect(plan?.workers == row.expected)
    }

    static let ranges: [(String, ClosedRange<Int>?)] = [
        ("40000-40015", 40000...40015), ("1-1", 1...1), (" 5 - 6 ", 5...6), ("0-10", nil), ("10-9", nil),
        ("1-65536", nil), ("40000", nil), ("a-b", nil), ("1-2-3", nil), ("-5", nil), ("", nil),
        ("99999999999999999999-1", nil),
    ]

    @Test(arguments: ranges)
    func portRangeText(text: String, expected: ClosedRange<Int>?) {
        #expect(MediaPortPlan.parseRange(text) == expected)
    }

    @Test func metricsOfSeveralWorkersNameEachFamilyOnceWithAWorkerLabel() {
        var a = MediaStats()
        a.counters.packetsOut = 7
        var b = MediaStats()
        b.counters.packetsOut = 11
        let text = MediaStats.prometheus(workers: [a, b])
        let lines = text.split(separator: "\n")
        #expect(lines.filter { $0 == "# TYPE atrium_media_packets_total counter" }.count == 1)
        #expect(lines.contains("atrium_media_packets_total{worker=\"0\",direction=\"out\"} 7"))
        #expect(lines.contains("atrium_media_packets_total{worker=\"1\",direction=\"out\"} 11"))
        #expect(lines.contains("atrium_media_routers{worker=\"1\"} 0"))
        #expect(
            lines.contains { $0.hasPrefix("atrium_media_first_frame_seconds_count{worker=\"1\",source=\"cache\"}") })
        let helps = lines.filter { $0.hasPrefix("# HELP ") }
        #expect(Set(helps).count == helps.count)
        // One worker keeps the unlabelled exposition.
        #expect(MediaStats.prometheus(workers: [a]) == a.prometheus())
    }
}

/// The media worker settings as the configuration reads them.
@Suite struct MediaWorkerConfigTests {
    @Test func workersAndPortRangeAreRead() throws {
        let file = try JSONParser.parse(#"{"media": {"workers": 4, "udpPorts": "40000-40007"}}"#)
        let (c, issues) = ConfigLoader.resolve(file: file, environment: [:], flags: [:])
        #expect(issues.isEmpty)
        #expect(c.mediaWorkers == 4 && c.udpPortRange == 40000...40007)
        let (d, _) = ConfigLoader.resolve(file: nil, environment: [:], flags: [:])
        #expect(d.mediaWorkers == 0 && d.udpPortRange == nil)
    }

    @Test func aRangeTooSmallForTheWorkersIsRefusedByField() {
        let (_, issues) = ConfigLoader.resolve(
            file: nil, environment: [:], flags: ["--media-workers": "3", "--udp-ports": "40000-40001"])
        #expect(issues.map(\.field) == ["media.udpPorts"])
        let (_, past) = ConfigLoader.resolve(
            file: nil, environment: ["ATRIUM_MEDIA_WORKERS": "2"], flags: ["--udp-port": "65535"])
        #expect(past.map(\.field) == ["media.udpPort"])
    }

    @Test(arguments: [["--media-workers": "-1"], ["--media-workers": "257"], ["--udp-ports": "9-8"]])
    func badValuesAreRefused(_ flags: [String: String]) {
        let (_, issues) = ConfigLoader.resolve(file: nil, environment: [:], flags: flags)
        #expect(issues.count == 1)
    }
}

/// The workers of one process present one certificate, so every answer carries one fingerprint.
@Suite struct SharedCertificateTests {
    @Test func enginesGivenOneCertificateShareItsFingerprint() throws {
        let certificate = try DTLSCertificate()
        let config = MediaConfiguration(bind: .v4(address: 0x7F00_0001, port: 0), randomSeed: 1)
        func engine(_ port: UInt16) throws -> MediaEngine {
            try MediaEngine(
                config: config, logger: Logger(level: .error), clock: .manual(ManualClock(now: 0)),
                memory: MemoryPort(localAddress: .loopbackV4(port: port)), certificate: certificate)
        }
        let a = try engine(50_000)
        let b = try engine(50_001)
        #expect(a.certificate === certificate && b.certificate === certificate)
        #expect(a.certificate.fingerprint == b.certificate.fingerprint)
        // Without one, each engine makes its own.
        let own = try MediaEngine(
            config: config, logger: Logger(level: .error), clock: .manual(ManualClock(now: 0)),
            memory: MemoryPort(localAddress: .loopbackV4(port: 50_002)))
        #expect(own.certificate.fingerprint != certificate.fingerprint)
    }
}
