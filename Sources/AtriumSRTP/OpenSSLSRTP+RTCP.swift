/// SRTCP (RFC 3711 section 3.4; RFC 7714 section 9 and 17 for AEAD_AES_128_GCM).
///
///      0                   1                   2                   3
///    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///    |V=2|P|    RC   |   PT=SR or RR   |             length          |
///    |                         SSRC of sender                        |
///    |           the rest of the compound packet (encrypted)         |
///    |E|                         SRTCP index                         |   AES-CM: index, then tag
///    |               authentication tag (10 octets)                  |
///
/// With AEAD_AES_128_GCM the 16-octet tag follows the ciphertext and the E flag and index come last;
/// the associated data is the first 8 octets and the E flag and index (RFC 7714 section 17).
extension OpenSSLSRTP {
    private static let rtcpHeaderLength = 8
    private static let indexLength = 4
    private static let encryptedFlag: UInt32 = 0x8000_0000

    /// Protects the compound `p[0..<length]` in place (always encrypted: E = 1); the caller checked
    /// that `profile.rtcpOverhead` octets follow.
    func protectRTCP(_ p: UnsafeMutableRawPointer, length: Int) throws(SRTPError) -> Int {
        guard length >= Self.rtcpHeaderLength else { throw .badLength }
        let ssrc = UInt32(bigEndian: p.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
        // The index counts from 1 per SSRC (libsrtp increments before use) and must stay below 2^31.
        let last = rtcpSent[ssrc]
        if last == nil && rtcpSent.count >= Self.maximumStreams { throw .tooManyStreams }
        let previous = last ?? 0
        guard previous < 0x7FFF_FFFF else { throw .keyExhausted }
        let index = previous + 1
        rtcpSent.set(ssrc, index)
        let word = (Self.encryptedFlag | index).bigEndian
        let bytes = p.assumingMemoryBound(to: UInt8.self)
        let body = length - Self.rtcpHeaderLength
        switch profile {
        case .aesCM128HMACSHA1_80:
            writeCounterIV(salt: rtcpSalt, ssrc: ssrc, index: Int64(index))
            try rtcpCrypto.xor(iv: iv, bytes + Self.rtcpHeaderLength, length: body)
            p.storeBytes(of: word, toByteOffset: length, as: UInt32.self)
            let signed = length + Self.indexLength
            try rtcpCrypto.mac(bytes, signed, bytes, 0, into: tag)
            (bytes + signed).update(from: tag, count: Self.cmTagLength)
            return signed + Self.cmTagLength
        case .aeadAES128GCM:
            writeGCMIV(salt: rtcpSalt, ssrc: ssrc, index: Int64(index))
            p.storeBytes(of: word, toByteOffset: length + Self.gcmTagLength, as: UInt32.self)
            try rtcpCrypto.seal(
                iv: iv, aad: bytes, Self.rtcpHeaderLength, bytes + length + Self.gcmTagLength, Self.indexLength,
                bytes + Self.rtcpHeaderLength, length: body, tag: bytes + length)
            return length + Self.gcmTagLength + Self.indexLength
        }
    }

    /// Verifies and, when its E flag is set, decrypts the SRTCP packet `p[0..<length]` in place;
    /// returns the RTCP length.
    func unprotectRTCP(_ p: UnsafeMutableRawPointer, length: Int) throws(SRTPError) -> Int {
        let tagLength = profile == .aeadAES128GCM ? Self.gcmTagLength : Self.cmTagLength
        guard length >= Self.rtcpHeaderLength + Self.indexLength + tagLength else { throw .badLength }
        let plain = length - Self.indexLength - tagLength
        let indexOffset = profile == .aeadAES128GCM ? length - Self.indexLength : plain
        let word = UInt32(bigEndian: p.loadUnaligned(fromByteOffset: indexOffset, as: UInt32.self))
        let encrypted = word & Self.encryptedFlag != 0
        let index = word & ~Self.encryptedFlag
        let ssrc = UInt32(bigEndian: p.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
        let known = rtcpWindows[ssrc]
        if known == nil && rtcpWindows.count >= Self.maximumStreams { throw .tooManyStreams }
        var window = known ?? RTCPReplayWindow()
        guard window.check(index) == .fresh else { throw .replayed }
        let bytes = p.assumingMemoryBound(to: UInt8.self)
        switch profile {
        case .aesCM128HMACSHA1_80:
            let signed = plain + Self.indexLength
            try rtcpCrypto.mac(bytes, signed, bytes, 0, into: tag)
            guard constantTimeEqual(tag, bytes + signed, count: Self.cmTagLength) else { throw .authenticationFailed }
            if encrypted {
                writeCounterIV(salt: rtcpSalt, ssrc: ssrc, index: Int64(index))
                try rtcpCrypto.xor(iv: iv, bytes + Self.rtcpHeaderLength, length: plain - Self.rtcpHeaderLength)
            }
        case .aeadAES128GCM:
            writeGCMIV(salt: rtcpSalt, ssrc: ssrc, index: Int64(index))
            let indexBytes = bytes + indexOffset
            if encrypted {
                try rtcpCrypto.open(
                    iv: iv, aad: bytes, Self.rtcpHeaderLength, indexBytes, Self.indexLength,
                    bytes + Self.rtcpHeaderLength, length: plain - Self.rtcpHeaderLength, tag: bytes + plain)
            } else {
                // Unencrypted SRTCP: the whole packet is associated data (RFC 7714 section 17).
                try rtcpCrypto.open(
                    iv: iv, aad: bytes, plain, indexBytes, Self.indexLength, bytes, length: 0, tag: bytes + plain)
            }
        }
        window.add(index)
        rtcpWindows.set(ssrc, window)
        return plain
    }
}
