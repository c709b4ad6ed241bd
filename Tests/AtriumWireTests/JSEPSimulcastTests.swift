import AtriumTestSupport
import Testing

@testable import AtriumJSEP
@testable import AtriumSDP

/// A change to a captured simulcast offer and the `a=simulcast` value the answer should carry for
/// its video section (nil: simulcast declined, the section answered single-stream).
struct SimulcastEdge: Sendable, CustomTestStringConvertible {
    var name: String
    var fixture: String = "chrome-156-offer-simulcast-camera-mic.sdp"
    var replacements: [(String, String)]
    var answered: String?

    var testDescription: String { name }

    var text: String { replacements.reduce(SDPFixtures.text(fixture)) { $0.replacingAll($1.0, with: $1.1) } }
}

/// The publisher answer with `PublishOptions.simulcast`: the captured simulcast offers of Chrome and
/// Firefox, and the answerer's rules of RFC 8853 section 5.3.2 one edge at a time. With the option
/// off (the default, what the server runs), the answer declines simulcast exactly as before.
@Suite struct JSEPSimulcastTests {
    static let on = PublishOptions(simulcast: true)

    /// Every captured simulcast offer, with the rid and repaired-rid extension ids it chose.
    static let offers: [(String, UInt8, UInt8)] = [
        ("chrome-156-offer-simulcast-camera-mic.sdp", 10, 11),
        ("chrome-156-offer-simulcast-camera-mic.pregather.sdp", 10, 11),
        ("firefox-153esr-offer-simulcast-camera-mic.sdp", 9, 10),
        ("firefox-153esr-offer-simulcast-camera-mic.pregather.sdp", 9, 10),
        ("firefox-153esr-offer-simulcast-camera-mic.aftersld.sdp", 9, 10),
    ]

    static func answer(_ offer: PublishOffer, refused: Set<String> = []) -> SessionDescription {
        let live = offer.sections.filter { !$0.stopped && $0.kind != nil && !refused.contains($0.mid) }
        return offer.answer(
            local: JSEPTests.local, accepted: Set(live.map(\.mid)), refused: refused, sessionID: 7, version: 1)
    }

    /// An answer's text without its `a=rid` and `a=simulcast` lines.
    static func withoutSimulcast(_ text: String) -> String {
        text.split(separator: "\r\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("a=rid:") && !$0.hasPrefix("a=simulcast:") }.joined(separator: "\r\n")
    }

    @Test(arguments: offers)
    func capturedOffersAreAnsweredWithThreeLayers(_ name: String, rid: UInt8, repairedRid: UInt8) throws {
        let offer = try PublishOffer(text: SDPFixtures.text(name), options: Self.on)
        let video = try #require(offer.sections.first { $0.kind == .video })
        #expect(video.codec?.server.name == .vp8)
        let simulcast = try #require(video.simulcast)
        #expect(simulcast.layers == ["q", "h", "f"].map { AcceptedSimulcast.Layer(rid: $0) })
        #expect(simulcast.ridExtensionID == rid && simulcast.repairedRidExtensionID == repairedRid)
        #expect(offer.sections.filter { $0.kind == .audio }.allSatisfy { $0.simulcast == nil })

        let parsed = try SessionDescription.parse(Self.answer(offer).serialized())
        let m = try #require(parsed.media.first { $0.mid == video.mid })
        #expect(m.port == 8801 && m.direction == .recvonly)
        #expect(m.rids == ["q", "h", "f"].map { RID(id: $0, direction: .recv) })
        #expect(m.simulcast == Simulcast(receive: [[.init(rid: "q")], [.init(rid: "h")], [.init(rid: "f")]]))
        #expect(m.extmapID(for: HeaderExtensionIDs.ridURI) == UInt16(rid))
        #expect(m.extmapID(for: HeaderExtensionIDs.repairedRidURI) == UInt16(repairedRid))
        #expect(parsed.media.filter { $0.mid != video.mid }.allSatisfy { $0.rids.isEmpty && $0.simulcast == nil })
    }

    @Test(arguments: offers.map(\.0))
    func withTheOptionOffTheAnswerDeclinesSimulcastAsBefore(_ name: String) throws {
        let text = SDPFixtures.text(name)
        let byDefault = try PublishOffer(text: text)
        let off = try PublishOffer(text: text, options: PublishOptions(simulcast: false))
        #expect(byDefault.options == PublishOptions() && !byDefault.options.simulcast)
        #expect(byDefault.sections.allSatisfy { $0.simulcast == nil && ($0.kind != .video || $0.rids.count == 3) })
        let declined = Self.answer(byDefault).serialized()
        #expect(Self.answer(off).serialized() == declined)
        #expect(!declined.contains("a=rid:") && !declined.contains("a=simulcast:"))
        // The only difference the option makes is the rid and simulcast lines.
        let accepted = Self.answer(try PublishOffer(text: text, options: Self.on)).serialized()
        #expect(accepted != declined)
        #expect(Self.withoutSimulcast(accepted) == declined)
    }

    static let edges: [SimulcastEdge] = [
        SimulcastEdge(
            name: "four rids offered: the first three are kept",
            replacements: [
                ("a=rid:f send\r\na=simulcast:send q;h;f", "a=rid:f send\r\na=rid:x send\r\na=simulcast:send q;h;f;x")
            ],
            answered: "recv q;h;f"),
        SimulcastEdge(
            name: "a rid restricted to VP9 (pt=98) when VP8 is chosen is left out",
            replacements: [("a=rid:h send", "a=rid:h send pt=98")], answered: "recv q;f"),
        SimulcastEdge(
            name: "a rid whose pt= list includes the chosen VP8 is kept",
            replacements: [("a=rid:h send", "a=rid:h send pt=98,96")], answered: "recv q;h;f"),
        SimulcastEdge(
            name: "an unusable rid does not count towards the three",
            replacements: [
                ("a=rid:f send\r\na=simulcast:send q;h;f", "a=rid:f send\r\na=rid:x send\r\na=simulcast:send q;h;f;x"),
                ("a=rid:h send", "a=rid:h send pt=98"),
            ],
            answered: "recv q;f;x"),
        SimulcastEdge(
            name: "a=simulcast without a=rid lines: simulcast refused, the section kept",
            replacements: [("a=rid:q send\r\na=rid:h send\r\na=rid:f send\r\n", "")], answered: nil),
        SimulcastEdge(
            name: "a=rid recv lines do not count for a sent stream",
            replacements: [("a=rid:q send\r\na=rid:h send\r\na=rid:f send\r\n", "a=rid:q recv\r\na=rid:h recv\r\n")],
            answered: nil),
        SimulcastEdge(
            name: "only the streams with an a=rid line are kept",
            replacements: [("a=rid:h send\r\na=rid:f send\r\n", "")], answered: "recv q"),
        SimulcastEdge(
            name: "paused streams keep their ~",
            replacements: [("a=simulcast:send q;h;f", "a=simulcast:send q;~h;~f")], answered: "recv q;~h;~f"),
        SimulcastEdge(
            name: "the first usable alternative of a stream is kept",
            replacements: [("a=simulcast:send q;h;f", "a=simulcast:send q;x,~h,f")], answered: "recv q;~h"),
        SimulcastEdge(
            name: "a rid listed twice is one layer",
            replacements: [("a=simulcast:send q;h;f", "a=simulcast:send q;q,h;f")], answered: "recv q;h;f"),
        SimulcastEdge(
            name: "H264 is forwarded as simulcast",
            replacements: [("a=rtpmap:96 VP8/90000", "a=rtpmap:96 VP7/90000")], answered: "recv q;h;f"),
        SimulcastEdge(
            name: "VP9 stays single-stream (SVC needs nothing in SDP)",
            fixture: "firefox-153esr-offer-simulcast-camera-mic.sdp",
            replacements: [("a=rtpmap:120 VP8/90000", "a=rtpmap:120 VP7/90000")], answered: nil),
        SimulcastEdge(
            name: "without the rtp-stream-id extension a stream cannot be told apart: declined",
            replacements: [("a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id\r\n", "")], answered: nil),
        SimulcastEdge(
            name: "without repaired-rtp-stream-id simulcast is still accepted",
            replacements: [("a=extmap:11 urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id\r\n", "")],
            answered: "recv q;h;f"),
    ]

    @Test(arguments: edges)
    func answererRules(_ edge: SimulcastEdge) throws {
        let text = edge.text
        #expect(text != SDPFixtures.text(edge.fixture), "the replacement did not apply")
        let offer = try PublishOffer(text: text, options: Self.on)
        let video = try #require(offer.sections.first { $0.kind == .video })
        let parsed = try SessionDescription.parse(Self.answer(offer).serialized())
        let m = try #require(parsed.media.first { $0.mid == video.mid })
        // The section itself is always accepted, with or without simulcast.
        #expect(m.port == 8801 && m.direction == .recvonly && video.codec != nil)
        guard let answered = edge.answered else {
            #expect(video.simulcast == nil)
            #expect(m.simulcast == nil && m.rids.isEmpty)
            return
        }
        let expected = try #require(Simulcast(sdp: Substring(answered)))
        let layers = try #require(video.simulcast).layers
        #expect(layers.map(\.rid) == expected.receiveRIDs)
        #expect(layers.map(\.paused) == expected.receive.compactMap { $0.first?.paused })
        #expect(m.simulcast == expected)
        #expect(m.rids == layers.map { RID(id: $0.rid, direction: .recv) })
    }

    @Test func layersCarryTheOfferedRestrictions() throws {
        let text = SDPFixtures.text("chrome-156-offer-simulcast-camera-mic.sdp")
            .replacingAll("a=rid:q send", with: "a=rid:q send max-width=320;max-height=180;max-fps=15")
            .replacingAll("a=rid:h send", with: "a=rid:h send pt=96;max-width=640;max-br=500000")
        let offer = try PublishOffer(text: text, options: Self.on)
        let layers = try #require(offer.sections.first { $0.kind == .video }?.simulcast).layers
        #expect(
            layers == [
                AcceptedSimulcast.Layer(rid: "q", maxWidth: 320, maxHeight: 180, maxFPS: 15),
                AcceptedSimulcast.Layer(rid: "h", maxWidth: 640), AcceptedSimulcast.Layer(rid: "f"),
            ])
        // The answer states only what the server receives: no restrictions echoed.
        let m = try #require(Self.answer(offer).media.first { $0.mid == "1" })
        #expect(m.rids.allSatisfy { $0.restrictions.isEmpty && $0.payloadTypes.isEmpty })
    }

    @Test func aSectionRefusedByPolicyIsInactiveWithoutSimulcastLines() throws {
        let offer = try PublishOffer(
            text: SDPFixtures.text("chrome-156-offer-simulcast-camera-mic.sdp"), options: Self.on)
        let parsed = try SessionDescription.parse(Self.answer(offer, refused: ["1"]).serialized())
        let m = try #require(parsed.media.first { $0.mid == "1" })
        #expect(m.direction == .inactive && m.rids.isEmpty && m.simulcast == nil)
    }

    @Test func aStoppedSectionHasNoLayers() throws {
        let text = SDPFixtures.text("chrome-156-offer-simulcast-camera-mic.sdp")
            .replacingAll("m=video 9 ", with: "m=video 0 ")
        let offer = try PublishOffer(text: text, options: Self.on)
        let video = try #require(offer.sections.first { $0.kind == .video })
        #expect(video.stopped && video.simulcast == nil)
    }
}
