import AtriumDTLS
import FuzzSupport

/// The fuzz target: every input is a datagram from a forger on an established association's 5-tuple.
/// Whatever it holds, the association must stay up (RFC 6347 section 4.1.2.7): only an
/// authenticated fatal alert or close_notify may end it, and a fuzzer cannot authenticate one.
/// A violation traps, which libFuzzer reports as a crash.
@main struct FuzzDTLS: FuzzTarget {
    nonisolated(unsafe) static var server: DTLSEndpoint? = connectedServer()

    static func fuzz(_ bytes: [UInt8]) {
        _ = DTLSRecordCheck.problem(in: bytes)
        _ = DTLSRecordCheck.problem(in: bytes, established: .init(minimumProtectedLength: 24))
        guard let server else { fatalError("the in-process handshake failed") }
        _ = try? server.receive(bytes)
        if server.state != .connected { fatalError("a forged datagram ended the association: \(bytes)") }
    }

    /// A server endpoint that completed a handshake with an in-process client.
    static func connectedServer() -> DTLSEndpoint? {
        guard let clientCertificate = try? DTLSCertificate(), let serverCertificate = try? DTLSCertificate(),
            let client = try? DTLSEndpoint(
                role: .client, certificate: clientCertificate, remoteFingerprint: serverCertificate.fingerprint),
            let server = try? DTLSEndpoint(
                role: .server, certificate: serverCertificate, remoteFingerprint: clientCertificate.fingerprint),
            var toServer = try? client.start()
        else { return nil }
        for _ in 0..<10 where server.state != .connected || client.state != .connected {
            var toClient: [[UInt8]] = []
            for d in toServer { toClient += (try? server.receive(d).datagrams) ?? [] }
            toServer = []
            for d in toClient { toServer += (try? client.receive(d).datagrams) ?? [] }
        }
        return server.state == .connected ? server : nil
    }
}
