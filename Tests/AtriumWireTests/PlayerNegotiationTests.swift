import AtriumTestSupport
import Foundation
import Testing

@testable import AtriumJSEP
@testable import AtriumSDP

/// A player's receive-only offer (WHEP) and the server's answer: every codec the server forwards that a
/// section offers, by the offer's payload types, `sendonly` with the server's SSRCs; sections it cannot
/// serve rejected; offers it cannot serve at all refused.
@Suite struct PlayerNegotiationTests {
    /// A browser's offer with its directions turned around: what a browser player (WHEP) sends.
    static func recvonly(_ fixture: String = "chrome-156-offer-sendonly-mic-camera-screen.sdp") -> String {
        SDPFixtures.text(fixture).replacingOccurrences(of: "a=sendonly", with: "a=recvonly")
    }

    static func offer(_ text: String) throws(JSEPError) -> PlayerOffer {
        var next: UInt32 = 1000
        return try PlayerOffer(text: text) {
            next += 1
            return next
        }
    }

    @Test func theAnswerSendsEveryForwardedCodecByTheOffersNumbers() throws {
        let text = Self.recvonly()
        let offer = try Self.offer(text)
        let parsed = try SessionDescription.parse(text)
        #expect(offer.sections.map(\.kind) == parsed.media.map(\.kind))
        let answer = try SessionDescription.parse(
            offer.answer(local: JSEPTests.local, streamID: "atrium-r", sessionID: 9).serialized())
        #expect(answer.bundleGroup?.mids == offer.sections.map(\.mid))
        for (s, m) in zip(offer.sections, answer.media) {
            #expect(m.direction == .sendonly && m.port != 0)
            let offered = parsed.media[s.index]
            for c in s.codecs {
                // The offer's payload type and format parameters for each codec the server forwards.
                let o = try #require(offered.codecs.first { $0.payloadType == c.offered.payloadType })
                #expect(m.codecs.contains { $0.payloadType == o.payloadType && $0.isNamed(c.server.encodingName) })
                #expect(m.fmtps.first { $0.payloadType == o.payloadType }?.parameters ?? [] == o.parameters)
            }
            #expect(m.ssrcs.first == s.ssrc)
            if s.kind == .video {
                #expect(Set(s.codecs.map(\.server.name)) == [.vp8, .vp9, .h264, .av1])
                #expect(m.ssrcGroups.first?.ssrcs == [s.ssrc, s.rtxSSRC])
                #expect(m.extmaps.allSatisfy { $0.uri != HeaderExtensionIDs.audioLevelURI })
            } else {
                #expect(s.codecs.map(\.server.name) == [.opus])
            }
            // The ids the offer chose for what the server writes.
            for e in m.extmaps { #expect(offered.extmaps.contains(e)) }
        }
        #expect(offer.answerSetup == .passive)
    }

    @Test func aSectionWithNoForwardedCodecIsRejectedAndTheOthersServed() throws {
        // The audio section offers only PCMU: rejected at port 0, out of the BUNDLE group.
        var text = Self.recvonly()
        let lines = text.components(separatedBy: "\r\n")
        var out: [String] = []
        var inAudio = false
        for l in lines {
            if l.hasPrefix("m=") { inAudio = l.hasPrefix("m=audio") }
            if inAudio && l.hasPrefix("m=audio") {
                let parts = l.split(separator: " ")
                out.append(parts.prefix(3).joined(separator: " ") + " 0")
            } else if inAudio && (l.hasPrefix("a=rtpmap:") || l.hasPrefix("a=fmtp:") || l.hasPrefix("a=rtcp-fb:")) {
                continue
            } else {
                out.append(l)
            }
        }
        text = out.joined(separator: "\r\n")
        let offer = try Self.offer(text)
        #expect(offer.sections.allSatisfy { $0.kind == .video })
        let answer = try SessionDescription.parse(
            offer.answer(local: JSEPTests.local, streamID: "s", sessionID: 1).serialized())
        let audio = try #require(answer.media.first { $0.kind == .audio })
        #expect(audio.port == 0)
        #expect(!(answer.bundleGroup?.mids.contains(audio.mid ?? "") ?? true))
    }

    @Test func offersItCannotServeAreRefused() throws {
        let sending = SDPFixtures.text("chrome-156-offer-sendonly-mic-camera-screen.sdp")
        #expect(throws: JSEPError.self) { try Self.offer(sending) }
        #expect(throws: JSEPError.self) { try Self.offer("v=0") }
        let noBundle = Self.recvonly().components(separatedBy: "\r\n").filter { !$0.hasPrefix("a=group:BUNDLE") }
        #expect(throws: JSEPError.self) { try Self.offer(noBundle.joined(separator: "\r\n")) }
    }
}
