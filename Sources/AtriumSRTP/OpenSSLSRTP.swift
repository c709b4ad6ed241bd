/// SRTP and SRTCP for one direction of one DTLS-SRTP association, written from RFC 3711 and RFC 7714
/// over OpenSSL's AES and Atrium's HMAC-SHA1 (`CAtriumSRTP`): the `.openSSL` backend of `SRTPSession`.
///
/// The session keys are derived once (`SRTPKeyDerivation`) and each lives in one cipher or MAC
/// context made here and reused for every packet. Every SSRC of the bundle shares them (DTLS-SRTP's
/// wildcard SSRC) and has its own index and replay state, made on its first packet: at once for the
/// outbound direction, after the packet authenticated for the inbound one, so forged packets of
/// made-up SSRCs leave nothing behind. Packets are transformed in place; the IV, ROC and MAC go
/// through a scratch area allocated with the session. Not thread-safe, like the session.
final class OpenSSLSRTP {
    let profile: SRTPProfile
    let outbound: Bool
    let allowRepeatTransmission: Bool
    let replayWindow: Int

    /// The cipher (and for AES-CM the MAC) contexts of the SRTP and the SRTCP session keys.
    let rtpCrypto: PacketCrypto
    let rtcpCrypto: PacketCrypto
    /// The session salts as big-endian words: octets 0-7 and 8-15 (zero-padded; GCM uses 0-11).
    let rtpSalt: (UInt64, UInt64)
    let rtcpSalt: (UInt64, UInt64)

    /// IV at 0, ROC at 16, a computed tag at 32.
    let scratch: UnsafeMutableRawPointer
    static let ivOffset = 0
    static let rocOffset = 16
    static let tagOffset = 32

    /// Per-SSRC state: RTP index and replay window, SRTCP replay window (inbound) or last index sent
    /// (outbound).
    let rtpStreams = SSRCTable<RTPReplayWindow>()
    let rtcpWindows = SSRCTable<RTCPReplayWindow>()
    let rtcpSent = SSRCTable<UInt32>()

    convenience init(
        profile: SRTPProfile, masterKey: [UInt8], masterSalt: [UInt8], outbound: Bool, replayWindow: Int,
        allowRepeatTransmission: Bool
    ) throws(SRTPError) {
        var keys = try SRTPSessionKeys(profile: profile, masterKey: masterKey, masterSalt: masterSalt)
        defer { keys.erase() }
        try self.init(
            profile: profile, keys: keys, outbound: outbound, replayWindow: replayWindow,
            allowRepeatTransmission: allowRepeatTransmission)
    }

    /// A context on given session keys: the RFC 7714 vectors are stated that way.
    init(
        profile: SRTPProfile, keys: SRTPSessionKeys, outbound: Bool, replayWindow: Int, allowRepeatTransmission: Bool
    ) throws(SRTPError) {
        self.profile = profile
        self.outbound = outbound
        self.allowRepeatTransmission = allowRepeatTransmission
        self.replayWindow = replayWindow
        rtpSalt = Self.words(keys.rtpSalt)
        rtcpSalt = Self.words(keys.rtcpSalt)
        switch profile {
        case .aesCM128HMACSHA1_80:
            rtpCrypto = try PacketCrypto(counterKey: keys.rtpKey, authenticationKey: keys.rtpAuthentication)
            rtcpCrypto = try PacketCrypto(counterKey: keys.rtcpKey, authenticationKey: keys.rtcpAuthentication)
        case .aeadAES128GCM:
            rtpCrypto = try PacketCrypto(gcmKey: keys.rtpKey, sealing: outbound)
            rtcpCrypto = try PacketCrypto(gcmKey: keys.rtcpKey, sealing: outbound)
        }
        scratch = .allocate(byteCount: 64, alignment: 16)
        scratch.initializeMemory(as: UInt8.self, repeating: 0, count: 64)
    }

    deinit {
        scratch.deallocate()
        rtpStreams.forEach { $0.deallocate() }
        rtpStreams.deallocate()
        rtcpWindows.deallocate()
        rtcpSent.deallocate()
    }

    /// The most SSRCs one session keeps state for, in each of RTP and RTCP.
    static let maximumStreams = 4096

    /// Up to 16 octets as two big-endian words, zero-padded.
    private static func words(_ bytes: [UInt8]) -> (UInt64, UInt64) {
        var hi: UInt64 = 0
        var lo: UInt64 = 0
        for i in 0..<16 {
            let b = UInt64(i < bytes.count ? bytes[i] : 0)
            if i < 8 { hi = hi << 8 | b } else { lo = lo << 8 | b }
        }
        return (hi, lo)
    }

    /// Writes the 16-octet AES-CM counter block (RFC 3711 section 4.1.1):
    /// IV = (k_s * 2^16) XOR (SSRC * 2^64) XOR (i * 2^16), for SRTP's 48-bit or SRTCP's 31-bit index.
    @inline(__always)
    func writeCounterIV(salt: (UInt64, UInt64), ssrc: UInt32, index: Int64) {
        let hi = salt.0 ^ UInt64(ssrc)
        let lo = salt.1 ^ (UInt64(truncatingIfNeeded: index) << 16)
        scratch.storeBytes(of: hi.bigEndian, toByteOffset: Self.ivOffset, as: UInt64.self)
        scratch.storeBytes(of: lo.bigEndian, toByteOffset: Self.ivOffset + 8, as: UInt64.self)
    }

    /// Writes the 12-octet AEAD_AES_128_GCM IV (RFC 7714 sections 8.1 and 9.1): the salt XOR
    /// 00 00 || SSRC || the 48-bit index, where SRTCP's index is 00 00 || 0 || its 31 bits.
    @inline(__always)
    func writeGCMIV(salt: (UInt64, UInt64), ssrc: UInt32, index: Int64) {
        let hi = salt.0 ^ (UInt64(ssrc) << 16 | UInt64(truncatingIfNeeded: index >> 32) & 0xFFFF)
        let lo = UInt32(truncatingIfNeeded: salt.1 >> 32) ^ UInt32(truncatingIfNeeded: index)
        scratch.storeBytes(of: hi.bigEndian, toByteOffset: Self.ivOffset, as: UInt64.self)
        scratch.storeBytes(of: lo.bigEndian, toByteOffset: Self.ivOffset + 8, as: UInt32.self)
    }

    var iv: UnsafeMutablePointer<UInt8> { (scratch + Self.ivOffset).assumingMemoryBound(to: UInt8.self) }
    var roc: UnsafeMutablePointer<UInt8> { (scratch + Self.rocOffset).assumingMemoryBound(to: UInt8.self) }
    var tag: UnsafeMutablePointer<UInt8> { (scratch + Self.tagOffset).assumingMemoryBound(to: UInt8.self) }

    /// The RTP header's length (RFC 3550 section 5.1: 12 octets, 4 per CSRC, then the extension's
    /// 4-octet header and its 32-bit words), or nil when it does not fit in `length`.
    @inline(__always)
    static func rtpHeaderLength(_ p: UnsafeMutableRawPointer, _ length: Int) -> Int? {
        guard length >= 12 else { return nil }
        let first = p.load(as: UInt8.self)
        var n = 12 + Int(first & 0x0F) * 4
        if first & 0x10 != 0 {
            guard n + 4 <= length else { return nil }
            n += 4 + Int(UInt16(bigEndian: p.loadUnaligned(fromByteOffset: n + 2, as: UInt16.self))) * 4
        }
        return n <= length ? n : nil
    }
}
