/// The SRTP key derivation (RFC 3711 section 4.3.1) with key_derivation_rate 0, the only rate DTLS-SRTP
/// uses (RFC 5764 section 4.1.2): each session key is the AES-CM keystream under the master key from
/// the counter block x * 2^16, where x = (label << 48) XOR master_salt. AEAD_AES_128_GCM's 96-bit
/// master salt is padded with zeros to 112 bits (RFC 7714 section 11).
enum SRTPKeyDerivation {
    /// RFC 3711 section 4.3.2's labels.
    enum Label: UInt8 {
        case rtpEncryption = 0, rtpAuthentication = 1, rtpSalt = 2
        case rtcpEncryption = 3, rtcpAuthentication = 4, rtcpSalt = 5
    }

    /// `count` octets of session key material for `label`.
    static func derive(_ label: Label, count: Int, masterKey: [UInt8], masterSalt: [UInt8]) throws(SRTPError)
        -> [UInt8]
    {
        var block = [UInt8](repeating: 0, count: 16)
        for (i, b) in masterSalt.prefix(14).enumerated() { block[i] = b }
        block[7] ^= label.rawValue
        var out = [UInt8](repeating: 0, count: count)
        let cipher = try withBytes(masterKey) { key throws(SRTPError) in try AESCounterMode(key: key) }
        let status: Result<Void, SRTPError> = out.withUnsafeMutableBufferPointer { o in
            block.withUnsafeBufferPointer { iv in
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
