import AtriumBytes

/// REMB: receiver estimated maximum bitrate (draft-alvestrand-rmcat-remb-03 section 2.2), an
/// application-layer feedback message, PT 206, FMT 15, identified by the ASCII "REMB".
///
/// ```
/// |  Unique identifier 'R' 'E' 'M' 'B'                            |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  Num SSRC     | BR Exp    |  BR Mantissa                      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |   SSRC feedback                                               |
/// ```
/// The bitrate in bits per second is mantissa (18 bits) times 2 to the exponent (6 bits).
public struct ReceiverEstimatedMaximumBitrate: Equatable, Sendable {
    public static let format: UInt8 = 15
    static let identifier: [UInt8] = Array("REMB".utf8)
    static let identifierOffset = 8
    static let mantissaBits = 18
    static let maxMantissa: UInt64 = (1 << 18) - 1

    public var senderSSRC: UInt32
    /// Bits per second. Written rounded down to what an 18-bit mantissa can express.
    public var bitrate: UInt64
    public var ssrcs: [UInt32]

    public init(senderSSRC: UInt32, bitrate: UInt64, ssrcs: [UInt32]) {
        self.senderSSRC = senderSSRC
        self.bitrate = bitrate
        self.ssrcs = ssrcs
    }

    /// Whether an application-layer feedback body carries the "REMB" identifier.
    static func isREMB(_ r: ByteReader) -> Bool {
        var probe = r
        guard (try? probe.skip(identifierOffset)) != nil, let id = try? probe.readBytes(4) else { return false }
        return id == identifier
    }

    init(_ r: inout ByteReader) throws(RTPError) {
        senderSSRC = try FeedbackSources(&r).senderSSRC
        guard try r.readBytes(4) == Self.identifier else { throw .malformed(packetType: r.packetType) }
        let count = Int(try r.readUInt8())
        let packed = try r.readUInt24()
        let exponent = Int(packed >> Self.mantissaBits)
        let mantissa = UInt64(packed) & Self.maxMantissa
        // Exponents up to 63 would overflow 64 bits: saturate instead.
        if mantissa == 0 {
            bitrate = 0
        } else if exponent > mantissa.leadingZeroBitCount {
            bitrate = UInt64.max
        } else {
            bitrate = mantissa << UInt64(exponent)
        }
        guard r.remaining >= count * 4 else { throw .truncated(packetType: r.packetType) }
        ssrcs = []
        for _ in 0..<count { ssrcs.append(try r.readUInt32()) }
    }

    /// The 6-bit exponent and 18-bit mantissa for `bitrate`, rounding down.
    static func encode(_ bitrate: UInt64) -> (exponent: UInt8, mantissa: UInt32) {
        var mantissa = bitrate
        var exponent: UInt8 = 0
        while mantissa > maxMantissa {
            mantissa >>= 1
            exponent += 1
        }
        return (exponent, UInt32(truncatingIfNeeded: mantissa))
    }

    func write(into out: inout [UInt8]) throws(RTPError) -> Int {
        guard ssrcs.count <= 255 else { throw .tooManyItems(ssrcs.count) }
        FeedbackSources(senderSSRC: senderSSRC, mediaSSRC: 0).write(into: &out)
        out += Self.identifier
        let (exponent, mantissa) = Self.encode(bitrate)
        out.appendBigEndian(UInt32(ssrcs.count) << 24 | UInt32(exponent) << 18 | mantissa)
        for s in ssrcs { out.appendBigEndian(s) }
        return Int(Self.format)
    }
}
