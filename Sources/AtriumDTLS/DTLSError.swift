/// Why a DTLS-SRTP endpoint refused to start, to continue or to hand out keys. Handshake and
/// datagram errors are expected on the network path (a wrong peer, garbage, an attack): the owner
/// tears the transport down and counts them; none of them traps.
public enum DTLSError: Error, Equatable, Sendable, CustomStringConvertible {
    /// OpenSSL refused to build a key, certificate, context or connection; `call` names the function.
    case library(call: String, reason: String)
    /// An `a=fingerprint` value that is not `<hash> <hex>:<hex>:...` (RFC 8122 section 5).
    case invalidFingerprint(String)
    /// The fingerprint's hash function is not one of sha-1, sha-256, sha-384, sha-512.
    case unsupportedHashFunction(String)
    /// The operation does not fit the endpoint's state (for example `start()` twice, or on a closed one).
    case invalidState(String)
    /// A datagram larger than any DTLS record could be.
    case datagramTooLarge(Int)
    /// The DTLS handshake failed (a fatal alert sent or received, or an unusable message).
    case handshakeFailed(String)
    /// The peer sent no certificate, so its fingerprint cannot be checked (RFC 8827 section 6.5).
    case noPeerCertificate
    /// The peer's certificate does not match the fingerprint signaled in its SDP (RFC 8122 section 5).
    case fingerprintMismatch
    /// The peer completed the handshake without negotiating an SRTP profile (RFC 5764 section 4.1.1).
    case noSRTPProfile
    /// The negotiated profile id is not one `SRTPProfile` knows.
    case unsupportedSRTPProfile(UInt)
    /// `SSL_export_keying_material` failed (RFC 5705).
    case keyExportFailed
    /// The established association failed (a fatal alert after the handshake).
    case connectionFailed(String)

    public var description: String {
        switch self {
        case .library(let call, let reason): return "\(call) failed: \(reason)"
        case .invalidFingerprint(let value): return "invalid fingerprint \"\(value)\""
        case .unsupportedHashFunction(let name): return "unsupported fingerprint hash function \(name)"
        case .invalidState(let reason): return "invalid DTLS state: \(reason)"
        case .datagramTooLarge(let size): return "datagram of \(size) bytes is too large"
        case .handshakeFailed(let reason): return "DTLS handshake failed: \(reason)"
        case .noPeerCertificate: return "the peer sent no certificate"
        case .fingerprintMismatch: return "the peer certificate does not match the signaled fingerprint"
        case .noSRTPProfile: return "no SRTP protection profile was negotiated"
        case .unsupportedSRTPProfile(let id): return "unsupported SRTP protection profile \(id)"
        case .keyExportFailed: return "SRTP keying material export failed"
        case .connectionFailed(let reason): return "DTLS association failed: \(reason)"
        }
    }
}
