/// The DTLS-SRTP protection profiles Atrium offers (RFC 5764 section 4.1.2, RFC 7714 section 14.2).
/// GCM first: with Debian's NSS-backed libsrtp it is about four times cheaper per packet.
public enum SRTPProfile: Sendable, CaseIterable {
    /// `SRTP_AEAD_AES_128_GCM` (0x0007): 128-bit key, 96-bit salt, 16-octet tag (RFC 7714 section 12).
    case aeadAES128GCM
    /// `SRTP_AES128_CM_HMAC_SHA1_80` (0x0001): 128-bit key, 112-bit salt, 80-bit tag (RFC 3711 section 5).
    case aesCM128HMACSHA1_80

    /// The protection profile id in the DTLS `use_srtp` extension.
    public var dtlsProfileID: UInt16 {
        switch self {
        case .aeadAES128GCM: return 0x0007
        case .aesCM128HMACSHA1_80: return 0x0001
        }
    }

    /// The OpenSSL name of the profile, for `SSL_CTX_set_tlsext_use_srtp`.
    public var openSSLName: String {
        switch self {
        case .aeadAES128GCM: return "SRTP_AEAD_AES_128_GCM"
        case .aesCM128HMACSHA1_80: return "SRTP_AES128_CM_SHA1_80"
        }
    }

    public var keyLength: Int { 16 }

    public var saltLength: Int {
        switch self {
        case .aeadAES128GCM: return 12
        case .aesCM128HMACSHA1_80: return 14
        }
    }

    /// Octets `protect(rtp:)` appends: the authentication tag.
    public var rtpOverhead: Int {
        switch self {
        case .aeadAES128GCM: return 16
        case .aesCM128HMACSHA1_80: return 10
        }
    }

    /// Octets `protectRTCP` appends: the tag plus the E flag and SRTCP index (RFC 3711 section 3.4).
    public var rtcpOverhead: Int { rtpOverhead + 4 }
}
