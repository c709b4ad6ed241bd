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

    /// Each member is told its own quality and the publishers'; nobody else's.
    @Test func theRoomIsToldEachPublishersQualityOnTheTimer() throws {
        let w = MediaCoordinatorTests.World()
        let a = w.connect("alice")
        let b = w.connect("bob")
        _ = try w.publish(
            a, fixture: "chrome-156-offer-simulcast-camera-mic.sdp", tracks: MediaCoordinatorTests.simulcastTracks)
        let opened = w.plane.take().compactMap(\.openedTransport)
        let pub = try #require(opened.first { $0.label.hasSuffix("/pub") })
        let sub = try #require(opened.first { $0.label.hasSuffix("/sub") })
        var stats = TransportStats(id: pub.id, label: pub.label, connected: true, rtt: 0.030)
        stats.loss = 0.25
        // Bob only watches: his quality is his own.
        w.plane.transportStats = [stats, TransportStats(id: sub.id, label: sub.label, connected: true, rtt: 0.010)]
        w.endpoint.pushNetworkQuality()
        let alice = try #require(
            a.sent.first { $0["type"] == .string("result") }?["data"]?["participant"]?["id"]?.stringValue)
        let bob = try #require(
            b.sent.first { $0["type"] == .string("result") }?["data"]?["participant"]?["id"]?.stringValue)
        var told: [[String]] = []
        for c in [a, b] {
            let m = try #require(c.sent.last { $0["type"] == .string("network_quality") })
            let entries = m["participants"]?.arrayValue ?? []
            told.append(entries.compactMap { $0["participantId"]?.stringValue })
            let first = entries.first { $0["participantId"] == .string(alice) }
            #expect(first?["quality"] == .string("poor") && first?["rttMs"] == .int(30))
        }
        #expect(told == [[alice], [alice, bob].sorted()])
    }

    /// Who is told what (a table): members whose own entry is a publisher's, or who have none, share
    /// one message of the publishers' entries (empty when nobody publishes); every other member gets
    /// those with its own.
    @Test func eachMemberIsToldItsOwnAndThePublishers() {
        func q(_ id: String) -> NetworkQuality { NetworkQuality(participant: ParticipantID(id), level: .good) }
        func ids(_ e: [NetworkQuality]) -> [String] { e.map(\.participant.rawValue) }
        let members = ["p1", "p2", "v1", "hid", "quiet"].map(ParticipantID.init)
        let entries = [q("p1"), q("p2"), q("v1"), q("hid")]
        let rows: [(publishers: [String], want: [([String], [String])])] = [
            (
                ["p1", "p2"],
                [
                    (["p1", "p2", "quiet"], ["p1", "p2"]), (["v1"], ["p1", "p2", "v1"]),
                    (["hid"], ["hid", "p1", "p2"]),
                ]
            ),
            ([], [(["quiet"], []), (["p1"], ["p1"]), (["p2"], ["p2"]), (["v1"], ["v1"]), (["hid"], ["hid"])]),
            (
                ["p2", "quiet"],
                [
                    (["p2", "quiet"], ["p2"]), (["p1"], ["p1", "p2"]), (["v1"], ["p2", "v1"]),
                    (["hid"], ["hid", "p2"]),
                ]
            ),
        ]
        for row in rows {
            let got = NetworkQuality.audiences(
                entries, publishers: Set(row.publishers.map(ParticipantID.init)), members: members)
            let flat = got.map { ($0.recipients.map(\.rawValue), ids($0.entries)) }
            #expect(
                flat.map(\.0) == row.want.map(\.0) && flat.map(\.1) == row.want.map(\.1), "publishers \(row.publishers)"
            )
        }
    }
}
