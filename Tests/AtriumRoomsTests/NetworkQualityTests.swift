import AtriumJSON
import AtriumMedia
import AtriumModel
import AtriumProtocol
import AtriumRooms
import Testing

@testable import AtriumMediaControl
@testable import AtriumSignal

/// `network_quality`: the level from RTT and loss (a table), a participant's entry from its
/// transports, and the push a room's members get from the endpoint's timer.
struct NetworkQualityTests {
    @Test(
        arguments: [
            (nil, nil, nil),
            (0.010, nil, NetworkQuality.Level.excellent),
            (nil, 0.0, .excellent),
            (0.149, 0.019, .excellent),
            (0.150, 0.0, .good),
            (0.010, 0.02, .good),
            (0.399, 0.099, .good),
            (0.400, 0.0, .poor),
            (0.010, 0.10, .poor),
            (2.0, 0.5, .poor),
        ] as [(Double?, Double?, NetworkQuality.Level?)])
    func levelFromRTTAndLoss(rtt: Double?, loss: Double?, want: NetworkQuality.Level?) {
        #expect(NetworkQuality.level(rtt: rtt, loss: loss) == want)
    }

    @Test func theWorseTransportDecidesAndDisconnectedIsLost() throws {
        let p = ParticipantID("pa_1")
        var pub = TransportStats(id: "t1", label: "x/pub", connected: true, rtt: nil)
        pub.loss = 0.05
        let sub = TransportStats(id: "t2", label: "x/sub", connected: true, rtt: 0.020)
        let q = try #require(NetworkQuality.of(p, transports: [pub, sub]))
        #expect(q.level == .good && q.rtt == 0.020 && q.loss == 0.05)
        #expect(
            q.entry.json
                == .object([
                    "participantId": .string("pa_1"), "quality": .string("good"), "rttMs": .int(20),
                    "loss": .double(0.05),
                ]))
        var down = sub
        down.connected = false
        #expect(NetworkQuality.of(p, transports: [down])?.level == .lost)
        #expect(NetworkQuality.of(p, transports: []) == nil)
        let fresh = TransportStats(id: "t3", label: "x/sub", connected: true, rtt: nil)
        #expect(NetworkQuality.of(p, transports: [fresh]) == nil, "nothing measured yet")
    }

    @Test func theRoomIsToldEachPublishersQualityOnTheTimer() throws {
        let w = MediaCoordinatorTests.World()
        let a = w.connect("alice")
        let b = w.connect("bob")
        _ = try w.publish(
            a, fixture: "chrome-156-offer-simulcast-camera-mic.sdp", tracks: MediaCoordinatorTests.simulcastTracks)
        let pub = try #require(w.plane.take().compactMap(\.openedTransport).first { $0.label.hasSuffix("/pub") })
        var stats = TransportStats(id: pub.id, label: pub.label, connected: true, rtt: 0.030)
        stats.loss = 0.25
        w.plane.transportStats = [stats]
        w.endpoint.pushNetworkQuality()
        let alice = try #require(
            a.sent.first { $0["type"] == .string("result") }?["data"]?["participant"]?["id"]?.stringValue)
        for c in [a, b] {
            let m = try #require(c.sent.last { $0["type"] == .string("network_quality") })
            let entries = m["participants"]?.arrayValue ?? []
            #expect(entries.count == 1)
            #expect(entries.first?["participantId"] == .string(alice))
            #expect(entries.first?["quality"] == .string("poor") && entries.first?["rttMs"] == .int(30))
        }
    }
}
