public import AtriumSRTP

/// Which side of the DTLS handshake an endpoint plays. In WebRTC it follows SDP's `a=setup`
/// (RFC 5763 section 5, RFC 8842): `active` opens the handshake as client, `passive` waits as server.
public enum DTLSRole: Sendable, Equatable {
    case client, server

    /// The role for this endpoint's own `a=setup` value; `actpass` and unknown values give nil,
    /// because the answer must settle them first.
    public init?(setup: String) {
        switch setup.lowercased() {
        case "active": self = .client
        case "passive": self = .server
        default: return nil
        }
    }
}

/// What the owner must do after feeding the endpoint: send `datagrams` in order, and act on the
/// events.
public struct DTLSOutput: Sendable, Equatable {
    public var datagrams: [[UInt8]]
    public var events: [DTLSEvent]
    /// Invalid datagrams discarded without harm to the association (RFC 6347 section 4.1.2.7):
    /// malformed records, and protected records that failed authentication, were replayed or belong
    /// to no current epoch. Counted by the owner.
    public var discarded: Int

    public init(datagrams: [[UInt8]] = [], events: [DTLSEvent] = [], discarded: Int = 0) {
        self.datagrams = datagrams
        self.events = events
        self.discarded = discarded
    }
}

public enum DTLSEvent: Sendable, Equatable {
    /// The handshake completed and the peer's fingerprint matched: start SRTP with these keys. When
    /// the fingerprint was not known yet, this comes from `verify(remoteFingerprint:)` instead.
    case connected(SRTPKeys)
    /// Application data (for example SCTP for data channels, RFC 8261) arrived over the association.
    case applicationData([UInt8])
    /// The peer sent close_notify (RFC 5246 section 7.2.1).
    case closed
}

/// Options of one endpoint. The defaults are what a browser-facing SFU wants.
public struct DTLSOptions: Sendable {
    /// SRTP profiles offered in `use_srtp`, in preference order. The server's order wins (RFC 5764
    /// section 4.1.1 leaves the choice to the server; OpenSSL takes its own list first).
    public var profiles: [SRTPProfile]
    /// The largest datagram the endpoint writes (RFC 6347 section 4.1.1.1). 1200 fits every path
    /// WebRTC cares about, inside IPv6's minimum MTU with room for TURN framing.
    public var mtu: Int
    /// The first retransmission interval (RFC 6347 section 4.2.4.1); it doubles on each expiry.
    public var initialRetransmitTimeout: Duration

    public init(
        profiles: [SRTPProfile] = [.aeadAES128GCM, .aesCM128HMACSHA1_80], mtu: Int = 1200,
        initialRetransmitTimeout: Duration = .seconds(1)
    ) {
        self.profiles = profiles
        self.mtu = mtu
        self.initialRetransmitTimeout = initialRetransmitTimeout
    }
}
