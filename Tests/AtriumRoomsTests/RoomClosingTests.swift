import AtriumJSON
import AtriumMetrics
import AtriumModel
import AtriumRooms
import AtriumTestSupport
import Testing

@testable import AtriumMediaControl
@testable import AtriumSignal

/// A room closes by one path whatever closes it (ended, deleted, empty timeout, moved): its worker
/// placement, its worker's load and its allocation stage go, as the metrics show, so a later room of
/// the same name is placed afresh.
@Suite struct RoomClosingTests {
    final class World: SignalWorld {
        let a = FakeMediaPlane()
        let b = FakeMediaPlane()
        lazy var plane = MediaWorkers([a, b])
        lazy var coordinator = MediaCoordinator(plane: plane)
        let metrics = MetricsRegistry(version: "test", swiftVersion: "6")

        override init() {
            super.init()
            endpoint.media = coordinator
            plane.registerMetrics(metrics)
            coordinator.registerMetrics(metrics)
        }

        /// Joins `identity` and publishes a microphone, a camera and a screen share (a share on stage).
        func share(_ identity: String) throws -> FakeConnection {
            let c = connect(identity)
            send(
                c,
                [
                    "type": "publish_offer", "id": .int(2),
                    "sdp": .string(SDPFixtures.text("chrome-156-offer-sendonly-mic-camera-screen.sdp")),
                    "tracks": .array(MediaCoordinatorTests.mixedTracks),
                ])
            let reply = try #require(c.sent.last { $0["id"] == .int(2) })
            #expect(reply["type"] == .string("result"), "\(reply)")
            return c
        }

        func series(_ name: String) -> [String] {
            metrics.render().split(separator: "\n").filter { $0.hasPrefix(name) }.map(String.init)
        }
    }

    enum Close: CaseIterable {
        case emptyTimeout, ended, deleted, moved
    }

    @Test(arguments: Close.allCases)
    func aClosedRoomFreesItsPlacementLoadAndStage(_ how: Close) throws {
        let w = World()
        let alice = try w.share("alice")
        let room = try #require(w.hub.rooms.keys.first)
        #expect(w.plane.worker(ofRoom: room.rawValue) == 0)
        #expect(
            w.series("atrium_media_worker_rooms") == [
                #"atrium_media_worker_rooms{worker="0"} 1"#, #"atrium_media_worker_rooms{worker="1"} 0"#,
            ])
        #expect(
            w.series("atrium_media_worker_transports{worker=\"0\"}") == [
                #"atrium_media_worker_transports{worker="0"} 1"#
            ])
        #expect(w.coordinator.stagedRooms == 1)
        switch how {
        case .emptyTimeout:
            w.send(alice, #"{"type":"leave","id":3}"#)
            let timeout = Int64(try #require(w.hub.state(room)).room.emptyTimeout)
            w.hub.tick(now: SignalWorld.now + timeout - 1)
            #expect(w.hub.state(room) != nil, "not before its timeout")
            w.hub.tick(now: SignalWorld.now + timeout)
        case .ended:
            try w.hub.apply(.endRoom, in: room, by: .admin, now: SignalWorld.now)
        case .deleted:
            w.hub.roomDeleted(room, now: SignalWorld.now)
        case .moved:
            w.hub.closeAll(reason: .moved, now: SignalWorld.now)
        }
        #expect(w.hub.state(room) == nil)
        #expect(w.plane.worker(ofRoom: room.rawValue) == nil)
        #expect(w.plane.placementLoads == [WorkerPlacement.Load(), WorkerPlacement.Load()])
        #expect(w.coordinator.stagedRooms == 0)
        #expect(w.series("atrium_media_worker_rooms").allSatisfy { $0.hasSuffix(" 0") })
        #expect(w.series("atrium_media_worker_transports").allSatisfy { $0.hasSuffix(" 0") })
        #expect(w.series("atrium_media_allocation_rooms") == ["atrium_media_allocation_rooms 0"])
        // Another room now holds worker 0: the same room, opened again, is placed afresh on worker 1.
        _ = w.plane.candidateAddresses(room: "elsewhere")
        _ = try w.share("bob")
        let again = try #require(w.hub.rooms.keys.first)
        #expect(again == room, "the same name (and, in this world, the same id)")
        #expect(w.plane.worker(ofRoom: again.rawValue) == 1)
    }
}
