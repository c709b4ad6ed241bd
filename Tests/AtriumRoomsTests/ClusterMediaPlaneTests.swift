import AtriumDTLS
import AtriumJSON
import AtriumMedia
import AtriumUDP
import Foundation
import Testing

@testable import AtriumMediaControl

/// The plane that spreads a room's viewers over nodes, on fakes: what stays on the local workers,
/// what goes to an edge and in which order, what comes back, and an edge that leaves the cluster.
@Suite(.serialized) struct ClusterMediaPlaneTests {
    final class World {
        let worker = FakeMediaPlane()
        let plane: ClusterMediaPlane
        var sent: [(node: String, body: JSONValue)] = []
        var live: [ClusterMediaPlane.Peer]

        init() throws {
            plane = ClusterMediaPlane(
                local: MediaWorkers([worker]), me: "n1", edgeAfter: 2, certificate: try DTLSCertificate(),
                relayBind: .loopbackV4(port: 0), relayAnnounce: "127.0.0.1")
            live = [
                ClusterMediaPlane.Peer(
                    id: "n2", mediaAddresses: [.loopbackV4(port: 41_000)], fingerprint: Array(repeating: 7, count: 32),
                    load: 1)
            ]
            plane.send = { [unowned self] body, node in
                sent.append((node, body))
                return true
            }
            plane.peers = { [unowned self] in live }
            plane.random = { _ in 0 }
        }

        func transport(_ id: String, _ role: TransportRole, ufrag: String = "u", password: String = "p")
            -> MediaCommand
        {
            .openTransport(
                TransportSpec(
                    id: id, router: "room", label: id, localUfrag: ufrag, localPassword: password, remote: nil,
                    role: role))
        }

        /// The tag of the last pipe producer sent.
        var sentTag: UInt32? {
            sent.last { $0.body["command"]?["op"]?.stringValue == "addPipeProducer" }
                .flatMap { $0.body["command"]?["tag"]?.int64Value }.flatMap { UInt32(exactly: $0) }
        }

        /// The ops sent to a node since the last call, with the command's op for `cmd`.
        func ops() -> [String] {
            defer { sent.removeAll() }
            return sent.map { s in
                let op = s.body["op"]?.stringValue ?? "?"
                return op == "cmd" ? "\(s.node) cmd \(s.body["command"]?["op"]?.stringValue ?? "?")" : "\(s.node) \(op)"
            }
        }
    }

    static let screen = ProducerSpec(
        id: "tr_share", transport: "pub", mid: "0", source: "screen_share", kind: .video, videoCodec: "VP8",
        clockRate: 90_000, payloadType: 96, rtxPayloadType: nil, ssrc: 1, rtxSSRC: nil, audioLevelID: nil,
        absSendTimeID: nil, paused: false)

    /// A second live node besides the World's n2.
    static let n3 = ClusterMediaPlane.Peer(
        id: "n3", mediaAddresses: [.loopbackV4(port: 42_000)], fingerprint: Array(repeating: 8, count: 32), load: 1)

    static let remote = RemoteSpec(
        ufrag: "ru", password: "rp", fingerprint: Array(repeating: 1, count: 32), dtlsClient: false)

    static func consumer(_ id: String, on transport: String) -> MediaCommand {
        .addConsumer(
            ConsumerSpec(
                id: id, producer: "tr_share", transport: transport, ssrc: 9, rtxSSRC: nil, payloadType: 96,
                rtxPayloadType: nil, nack: true, audioLevelID: nil, absSendTimeID: nil))
    }

    @Test func viewersPastTheOwnersShareGoToAnEdgeWithThePipeFirst() throws {
        let w = try World()
        defer { w.plane.stop() }
        w.plane.submit(w.transport("pub", .publisher))
        w.plane.submit(.addProducer(Self.screen))
        w.plane.submit(w.transport("sub-1", .subscriber))
        w.plane.submit(Self.consumer("c1", on: "sub-1"))
        // Two transports here: the next viewer's goes to n2, the link asked for first.
        w.plane.submit(w.transport("sub-2", .subscriber))
        w.plane.submit(Self.consumer("c2", on: "sub-2"))
        let tag = try #require(w.sentTag)
        #expect(w.ops() == ["n2 link", "n2 cmd openTransport", "n2 cmd addPipeProducer", "n2 cmd addConsumer"])
        // The local worker got the publisher and the first viewer; it pipes into the link only once
        // the edge says its pipe producer is in place.
        var local = w.worker.take()
        #expect(local.compactMap(\.openedTransport).map(\.id) == ["pub", "sub-1"])
        #expect(!local.contains { if case .pipeProducer = $0 { true } else { false } })
        w.plane.receive(from: "n2", .object(["op": "piped", "tag": .int(Int64(tag) + 1)]))  // not that pipe
        w.plane.receive(from: "n3", .object(["op": "piped", "tag": .int(Int64(tag))]))  // not that node
        #expect(w.worker.take().isEmpty)
        w.plane.receive(from: "n2", .object(["op": "piped", "tag": .int(Int64(tag))]))
        local = w.worker.take()
        #expect(local.count == 1 && tag >= 0x8000_0000)
        #expect(local.contains { if case .pipeProducer("tr_share", _, tag) = $0 { true } else { false } })
        // The viewer's offer names n2's addresses and certificate.
        #expect(w.plane.candidateAddresses(room: "room", transport: "sub-2") == [.loopbackV4(port: 41_000)])
        #expect(w.plane.fingerprint(transport: "sub-2") == Array(repeating: 7, count: 32))
        #expect(w.plane.fingerprint(transport: "sub-1") == w.worker.fingerprint)
        // A second consumer of the same producer on n2 is not piped again.
        w.plane.submit(w.transport("sub-3", .subscriber))
        w.plane.submit(Self.consumer("c3", on: "sub-3"))
        #expect(w.ops() == ["n2 cmd openTransport", "n2 cmd addConsumer"])
    }

    /// A viewer placed on an edge is offered that node's candidates: its UDP ones and its passive
    /// ICE-TCP ones (for a viewer whose UDP is blocked), and its certificate's fingerprint.
    @Test func aViewerOnAnEdgeIsOfferedThatNodesCandidates() throws {
        let w = try World()
        defer { w.plane.stop() }
        w.live[0].tcpAddresses = [.loopbackV4(port: 41_001)]
        w.plane.submit(w.transport("pub", .publisher))
        w.plane.submit(w.transport("sub-1", .subscriber))
        w.plane.submit(w.transport("sub-2", .subscriber))
        #expect(w.plane.candidateAddresses(room: "room", transport: "sub-2") == [.loopbackV4(port: 41_000)])
        #expect(w.plane.tcpCandidateAddresses(room: "room", transport: "sub-2") == [.loopbackV4(port: 41_001)])
        #expect(w.plane.fingerprint(transport: "sub-2") == Array(repeating: 7, count: 32))
        #expect(w.plane.candidateAddresses(room: "room", transport: "sub-1") == [.loopbackV4(port: 40_000)])
    }

    @Test func eventsComeBackOnlyForWhatThatEdgeRuns() throws {
        let w = try World()
        defer { w.plane.stop() }
        w.plane.submit(w.transport("pub", .publisher))
        w.plane.submit(w.transport("sub-1", .subscriber))
        w.plane.submit(w.transport("sub-2", .subscriber))
        let event = { (id: String) -> JSONValue in
            .object(["op": "event", "event": RemoteMediaCoding.encode(.estimate(transport: id, bitrate: 1e6)) ?? .null])
        }
        w.plane.receive(from: "n2", event("sub-2"))
        w.plane.receive(from: "n3", event("sub-2"))  // not the node it is on
        w.plane.receive(from: "n2", event("sub-1"))  // a local transport
        #expect(w.plane.events() == [.estimate(transport: "sub-2", bitrate: 1e6)])
    }

    @Test func anEdgeThatLeavesTheClusterFailsItsViewersTransports() throws {
        let w = try World()
        defer { w.plane.stop() }
        w.plane.submit(w.transport("pub", .publisher))
        w.plane.submit(w.transport("sub-1", .subscriber))
        w.plane.submit(w.transport("sub-2", .subscriber))
        #expect(w.plane.events().isEmpty)
        w.live = []
        #expect(w.plane.events() == [.transportState(id: "sub-2", state: .failed)])
        // The next viewer stays here: no other node.
        w.plane.submit(w.transport("sub-3", .subscriber))
        #expect(w.worker.take().compactMap(\.openedTransport).map(\.id).last == "sub-3")
    }

    /// As an edge: an owner whose link fails (nothing heard) leaves nothing running here for it but
    /// its viewers' connections, kept for the room's new owner: its pipe producers are closed, its
    /// link ended; the connections are closed after the grace; the node's own are kept. An owner
    /// this node's node records do not name (they are as old as its last heartbeat) is not gone.
    @Test func anOwnerWhoseLinkFailsLeavesNothingRunningForItOnItsEdge() throws {
        let w = try World()
        defer { w.plane.stop() }
        var clock = 0.0
        w.plane.now = { clock }
        w.plane.linkSilence = 0.3
        let owner = try DTLSCertificate()
        w.plane.receive(
            from: "n2",
            .object([
                "op": "link", "address": "127.0.0.1:9",
                "fingerprint": .string(ClusterMediaPlane.hex(owner.fingerprint.digest)),
            ]))
        #expect(w.ops() == ["n2 linked"])
        let pipe = PipeLink(from: 0, to: -1, wakeFar: nil, wakeHome: nil)
        for c in [
            w.transport("sub-9", .subscriber), .addPipeProducer(Self.screen, router: "room", link: pipe, tag: 77),
            Self.consumer("c1", on: "sub-9"),
        ] {
            let body = try #require(RemoteMediaCoding.encode(c, relayed: { _ in true }))
            w.plane.receive(from: "n2", .object(["op": "cmd", "command": body]))
        }
        w.plane.submit(w.transport("own", .subscriber))
        w.live = []
        #expect(w.plane.events().isEmpty && w.worker.take().count == 4)
        try Self.ownerLinksFail(w)
        _ = w.plane.events()
        let closed = w.worker.take()
        #expect(closed.compactMap(\.closedTransport).isEmpty)
        #expect(closed.compactMap(\.closedProducer) == ["n2/tr_share"])
        #expect(w.plane.links.isEmpty)
        clock += ClusterMediaPlane.orphanGrace + 1
        _ = w.plane.events()
        #expect(w.worker.take().compactMap(\.closedTransport) == ["n2/sub-9"])
    }

    /// Runs, as an edge, the commands an owner sends.
    static func command(_ w: World, _ c: MediaCommand, from owner: String) throws {
        let body = try #require(RemoteMediaCoding.encode(c, relayed: { _ in true }))
        w.plane.receive(from: owner, .object(["op": "cmd", "command": body]))
    }

    /// Until every link from an owner failed (nothing heard: the tests' owners never answer).
    static func ownerLinksFail(_ w: World) throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while !w.plane.links.filter({ $0.side == .edge }).allSatisfy({ $0.figures.state == .failed }) {
            guard ContinuousClock.now < deadline else { throw RelayTestTimeout() }
            usleep(10_000)
        }
    }

    struct RelayTestTimeout: Error {}

    static func linkFrom(_ w: World, _ owner: String) throws {
        w.plane.receive(
            from: owner,
            .object([
                "op": "link", "address": "127.0.0.1:9",
                "fingerprint": .string(ClusterMediaPlane.hex(try DTLSCertificate().fingerprint.digest)),
            ]))
    }

    /// As an edge: the owner lost, its viewer's connection is kept (not closed) for the room's new
    /// owner, which takes it over with the connection's ICE credentials (a wrong password is
    /// refused) and runs it under its own id: its commands reach the same transport, the transport's
    /// events go to it under its id. A kept connection nobody takes over is closed after the grace.
    @Test func anEdgeKeepsALostOwnersViewersForTheNewOwnerToTakeOver() throws {
        let w = try World()
        defer { w.plane.stop() }
        var clock = 100.0
        w.plane.now = { clock }
        w.plane.linkSilence = 0.3
        w.live.append(Self.n3)
        try Self.linkFrom(w, "n2")
        try Self.command(w, w.transport("sub-9", .subscriber, ufrag: "u9", password: "p9"), from: "n2")
        try Self.command(w, w.transport("sub-10", .subscriber, ufrag: "u10", password: "p10"), from: "n2")
        _ = w.ops()
        _ = w.worker.take()
        try Self.ownerLinksFail(w)
        _ = w.plane.events()
        #expect(w.worker.take().compactMap(\.closedTransport).isEmpty)
        w.plane.linkSilence = 600
        try Self.linkFrom(w, "n3")
        _ = w.ops()
        let ask = { (password: String) -> JSONValue in
            .object(["op": "adopt", "id": "sub-1", "room": "room", "ufrag": "u9", "password": .string(password)])
        }
        w.plane.receive(from: "n3", ask("wrong"))
        #expect(w.ops() == ["n3 adopt_refused"])
        w.plane.receive(from: "n3", ask("p9"))
        #expect(w.ops() == ["n3 adopted"])
        // The transport tells its new owner where it stands.
        #expect(w.worker.take().contains { if case .restate = $0 { true } else { false } })
        // The old owner (back, or never gone) no longer drives it, nor reuses its ids.
        _ = w.worker.take()
        try Self.linkFrom(w, "n2")
        try Self.command(w, .closeTransport(id: "sub-9"), from: "n2")
        try Self.command(w, .closeTransport(id: "sub-10"), from: "n2")
        try Self.command(w, w.transport("sub-9", .subscriber), from: "n2")
        #expect(w.worker.take().isEmpty)
        _ = w.ops()
        // The one whose credentials these are, under the new owner's name; the other stays kept.
        try Self.command(w, .closeTransport(id: "sub-1"), from: "n3")
        let closed = try #require(w.worker.take().compactMap(\.closedTransport).first)
        #expect(closed == "n2/sub-9")
        w.worker.queued = [.estimate(transport: closed, bitrate: 5e5)]
        _ = w.plane.events()
        #expect(w.sent.last?.node == "n3")
        #expect(w.sent.last?.body["event"]?["transport"]?.stringValue == "sub-1")
        _ = w.ops()
        clock += ClusterMediaPlane.orphanGrace + 1
        _ = w.plane.events()
        #expect(w.worker.take().compactMap(\.closedTransport) == ["n2/sub-10"])
        #expect(w.ops().isEmpty)
    }

    /// As the room's new owner: a kept connection this node ran as an edge of the lost owner is
    /// taken over here (commands and events under the new id); one on another node is asked of that
    /// node, and a refusal (or no answer in time) reports the transport failed.
    @Test func theNewOwnerTakesKeptConnectionsOverHereOrAsksTheEdge() throws {
        let w = try World()
        defer { w.plane.stop() }
        w.plane.linkSilence = 600
        var clock = 0.0
        w.plane.now = { clock }
        try Self.linkFrom(w, "n9")
        try Self.command(w, w.transport("sub-9", .subscriber), from: "n9")
        _ = w.worker.take()
        _ = w.ops()
        #expect(
            !w.plane.adopt(id: "sub-5", room: "room", ufrag: "u", password: "x", addresses: [.loopbackV4(port: 40_000)])
        )
        #expect(
            w.plane.adopt(id: "sub-5", room: "room", ufrag: "u", password: "p", addresses: [.loopbackV4(port: 40_000)]))
        #expect(w.worker.take().map { if case .restate(let t) = $0 { t } else { "" } } == ["n9/sub-9"])
        w.plane.submit(.closeTransport(id: "sub-5"))
        #expect(w.worker.take().compactMap(\.closedTransport) == ["n9/sub-9"])
        w.worker.queued = [.transportState(id: "n9/sub-9", state: .closed)]
        #expect(w.plane.events() == [.transportState(id: "sub-5", state: .closed)])
        #expect(w.ops().isEmpty, "nothing told to the lost owner")

        // On the edge n2: asked there (its link made first); refused, then failed.
        #expect(
            w.plane.adopt(id: "sub-6", room: "room", ufrag: "u", password: "p", addresses: [.loopbackV4(port: 41_000)]))
        #expect(w.ops() == ["n2 link", "n2 adopt"])
        w.plane.receive(from: "n2", .object(["op": "linked", "address": "127.0.0.1:9"]))
        w.plane.receive(from: "n2", .object(["op": "adopt_refused", "id": "sub-6"]))
        #expect(w.plane.events() == [.transportState(id: "sub-6", state: .failed)])
        // Unanswered within the bound: failed too.
        #expect(
            w.plane.adopt(id: "sub-7", room: "room", ufrag: "u", password: "p", addresses: [.loopbackV4(port: 41_000)]))
        clock += ClusterMediaPlane.adoptionBound + 1
        #expect(w.plane.events() == [.transportState(id: "sub-7", state: .failed)])
        // ...and the edge is told to close it, should it answer late.
        #expect(w.ops() == ["n2 adopt", "n2 cmd closeTransport"])
        // Answered: its commands go to the edge.
        #expect(
            w.plane.adopt(id: "sub-8", room: "room", ufrag: "u", password: "p", addresses: [.loopbackV4(port: 41_000)]))
        w.plane.receive(from: "n2", .object(["op": "adopted", "id": "sub-8"]))
        clock += ClusterMediaPlane.adoptionBound + 1
        #expect(w.plane.events().isEmpty)
        _ = w.ops()
        w.plane.submit(.closeTransport(id: "sub-8"))
        #expect(w.ops() == ["n2 cmd closeTransport"])
    }

    /// As an edge: an owner closing its room here closes what it ran in it, not the room's router,
    /// which this node's own transports and another owner's share.
    @Test func anOwnersRoomClosingHereClosesOnlyWhatItRan() throws {
        let w = try World()
        defer { w.plane.stop() }
        try Self.linkFrom(w, "n2")
        try Self.linkFrom(w, "n3")
        try Self.command(w, w.transport("sub-9", .subscriber), from: "n2")
        try Self.command(w, w.transport("sub-9", .subscriber), from: "n3")
        w.plane.submit(w.transport("own", .subscriber))
        _ = w.worker.take()
        try Self.command(w, .closeRouter(id: "room"), from: "n2")
        let closed = w.worker.take()
        #expect(closed.compactMap(\.closedTransport) == ["n2/sub-9"])
        #expect(!closed.contains { if case .closeRouter = $0 { true } else { false } })
    }

    /// As an owner: a link the edge never answers (its node gone, or the message lost) fails after
    /// `linkSilence`, and the viewers placed there with it.
    @Test func aLinkTheEdgeNeverAnswersFailsItsViewers() throws {
        let w = try World()
        defer { w.plane.stop() }
        var clock = 0.0
        w.plane.now = { clock }
        w.plane.submit(w.transport("pub", .publisher))
        w.plane.submit(w.transport("sub-1", .subscriber))
        w.plane.submit(w.transport("sub-2", .subscriber))
        #expect(w.ops() == ["n2 link", "n2 cmd openTransport"])
        #expect(w.plane.events().isEmpty)
        clock += w.plane.linkSilence + 1
        #expect(w.plane.events() == [.transportState(id: "sub-2", state: .failed)])
        #expect(w.plane.links.isEmpty)
    }

    /// Viewers placed between two heartbeats spread: the edges' records (the same load here) count
    /// with the viewers this node placed on each since.
    @Test func aBurstOfViewersSpreadsOverTheEdgesBetweenHeartbeats() throws {
        let w = try World()
        defer { w.plane.stop() }
        w.live.append(Self.n3)
        var draw = 0
        w.plane.random = { _ in
            draw += 1
            return draw % 2 == 1 ? 0 : 1
        }
        w.plane.submit(w.transport("pub", .publisher))
        w.plane.submit(w.transport("sub-0", .subscriber))
        for i in 1...6 { w.plane.submit(w.transport("sub-\(i)", .subscriber)) }
        #expect(w.plane.placedOn == ["n2": 3, "n3": 3])
    }

    @Test(arguments: [
        // (load a, placed a, load b, placed b) -> a?
        (1.0, 0, 1.0, 0, true), (1.0, 1, 1.0, 0, false), (3.0, 0, 1.0, 1, false), (1.0, 2, 4.0, 0, true),
    ])
    func theLessLoadedCountsWhatThisNodePlaced(_ row: (Double, Int, Double, Int, Bool)) {
        let a = ClusterMediaPlane.Peer(id: "a", mediaAddresses: [], fingerprint: [], load: row.0)
        let b = ClusterMediaPlane.Peer(id: "b", mediaAddresses: [], fingerprint: [], load: row.2)
        let pick = ClusterMediaPlane.lessLoaded(a, b, placed: ["a": row.1, "b": row.3])
        #expect((pick.id == "a") == row.4)
    }

    /// A media message that cannot be sent (Redis away): the viewers on that edge fail (their
    /// participants' connections are renewed), and the edge is given no viewer for a while.
    @Test func aMediaMessageNotSentFailsThatEdgesViewers() throws {
        let w = try World()
        defer { w.plane.stop() }
        var clock = 0.0
        w.plane.now = { clock }
        w.plane.submit(w.transport("pub", .publisher))
        w.plane.submit(w.transport("sub-1", .subscriber))
        w.plane.submit(w.transport("sub-2", .subscriber))
        #expect(w.ops() == ["n2 link", "n2 cmd openTransport"])
        w.plane.send = { _, _ in false }
        w.plane.submit(.updateTransport(id: "sub-2", remote: Self.remote, localUfrag: "u", localPassword: "p"))
        #expect(w.plane.events() == [.transportState(id: "sub-2", state: .failed)])
        // The renewed connection stays here while the edge is out of reach, then edges are used again.
        w.plane.submit(w.transport("sub-3", .subscriber))
        #expect(w.worker.take().compactMap(\.openedTransport).map(\.id).last == "sub-3")
        clock += ClusterMediaPlane.unreachableFor + 1
        w.plane.send = { [unowned w] body, node in
            w.sent.append((node, body))
            return true
        }
        w.plane.submit(w.transport("sub-4", .subscriber))
        #expect(w.ops() == ["n2 link", "n2 cmd openTransport"])
    }

    @Test func anEdgeScopesWhatAnOwnerMakes() {
        let c = ClusterMediaPlane.scoped(Self.consumer("c1", on: "sub-1"), "n1")
        guard case .addConsumer(let spec) = c else {
            Issue.record("\(c)")
            return
        }
        #expect(spec.id == "n1/c1" && spec.transport == "n1/sub-1" && spec.producer == "n1/tr_share")
        #expect(
            ClusterMediaPlane.unscoped(.transportState(id: "n1/sub-1", state: .connected), "n1")
                == .transportState(id: "sub-1", state: .connected))
    }

    /// Commands to an edge are numbered from 1 after each link; an edge that sees a number skipped
    /// (a command Redis accepted and lost) tells the owner, which fails that edge's viewers (renewed
    /// elsewhere) and gives it none for a while, as for a command it could not send.
    @Test func aCommandLostBetweenTheNodesIsNoticedAndItsEdgesViewersRenewed() throws {
        let w = try World()
        defer { w.plane.stop() }
        w.plane.submit(w.transport("pub", .publisher))
        w.plane.submit(w.transport("sub-1", .subscriber))
        w.plane.submit(w.transport("sub-2", .subscriber))
        w.plane.submit(.updateTransport(id: "sub-2", remote: Self.remote, localUfrag: "u", localPassword: "p"))
        #expect(w.sent.compactMap { $0.body["seq"]?.int64Value } == [1, 2])
        w.sent.removeAll()
        // As an edge of n9: 1, 2, then 4.
        try Self.linkFrom(w, "n9")
        for (seq, id) in [(1, "a"), (2, "b"), (4, "c")] {
            let body = try #require(
                RemoteMediaCoding.encode(w.transport("sub-\(id)", .subscriber), relayed: { _ in true }))
            w.plane.receive(from: "n9", .object(["op": "cmd", "command": body, "seq": .int(Int64(seq))]))
        }
        let gaps = w.sent.filter { $0.body["op"]?.stringValue == "gap" }
        #expect(gaps.count == 1 && gaps.first?.node == "n9" && gaps.first?.body["expected"]?.int64Value == 3)
        // As the owner told of a gap by n2: its viewer fails; the next one stays here.
        w.plane.receive(from: "n2", .object(["op": "gap", "expected": .int(3), "got": .int(4)]))
        #expect(w.plane.events().contains(.transportState(id: "sub-2", state: .failed)))
        w.plane.submit(w.transport("sub-3", .subscriber))
        #expect(w.worker.take().compactMap(\.openedTransport).map(\.id).last == "sub-3")
    }
}
