/// One SRTP/SRTCP context for one direction of one DTLS-SRTP association (RFC 3711, RFC 7714,
/// RFC 5764): the outbound one protects what Atrium sends, the inbound one unprotects what it
/// receives. Every SSRC of the bundle shares the master key (DTLS-SRTP's wildcard SSRC), with an
/// index, rollover counter and replay window of its own.
///
/// Packets are transformed in place in caller-provided buffers, with no allocation per packet
/// (a new SSRC's first packet makes its state). The work is done by a backend (`SRTPBackend`): by
/// default the faster one for the profile. Not thread-safe: a session belongs to the worker that owns
/// the transport, like every other packet-path object.
public final class SRTPSession {
    public enum Direction: Sendable {
        case outbound, inbound
    }

    /// The most a transform may append (libsrtp's bound: tag plus MKI); `profile.rtpOverhead` and
    /// `profile.rtcpOverhead` are what these sessions (no MKI) actually append.
    public static var maximumTrailerLength: Int { LibSRTP.maximumTrailerLength }

    /// The most SSRCs a session keeps state for (the OpenSSL backend refuses one more with
    /// `tooManyStreams`).
    public static var maximumStreams: Int { OpenSSLSRTP.maximumStreams }

    public let profile: SRTPProfile
    public let direction: Direction
    public let backend: SRTPBackend
    /// Exactly one is set. Called through optional chaining on a `let`, which borrows the object: a
    /// `switch` over an enum payload would retain and release it for every packet.
    private let openSSL: OpenSSLSRTP?
    private let libsrtp: LibSRTP?

    /// Creates a context from the master key and salt exported by DTLS (RFC 5764 section 4.2).
    /// - Parameters:
    ///   - replayWindow: packets remembered for replay detection (64 to 32767, as libsrtp accepts; the
    ///     OpenSSL backend rounds up to a multiple of 64).
    ///   - allowRepeatTransmission: lets an outbound session protect the same sequence number twice,
    ///     for retransmissions that reuse the original packet (RFC 3711 section 3.3.2 permits it).
    ///   - backend: the implementation; nil picks `SRTPBackend.preferred(for: profile)`.
    public init(
        profile: SRTPProfile, masterKey: [UInt8], masterSalt: [UInt8], direction: Direction,
        replayWindow: Int = 1024, allowRepeatTransmission: Bool = false, backend: SRTPBackend? = nil
    ) throws(SRTPError) {
        guard masterKey.count == profile.keyLength, masterSalt.count == profile.saltLength else {
            throw .invalidKeyLength(
                expected: profile.keyLength + profile.saltLength, actual: masterKey.count + masterSalt.count)
        }
        let window = max(64, min(replayWindow, 0x7FFF))
        let chosen = backend ?? .preferred(for: profile)
        switch chosen {
        case .openSSL:
            openSSL = try OpenSSLSRTP(
                profile: profile, masterKey: masterKey, masterSalt: masterSalt, outbound: direction == .outbound,
                replayWindow: window, allowRepeatTransmission: allowRepeatTransmission)
            libsrtp = nil
        case .libsrtp:
            libsrtp = try LibSRTP(
                profile: profile, masterKey: masterKey, masterSalt: masterSalt, outbound: direction == .outbound,
                replayWindow: window, allowRepeatTransmission: allowRepeatTransmission)
            openSSL = nil
        }
        self.profile = profile
        self.direction = direction
        self.backend = chosen
    }

    /// Encrypts and authenticates the RTP packet in `buffer[0..<length]` in place (RFC 3711 section
    /// 3.3, RFC 7714 section 9.1) and returns the SRTP length. `buffer` must have
    /// `profile.rtpOverhead` bytes of room after the packet.
    public func protect(rtp buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        let p = try checked(buffer, length, minimum: Self.rtpHeaderLength, room: profile.rtpOverhead)
        if let n = try openSSL?.protect(rtp: p, length: length) { return n }
        guard let n = try libsrtp?.protect(rtp: p, length: length) else { throw .cipherFailed }
        return n
    }

    /// Verifies and decrypts the SRTP packet in `buffer[0..<length]` in place; returns the RTP length.
    public func unprotect(srtp buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        let p = try checked(buffer, length, minimum: Self.rtpHeaderLength, room: 0)
        if let n = try openSSL?.unprotect(srtp: p, length: length) { return n }
        guard let n = try libsrtp?.unprotect(srtp: p, length: length) else { throw .cipherFailed }
        return n
    }

    /// Protects the RTCP compound packet in `buffer[0..<length]` (RFC 3711 section 3.4); `buffer`
    /// must have `profile.rtcpOverhead` bytes of room after it.
    public func protectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        let p = try checked(buffer, length, minimum: Self.rtcpHeaderLength, room: profile.rtcpOverhead)
        if let n = try openSSL?.protectRTCP(p, length: length) { return n }
        guard let n = try libsrtp?.protectRTCP(p, length: length) else { throw .cipherFailed }
        return n
    }

    /// Verifies and decrypts the SRTCP packet in `buffer[0..<length]`; returns the RTCP length.
    public func unprotectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        let p = try checked(buffer, length, minimum: Self.rtcpHeaderLength, room: 0)
        if let n = try openSSL?.unprotectRTCP(p, length: length) { return n }
        guard let n = try libsrtp?.unprotectRTCP(p, length: length) else { throw .cipherFailed }
        return n
    }

    /// RTP fixed header (RFC 3550 section 5.1) and RTCP common header (section 6.4.1) sizes.
    private static let rtpHeaderLength = 12
    private static let rtcpHeaderLength = 8

    /// The packet's start, once `length` is at least `minimum`, fits in the buffer with `room` after
    /// it, and in 16 bits (both backends take the length as a C int; no UDP datagram is longer).
    @inline(__always)
    private func checked(_ buffer: UnsafeMutableRawBufferPointer, _ length: Int, minimum: Int, room: Int)
        throws(SRTPError) -> UnsafeMutableRawPointer
    {
        guard let base = buffer.baseAddress, length >= minimum, length <= 0xFFFF, room <= buffer.count,
            length <= buffer.count - room
        else { throw .badLength }
        return base
    }
}
