import AtriumDTLS
import AtriumKit
import AtriumLoadPeer
import AtriumSDP
import AtriumUDP

#if canImport(Glibc)
    import Glibc
#endif

/// What a native session's connections share: local ICE credentials and the DTLS certificate, the
/// remote side read from the server's SDP, and the clock.
struct NativeCredentials {
    let certificate: DTLSCertificate
    let ufrag: String
    let password: String

    init() throws(AtriumError) {
        do {
            certificate = try DTLSCertificate()
        } catch {
            throw AtriumError(code: "media_failed", message: "DTLS certificate: \(error)")
        }
        var rng = SystemRandomNumberGenerator()
        let alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
        ufrag = String((0..<8).map { _ in alphabet.randomElement(using: &rng) ?? "a" })
        password = String((0..<24).map { _ in alphabet.randomElement(using: &rng) ?? "a" })
    }

    /// A connection's peer: its own UDP socket on every IPv4 address (the server may be on this host
    /// or another; the kernel picks the source address per destination).
    func peer(seed: UInt64) throws(AtriumError) -> LoadPeer {
        do {
            return try LoadPeer(
                certificate: certificate, ufrag: ufrag, password: password, seed: seed,
                bind: .ipv4(0, 0, 0, 0, port: 0))
        } catch {
            throw AtriumError(code: "media_failed", message: "UDP: \(error)")
        }
    }

    /// The transport lines of one of our media sections.
    func transportLines(setup: String) -> [String] {
        [
            "c=IN IP4 0.0.0.0", "a=ice-ufrag:\(ufrag)", "a=ice-pwd:\(password)",
            "a=fingerprint:\(certificate.fingerprint)", "a=setup:\(setup)", "a=rtcp-mux",
        ]
    }

    /// The remote side of a connection from the server's SDP (its first section with a port): ICE
    /// credentials, the SHA-256 fingerprint, IPv4 UDP candidates. We are the controlling agent (the
    /// server is ICE-lite); `dtlsRole` follows from the server's `a=setup`.
    static func remote(_ sdp: SessionDescription, dtlsRole: DTLSRole) throws(AtriumError) -> LoadPeer.Remote {
        guard let m = sdp.media.first(where: { $0.port != 0 }), let u = m.iceUfrag, let p = m.icePwd,
            let fp = m.fingerprints.first(where: { $0.hashFunction.lowercased() == "sha-256" })
        else { throw AtriumError(code: "sdp_unsupported", message: "the SDP has no ICE credentials or fingerprint") }
        let candidates = m.candidates.filter { $0.transport.lowercased() == "udp" }.compactMap { c -> SocketAddress? in
            let o = c.address.split(separator: ".").compactMap { UInt8($0) }
            guard o.count == 4 else { return nil }
            return .ipv4(o[0], o[1], o[2], o[3], port: c.port)
        }
        guard !candidates.isEmpty else {
            throw AtriumError(code: "sdp_unsupported", message: "the SDP has no IPv4 UDP candidate")
        }
        guard fp.bytes.count == 32 else {
            throw AtriumError(code: "sdp_unsupported", message: "fingerprint: a SHA-256 digest has 32 bytes")
        }
        let fingerprint = DTLSFingerprint(hashFunction: fp.hashFunction, digest: fp.bytes)
        return LoadPeer.Remote(
            ufrag: u, password: p, fingerprint: fingerprint, dtlsRole: dtlsRole, controlling: true,
            candidates: candidates)
    }

    static func parse(_ text: String) throws(AtriumError) -> SessionDescription {
        do { return try SessionDescription.parse(text) } catch {
            throw AtriumError(code: "invalid_sdp", message: "the SDP does not parse: \(error)")
        }
    }
}
