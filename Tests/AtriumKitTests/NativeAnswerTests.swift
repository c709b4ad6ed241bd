import AtriumJSEP
import AtriumModel
import AtriumProtocol
import AtriumSDP
import Testing

@testable import AtriumNative

/// The native viewer's answer to the server's own subscriber offer (`SubscriberNegotiation.offer`),
/// checked by the server's own answer check: VP8 and Opus accepted with RTX and NACK, a codec it
/// cannot decode and the data channel refused, an ended track kept inactive, and the streams it
/// will receive named by SSRC, RTX SSRC and track.
@Suite struct NativeAnswerTests {
    static let local = LocalTransport(
        ufrag: "srvU", password: "serverpassword0123456789",
        fingerprint: Fingerprint(hashFunction: "sha-256", bytes: Array(repeating: 0xAB, count: 32)),
        candidates: [
            Candidate(
                foundation: "1", component: 1, transport: "udp", priority: 2_130_706_431, address: "127.0.0.1",
                port: 8801, kind: .host)
        ])

    static func section(_ mid: String, _ codec: ServerCodec, ssrc: UInt32, active: Bool = true) -> SubscriberSection {
        SubscriberSection(
            mid: mid, kind: codec.kind, codec: codec, parameters: [], ssrc: ssrc,
            rtxSSRC: codec.rtxPayloadType != nil ? ssrc + 1 : nil, streamID: "pa_1", trackID: "tr_\(mid)",
            cname: "c", active: active)
    }

    @Test func theServerAcceptsWhatTheViewerCanDecode() throws {
        let sections = [
            Self.section("0", ServerCodecs.vp8, ssrc: 1000), Self.section("1", ServerCodecs.opus, ssrc: 2000),
            Self.section("2", ServerCodecs.h264, ssrc: 3000),
            Self.section("3", ServerCodecs.vp8, ssrc: 4000, active: false),
        ]
        let offer = SubscriberNegotiation.offer(
            sections: sections, local: Self.local, sessionID: 1, version: 1, data: true)
        let tracks = [
            SubscriberOffer.Track(
                mid: "0", track: TrackID("tr_share"), publisher: ParticipantID("pa_1"),
                source: .screenShare),
            SubscriberOffer.Track(
                mid: "1", track: TrackID("tr_audio"), publisher: ParticipantID("pa_1"),
                source: .screenShareAudio),
        ]
        let (text, streams) = NativeSubscriber.answer(
            try SessionDescription.parse(offer.serialized()), tracks: tracks, credentials: try NativeCredentials())
        let checked = try SubscriberNegotiation.answer(text: text, offer: offer)
        #expect(checked.accepted == ["0", "1"], "VP8 and Opus only")
        #expect(checked.rtx == ["0"] && checked.nack == ["0"])
        #expect(checked.sctpPort == nil, "the data channel is refused")
        #expect(checked.remote.setup == .active, "the viewer is the DTLS client")
        #expect(checked.payloadTypes["0"]?.media == 96 && checked.payloadTypes["0"]?.rtx == 97)
        #expect(
            streams == [
                NativeSubscriber.Stream(
                    mid: "0", isVideo: true, ssrc: 1000, rtxSSRC: 1001, track: TrackID("tr_share"),
                    source: .screenShare, publisher: ParticipantID("pa_1")),
                NativeSubscriber.Stream(
                    mid: "1", isVideo: false, ssrc: 2000, rtxSSRC: nil, track: TrackID("tr_audio"),
                    source: .screenShareAudio, publisher: ParticipantID("pa_1")),
            ])
        let answer = try SessionDescription.parse(text)
        #expect(answer.media.map(\.port) == [0, 9, 9, 0, 9], "data and H264 refused; the ended VP8 kept")
        #expect(answer.media.last?.direction == .inactive)
    }
}
