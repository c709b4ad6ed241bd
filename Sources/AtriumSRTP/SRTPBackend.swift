/// Which implementation an `SRTPSession` runs on. Both take the same keys and give byte-identical
/// packets (the tests hold them to each other and to the RFC vectors); they differ in cost.
public enum SRTPBackend: Sendable, CaseIterable, CustomStringConvertible {
    /// Atrium's own transform over OpenSSL's AES (AES-NI) and SHA-1: `OpenSSLSRTP`.
    case openSSL
    /// libsrtp2 as Debian builds it (on NSS): `LibSRTP`.
    case libsrtp

    /// The faster backend for a profile on this platform, measured with `make bench`
    /// (bench/srtp_bench, figures in docs/benchmarks.md): OpenSSL for both profiles.
    public static func preferred(for profile: SRTPProfile) -> SRTPBackend {
        switch profile {
        case .aeadAES128GCM: return .openSSL
        case .aesCM128HMACSHA1_80: return .openSSL
        }
    }

    public var description: String {
        switch self {
        case .openSSL: return "openssl"
        case .libsrtp: return "libsrtp"
        }
    }
}
