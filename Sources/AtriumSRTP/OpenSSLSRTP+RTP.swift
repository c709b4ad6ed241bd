/// SRTP (RFC 3711 section 3.3; RFC 7714 section 9 for AEAD_AES_128_GCM).
///
///      0                   1                   2                   3
///    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///    |V=2|P|X|  CC   |M|     PT      |       sequence number         |
///    |                           timestamp                           |
///    |           synchronization source (SSRC) identifier            |
///    |  contributing sources, header extension (authenticated only)  |
///    |                 payload (encrypted) ...                       |
///    |          authentication tag (10 octets, or GCM's 16)          |
extension OpenSSLSRTP {
    private static let sequenceOffset = 2
    private static let ssrcOffset = 8
    static let cmTagLength = 10
    static let gcmTagLength = 16

    /// Protects `p[0..<length]` in place; the caller checked that `profile.rtpOverhead` octets follow.
    func protect(rtp p: UnsafeMutableRawPointer, length: Int) throws(SRTPError) -> Int {
        // CSRCs or an extension running past the packet: libsrtp's parse error.
        guard let header = Self.rtpHeaderLength(p, length) else { throw .malformedPacket }
        let sequence = UInt16(bigEndian: p.loadUnaligned(fromByteOffset: Self.sequenceOffset, as: UInt16.self))
        let ssrc = UInt32(bigEndian: p.loadUnaligned(fromByteOffset: Self.ssrcOffset, as: UInt32.self))
        let window: RTPReplayWindow
        if let known = rtpStreams[ssrc] {
            window = known
        } else {
            guard rtpStreams.count < Self.maximumStreams else { throw .tooManyStreams }
            window = RTPReplayWindow(packets: replayWindow)
            rtpStreams.set(ssrc, window)
        }
        // The sender estimates its index from the sequence number as the receiver will (libsrtp does the
        // same), and refuses to reuse one unless retransmissions may (RFC 3711 section 3.3.2).
        let index = try window.admit(sequence, repeatAllowed: allowRepeatTransmission)
        let bytes = p.assumingMemoryBound(to: UInt8.self)
        switch profile {
        case .aesCM128HMACSHA1_80:
            writeCounterIV(salt: rtpSalt, ssrc: ssrc, index: index)
            try rtpCrypto.xor(iv: iv, bytes + header, length: length - header)
            writeROC(index)
            // The tag is the first 80 bits of HMAC-SHA1 over the packet and the ROC (section 4.2).
            try rtpCrypto.mac(bytes, length, roc, 4, into: tag)
            (bytes + length).update(from: tag, count: Self.cmTagLength)
            return length + Self.cmTagLength
        case .aeadAES128GCM:
            writeGCMIV(salt: rtpSalt, ssrc: ssrc, index: index)
            // The header is the associated data (RFC 7714 section 9.1); the tag follows the ciphertext.
            try rtpCrypto.seal(
                iv: iv, aad: bytes, header, bytes, 0, bytes + header, length: length - header, tag: bytes + length)
            return length + Self.gcmTagLength
        }
    }

    /// Verifies and decrypts `p[0..<length]` in place; returns the RTP length.
    func unprotect(srtp p: UnsafeMutableRawPointer, length: Int) throws(SRTPError) -> Int {
        let tagLength = profile == .aeadAES128GCM ? Self.gcmTagLength : Self.cmTagLength
        guard length >= tagLength, let header = Self.rtpHeaderLength(p, length - tagLength) else {
            throw .malformedPacket
        }
        let body = length - tagLength
        let sequence = UInt16(bigEndian: p.loadUnaligned(fromByteOffset: Self.sequenceOffset, as: UInt16.self))
        let ssrc = UInt32(bigEndian: p.loadUnaligned(fromByteOffset: Self.ssrcOffset, as: UInt32.self))
        // A new SSRC's first packet is checked against a fresh window, which takes any index; its state is
        // kept only once the packet authenticated.
        let known = rtpStreams[ssrc]
        if known == nil && rtpStreams.count >= Self.maximumStreams { throw .tooManyStreams }
        let (index, delta) = known?.estimate(sequence) ?? (Int64(sequence), Int64(sequence))
        if let known, known.check(delta) != .fresh { throw .replayed }
        guard index >> 16 <= Int64(UInt32.max) else { throw .keyExhausted }
        let bytes = p.assumingMemoryBound(to: UInt8.self)
        switch profile {
        case .aesCM128HMACSHA1_80:
            writeROC(index)
            try rtpCrypto.mac(bytes, body, roc, 4, into: tag)
            guard constantTimeEqual(tag, bytes + body, count: Self.cmTagLength) else { throw .authenticationFailed }
            writeCounterIV(salt: rtpSalt, ssrc: ssrc, index: index)
            try rtpCrypto.xor(iv: iv, bytes + header, length: body - header)
        case .aeadAES128GCM:
            writeGCMIV(salt: rtpSalt, ssrc: ssrc, index: index)
            try rtpCrypto.open(
                iv: iv, aad: bytes, header, bytes, 0, bytes + header, length: body - header, tag: bytes + body)
        }
        if let known {
            known.add(delta)
        } else {
            let window = RTPReplayWindow(packets: replayWindow)
            window.add(delta)
            rtpStreams.set(ssrc, window)
        }
        return body
    }

    /// The rollover counter of `index`, big-endian, into the scratch area (RFC 3711 section 4.2).
    @inline(__always)
    private func writeROC(_ index: Int64) {
        let value = UInt32(truncatingIfNeeded: index >> 16)
        scratch.storeBytes(of: value.bigEndian, toByteOffset: Self.rocOffset, as: UInt32.self)
    }
}

extension RTPReplayWindow {
    /// The sender's side: the index for `sequence`, recorded as sent. A repeat of an index still in
    /// the window is allowed when `repeatAllowed` (libsrtp's `allow_repeat_tx`); one behind it never is.
    func admit(_ sequence: UInt16, repeatAllowed: Bool) throws(SRTPError) -> Int64 {
        let (index, delta) = estimate(sequence)
        switch check(delta) {
        case .fresh: break
        case .repeated: guard repeatAllowed else { throw .replayed }
        case .tooOld: throw .replayed
        }
        guard index >> 16 <= Int64(UInt32.max) else { throw .keyExhausted }
        add(delta)
        return index
    }
}
