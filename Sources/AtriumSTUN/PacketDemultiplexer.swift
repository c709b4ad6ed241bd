/// What arrived on a port that ICE, DTLS, SRTP and SRTCP share (RFC 7983 section 7, which updates
/// RFC 5764 section 5.1.2).
public enum MuxedPacketKind: Hashable, Sendable {
    case stun
    case zrtp
    case dtls
    case turnChannel
    case rtp
    case rtcp
    /// Empty, or a first byte no protocol on the port may start with: drop it.
    case unknown
}

/// Demultiplexing by the first byte (RFC 7983 section 7), then RTP from RTCP by the second
/// (RFC 5761 section 4).
///
/// ```
///                  +----------------+
///                  |        [0..3] -+--> forward to STUN
///                  |                |
///                  |      [16..19] -+--> forward to ZRTP
///                  |                |
///      packet -->  |      [20..63] -+--> forward to DTLS
///                  |                |
///                  |      [64..79] -+--> forward to TURN Channel
///                  |                |
///                  |    [128..191] -+--> forward to RTP/RTCP
///                  +----------------+
/// ```
public enum PacketDemultiplexer {
    static let stunRange: ClosedRange<UInt8> = 0...3
    static let zrtpRange: ClosedRange<UInt8> = 16...19
    static let dtlsRange: ClosedRange<UInt8> = 20...63
    static let turnChannelRange: ClosedRange<UInt8> = 64...79
    static let rtpRange: ClosedRange<UInt8> = 128...191
    /// RTCP packet types 192-223 (RFC 5761 section 4). RTP payload types 64-95 are not used on a muxed
    /// port, so an RTP second byte (marker bit and payload type) never falls in this range.
    static let rtcpPacketTypes: ClosedRange<UInt8> = 192...223

    /// `classify` for an array, the packet path's case: no generic dispatch, no allocation.
    public static func classify(_ packet: [UInt8]) -> MuxedPacketKind {
        // Indexed, not `first`: the generic accessor allocates in a debug build.
        guard !packet.isEmpty else { return .unknown }
        return classify(first: packet[0], second: packet.count > 1 ? packet[1] : nil)
    }

    public static func classify<C: Collection>(_ packet: C) -> MuxedPacketKind where C.Element == UInt8 {
        guard let first = packet.first else { return .unknown }
        return classify(first: first, second: packet.dropFirst().first)
    }

    static func classify(first: UInt8, second: UInt8?) -> MuxedPacketKind {
        switch first {
        case stunRange: return .stun
        case zrtpRange: return .zrtp
        case dtlsRange: return .dtls
        case turnChannelRange: return .turnChannel
        case rtpRange:
            guard let second else { return .unknown }
            return isRTCP(secondByte: second) ? .rtcp : .rtp
        default: return .unknown
        }
    }

    /// RFC 5761 section 4: the second byte of an RTCP packet is its packet type, 192-223 on a muxed port.
    public static func isRTCP(secondByte: UInt8) -> Bool { rtcpPacketTypes.contains(secondByte) }
}
