/// The SRTP key derivation (RFC 3711 section 4.3.1) with key_derivation_rate 0, the only rate DTLS-SRTP
/// uses (RFC 5764 section 4.1.2): each session key is the AES-CM keystream under the master key from
/// the counter block x * 2^16, where x = (label << 48) XOR master_salt. AEAD_AES_128_GCM's 96-bit
/// master salt is padded with zeros to 112 bits (RFC 7714 section 11).
enum SRTPKeyDerivation {
    /// RFC 3711 section 4.3.2's labels.
    enum Label: UInt8 {
        case rtpEncryption = 0
        case rtpAuthentication = 1
        case rtpSalt = 2
        case rtcpEncryption = 3
        case rtcpAuthentication = 4
        case rtcpSalt = 5
    }

    /// `count` octets of session key material for `label`.
    static func derive(_ label: Label, count: Int, masterKey: [UInt8], masterSalt: [UInt8]) throws(SRTPError)
        -> [UInt8]
    {
        var block = [UInt8](repeating: 0, count: 16)
        for (i, b) in masterSalt.prefix(14).enumerated() { block[i] = b }
        block[7] ^= label.rawValue
        return try keystream(key: masterKey, counter: block, count: count)
    }

    /// `count` octets of AES-128-CM keystream under `key` from the counter block `counter`.
    static func keystream(key: [UInt8], counter: [UInt8], count: Int) throws(SRTPError) -> [UInt8] {
        guard counter.count == 16 else { throw .cipherFailed }
        var out = [UInt8](repeating: 0, count: count)
        let cipher = try PacketCrypto(counterKey: key, authenticationKey: [0])
        let status: Result<Void, SRTPError> = out.withUnsafeMutableBufferPointer { o in
            counter.withUnsafeBufferPointer { iv in
                guard let data = o.baseAddress, let start = iv.baseAddress else { return .success(()) }
                do throws(SRTPError) {
                    try cipher.xor(iv: start, data, length: count)
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
        }
        try status.get()
        return out
    }
}

/// The six session keys of one master key (RFC 3711 section 4.3.2); GCM has no authentication keys.
struct SRTPSessionKeys {
    var rtpKey: [UInt8]
    var rtpSalt: [UInt8]
    var rtpAuthentication: [UInt8]
    var rtcpKey: [UInt8]
    var rtcpSalt: [UInt8]
    var rtcpAuthentication: [UInt8]

    /// HMAC-SHA1's session authentication key length (RFC 3711 section 5.2: n_a = 160 bits).
    static let authenticationKeyLength = 20

    init(
        rtpKey: [UInt8], rtpSalt: [UInt8], rtpAuthentication: [UInt8] = [], rtcpKey: [UInt8], rtcpSalt: [UInt8],
        rtcpAuthentication: [UInt8] = []
    ) {
        self.rtpKey = rtpKey
        self.rtpSalt = rtpSalt
        self.rtpAuthentication = rtpAuthentication
        self.rtcpKey = rtcpKey
        self.rtcpSalt = rtcpSalt
        self.rtcpAuthentication = rtcpAuthentication
    }

    init(profile: SRTPProfile, masterKey: [UInt8], masterSalt: [UInt8]) throws(SRTPError) {
        func derive(_ label: SRTPKeyDerivation.Label, _ count: Int) throws(SRTPError) -> [UInt8] {
            try SRTPKeyDerivation.derive(label, count: count, masterKey: masterKey, masterSalt: masterSalt)
        }
        let authentication = profile == .aesCM128HMACSHA1_80 ? Self.authenticationKeyLength : 0
        self.init(
            rtpKey: try derive(.rtpEncryption, profile.keyLength), rtpSalt: try derive(.rtpSalt, profile.saltLength),
            rtpAuthentication: try derive(.rtpAuthentication, authentication),
            rtcpKey: try derive(.rtcpEncryption, profile.keyLength),
            rtcpSalt: try derive(.rtcpSalt, profile.saltLength),
            rtcpAuthentication: try derive(.rtcpAuthentication, authentication))
    }

    /// Zeroes the keys once the cipher contexts hold them.
    mutating func erase() {
        for i in rtpKey.indices { rtpKey[i] = 0 }
        for i in rtpAuthentication.indices { rtpAuthentication[i] = 0 }
        for i in rtcpKey.indices { rtcpKey[i] = 0 }
        for i in rtcpAuthentication.indices { rtcpAuthentication[i] = 0 }
    }
}
