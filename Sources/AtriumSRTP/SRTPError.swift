/// Why a session could not be made or a packet was refused, by either backend. Packet errors are expected on the network path
/// (forged, replayed or truncated datagrams) and must be counted and dropped, never trapped on.
public enum SRTPError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `srtp_init` failed (the code is libsrtp's `srtp_err_status_t`), or OpenSSL could not make a
    /// cipher context (code -1).
    case initializationFailed(code: Int)
    /// The master key or salt does not have the profile's length (RFC 5764 section 4.1.2).
    case invalidKeyLength(expected: Int, actual: Int)
    /// A packet is shorter than its header, or the buffer has no room for the SRTP trailer.
    case badLength
    /// The authentication tag did not verify (RFC 3711 section 3.3, RFC 7714 section 9.2).
    case authenticationFailed
    /// The packet index was already seen or is behind the replay window (RFC 3711 section 3.3.2).
    case replayed
    /// The packet's header does not fit it (CSRCs or a header extension past its end, no room for the
    /// tag), libsrtp's `srtp_err_status_parse_err` and similar.
    case malformedPacket
    /// OpenSSL failed while transforming a packet (not an authentication failure).
    case cipherFailed
    /// The packet index space under this master key is used up: 2^31 SRTCP packets of one SSRC, or a
    /// rollover counter past 2^32 (RFC 3711 section 9.2); the association must be re-keyed.
    case keyExhausted
    /// A session already keeps the most SSRCs it will (`SRTPSession.maximumStreams`); a packet of one
    /// more is refused rather than growing its state without bound.
    case tooManyStreams
    /// Any other libsrtp status.
    case library(code: Int)

    public var description: String {
        switch self {
        case .initializationFailed(let code): return "SRTP initialisation failed with status \(code)"
        case .invalidKeyLength(let expected, let actual):
            return "master key+salt of \(actual) bytes, expected \(expected)"
        case .badLength: return "packet too short, or no room for the SRTP trailer"
        case .authenticationFailed: return "SRTP authentication failed"
        case .replayed: return "SRTP packet replayed or too old"
        case .malformedPacket: return "malformed SRTP packet"
        case .cipherFailed: return "the SRTP cipher failed"
        case .keyExhausted: return "SRTP packet index exhausted under this master key"
        case .tooManyStreams: return "too many SRTP streams in one session"
        case .library(let code): return "libsrtp status \(code)"
        }
    }
}
