internal import CSRTP

/// libsrtp must be initialised once per process before any other call. A Swift global's initializer
/// runs exactly once, lazily and thread-safely (swift_once), which is the guarantee needed.
private let libraryStatus: Int = Int(srtp_init().rawValue)

/// The `.libsrtp` backend of `SRTPSession`: one libsrtp `srtp_t` created with a wildcard SSRC policy,
/// so every SSRC of the bundle shares the master key while libsrtp keeps a crypto context and replay
/// window per SSRC. Debian's libsrtp2 is built on NSS (docs/benchmarks.md says what that costs); it
/// is kept as the reference the OpenSSL backend is tested against, and where it measures faster.
final class LibSRTP {
    private let context: OpaquePointer

    /// The most a libsrtp transform may append (tag plus MKI).
    static var maximumTrailerLength: Int { Int(atrium_srtp_max_trailer_len()) }

    init(
        profile: SRTPProfile, masterKey: [UInt8], masterSalt: [UInt8], outbound: Bool, replayWindow: Int,
        allowRepeatTransmission: Bool
    ) throws(SRTPError) {
        guard libraryStatus == 0 else { throw .initializationFailed(code: libraryStatus) }
        var policy = srtp_policy_t()
        switch profile {
        case .aeadAES128GCM:
            atrium_srtp_policy_aead_aes_128_gcm(&policy.rtp)
            atrium_srtp_policy_aead_aes_128_gcm(&policy.rtcp)
        case .aesCM128HMACSHA1_80:
            atrium_srtp_policy_aes_cm_128_hmac_sha1_80(&policy.rtp)
            atrium_srtp_policy_aes_cm_128_hmac_sha1_80(&policy.rtcp)
        }
        policy.ssrc.type = outbound ? ssrc_any_outbound : ssrc_any_inbound
        policy.window_size = UInt(replayWindow)
        policy.allow_repeat_tx = allowRepeatTransmission ? 1 : 0
        policy.next = nil
        var material = masterKey + masterSalt
        var session: OpaquePointer?
        let status = material.withUnsafeMutableBufferPointer { key in
            policy.key = key.baseAddress
            return srtp_create(&session, &policy)
        }
        // libsrtp derived its session keys; do not leave the master key behind in this copy.
        material.withUnsafeMutableBytes { cleanse($0) }
        guard status == srtp_err_status_ok, let session else { throw Self.error(status) }
        self.context = session
    }

    deinit {
        srtp_dealloc(context)
    }

    func protect(rtp p: UnsafeMutableRawPointer, length: Int) throws(SRTPError) -> Int {
        try call(p, length) { srtp_protect($0, $1, $2) }
    }

    func unprotect(srtp p: UnsafeMutableRawPointer, length: Int) throws(SRTPError) -> Int {
        try call(p, length) { srtp_unprotect($0, $1, $2) }
    }

    func protectRTCP(_ p: UnsafeMutableRawPointer, length: Int) throws(SRTPError) -> Int {
        try call(p, length) { srtp_protect_rtcp($0, $1, $2) }
    }

    func unprotectRTCP(_ p: UnsafeMutableRawPointer, length: Int) throws(SRTPError) -> Int {
        try call(p, length) { srtp_unprotect_rtcp($0, $1, $2) }
    }

    @inline(__always)
    private func call(
        _ p: UnsafeMutableRawPointer, _ length: Int,
        _ operation: (OpaquePointer, UnsafeMutableRawPointer, UnsafeMutablePointer<Int32>) -> srtp_err_status_t
    ) throws(SRTPError) -> Int {
        var len = Int32(truncatingIfNeeded: length)
        let status = operation(context, p, &len)
        guard status == srtp_err_status_ok else { throw Self.error(status) }
        return Int(len)
    }

    private static func error(_ status: srtp_err_status_t) -> SRTPError {
        switch status {
        case srtp_err_status_auth_fail: return .authenticationFailed
        case srtp_err_status_replay_fail, srtp_err_status_replay_old: return .replayed
        case srtp_err_status_parse_err, srtp_err_status_bad_param, srtp_err_status_cipher_fail: return .malformedPacket
        case srtp_err_status_key_expired: return .keyExhausted
        default: return .library(code: Int(status.rawValue))
        }
    }
}
