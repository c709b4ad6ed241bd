import AtriumDTLS
import Testing

@testable import AtriumMedia

/// Two peers answer the same subscriber offer (a client that tried an answer and gave it up, then
/// answers again with a new connection): the first one's ICE check and DTLS handshake reach the
/// server before any answer; the answer the server accepts names the second one's certificate. The
/// second one must connect, however far the first one's handshake got.
@Suite struct DTLSRaceTests {
    @Test(arguments: [1, 10])
    func theAnswerersHandshakeWinsOverAnEarlierOne(earlyFlights: Int) throws {
        let media = try EmbeddedMedia()
        let fp = media.engine.certificate.fingerprint
        let first = try EmbeddedPeer(port: 44_000, transport: "sub", serverFingerprint: fp)
        let second = try EmbeddedPeer(port: 44_001, transport: "sub", serverFingerprint: fp)
        // The server's offer: the transport without a peer yet.
        media.apply(
            .openTransport(
                TransportSpec(
                    id: "sub", router: "room", label: "sub", localUfrag: first.localUfrag,
                    localPassword: first.localPassword, remote: nil)))
        try first.check(media)
        try first.handshake(media, flights: earlyFlights)
        // The accepted answer is the second peer's.
        media.apply(
            .updateTransport(
                id: "sub", remote: second.remote(), localUfrag: second.localUfrag,
                localPassword: second.localPassword))
        try second.check(media)
        try second.handshake(media)
        #expect(second.srtpOut != nil)
        #expect(media.engine.transports["sub"]?.isSecure == true)
        #expect(media.events().contains(.transportState(id: "sub", state: .connected)))
    }
}
