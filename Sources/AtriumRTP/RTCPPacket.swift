import AtriumBytes

/// One packet of an RTCP compound packet, decoded by type.
public enum RTCPPacket: Equatable, Sendable {
    case senderReport(SenderReport)
    case receiverReport(ReceiverReport)
    case sourceDescription(SourceDescription)
    case goodbye(Goodbye)
    case nack(GenericNACK)
    case transportWideFeedback(TransportWideFeedback)
    case pictureLossIndication(PictureLossIndication)
    case fullIntraRequest(FullIntraRequest)
    case receiverEstimatedMaximumBitrate(ReceiverEstimatedMaximumBitrate)
    /// APP, XR, and feedback messages this module does not decode, kept as received (padding removed).
    case other(header: RTCPHeader, body: [UInt8])
}

/// Compound RTCP (RFC 3550 section 6.1): packets back to back in one datagram, each with its own length.
/// Reduced-size RTCP (RFC 5506) is accepted: the first packet need not be a report.
public enum RTCPCompound {
    /// Parses every packet; one malformed packet fails the whole datagram, as RFC 3550 section A.2 asks.
    public static func parse(_ bytes: [UInt8]) throws(RTPError) -> [RTCPPacket] {
        guard !bytes.isEmpty else { throw .emptyCompound }
        var packets: [RTCPPacket] = []
        var offset = 0
        while offset < bytes.count {
            let remaining = bytes.count - offset
            guard remaining >= RTCPHeader.size else { throw .rtcpHeaderTruncated(remaining: remaining) }
            let b0 = bytes[offset]
            guard b0 >> 6 == RTPHeader.version else { throw .badVersion(b0 >> 6) }
            let length = UInt16(bytes[offset + 2]) << 8 | UInt16(bytes[offset + 3])
            let header = RTCPHeader(
                padding: b0 & 0x20 != 0, count: b0 & RTCPHeader.maxCount, packetType: bytes[offset + 1],
                length: length)
            guard header.packetSize <= remaining else {
                throw .lengthPastEnd(declared: header.packetSize, available: remaining)
            }
            var end = offset + header.packetSize
            if header.padding {
                let pad = Int(bytes[end - 1])
                guard pad >= 1, pad <= header.packetSize - RTCPHeader.size else { throw .badPadding(pad) }
                end -= pad
            }
            var body = ByteReader(bytes, from: offset + RTCPHeader.size, to: end, packetType: header.packetType)
            packets.append(try decode(header, &body))
            offset += header.packetSize
        }
        return packets
    }

    private static func decode(_ h: RTCPHeader, _ r: inout ByteReader) throws(RTPError) -> RTCPPacket {
        switch (h.packetType, h.count) {
        case (RTCPPacketType.senderReport, _): return .senderReport(try SenderReport(count: h.count, &r))
        case (RTCPPacketType.receiverReport, _): return .receiverReport(try ReceiverReport(count: h.count, &r))
        case (RTCPPacketType.sourceDescription, _):
            return .sourceDescription(try SourceDescription(count: h.count, &r))
        case (RTCPPacketType.goodbye, _): return .goodbye(try Goodbye(count: h.count, &r))
        case (RTCPPacketType.transportFeedback, GenericNACK.format): return .nack(try GenericNACK(&r))
        case (RTCPPacketType.transportFeedback, TransportWideFeedback.format):
            return .transportWideFeedback(try TransportWideFeedback(&r))
        case (RTCPPacketType.payloadFeedback, PictureLossIndication.format):
            return .pictureLossIndication(try PictureLossIndication(&r))
        case (RTCPPacketType.payloadFeedback, FullIntraRequest.format):
            return .fullIntraRequest(try FullIntraRequest(&r))
        case (RTCPPacketType.payloadFeedback, ReceiverEstimatedMaximumBitrate.format):
            // Format 15 is any application-layer feedback (RFC 4585 section 6.4); only REMB is decoded.
            if ReceiverEstimatedMaximumBitrate.isREMB(r) {
                return .receiverEstimatedMaximumBitrate(try ReceiverEstimatedMaximumBitrate(&r))
            }
            return .other(header: h, body: try r.readBytes(r.remaining))
        default:
            return .other(header: h, body: try r.readBytes(r.remaining))
        }
    }

    /// Writes packets back to back. Lengths are computed; no padding is added.
    public static func serialize(_ packets: [RTCPPacket]) throws(RTPError) -> [UInt8] {
        var out: [UInt8] = []
        for p in packets { try p.write(into: &out) }
        return out
    }
}

extension RTCPPacket {
    /// Appends this packet (header and body) to `out`.
    public func write(into out: inout [UInt8]) throws(RTPError) {
        var body: [UInt8] = []
        let type: UInt8
        let count: Int
        switch self {
        case .senderReport(let p): (type, count) = (RTCPPacketType.senderReport, try p.write(into: &body))
        case .receiverReport(let p): (type, count) = (RTCPPacketType.receiverReport, try p.write(into: &body))
        case .sourceDescription(let p):
            (type, count) = (RTCPPacketType.sourceDescription, try p.write(into: &body))
        case .goodbye(let p): (type, count) = (RTCPPacketType.goodbye, try p.write(into: &body))
        case .nack(let p): (type, count) = (RTCPPacketType.transportFeedback, try p.write(into: &body))
        case .transportWideFeedback(let p):
            (type, count) = (RTCPPacketType.transportFeedback, try p.write(into: &body))
        case .pictureLossIndication(let p): (type, count) = (RTCPPacketType.payloadFeedback, p.write(into: &body))
        case .fullIntraRequest(let p): (type, count) = (RTCPPacketType.payloadFeedback, p.write(into: &body))
        case .receiverEstimatedMaximumBitrate(let p):
            (type, count) = (RTCPPacketType.payloadFeedback, try p.write(into: &body))
        case .other(let h, let b):
            body = b
            body.padToWord()
            (type, count) = (h.packetType, Int(h.count))
        }
        guard count <= Int(RTCPHeader.maxCount) else { throw .tooManyItems(count) }
        let words = body.count / 4
        guard body.count % 4 == 0, words <= Int(UInt16.max) else { throw .tooManyItems(body.count) }
        RTCPHeader(count: UInt8(count), packetType: type, length: UInt16(words)).write(into: &out)
        out += body
    }

    /// This packet alone as bytes.
    public func serialized() throws(RTPError) -> [UInt8] {
        var out: [UInt8] = []
        try write(into: &out)
        return out
    }
}
