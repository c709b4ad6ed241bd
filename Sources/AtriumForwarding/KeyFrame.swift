/// Video codecs whose key frames the forwarding core recognises in RTP payloads.
public enum VideoCodec: String, Sendable, CaseIterable {
    case vp8 = "VP8"
    case vp9 = "VP9"
    case h264 = "H264"
    case av1 = "AV1"

    public init?(encodingName: String) {
        guard let c = VideoCodec(rawValue: encodingName.uppercased()) else { return nil }
        self = c
    }
}

/// Whether an RTP payload starts a key frame, so a new consumer (or one switching layers) starts there.
/// Pure and allocation-free: it reads the payload descriptor of each codec's RTP format.
public enum KeyFrame {
    public static func starts(_ payload: UnsafeRawBufferPointer, codec: VideoCodec) -> Bool {
        switch codec {
        case .vp8: vp8(payload)
        case .vp9: vp9(payload)
        case .h264: h264(payload)
        case .av1: av1(payload)
        }
    }

    public static func starts(_ payload: [UInt8], codec: VideoCodec) -> Bool {
        payload.withUnsafeBytes { starts($0, codec: codec) }
    }

    /// RFC 7741 section 4.2: the payload descriptor, then (on a partition start, PID 0) the VP8 frame
    /// header whose lowest bit is 0 for a key frame (RFC 6386 section 9.1).
    ///
    /// ```
    /// X R N S R PID | I L T K RSV | [M PictureID(7 or 15)] | [TL0PICIDX] | [TID Y KEYIDX]
    /// ```
    static func vp8(_ p: UnsafeRawBufferPointer) -> Bool {
        guard let d = VP8Descriptor(p), d.startsFrame, d.length < p.count else { return false }
        return p[d.length] & 0x01 == 0
    }

    /// draft-ietf-payload-vp9 section 4.2: `I P L F B E V Z`; a packet that begins a frame (B) not
    /// predicted from another (P = 0) starts a key frame.
    static func vp9(_ p: UnsafeRawBufferPointer) -> Bool {
        // Indexed, not `first`: the generic accessor allocates in a debug build.
        guard !p.isEmpty else { return false }
        let first = p[0]
        let predicted = first & 0x40 != 0
        let beginsFrame = first & 0x08 != 0
        return !predicted && beginsFrame
    }

    /// RFC 6184 section 5: an IDR slice (5) or a sequence parameter set (7), alone, in a STAP-A (24),
    /// or at the start of a FU-A (28).
    static func h264(_ p: UnsafeRawBufferPointer) -> Bool {
        // Indexed, not `first`: the generic accessor allocates in a debug build.
        guard !p.isEmpty else { return false }
        let first = p[0]
        let isKey: (UInt8) -> Bool = { $0 == 5 || $0 == 7 }
        switch first & 0x1F {
        case 1...23:
            return isKey(first & 0x1F)
        case 24:
            var i = 1
            while i + 2 < p.count {
                let size = Int(p[i]) << 8 | Int(p[i + 1])
                let nal = i + 2
                if size == 0 || nal >= p.count { return false }
                if isKey(p[nal] & 0x1F) { return true }
                i = nal + size
            }
            return false
        case 28:
            guard p.count >= 2 else { return false }
            return p[1] & 0x80 != 0 && isKey(p[1] & 0x1F)
        default:
            return false
        }
    }

    /// AV1 RTP specification section 4.4: the aggregation header's N bit marks the first packet of a
    /// coded video sequence, which starts with a key frame.
    static func av1(_ p: UnsafeRawBufferPointer) -> Bool {
        // Indexed, not `first`: the generic accessor allocates in a debug build.
        guard !p.isEmpty else { return false }
        let first = p[0]
        return first & 0x08 != 0 && first & 0x80 == 0
    }
}
