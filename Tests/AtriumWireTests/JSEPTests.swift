import AtriumTestSupport
import Foundation
import Testing

@testable import AtriumJSEP
@testable import AtriumSDP

/// Publisher answers to real browser and aiortc offers, subscriber offers and the checks on answers.
@Suite struct JSEPTests {
    static let local = LocalTransport(
        ufrag: "srvU", password: "serverpassword0123456789",
        fingerprint: Fingerprint(hashFunction: "sha-256", bytes: Array(repeating: 0xAB, count: 32)),
        candidates: [
            Candidate(
                foundation: "1", component: 1, transport: "udp", priority: 2_130_706_431, address: "127.0.0.1",
                port: 8801, kind: .host)
        ])

    static let publishOffers = [
        "chrome-156-offer-sendonly-mic-camera-screen.sdp", "chrome-156-offer-screen-with-audio.sdp",
        "chrome-156-offer-simulcast-camera-mic.sdp", "firefox-153esr-offer-sendonly-mic-camera-screen.sdp",
        "firefox-153esr-offer-simulcast-camera-mic.sdp", "aiortc-1.16-offer-sendonly-audio-video-video.sdp",
        "chrome-156-loopback-offer-sendonly-mic-camera-screen.sdp", "firefox-153esr-loopback-offer-sendonly.sdp",
    ]

    @Test(arguments: publishOffers)
    func answersEveryCapturedPublishOffer(_ name: String) throws {
        let offer = try PublishOffer(text: SDPFixtures.text(name))
        let live = offer.sections.filter { !$0.stopped && $0.kind != nil }
        #expect(!live.isEmpty)
        for s in live {
            let codec = try #require(s.codec, "\(name) mid \(s.mid): no codec chosen")
            #expect(codec.server.name == (s.kind == .audio ? .opus : .vp8), "\(name) mid \(s.mid)")
            if s.kind == .video {
                #expect(codec.nack && codec.pli, "\(name): video feedback")
                #expect(codec.offeredRTX != nil, "\(name): RTX")
            }
        }
        let accepted = Set(live.map(\.mid))
        let answer = offer.answer(local: Self.local, accepted: accepted, sessionID: 7, version: 1)
        // The answer is valid SDP that parses back, and says what the server does.
        let parsed = try SessionDescription.parse(answer.serialized())
        #expect(parsed.isICELite)
        #expect(parsed.bundleGroup?.mids == live.map(\.mid))
        #expect(parsed.media.count == offer.sdp.media.count)
        for (m, o) in zip(parsed.media, offer.sdp.media) {
            #expect(m.mid == o.mid)
            guard let mid = m.mid, accepted.contains(mid) else {
                #expect(m.port == 0)
                continue
            }
            #expect(m.port == 8801)
            #expect(m.direction == .recvonly)
            #expect(m.setup == .passive)
            #expect(m.rtcpMux)
            #expect(m.iceUfrag == "srvU")
            #expect(m.candidates.first?.address == "127.0.0.1")
            let s = try #require(offer.sections.first { $0.mid == mid })
            let codec = try #require(s.codec)
            // The publisher's own payload type, and RTX pointing at it.
            #expect(m.payloadTypes.first == codec.offered.payloadType)
            if let rtx = m.codecs.first(where: \.isRTX) {
                #expect(rtx.associatedPayloadType == codec.offered.payloadType)
            }
            #expect(m.extmaps.allSatisfy { HeaderExtensionIDs.publishURIs.contains($0.uri) })
        }
    }

    @Test func sectionsWithoutACodecArePortZeroAndLeftOutOfTheBundle() throws {
        let offer = try PublishOffer(text: SDPFixtures.text("chrome-156-offer-sendonly-mic-camera-screen.sdp"))
        let answer = offer.answer(local: Self.local, accepted: ["0", "1"], sessionID: 1, version: 1)
        let parsed = try SessionDescription.parse(answer.serialized())
        #expect(parsed.bundleGroup?.mids == ["0", "1"])
        let screen = try #require(parsed.media.first { $0.mid == "2" })
        #expect(screen.port == 0)
        #expect(screen.direction == .inactive)
        #expect(screen.rtpmaps.count == 1)
    }

    @Test func sectionsRefusedByPolicyStayInactiveInTheBundleEvenWhenNothingIsAccepted() throws {
        let offer = try PublishOffer(text: SDPFixtures.text("chrome-156-offer-sendonly-mic-camera-screen.sdp"))
        let answer = offer.answer(local: Self.local, accepted: [], refused: ["0", "1", "2"], sessionID: 1, version: 1)
        let parsed = try SessionDescription.parse(answer.serialized())
        #expect(parsed.bundleGroup?.mids == ["0", "1", "2"])
        for m in parsed.media {
            #expect(m.port == 8801 && m.direction == .inactive && m.iceUfrag == "srvU")
        }
    }

    @Test func anOffererThatInsistsOnPassiveGetsAnActiveAnswer() throws {
        let text = SDPFixtures.text("aiortc-1.16-offer-sendonly-audio-video-video.sdp")
            .replacingAll("a=setup:actpass", with: "a=setup:passive")
        let offer = try PublishOffer(text: text)
        #expect(offer.answerSetup == .active)
        let answer = offer.answer(local: Self.local, accepted: Set(offer.sections.map(\.mid)), sessionID: 1, version: 1)
        #expect(answer.media.allSatisfy { $0.setup == .active })
        let usual = try PublishOffer(text: SDPFixtures.text("aiortc-1.16-offer-sendonly-audio-video-video.sdp"))
        #expect(usual.answerSetup == .passive)
    }

    @Test func simulcastOffersKeepTheirRidsAndTheAnswerDeclinesSimulcast() throws {
        let offer = try PublishOffer(text: SDPFixtures.text("chrome-156-offer-simulcast-camera-mic.sdp"))
        let video = try #require(offer.sections.first { $0.kind == .video })
        #expect(video.rids.count == 3)
        let answer = offer.answer(local: Self.local, accepted: Set(offer.sections.map(\.mid)), sessionID: 1, version: 1)
        #expect(answer.media.allSatisfy { $0.simulcast == nil && $0.rids.isEmpty })
    }

    @Test func unusableOffersAreRefusedWithTheirCode() {
        let chrome = SDPFixtures.text("chrome-156-offer-sendonly-mic-camera-screen.sdp")
        let cases: [(String, String)] = [
            ("not sdp at all", "invalid_sdp"),
            (chrome.replacingAll("a=group:BUNDLE 0 1 2\r\n", with: ""), "sdp_unsupported"),
            (chrome.replacingAll("a=rtcp-mux\r\n", with: ""), "sdp_unsupported"),
            (chrome.replacingAll("a=fingerprint:", with: "a=x-fingerprint:"), "sdp_unsupported"),
            (chrome.replacingAll("a=ice-ufrag:", with: "a=x-ice-ufrag:"), "sdp_unsupported"),
            (chrome.replacingAll("a=mid:2\r\n", with: "a=mid:1\r\n"), "sdp_unsupported"),
        ]
        for (text, code) in cases {
            #expect(throws: JSEPError.self) { try PublishOffer(text: text) }
            do {
                _ = try PublishOffer(text: text)
            } catch {
                #expect(error.code == code, "\(error)")
            }
        }
    }

    @Test func h264IsMatchedOnPacketizationModeAndProfile() throws {
        func codec(_ params: String) -> Codec {
            Codec(
                payloadType: 102, name: "H264", clockRate: 90000,
                parameters: params.split(separator: ";").map {
                    let kv = $0.split(separator: "=")
                    return FormatParameter(name: String(kv[0]), value: String(kv[1]))
                })
        }
        #expect(ServerCodecs.matches(codec("packetization-mode=1;profile-level-id=42e01f"), ServerCodecs.h264))
        #expect(ServerCodecs.matches(codec("packetization-mode=1;profile-level-id=4d001f"), ServerCodecs.h264))
        #expect(!ServerCodecs.matches(codec("packetization-mode=0;profile-level-id=42e01f"), ServerCodecs.h264))
        #expect(!ServerCodecs.matches(codec("packetization-mode=1;profile-level-id=f4001f"), ServerCodecs.h264))
        #expect(!ServerCodecs.matches(codec("packetization-mode=1;profile-level-id=64001f"), ServerCodecs.h264))
    }

    @Test func aVideoSectionWithoutAForwardedCodecHasNone() throws {
        var sdp = try SessionDescription.parse(SDPFixtures.text("aiortc-1.16-offer-sendonly-audio-video-video.sdp"))
        let i = try #require(sdp.media.firstIndex { $0.kind == .video })
        sdp.media[i].formats = ["125"]
        sdp.media[i].attributes =
            sdp.media[i].attributes.filter {
                if case .rtpmap = $0 { return false }
                if case .fmtp = $0 { return false }
                return true
            } + [.rtpmap(RTPMap(payloadType: 125, encodingName: "H265", clockRate: 90000))]
        let offer = try PublishOffer(sdp)
        #expect(offer.sections[i].codec == nil)
    }

    // MARK: - Subscriber

    static func sections() -> [SubscriberSection] {
        [
            SubscriberSection(
                mid: "0", kind: .video, codec: ServerCodecs.vp8, parameters: [], ssrc: 1111, rtxSSRC: 2222,
                streamID: "pa_A", trackID: "tr_cam", cname: "pa_A", active: true),
            SubscriberSection(
                mid: "1", kind: .audio, codec: ServerCodecs.opus,
                parameters: [FormatParameter(name: "minptime", value: "10")], ssrc: 3333, rtxSSRC: nil,
                streamID: "pa_A", trackID: "tr_mic", cname: "pa_A", active: true),
            SubscriberSection(
                mid: "2", kind: .video, codec: ServerCodecs.vp8, parameters: [], ssrc: 4444, rtxSSRC: 5555,
                streamID: "pa_B", trackID: "tr_screen", cname: "pa_B", active: false),
        ]
    }

    /// A subscriber offer the server made, read back (a client that kept its connection sends it when
    /// it joins again): its ICE credentials, host candidates, session, data section and each media
    /// section's mid, kind and codec with its payload types, ended or not.
    @Test func aKeptSubscriberOfferReadsBackWhatTheServerOffered() throws {
        var custom = ServerCodecs.vp8
        (custom.payloadType, custom.rtxPayloadType) = (101, 102)
        var sections = Self.sections()
        sections[2].codec = custom
        let offer = SubscriberNegotiation.offer(
            sections: sections, local: Self.local, sessionID: 9, version: 3, data: true)
        let kept = try KeptSubscriberConnection(offer: offer.serialized())
        #expect(kept.ufrag == "srvU" && kept.password == "serverpassword0123456789")
        #expect(kept.addresses.map(\.host) == ["127.0.0.1"] && kept.addresses.map(\.port) == [8801])
        #expect(kept.sessionID == 9 && kept.version == 3 && kept.data)
        #expect(kept.sections.map(\.mid) == ["0", "1", "2"])
        #expect(kept.sections.map(\.codec) == [ServerCodecs.vp8, ServerCodecs.opus, custom])
        #expect(kept.sections[1].parameters == [FormatParameter(name: "minptime", value: "10")])
    }

    @Test(arguments: [
        "", "v=0\r\nhello\r\n",
        // No media section.
        "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n",
        // A codec the server does not offer.
        "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:0\r\n"
            + "a=ice-ufrag:u\r\na=ice-pwd:pppppppppppppppppppppp\r\n"
            + "a=candidate:1 1 udp 1 127.0.0.1 9 typ host\r\n",
        // No ICE credentials or no candidates.
        "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:0\r\n"
            + "a=rtpmap:111 opus/48000/2\r\na=candidate:1 1 udp 1 127.0.0.1 9 typ host\r\n",
        "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:0\r\n"
            + "a=rtpmap:111 opus/48000/2\r\na=ice-ufrag:u\r\na=ice-pwd:pppppppppppppppppppppp\r\n",
        // Two sections with one mid.
        "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:0\r\n"
            + "a=rtpmap:111 opus/48000/2\r\na=ice-ufrag:u\r\na=ice-pwd:pppppppppppppppppppppp\r\n"
            + "a=candidate:1 1 udp 1 127.0.0.1 9 typ host\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:0\r\n"
            + "a=rtpmap:111 opus/48000/2\r\n",
    ])
    func whatIsNotAKeptSubscriberOfferIsRefused(_ text: String) {
        #expect(throws: JSEPError.self) { try KeptSubscriberConnection(offer: text) }
    }

    @Test func subscriberOffersDescribeEachTrackAndKeepEndedOnesInactive() throws {
        let offer = SubscriberNegotiation.offer(sections: Self.sections(), local: Self.local, sessionID: 9, version: 3)
        let parsed = try SessionDescription.parse(offer.serialized())
        #expect(parsed.origin.sessionVersion == 3)
        // Ended sections stay in the BUNDLE group so the transport outlives them.
        #expect(parsed.bundleGroup?.mids == ["0", "1", "2"])
        let cam = parsed.media[0]
        #expect(cam.direction == .sendonly && cam.setup == .actpass && cam.port == 8801)
        #expect(cam.msids.first == Msid(streamID: "pa_A", trackID: "tr_cam"))
        #expect(cam.ssrcGroups.first == SSRCGroup(semantics: "FID", ssrcs: [1111, 2222]))
        #expect(cam.rtxPayloadType(for: 96) == 97)
        #expect(cam.extmaps.map(\.uri) == [HeaderExtensionIDs.absSendTimeURI, HeaderExtensionIDs.transportWideCCURI])
        #expect(cam.codecs.first?.feedback.contains { $0.type == "transport-cc" } == true)
        let mic = parsed.media[1]
        #expect(mic.codecs.first?.parameters.value(for: "minptime") == "10")
        #expect(mic.extmaps.map(\.uri).contains(HeaderExtensionIDs.audioLevelURI))
        let ended = parsed.media[2]
        #expect(ended.port == 8801 && ended.direction == .inactive && ended.ssrcs.isEmpty && ended.msids.isEmpty)
        #expect(ended.iceUfrag == "srvU")
    }

    @Test func subscriberAnswersAreChecked() throws {
        let offer = SubscriberNegotiation.offer(sections: Self.sections(), local: Self.local, sessionID: 9, version: 1)
        let ok = try SubscriberNegotiation.answer(text: SDPFixtures.answer(to: offer), offer: offer)
        #expect(ok.accepted == ["0", "1"])
        #expect(ok.rtx == ["0"] && ok.nack == ["0"])
        #expect(ok.remote.ufrag == "cliU" && ok.remote.setup == .active)
        let partial = try SubscriberNegotiation.answer(
            text: SDPFixtures.answer(to: offer, rejecting: ["1"]), offer: offer)
        #expect(partial.accepted == ["0"])
        var fewer = offer
        fewer.media.removeLast()
        #expect(throws: JSEPError.self) {
            try SubscriberNegotiation.answer(text: SDPFixtures.answer(to: fewer), offer: offer)
        }
        #expect(throws: JSEPError.self) { try SubscriberNegotiation.answer(text: "v=0\r\nbogus", offer: offer) }
    }

    /// The payload types the server sends with: the answer's, whether it kept the offer's numbers or
    /// renumbered them (aiortc answers payload types outside 96-127 with its own); a section whose
    /// answer lists none of the offered codec is not accepted.
    @Test(
        arguments: [
            (nil, nil, true, UInt8(96), UInt8?(97)),
            ("96 97", "97 98", true, 97, 98),
            ("96 97", "100 101", true, 100, 101),
            ("96 97", "96", true, 96, nil),
        ] as [(String?, String?, Bool, UInt8, UInt8?)])
    func subscriberAnswerPayloadTypes(from: String?, to: String?, accepted: Bool, media: UInt8, rtx: UInt8?) throws {
        let offer = SubscriberNegotiation.offer(sections: Self.sections(), local: Self.local, sessionID: 9, version: 1)
        var text = SDPFixtures.answer(to: offer)
        if let from, let to {
            let old = from.split(separator: " ").map(String.init)
            let new = to.split(separator: " ").map(String.init)
            // Only the camera's section (the first m=video).
            let parts = text.components(separatedBy: "m=audio")
            // Through placeholders, so that 96 -> 97 -> 98 does not chain.
            var video = parts[0].replacingAll(
                "m=video 8801 UDP/TLS/RTP/SAVPF 96 97", with: "m=video 8801 UDP/TLS/RTP/SAVPF \(to)")
            for (i, pt) in old.enumerated() {
                for prefix in ["a=rtpmap:", "a=rtcp-fb:", "a=fmtp:", "apt="] {
                    video = video.replacingAll(prefix + pt, with: prefix + "#\(i)")
                }
            }
            if new.count == 1 {
                video = video.components(separatedBy: "\r\n").filter { !$0.contains(":#1 ") }.joined(separator: "\r\n")
            }
            for (i, pt) in new.enumerated() { video = video.replacingAll("#\(i)", with: pt) }
            text = ([video] + parts.dropFirst()).joined(separator: "m=audio")
        }
        let answer = try SubscriberNegotiation.answer(text: text, offer: offer)
        #expect(answer.accepted.contains("0") == accepted)
        #expect(answer.payloadTypes["0"] == SubscriberNegotiation.AnsweredPayloadTypes(media: media, rtx: rtx))
        #expect(answer.rtx.contains("0") == (rtx != nil))
        #expect(answer.payloadTypes["1"]?.media == 111)
    }

    @Test func aSubscriberAnswerWithoutTheOfferedCodecDoesNotAcceptTheSection() throws {
        let offer = SubscriberNegotiation.offer(sections: Self.sections(), local: Self.local, sessionID: 9, version: 1)
        let text = SDPFixtures.answer(to: offer).replacingAll("a=rtpmap:96 VP8/90000", with: "a=rtpmap:96 H265/90000")
        let answer = try SubscriberNegotiation.answer(text: text, offer: offer)
        #expect(!answer.accepted.contains("0") && answer.accepted.contains("1"))
    }
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        var out = ""
        var rest = Substring(self)
        while let r = rest.range(of: target) {
            out += rest[..<r.lowerBound]
            out += replacement
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}

/// AV1's dependency descriptor: answered (and then forwarded) on AV1 sections only, and offered to
/// subscribers on AV1 sections with the server's id.
@Suite struct JSEPDependencyDescriptorTests {
    static func offer(av1Only: Bool) throws -> PublishOffer {
        var text = SDPFixtures.text("chrome-156-offer-simulcast-camera-mic.sdp")
        if av1Only {
            for name in ["VP8/90000", "VP9/90000", "H264/90000"] { text = text.replacingAll(name, with: "X\(name)") }
        }
        return try PublishOffer(text: text)
    }

    @Test func anAV1SectionGetsTheDescriptorAVP8OneDoesNot() throws {
        for av1 in [true, false] {
            let offer = try Self.offer(av1Only: av1)
            let video = try #require(offer.sections.first { $0.kind == .video })
            #expect((video.codec?.server.name == .av1) == av1)
            #expect(video.extensions.dependencyDescriptor == 12)
            let answer = offer.answer(
                local: JSEPTests.local, accepted: Set(offer.sections.map(\.mid)), sessionID: 1, version: 1)
            let parsed = try SessionDescription.parse(answer.serialized())
            let m = try #require(parsed.media.first { $0.mid == video.mid })
            let answered = m.extmaps.contains { $0.uri == HeaderExtensionIDs.dependencyDescriptorURI && $0.id == 12 }
            #expect(answered == av1)
        }
    }

    @Test func subscribersAreOfferedTheDescriptorOnAV1Sections() throws {
        let codecs = ServerCodecs.preference
        let av1 = try #require(codecs.first { $0.name == .av1 })
        let vp8 = try #require(codecs.first { $0.name == .vp8 })
        let sections = [av1, vp8].enumerated().map { i, c in
            SubscriberSection(
                mid: "\(i)", kind: .video, codec: c, parameters: [], ssrc: UInt32(10 + i), rtxSSRC: nil,
                streamID: "s", trackID: "t\(i)", cname: "c", active: true)
        }
        let offer = SubscriberNegotiation.offer(sections: sections, local: JSEPTests.local, sessionID: 1, version: 1)
        let parsed = try SessionDescription.parse(offer.serialized())
        let uri = HeaderExtensionIDs.dependencyDescriptorURI
        #expect(parsed.media[0].extmaps.contains { $0.uri == uri && $0.id == 3 })
        #expect(!parsed.media[1].extmaps.contains { $0.uri == uri })
    }
}
