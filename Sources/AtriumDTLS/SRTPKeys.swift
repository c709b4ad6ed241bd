public import AtriumSRTP

/// The SRTP master keys a completed DTLS-SRTP handshake yields, already arranged for this
/// endpoint's role (RFC 5764 section 4.2): `local` protects what this endpoint sends, `remote`
/// unprotects what it receives. The peer's `local` equals this endpoint's `remote`.
public struct SRTPKeys: Sendable, Equatable, CustomStringConvertible {
    public let profile: SRTPProfile
    public let localMasterKey: [UInt8]
    public let localMasterSalt: [UInt8]
    public let remoteMasterKey: [UInt8]
    public let remoteMasterSalt: [UInt8]

    public init(
        profile: SRTPProfile, localMasterKey: [UInt8], localMasterSalt: [UInt8], remoteMasterKey: [UInt8],
        remoteMasterSalt: [UInt8]
    ) {
        self.profile = profile
        self.localMasterKey = localMasterKey
        self.localMasterSalt = localMasterSalt
        self.remoteMasterKey = remoteMasterKey
        self.remoteMasterSalt = remoteMasterSalt
    }

    /// Splits exported keying material laid out as client_key | server_key | client_salt |
    /// server_salt (RFC 5764 section 4.2) for `role`.
    init(profile: SRTPProfile, material: [UInt8], role: DTLSRole) {
        let k = profile.keyLength
        let s = profile.saltLength
        let clientKey = Array(material[0..<k])
        let serverKey = Array(material[k..<2 * k])
        let clientSalt = Array(material[2 * k..<2 * k + s])
        let serverSalt = Array(material[2 * k + s..<2 * k + 2 * s])
        switch role {
        case .client:
            self.init(
                profile: profile, localMasterKey: clientKey, localMasterSalt: clientSalt,
                remoteMasterKey: serverKey, remoteMasterSalt: serverSalt)
        case .server:
            self.init(
                profile: profile, localMasterKey: serverKey, localMasterSalt: serverSalt,
                remoteMasterKey: clientKey, remoteMasterSalt: clientSalt)
        }
    }

    /// Names the profile only: master keys must never reach a log line by accident.
    public var description: String { "SRTPKeys(\(profile), keys redacted)" }

    /// The session that protects what this endpoint sends. It may protect a sequence number again: a
    /// retransmission without RTX resends a packet byte for byte (the same plaintext under the same
    /// index gives the same ciphertext, so nothing leaks), to a receiver that lost the first copy.
    public func outboundSession() throws(SRTPError) -> SRTPSession {
        try SRTPSession(
            profile: profile, masterKey: localMasterKey, masterSalt: localMasterSalt, direction: .outbound,
            allowRepeatTransmission: true)
    }

    /// The session that unprotects what this endpoint receives.
    public func inboundSession() throws(SRTPError) -> SRTPSession {
        try SRTPSession(
            profile: profile, masterKey: remoteMasterKey, masterSalt: remoteMasterSalt, direction: .inbound)
    }
}
