import AtriumJSEP
import AtriumSDP
import FuzzSupport

/// The fuzz target: parses SDP; what parses must serialize and parse again. Then negotiation runs on
/// it as a publisher's offer (checked and answered with simulcast declined, then accepted, the answer
/// parsed back), as a player's (WHEP) offer answered, and as a subscriber's answer to a fixed offer:
/// none of it may trap.
@main struct FuzzSDP: FuzzTarget {
    static let local = LocalTransport(
        ufrag: "fuzz", password: "fuzzfuzzfuzzfuzzfuzzfuzz",
        fingerprint: Fingerprint(hashFunction: "sha-256", bytes: Array(repeating: 1, count: 32)),
        candidates: [
            Candidate(
                foundation: "1", component: 1, transport: "udp", priority: 1, address: "127.0.0.1", port: 9,
                kind: .host)
        ])

    static let offer = SubscriberNegotiation.offer(
        sections: [
            SubscriberSection(
                mid: "0", kind: .video, codec: ServerCodecs.vp8, parameters: [], ssrc: 1, rtxSSRC: 2, streamID: "s",
                trackID: "t", cname: "c", active: true)
        ], local: local, sessionID: 1, version: 1)

    static func fuzz(_ bytes: [UInt8]) {
        guard let sdp = try? SessionDescription.parse(bytes) else { return }
        let text = sdp.serialized()
        _ = try? SessionDescription.parse(text)
        for options in [PublishOptions(), PublishOptions(simulcast: true)] {
            guard let offer = try? PublishOffer(sdp, options: options) else { continue }
            let all = Set(offer.sections.map(\.mid))
            _ = try? SessionDescription.parse(
                offer.answer(local: local, accepted: all, sessionID: 1, version: 1).serialized())
        }
        if let player = try? PlayerOffer(text: text, ssrcs: { 7 }) {
            _ = try? SessionDescription.parse(player.answer(local: local, streamID: "s", sessionID: 1).serialized())
        }
        _ = try? SubscriberNegotiation.answer(text: text, offer: offer)
        // A kept connection's offer, as a client joining again sends it.
        _ = try? KeptSubscriberConnection(offer: text)
    }
}
