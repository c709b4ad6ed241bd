/// What a relay link between two nodes carries, inside the payload of the link's own SRTP packets
/// (one SSRC per direction, its sequence numbers the link's: SRTP's replay window and the loss count
/// run on them, whatever the relayed packets' own numbers). The payload type says what follows:
///
/// | PT | payload |
/// |---|---|
/// | 96 media | 0, kind, stream, flags (bit 0: recovered), TWCC extension id, 3 zero bytes, tag (u32), RTP timestamp (u32), NTP (f64 bits, u64): 24 bytes; then the relayed packet (empty for a sender report) |
/// | 97 feedback | 0, kind (0 key frame, 1 wanted), stream or mask, 0, tag (u32): 8 bytes |
/// | 98 ping, 99 pong | the sender's clock in nanoseconds (u64), echoed by the pong: the link's RTT |
///
/// Big-endian. The tag (the pipe producer's, unique on the owner) says which pipe (`PipeLink`) a
/// packet or a request belongs to at either end.
enum RelayFrame {
    static let media: UInt8 = 96
    static let feedback: UInt8 = 97
    static let ping: UInt8 = 98
    static let pong: UInt8 = 99
    static let mediaHeaderSize = 24
    static let feedbackSize = 8

    /// The media header of a relayed packet, written into `out` at `at` (which has room).
    static func writeMedia(_ h: PipePacket, into out: UnsafeMutableRawBufferPointer, at: Int) {
        out[at] = 0
        out[at + 1] = h.kind.rawValue
        out[at + 2] = h.stream
        out[at + 3] = h.recovered ? 1 : 0
        out[at + 4] = h.twccExtensionID
        out[at + 5] = 0
        out[at + 6] = 0
        out[at + 7] = 0
        put32(h.tag, out, at + 8)
        put32(h.rtpTimestamp, out, at + 12)
        put64(h.ntp.bitPattern, out, at + 16)
    }

    /// The pipe header and where the packet lies, or nil for a payload that is not one.
    static func readMedia(_ p: UnsafeRawBufferPointer) -> (header: PipePacket, packet: Range<Int>)? {
        guard p.count >= mediaHeaderSize, let kind = PipePacket.Kind(rawValue: p[1]), p[3] <= 1 else { return nil }
        var h = PipePacket(kind: kind, tag: get32(p, 8), stream: p[2])
        h.recovered = p[3] == 1
        h.twccExtensionID = p[4]
        h.rtpTimestamp = get32(p, 12)
        h.ntp = Double(bitPattern: get64(p, 16))
        guard h.ntp.isFinite else { return nil }
        return (h, mediaHeaderSize..<p.count)
    }

    static func writeFeedback(_ f: PipeFeedback, into out: UnsafeMutableRawBufferPointer, at: Int) {
        out[at] = 0
        switch f.kind {
        case .keyFrame(let stream):
            out[at + 1] = 0
            out[at + 2] = UInt8(truncatingIfNeeded: stream)
        case .wanted(let mask):
            out[at + 1] = 1
            out[at + 2] = mask
        }
        out[at + 3] = 0
        put32(f.tag, out, at + 4)
    }

    static func readFeedback(_ p: UnsafeRawBufferPointer) -> PipeFeedback? {
        guard p.count == feedbackSize else { return nil }
        let kind: PipeFeedback.Kind
        switch p[1] {
        case 0: kind = .keyFrame(stream: Int(p[2]))
        case 1: kind = .wanted(mask: p[2])
        default: return nil
        }
        return PipeFeedback(tag: get32(p, 4), kind: kind)
    }

    static func put32(_ v: UInt32, _ out: UnsafeMutableRawBufferPointer, _ at: Int) {
        for i in 0..<4 { out[at + i] = UInt8(truncatingIfNeeded: v >> (24 - 8 * UInt32(i))) }
    }

    static func put64(_ v: UInt64, _ out: UnsafeMutableRawBufferPointer, _ at: Int) {
        for i in 0..<8 { out[at + i] = UInt8(truncatingIfNeeded: v >> (56 - 8 * UInt64(i))) }
    }

    // Plain loops: a `reduce` with a closure allocates per call in a debug build (the packet path).
    static func get32(_ p: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        var v: UInt32 = 0
        for i in 0..<4 { v = v << 8 | UInt32(p[at + i]) }
        return v
    }

    static func get64(_ p: UnsafeRawBufferPointer, _ at: Int) -> UInt64 {
        var v: UInt64 = 0
        for i in 0..<8 { v = v << 8 | UInt64(p[at + i]) }
        return v
    }
}
