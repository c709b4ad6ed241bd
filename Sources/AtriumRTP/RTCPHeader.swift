import AtriumBytes

/// The RTCP packet types this module reads (RFC 3550 section 12.1, RFC 4585 section 6.1).
public enum RTCPPacketType {
    public static let senderReport: UInt8 = 200
    public static let receiverReport: UInt8 = 201
    public static let sourceDescription: UInt8 = 202
    public static let goodbye: UInt8 = 203
    public static let application: UInt8 = 204
    /// Transport-layer feedback (RFC 4585 section 6.2): generic NACK, transport-wide CC.
    public static let transportFeedback: UInt8 = 205
    /// Payload-specific feedback (RFC 4585 section 6.3): PLI, FIR, REMB.
    public static let payloadFeedback: UInt8 = 206
}

/// The common header every RTCP packet starts with (RFC 3550 section 6.4.1).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|  RC/FMT |      PT       |             length            |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// The length is the packet's size in 32-bit words minus one, header and padding included.
public struct RTCPHeader: Equatable, Sendable {
    public static let size = 4
    /// The 5-bit count (RC, SC) or feedback message type (FMT).
    public static let maxCount: UInt8 = 31

    public var padding: Bool
    public var count: UInt8
    public var packetType: UInt8
    /// The length field: 32-bit words minus one.
    public var length: UInt16

    public init(padding: Bool = false, count: UInt8, packetType: UInt8, length: UInt16) {
        self.padding = padding
        self.count = count
        self.packetType = packetType
        self.length = length
    }

    /// The packet's size in bytes, header and padding included.
    public var packetSize: Int { (Int(length) + 1) * 4 }

    func write(into out: inout [UInt8]) {
        out.append(RTPHeader.version << 6 | (padding ? 0x20 : 0) | (count & Self.maxCount))
        out.append(packetType)
        out.appendBigEndian(length)
    }
}

/// Both feedback families start with the sender's and the media source's SSRC (RFC 4585 section 6.1).
///
/// ```
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|   FMT   |       PT      |          length               |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                  SSRC of packet sender                        |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                  SSRC of media source                         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// :            Feedback Control Information (FCI)                 :
/// ```
public struct FeedbackSources: Equatable, Sendable {
    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32

    public init(senderSSRC: UInt32, mediaSSRC: UInt32) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
    }

    init(_ r: inout ByteReader) throws(RTPError) {
        senderSSRC = try r.readUInt32()
        mediaSSRC = try r.readUInt32()
    }

    func write(into out: inout [UInt8]) {
        out.appendBigEndian(senderSSRC)
        out.appendBigEndian(mediaSSRC)
    }
}
