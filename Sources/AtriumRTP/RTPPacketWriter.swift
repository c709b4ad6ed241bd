import AtriumBytes

/// Writes RTP packets, and rewrites the forwarding fields of received ones in place.
///
/// An SFU forwards a packet to each subscriber with that subscriber's SSRC, sequence number, timestamp
/// and payload type: `rewrite` changes those bytes in the caller's buffer and nothing else, so forwarding
/// allocates nothing (mediasoup's `RtpPacket::SetSsrc` and friends do the same).
public enum RTPPacketWriter {
    /// The fields a forwarder rewrites; nil leaves a field as it is.
    public struct Rewrite: Equatable, Sendable {
        public var ssrc: UInt32?
        public var sequenceNumber: UInt16?
        public var timestamp: UInt32?
        public var payloadType: UInt8?
        public var marker: Bool?

        public init(
            ssrc: UInt32? = nil, sequenceNumber: UInt16? = nil, timestamp: UInt32? = nil, payloadType: UInt8? = nil,
            marker: Bool? = nil
        ) {
            self.ssrc = ssrc
            self.sequenceNumber = sequenceNumber
            self.timestamp = timestamp
            self.payloadType = payloadType
            self.marker = marker
        }
    }

    /// Rewrites the fixed header of the RTP packet in `packet` (any contiguous mutable byte buffer: an
    /// array, a slice of a receive slab, an unsafe buffer). Throws, changing nothing, when the buffer is
    /// shorter than a fixed header or its version is not 2; a payload type above 127 is refused too.
    public static func rewrite<Buffer: MutableCollection>(
        _ packet: inout Buffer, _ fields: Rewrite
    ) throws(RTPError) where Buffer.Element == UInt8, Buffer.Index == Int {
        let failure =
            packet.withContiguousMutableStorageIfAvailable { rewriteBytes($0, fields) }
            ?? rewriteCopy(&packet, fields)
        if let failure { throw failure }
    }

    /// A buffer without contiguous storage: rewritten in a copy, which is written back.
    private static func rewriteCopy<Buffer: MutableCollection>(
        _ packet: inout Buffer, _ fields: Rewrite
    ) -> RTPError? where Buffer.Element == UInt8, Buffer.Index == Int {
        var copy = Array(packet)
        if let failure = copy.withUnsafeMutableBufferPointer({ rewriteBytes($0, fields) }) { return failure }
        for (k, byte) in copy.enumerated() { packet[packet.startIndex + k] = byte }
        return nil
    }

    /// `rewrite` for an array, written out for bytes: the forwarding path calls this one, which
    /// allocates nothing in any build (the generic entry point, called from another module or left
    /// unspecialized in a debug build, reads each byte through a witness table and a coroutine that
    /// allocates).
    public static func rewrite(_ packet: inout [UInt8], _ fields: Rewrite) throws(RTPError) {
        let failure = packet.withUnsafeMutableBufferPointer { rewriteBytes($0, fields) }
        if let failure { throw failure }
    }

    /// The same on an unsafe buffer; returns the error instead of throwing it (a closure that throws
    /// a typed error through the stdlib's generic `withUnsafe...` takes a heap context in a debug
    /// build).
    private static func rewriteBytes(_ packet: UnsafeMutableBufferPointer<UInt8>, _ fields: Rewrite) -> RTPError? {
        guard packet.count >= RTPHeader.fixedSize else { return .packetTooShort(packet.count) }
        guard packet[0] >> 6 == RTPHeader.version else { return .badVersion(packet[0] >> 6) }
        if let pt = fields.payloadType {
            guard pt <= 0x7F else { return .valueOutOfRange }
            packet[1] = packet[1] & 0x80 | pt
        }
        if let marker = fields.marker { packet[1] = packet[1] & 0x7F | (marker ? 0x80 : 0) }
        if let seq = fields.sequenceNumber {
            packet[RTPHeader.sequenceOffset] = UInt8(truncatingIfNeeded: seq >> 8)
            packet[RTPHeader.sequenceOffset + 1] = UInt8(truncatingIfNeeded: seq)
        }
        if let ts = fields.timestamp { storeWord(ts, at: RTPHeader.timestampOffset, in: packet) }
        if let ssrc = fields.ssrc { storeWord(ssrc, at: RTPHeader.ssrcOffset, in: packet) }
        return nil
    }

    private static func storeWord(_ value: UInt32, at offset: Int, in packet: UnsafeMutableBufferPointer<UInt8>) {
        packet[offset] = UInt8(truncatingIfNeeded: value >> 24)
        packet[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
        packet[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
        packet[offset + 3] = UInt8(truncatingIfNeeded: value)
    }

    /// A complete RTP packet: fixed header, CSRCs, the RFC 8285 extension block when `extensions` is not
    /// empty, and the payload. No padding is written.
    public static func packet(
        payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32, marker: Bool = false,
        csrcs: [UInt32] = [], extensions: [RTPHeaderExtensionElement] = [], payload: [UInt8]
    ) throws(RTPError) -> [UInt8] {
        guard payloadType <= 0x7F else { throw .valueOutOfRange }
        guard csrcs.count <= 15 else { throw .tooManyItems(csrcs.count) }
        var out: [UInt8] = []
        out.reserveCapacity(RTPHeader.fixedSize + csrcs.count * 4 + payload.count + 16)
        let x: UInt8 = extensions.isEmpty ? 0 : 0x10
        out.append(RTPHeader.version << 6 | x | UInt8(csrcs.count))
        out.append((marker ? 0x80 : 0) | payloadType)
        out.appendBigEndian(sequenceNumber)
        out.appendBigEndian(timestamp)
        out.appendBigEndian(ssrc)
        for c in csrcs { out.appendBigEndian(c) }
        if !extensions.isEmpty {
            let block = try RTPHeaderExtension.encode(extensions)
            out.appendBigEndian(block.profile)
            out.appendBigEndian(UInt16(truncatingIfNeeded: block.data.count / 4))
            out += block.data
        }
        out += payload
        return out
    }
}
