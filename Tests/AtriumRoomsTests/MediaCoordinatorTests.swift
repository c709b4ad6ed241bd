import AtriumAuth
import AtriumForwarding
import AtriumJSEP
import AtriumJSON
import AtriumMedia
import AtriumModel
import AtriumProtocol
import AtriumRoomCoding
import AtriumRooms
import AtriumSDP
import AtriumStore
import AtriumTestSupport
import AtriumUDP
import Testing

@testable import AtriumMediaControl
@testable import AtriumSignal

/// A media plane that records the commands it is given and reports the events a test queues.
final class FakeMediaPlane: MediaPlane {
    let fingerprint: [UInt8] = Array(repeating: 0xAB, count: 32)
    let candidateAddresses: [SocketAddress] = [.loopbackV4(port: 40000)]
    var commands: [MediaCommand] = []
    var queued: [MediaEvent] = []
    /// What `transportStats` reports (`network_quality`).
    var transportStats: [TransportStats] = []

    /// The ICE usernames of the connections it takes over (`adopt`), and those it took.
    var adoptable: Set<String> = []
    var adopted: [(id: String, ufrag: String, addresses: [SocketAddress])] = []

    func submit(_ command: MediaCommand) { commands.append(command) }

    func adopt(id: String, room: String, ufrag: String, password: String, addresses: [SocketAddress]) -> Bool {
        guard adoptable.contains(ufrag) else { return false }
        adopted.append((id, ufrag, addresses))
        return true
    }

    func events() -> [MediaEvent] {
        defer { queued.removeAll() }
        return queued
    }

    /// The commands submitted since the last call.
    func take() -> [MediaCommand] {
        defer { commands.removeAll() }
        return commands
    }
}

extension MediaCommand {
    var openedTransport: TransportSpec? { if case .openTransport(let t) = self { t } else { nil } }
    var addedProducer: ProducerSpec? { if case .addProducer(let p) = self { p } else { nil } }
    var closedProducer: String? { if case .closeProducer(let id) = self { id } else { nil } }
    var closedTransport: String? { if case .closeTransport(let id) = self { id } else { nil } }
}

/// The signaling side of the media plane driven through the endpoint, against a fake media plane:
/// what a captured browser offer, an unpublish, a share stop, a departure, a quality change and the
/// worker's reports become.
@Suite struct MediaCoordinatorTests {
    /// The signaling fixture with the media coordinator on a fake media plane.
    final class World: SignalWorld {
        let plane = FakeMediaPlane()

        override init() {
            super.init()
            endpoint.media = MediaCoordinator(plane: plane)
        }

        /// Sends a request and returns its result's data.
        func request(_ c: FakeConnection, _ message: JSONObject) throws -> JSONValue {
            send(c, message)
            let reply = try #require(c.sent.last { $0["type"] == .string("result") || $0["type"] == .string("error") })
            #expect(reply["type"] == .string("result"), "\(reply)")
            return try #require(reply["data"])
        }

        /// Publishes a captured offer; returns the track ids by mid.
        func publish(_ c: FakeConnection, fixture: String, tracks: [JSONValue]) throws -> [String: String] {
            let data = try request(
                c,
                [
                    "type": "publish_offer", "id": .int(2), "sdp": .string(SDPFixtures.text(fixture)),
                    "tracks": .array(tracks),
                ])
            var ids: [String: String] = [:]
            for t in data["tracks"]?.arrayValue ?? [] {
                if let mid = t["mid"]?.stringValue, let id = t["trackId"]?.stringValue { ids[mid] = id }
            }
            return ids
        }
    }

    static let cameraLayers: JSONValue = .array([
        .object(["rid": "q", "width": .int(320), "height": .int(180)]),
        .object(["rid": "h", "width": .int(640), "height": .int(360)]),
        .object(["rid": "f", "width": .int(1280), "height": .int(720)]),
    ])

    static let simulcastTracks: [JSONValue] = [
        .object(["mid": "0", "source": "microphone"]),
        .object(["mid": "1", "source": "camera", "layers": cameraLayers]),
    ]

    static let mixedTracks: [JSONValue] = [
        .object(["mid": "0", "source": "microphone"]),
        .object(["mid": "1", "source": "camera"]),
        .object(["mid": "2", "source": "screen_share"]),
    ]

    @Test func chromeSimulcastOfferOpensTheTransportThenAddsItsProducers() throws {
        let w = World()
        let a = w.connect("alice")
        _ = w.plane.take()
        let ids = try w.publish(a, fixture: "chrome-156-offer-simulcast-camera-mic.sdp", tracks: Self.simulcastTracks)
        let mic = try #require(ids["0"])
        let camera = try #require(ids["1"])
        let commands = w.plane.take()
        let open = try #require(commands.first?.openedTransport)
        #expect(open.label.hasSuffix("/pub"))
        #expect(open.remote?.dtlsClient == false && open.remote?.midExtensionID != nil)
        let producers = commands.compactMap(\.addedProducer)
        #expect(producers.map(\.id) == [mic, camera], "in the offer's order")
        #expect(producers.allSatisfy { $0.transport == open.id && !$0.paused })
        #expect(producers[0].mid == "0" && producers[0].kind == .audio && producers[0].encodings.isEmpty)
        #expect(producers[0].videoCodec == nil && producers[0].clockRate == 48000)
        let video = producers[1]
        #expect(video.mid == "1" && video.kind == .video && video.videoCodec == "VP8" && video.source == "camera")
        #expect(
            video.encodings == [
                EncodingSpec(rid: "q", width: 320, height: 180), EncodingSpec(rid: "h", width: 640, height: 360),
                EncodingSpec(rid: "f", width: 1280, height: 720),
            ])
        #expect(video.ridExtensionID == 10 && video.repairedRidExtensionID == 11)
        #expect(video.rtxPayloadType != nil)
        // Nothing rejected, so no `.reject`; and the answer accepts the three streams.
        #expect(!commands.contains { if case .reject = $0 { true } else { false } })
        let answer = try #require(a.sent.last { $0["type"] == .string("result") }?["data"]?["sdp"]?.stringValue)
        #expect(answer.contains("a=simulcast:recv q;h;f"))
    }

    @Test func aSectionWithoutAnEntryIsRejectedAndGetsNoProducer() throws {
        let w = World()
        let a = w.connect("alice")
        let data = try w.request(
            a,
            [
                "type": "publish_offer", "id": .int(2),
                "sdp": .string(SDPFixtures.text("chrome-156-offer-simulcast-camera-mic.sdp")),
                "tracks": .array([.object(["mid": "1", "source": "microphone"])]),
            ])
        let rejected = data["rejected"]?.arrayValue ?? []
        #expect(rejected.map { $0["mid"] } == [.string("0"), .string("1")])
        #expect(rejected.map { $0["code"] } == [.string("unbound_mid"), .string("kind_mismatch")])
        #expect(rejected[1]["message"] == .string("microphone is audio, the transceiver is video"))
        let commands = w.plane.take()
        #expect(commands.compactMap(\.addedProducer).isEmpty)
        #expect(
            commands.contains {
                if case .reject(_, let mids, _) = $0 { mids == ["0", "1"] } else { false }
            })
    }

    @Test func unpublishAndShareStopCloseTheirProducers() throws {
        let w = World()
        let a = w.connect("alice")
        let ids = try w.publish(a, fixture: "chrome-156-offer-sendonly-mic-camera-screen.sdp", tracks: Self.mixedTracks)
        #expect(w.plane.take().compactMap(\.addedProducer).map(\.id) == ["0", "1", "2"].compactMap { ids[$0] })
        let camera = try #require(ids["1"])
        _ = try w.request(a, ["type": "unpublish", "id": .int(3), "trackId": .string(camera)])
        #expect(w.plane.take().compactMap(\.closedProducer) == [camera])

        let screen = try #require(ids["2"])
        let published = try #require(a.sent.first { $0["type"] == .string("result") && $0["data"]?["tracks"] != nil })
        let share = try #require(
            published["data"]?["tracks"]?.arrayValue?.first { $0["mid"] == "2" }?["shareId"]?.stringValue)
        _ = try w.request(a, ["type": "stop_share", "id": .int(4), "shareId": .string(share)])
        #expect(w.plane.take().compactMap(\.closedProducer) == [screen])
    }

    @Test func leavingClosesTheTransports() throws {
        let w = World()
        let a = w.connect("alice")
        let b = w.connect("bob")
        let ids = try w.publish(a, fixture: "chrome-156-offer-simulcast-camera-mic.sdp", tracks: Self.simulcastTracks)
        let commands = w.plane.take()
        let transports = commands.compactMap(\.openedTransport)
        let pub = try #require(transports.first { $0.label.hasSuffix("/pub") })
        // Bob is subscribed automatically: a subscriber transport and an offer for both tracks.
        let sub = try #require(transports.first { $0.label.hasSuffix("/sub") })
        let offer = try #require(b.sent.last { $0["type"] == .string("subscriber_offer") })
        #expect(offer["tracks"]?.arrayValue?.count == 2)

        w.send(b, ["type": "leave", "id": .int(5)])
        #expect(w.plane.take().compactMap(\.closedTransport) == [sub.id])
        w.send(a, ["type": "leave", "id": .int(6)])
        let last = w.plane.take()
        #expect(Set(last.compactMap(\.closedProducer)) == Set(ids.values))
        #expect(last.compactMap(\.closedTransport) == [pub.id])
    }

    @Test func aQualityChangeSetsTheConsumersPreference() throws {
        let w = World()
        let a = w.connect("alice")
        let b = w.connect("bob")
        let ids = try w.publish(a, fixture: "chrome-156-offer-simulcast-camera-mic.sdp", tracks: Self.simulcastTracks)
        let camera = try #require(ids["1"])
        let offer = try #require(b.sent.last { $0["type"] == .string("subscriber_offer") })
        let sdp = try SessionDescription.parse(try #require(offer["sdp"]?.stringValue))
        _ = try w.request(
            b,
            [
                "type": "subscriber_answer", "id": .int(3), "revision": try #require(offer["revision"]),
                "sdp": .string(SDPFixtures.answer(to: sdp)),
            ])
        let consumers = w.plane.take().compactMap { c -> ConsumerSpec? in
            if case .addConsumer(let spec) = c { spec } else { nil }
        }
        let consumer = try #require(consumers.first { $0.producer == camera })
        #expect(consumer.preference == LayerPreference(quality: .high))

        _ = try w.request(b, ["type": "subscribe", "id": .int(4), "trackId": .string(camera), "quality": "low"])
        let changed = w.plane.take()
        #expect(changed.count == 1)
        guard case .setPreference(let id, let preference) = changed.first else {
            Issue.record("expected setPreference, got \(changed)")
            return
        }
        #expect(id == consumer.id && preference == LayerPreference(quality: .low))
    }

    @Test func layersWantedIsPushedToThePublisher() throws {
        let w = World()
        let a = w.connect("alice")
        let b = w.connect("bob")
        let ids = try w.publish(a, fixture: "chrome-156-offer-simulcast-camera-mic.sdp", tracks: Self.simulcastTracks)
        let camera = try #require(ids["1"])
        let before = b.sent.count
        w.plane.queued = [.layersWanted(producer: camera, rids: ["q", "h"])]
        w.endpoint.drainMedia()
        let pushed = try #require(a.sent.last)
        #expect(
            pushed == .object(["type": "layers_wanted", "trackId": .string(camera), "rids": .array(["q", "h"])]))
        #expect(b.sent.count == before, "only the publisher hears it")
    }

    /// A subscriber connection that failed (its edge node lost, or its client silent past consent)
    /// is renewed by the server: the old transport closed, a new one opened, an offer with `reset`
    /// for the live tracks (mids from 0 again); the answer to the void offer is refused as stale, the
    /// new one's answer makes the consumers on the new transport. A publisher's failure renews nothing.
    @Test func aFailedSubscriberConnectionIsRenewedWithAResetOffer() throws {
        let w = World()
        let a = w.connect("alice")
        let b = w.connect("bob")
        _ = try w.publish(a, fixture: "chrome-156-offer-simulcast-camera-mic.sdp", tracks: Self.simulcastTracks)
        let transports = w.plane.take().compactMap(\.openedTransport)
        let pub = try #require(transports.first { $0.label.hasSuffix("/pub") })
        let sub = try #require(transports.first { $0.label.hasSuffix("/sub") })
        let first = try #require(b.sent.last { $0["type"] == .string("subscriber_offer") })
        w.plane.queued = [.transportState(id: pub.id, state: .failed)]
        w.endpoint.drainMedia()
        #expect(w.plane.take().isEmpty)
        w.plane.queued = [.transportState(id: sub.id, state: .failed)]
        w.endpoint.drainMedia()
        let commands = w.plane.take()
        #expect(commands.compactMap(\.closedTransport) == [sub.id])
        let renewed = try #require(commands.compactMap(\.openedTransport).first)
        #expect(renewed.id != sub.id && renewed.role == .subscriber && renewed.router == sub.router)
        let offer = try #require(b.sent.last { $0["type"] == .string("subscriber_offer") })
        #expect(offer["reset"] == .bool(true))
        #expect(offer["tracks"]?.arrayValue?.compactMap { $0["mid"]?.stringValue } == ["0", "1"])
        #expect(b.sent.contains { $0["type"] == .string("media_state") && $0["state"] == .string("failed") })
        // The old offer's answer is stale; the new one's adds the consumers on the new transport.
        let old = try SessionDescription.parse(try #require(first["sdp"]?.stringValue))
        w.send(
            b,
            [
                "type": "subscriber_answer", "id": .int(7), "revision": try #require(first["revision"]),
                "sdp": .string(SDPFixtures.answer(to: old)),
            ])
        #expect(b.sent.last?["error"]?["code"] == .string("stale_revision"))
        let sdp = try SessionDescription.parse(try #require(offer["sdp"]?.stringValue))
        _ = try w.request(
            b,
            [
                "type": "subscriber_answer", "id": .int(8), "revision": try #require(offer["revision"]),
                "sdp": .string(SDPFixtures.answer(to: sdp)),
            ])
        let consumers = w.plane.take().compactMap { c -> ConsumerSpec? in
            if case .addConsumer(let spec) = c { spec } else { nil }
        }
        #expect(consumers.count == 2 && consumers.allSatisfy { $0.transport == renewed.id })
    }

    /// A participant joining again with the subscriber offer it kept (its room's node was lost): when
    /// the plane takes the connection over, the first offer goes on from the kept one (no reset, the
    /// same ICE credentials and session, the revision after it, the old sections ended, the room's
    /// tracks after them with payload types of their own); when it cannot, a new connection is offered
    /// with `reset`. An offer that is not one is refused and the participant not joined.
    @Test func aKeptSubscriberConnectionIsTakenOverOrRenewed() throws {
        let before = World()
        let a0 = before.connect("alice")
        let b0 = before.connect("bob")
        _ = try before.publish(a0, fixture: "chrome-156-offer-simulcast-camera-mic.sdp", tracks: Self.simulcastTracks)
        let old = try #require(b0.sent.last { $0["type"] == .string("subscriber_offer") })
        let oldSDP = try #require(old["sdp"]?.stringValue)
        let kept = try SessionDescription.parse(oldSDP)
        let oldRevision = try #require(old["revision"]?.int64Value)

        for adopts in [true, false] {
            let w = World()
            w.plane.adoptable = adopts ? [try #require(kept.media.first?.iceUfrag)] : []
            let a = w.connect("alice")
            _ = try w.publish(a, fixture: "chrome-156-offer-simulcast-camera-mic.sdp", tracks: Self.simulcastTracks)
            _ = w.plane.take()
            let b = w.connect("bob", join: ["subscriberOffer": .string(oldSDP)])
            let offer = try #require(b.sent.last { $0["type"] == .string("subscriber_offer") })
            let sdp = try SessionDescription.parse(try #require(offer["sdp"]?.stringValue))
            #expect(offer["revision"]?.int64Value == oldRevision + 1)
            let opened = w.plane.take().compactMap(\.openedTransport)
            if adopts {
                #expect(offer["reset"] == nil && opened.isEmpty)
                #expect(w.plane.adopted.map(\.ufrag) == [kept.media.first?.iceUfrag])
                #expect(w.plane.adopted.first?.addresses == [.loopbackV4(port: 40000)])
                #expect(sdp.origin.sessionID == kept.origin.sessionID)
                #expect(sdp.media.map(\.iceUfrag) == sdp.media.map { _ in kept.media.first?.iceUfrag })
                // The kept sections, ended, then the room's two tracks.
                #expect(sdp.media.map(\.mid) == ["0", "1", "2", "3"])
                #expect(sdp.media.map(\.direction) == [.inactive, .inactive, .sendonly, .sendonly])
                // One codec per payload type across the connection (an ended section's serve a new
                // one of the same codec, as BUNDLE allows).
                var names: [UInt8: String] = [:]
                for m in sdp.media {
                    for c in m.codecs { #expect(names.updateValue(c.name, forKey: c.payloadType) ?? c.name == c.name) }
                }
                #expect(offer["tracks"]?.arrayValue?.compactMap { $0["mid"]?.stringValue } == ["2", "3"])
            } else {
                #expect(offer["reset"] == .bool(true) && opened.count == 1)
                #expect(sdp.media.map(\.mid) == ["0", "1"])
                #expect(sdp.media.first?.iceUfrag != kept.media.first?.iceUfrag)
            }
        }
        // Not an offer: refused, and nobody joined.
        let w = World()
        let c = w.connect("carol", join: ["subscriberOffer": "v=0\r\nhello\r\n"])
        #expect(c.sent.last?["error"]?["code"] == .string("invalid_sdp"))
        #expect(w.endpoint.hub.rooms.values.allSatisfy { $0.state.participants.isEmpty })
    }

    @Test func aMutedTrackStartsPausedAndResumesOnUnmute() throws {
        let w = World()
        let a = w.connect("alice")
        let ids = try w.publish(
            a, fixture: "chrome-156-offer-simulcast-camera-mic.sdp",
            tracks: [
                .object(["mid": "0", "source": "microphone", "muted": true]),
                .object(["mid": "1", "source": "camera"]),
            ])
        let mic = try #require(ids["0"])
        let producers = w.plane.take().compactMap(\.addedProducer)
        #expect(producers.map(\.paused) == [true, false])
        _ = try w.request(a, ["type": "mute", "id": .int(3), "trackId": .string(mic), "muted": false])
        let commands = w.plane.take()
        #expect(commands.count == 1)
        guard case .pauseProducer(let id, let paused) = commands.first else {
            Issue.record("expected pauseProducer, got \(commands)")
            return
        }
        #expect(id == mic && !paused)
    }

    /// `plan` decides a section from values alone: rows without a room state.
    @Test func sectionPlansFromValues() throws {
        let offer = try PublishOffer(
            text: SDPFixtures.text("chrome-156-offer-simulcast-camera-mic.sdp"),
            options: PublishOptions(simulcast: true))
        let audio = try #require(offer.sections.first { $0.kind == .audio })
        let video = try #require(offer.sections.first { $0.kind == .video })
        let codec = try #require(video.codec)
        var stopped = video
        stopped.stopped = true
        var codecless = video
        codecless.codec = nil
        let me = ParticipantID("pa_me")
        let camera = TrackRequest(source: .camera)
        let bad = ProtocolError.invalidField("name", "expected a string, got number")
        let rows: [(OfferedSection, [String: TrackID], PublishRequest.Entry?, SectionPlan)] = [
            (stopped, [video.mid: TrackID("tr_1")], nil, .stop(ending: TrackID("tr_1"))),
            (stopped, [:], nil, .stop(ending: nil)),
            (
                video, [video.mid: TrackID("tr_1")], nil,
                .reject("track_not_found", "the track bound to this mid has ended", unbind: true)
            ),
            (video, [:], nil, .reject("unbound_mid", "no entry in tracks binds mid \"\(video.mid)\"")),
            (
                codecless, [:], .new(.camera, .success(camera)),
                .reject("no_common_codec", "none of the offered codecs is forwarded (\(MediaCoordinator.codecList))")
            ),
            (
                video, [:], .existing(TrackID("tr_9")),
                .reject(HubError.trackNotFound.code, HubError.trackNotFound.message)
            ),
            (
                audio, [:], .new(.camera, .success(camera)),
                .reject("kind_mismatch", "camera is video, the transceiver is audio")
            ),
            (video, [:], .new(.camera, .failure(bad)), .reject(bad.code, bad.message)),
            (video, [:], .new(.camera, .success(camera)), .publish(camera, codec)),
        ]
        for (section, bindings, entry, expected) in rows {
            let plan = MediaCoordinator.plan(section, bindings: bindings, entry: entry, state: nil, me: me)
            #expect(plan == expected)
        }
    }
}
