internal import CSRTP

/// libsrtp must be initialised once per process before any other call. A Swift global's initializer
/// runs exactly once, lazily and thread-safely (swift_once), which is the guarantee needed.
private let libraryStatus: Int = Int(srtp_init().rawValue)

/// One SRTP/SRTCP context for one direction of one DTLS-SRTP association (RFC 3711, RFC 5764): the
/// outbound one protects what Atrium sends, the inbound one unprotects what it receives. It wraps a
/// libsrtp `srtp_t` created with a wildcard SSRC policy, so every SSRC of the bundle shares the
/// master key while libsrtp keeps a crypto context and replay window per SSRC.
///
/// Packets are transformed in place in caller-provided buffers: no allocation per packet beyond
/// what libsrtp does itself. Not thread-safe: a session belongs to the worker that owns the
/// transport, like every other packet-path object.
public final class SRTPSession {
    public enum Direction: Sendable {
        case outbound, inbound
    }

    /// The most a libsrtp transform may append (tag plus MKI); `profile.rtpOverhead` and
    /// `profile.rtcpOverhead` are what these sessions (no MKI) actually append.
    public static var maximumTrailerLength: Int { Int(atrium_srtp_max_trailer_len()) }

    public let profile: SRTPProfile
    public let direction: Direction
    private let context: OpaquePointer

    /// Creates a context from the master key and salt exported by DTLS (RFC 5764 section 4.2).
    /// - Parameters:
    ///   - replayWindow: packets remembered for replay detection (libsrtp accepts 64 to 32767).
    ///   - allowRepeatTransmission: lets an outbound session protect the same sequence number twice,
    ///     for retransmissions that reuse the original packet (RFC 3711 section 3.3.2 permits it).
    public init(
        profile: SRTPProfile, masterKey: [UInt8], masterSalt: [UInt8], direction: Direction,
        replayWindow: Int = 1024, allowRepeatTransmission: Bool = false
    ) throws(SRTPError) {
        guard libraryStatus == 0 else { throw .initializationFailed(code: libraryStatus) }
        guard masterKey.count == profile.keyLength, masterSalt.count == profile.saltLength else {
            throw .invalidKeyLength(
                expected: profile.keyLength + profile.saltLength, actual: masterKey.count + masterSalt.count)
        }
        var policy = srtp_policy_t()
        switch profile {
        case .aeadAES128GCM:
            atrium_srtp_policy_aead_aes_128_gcm(&policy.rtp)
            atrium_srtp_policy_aead_aes_128_gcm(&policy.rtcp)
        case .aesCM128HMACSHA1_80:
            atrium_srtp_policy_aes_cm_128_hmac_sha1_80(&policy.rtp)
            atrium_srtp_policy_aes_cm_128_hmac_sha1_80(&policy.rtcp)
        }
        policy.ssrc.type = direction == .outbound ? ssrc_any_outbound : ssrc_any_inbound
        policy.window_size = UInt(max(64, min(replayWindow, 0x7FFF)))
        policy.allow_repeat_tx = allowRepeatTransmission ? 1 : 0
        policy.next = nil
        var material = masterKey + masterSalt
        var session: OpaquePointer?
        let status = material.withUnsafeMutableBufferPointer { key in
            policy.key = key.baseAddress
            return srtp_create(&session, &policy)
        }
        // libsrtp derived its session keys; do not leave the master key behind in this copy.
        for i in material.indices { material[i] = 0 }
        guard status == srtp_err_status_ok, let session else { throw Self.error(status) }
        self.profile = profile
        self.direction = direction
        self.context = session
    }

    deinit {
        srtp_dealloc(context)
    }

    /// Encrypts and authenticates the RTP packet in `buffer[0..<length]` in place (RFC 3711 section
    /// 3.3, RFC 7714 section 9.1) and returns the SRTP length. `buffer` must have
    /// `profile.rtpOverhead` bytes of room after the packet.
    public func protect(rtp buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try transform(buffer, length, minimum: rtpHeaderLength, room: profile.rtpOverhead) { ctx, p, len in
            srtp_protect(ctx, p, len)
        }
    }

    /// Verifies and decrypts the SRTP packet in `buffer[0..<length]` in place; returns the RTP length.
    public func unprotect(srtp buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try transform(buffer, length, minimum: rtpHeaderLength, room: 0) { ctx, p, len in
            srtp_unprotect(ctx, p, len)
        }
    }

    /// Protects the RTCP compound packet in `buffer[0..<length]` (RFC 3711 section 3.4); `buffer`
    /// must have `profile.rtcpOverhead` bytes of room after it.
    public func protectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try transform(buffer, length, minimum: rtcpHeaderLength, room: profile.rtcpOverhead) { ctx, p, len in
            srtp_protect_rtcp(ctx, p, len)
        }
    }

    /// Verifies and decrypts the SRTCP packet in `buffer[0..<length]`; returns the RTCP length.
    public func unprotectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try transform(buffer, length, minimum: rtcpHeaderLength, room: 0) { ctx, p, len in
            srtp_unprotect_rtcp(ctx, p, len)
        }
    }

    /// RTP fixed header (RFC 3550 section 5.1) and RTCP common header (section 6.4.1) sizes.
    private var rtpHeaderLength: Int { 12 }
    private var rtcpHeaderLength: Int { 8 }

    private func transform(
        _ buffer: UnsafeMutableRawBufferPointer, _ length: Int, minimum: Int, room: Int,
        _ operation: (OpaquePointer, UnsafeMutableRawPointer, UnsafeMutablePointer<Int32>) -> srtp_err_status_t
    ) throws(SRTPError) -> Int {
        guard let base = buffer.baseAddress, length >= minimum, length <= buffer.count - room, length <= 0xFFFF
        else { throw .badLength }
        var len = Int32(length)
        let status = operation(context, base, &len)
        guard status == srtp_err_status_ok else { throw Self.error(status) }
        return Int(len)
    }

    private static func error(_ status: srtp_err_status_t) -> SRTPError {
        switch status {
        case srtp_err_status_auth_fail: return .authenticationFailed
        case srtp_err_status_replay_fail, srtp_err_status_replay_old: return .replayed
        case srtp_err_status_parse_err, srtp_err_status_bad_param, srtp_err_status_cipher_fail: return .malformedPacket
        default: return .library(code: Int(status.rawValue))
        }
    }
}
