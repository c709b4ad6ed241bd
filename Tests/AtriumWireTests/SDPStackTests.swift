import AtriumTestSupport
import Testing

@testable import AtriumSDP

private func load(_ name: String) throws -> SessionDescription {
    try SessionDescription.parse(SDPFixtures.bytes(name))
}

private enum URI {
    static let mid = "urn:ietf:params:rtp-hdrext:sdes:mid"
    static let audioLevel = "urn:ietf:params:rtp-hdrext:ssrc-audio-level"
    static let toffset = "urn:ietf:params:rtp-hdrext:toffset"
    static let transportCC = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
    static let csrcAudioLevel = "urn:ietf:params:rtp-hdrext:csrc-audio-level"
}

/// Facts of each stack's SDP, checked on its captured fixtures.
@Suite struct SDPStackTests {
    @Test(arguments: [
        "chrome-156-offer-sendonly-mic-camera-screen.sdp", "chrome-156-offer-sendonly-mic-camera-screen.pregather.sdp",
        "chrome-156-loopback-offer-sendonly-mic-camera-screen.sdp", "chrome-156-offer-sendonly-to-janus.sdp",
    ])
    func chromeSendonlyMicCameraScreen(_ name: String) throws {
        let sdp = try load(name)
        #expect(sdp.media.map(\.mid) == ["0", "1", "2"])
        #expect(sdp.media.map(\.kind) == [.audio, .video, .video])
        #expect(sdp.media.allSatisfy { $0.direction == .sendonly && $0.rtcpMux && $0.rtcpReducedSize })
        #expect(sdp.bundleGroup == Group(semantics: "BUNDLE", mids: ["0", "1", "2"]))
        #expect(sdp.extmapAllowMixed)
        #expect(sdp.msidSemantic?.semantic == "WMS")
        // Chrome's extmap ids in the audio and camera sections.
        #expect(sdp.media[0].extmapID(for: URI.mid) == 4)
        #expect(sdp.media[0].extmapID(for: URI.audioLevel) == 1)
        #expect(sdp.media[1].extmapID(for: URI.toffset) == 14)
        // Opus 111 with its fmtp and transport-cc.
        let opus = try #require(sdp.media[0].codec(payloadType: 111))
        #expect(opus.name == "opus" && opus.clockRate == 48000 && opus.channels == 2)
        #expect(opus.parameters == [.init(name: "minptime", value: "10"), .init(name: "useinbandfec", value: "1")])
        #expect(opus.feedback.map(\.type) == ["transport-cc"])
        #expect(sdp.media[0].codec(payloadType: 0)?.name == "PCMU")
        // VP8 96 with RTX 97 apt=96, and the H264 variants.
        let video = sdp.media[1]
        #expect(video.payloadTypes.count == 23)
        let vp8 = try #require(video.codec(payloadType: 96))
        #expect(vp8.name == "VP8" && vp8.clockRate == 90000)
        #expect(vp8.feedback.count == 5)
        #expect(vp8.feedback.contains(RTCPFeedback(payloadType: 96, type: "nack", parameter: "pli")))
        #expect(video.codec(payloadType: 97)?.associatedPayloadType == 96)
        #expect(video.rtxPayloadType(for: 96) == 97)
        #expect(video.rtxPayloadType(for: 45) == 46)
        let h264 = try #require(video.codec(payloadType: 108))
        #expect(h264.h264ProfileLevelID == H264ProfileLevelID(profileIDC: 0x42, profileIOP: 0xe0, levelIDC: 0x1f))
        #expect(h264.h264ProfileLevelID?.isConstrainedBaseline == true)
        #expect(h264.h264PacketizationMode == 1)
        #expect(h264.h264LevelAsymmetryAllowed)
        #expect(video.codec(payloadType: 104)?.h264PacketizationMode == 0)
        #expect(video.codec(payloadType: 116)?.h264ProfileLevelID?.hex == "4d001f")
        #expect(vp8.h264PacketizationMode == nil)
        // Transport: one ufrag and fingerprint for the bundle; Chrome's FID groups pair media and RTX.
        #expect(Set(sdp.media.compactMap(\.iceUfrag)).count == 1)
        #expect(sdp.media[0].fingerprints.first?.bytes.count == 32)
        #expect(sdp.media[0].setup == .actpass)
        #expect(video.ssrcGroups.first?.semantics == "FID")
        #expect(video.ssrcGroups.first?.ssrcs.count == 2)
        #expect(video.msids.count == 1)
    }

    @Test func chromeCandidatesOnlyInFirstSection() throws {
        let sdp = try load("chrome-156-offer-sendonly-mic-camera-screen.sdp")
        let first = sdp.media[0]
        let udp = try #require(first.candidates.first)
        #expect(udp.transport == "udp" && udp.kind == .host && udp.address == "127.0.0.1")
        #expect(udp.port == first.port && udp.component == 1 && udp.generation == 0)
        #expect(udp.extensions == [.init(name: "network-id", value: "1"), .init(name: "network-cost", value: "50")])
        #expect(first.candidates.contains { $0.tcpType == "active" && $0.port == 9 })
        #expect(sdp.media[1].candidates.isEmpty && sdp.media[1].port == 9)
        #expect(sdp.media[1].connection?.address == "0.0.0.0")
        #expect(first.rtcp == RTCPAddress(port: 9, connection: ConnectionData(address: "0.0.0.0")))
        #expect(!first.endOfCandidates)
    }

    /// Chrome's screen share with audio, video first: sdes:mid is 9 in both sections.
    @Test func chromeScreenWithAudioExtmapIDs() throws {
        let sdp = try load("chrome-156-offer-screen-with-audio.sdp")
        #expect(sdp.media.map(\.kind) == [.video, .audio])
        #expect(sdp.media[0].extmapID(for: URI.mid) == 9)
        #expect(sdp.media[0].extmapID(for: URI.toffset) == 1)
        #expect(sdp.media[0].extmapID(for: URI.transportCC) == 4)
        #expect(sdp.media[1].extmapID(for: URI.mid) == 9)
        #expect(sdp.media[1].extmapID(for: URI.audioLevel) == 14)
        #expect(sdp.media[1].extmaps.map(\.id) == [14, 2, 4, 9])
    }

    @Test func chromeSimulcastOffer() throws {
        let video = try #require(try load("chrome-156-offer-simulcast-camera-mic.sdp").media.last)
        #expect(video.rids.map(\.id) == ["q", "h", "f"])
        #expect(video.rids.allSatisfy { $0.direction == .send })
        #expect(video.simulcast?.sendRIDs == ["q", "h", "f"])
        #expect(video.simulcast?.receive.isEmpty == true)
        #expect(video.ssrcAttributes.isEmpty)
        #expect(video.msids.first?.streamID == "-")
        #expect(video.extmaps.count == 13)
    }

    @Test func chromeRecvonlyWithoutPermissionHasNoCandidates() throws {
        let sdp = try load("chrome-156-offer-recvonly-audio-video-video-nopermission.sdp")
        #expect(sdp.media.allSatisfy { $0.direction == .recvonly && $0.candidates.isEmpty && $0.port == 9 })
        #expect(sdp.media[1].codec(payloadType: 49)?.name == "flexfec-03")
        #expect(sdp.media[1].payloadTypes.count == 34)
    }

    @Test(arguments: [
        "firefox-153esr-offer-sendonly-mic-camera-screen.sdp", "firefox-153esr-offer-simulcast-camera-mic.sdp",
    ])
    func firefoxOffer(_ name: String) throws {
        let sdp = try load(name)
        #expect(sdp.origin.username == "mozilla...THIS_IS_SDPARTA-99.0")
        #expect(sdp.fingerprints.count == 1 && sdp.fingerprints.first?.hashFunction == "sha-256")
        #expect(sdp.iceOptions == ["trickle"])
        #expect(sdp.directionAttribute == .sendrecv)
        #expect(sdp.msidSemantic == MsidSemantic(semantic: "WMS", identifiers: ["*"]))
        let first = sdp.media[0]
        #expect(first.port != 0 && !first.bundleOnly && first.endOfCandidates)
        #expect(first.candidates.contains { $0.component == 2 && $0.transport == "UDP" })
        #expect(first.rtcp?.connection?.address == "127.0.0.1")
        #expect(first.extmaps.contains(Extmap(id: 2, direction: .recvonly, uri: URI.csrcAudioLevel)))
        #expect(first.extmapAllowMixed)
        #expect(first.codec(payloadType: 9)?.channels == 1)
        #expect(first.codec(payloadType: 101)?.parameters == [.init(name: "0-15", value: nil)])
        for m in sdp.media.dropFirst() {
            #expect(m.port == 0 && m.bundleOnly)
        }
        #expect(sdp.bundleGroup?.mids == sdp.media.compactMap(\.mid))
    }

    @Test func firefoxSimulcastOffer() throws {
        let video = try #require(try load("firefox-153esr-offer-simulcast-camera-mic.sdp").media.last)
        #expect(video.rids.map(\.id) == ["q", "h", "f"])
        #expect(video.simulcast?.sendRIDs == ["q", "h", "f"])
        #expect(video.extmaps.first { $0.id == 8 }?.direction == .sendonly)
        #expect(video.ssrcGroups.count == 3)
        #expect(video.rtxPayloadType(for: 120) == 124)
        #expect(video.codec(payloadType: 120)?.parameters.value(for: "max-fs") == "12288")
    }

    @Test(arguments: [
        "aiortc-1.16-offer-sendonly-audio-video-video.sdp", "aiortc-1.16-answer-to-chrome-offer-sendonly.sdp",
        "aiortc-1.16-answer-to-chrome-offer-simulcast.sdp",
    ])
    func aiortc(_ name: String) throws {
        let sdp = try load(name)
        #expect(sdp.msidSemantic == MsidSemantic(semantic: "WMS", identifiers: ["*"]))
        #expect(sdp.origin.address == "0.0.0.0")
        for m in sdp.media {
            #expect(m.fingerprints.map(\.hashFunction) == ["sha-256", "sha-384", "sha-512"])
            #expect(m.fingerprints.map(\.bytes.count) == [32, 48, 64])
            #expect(m.endOfCandidates)
            #expect(m.candidates.first?.foundation.count == 32)
            #expect(m.port == sdp.media[0].port)
        }
        // aiortc drops rid/simulcast from its answer to a simulcast offer.
        #expect(sdp.media.allSatisfy { $0.rids.isEmpty && $0.simulcast == nil })
    }

    @Test func janusSubscriberOffer() throws {
        let sdp = try load("janus-1.1.2-offer-to-subscriber.sdp")
        #expect(sdp.sessionName.hasPrefix("VideoRoom "))
        #expect(sdp.fingerprints.count == 1)
        #expect(sdp.msidSemantic == MsidSemantic(semantic: "WMS", identifiers: ["*"]))
        for m in sdp.media where m.kind != .application {
            #expect(m.port == 9 && m.connection?.address == "127.0.0.1")
            #expect(
                m.candidates == [
                    Candidate(
                        foundation: "1", component: 1, transport: "udp", priority: 2_015_363_327, address: "127.0.0.1",
                        port: m.candidates.first?.port ?? 0, kind: .host)
                ])
            #expect(m.endOfCandidates && m.direction == .sendonly)
        }
        #expect(sdp.media[0].msids == [Msid(streamID: "janus", trackID: "janus0")])
        #expect(sdp.media[0].ssrcAttributes.first?.value == "janus")
    }
}
