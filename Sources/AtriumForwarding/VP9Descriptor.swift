/// The VP9 payload descriptor (RFC 9628 section 4.2), read for SVC layer decisions:
///
/// ```
///  I P L F B E V Z                      (I: picture ID, P: inter-picture predicted, L: layer indices,
///  M PictureID (7 or 15 bits)  (when I)  F: flexible mode, B/E: start/end of a layer frame,
///  TID(3) U SID(3) D           (when L)  V: scalability structure, Z: not a reference upward;
///  TL0PICIDX                   (L, !F)   U: switching-up point, D: inter-layer dependency)
///  P_DIFF(7) N                 (P and F, up to 3)
///  SS                          (when V)
/// ```
///
/// Pure and allocation-free; a truncated descriptor parses as nil, never traps.
public struct VP9Descriptor: Equatable, Sendable {
    public var interPicturePredicted: Bool
    public var flexible: Bool
    public var startOfFrame: Bool
    public var endOfFrame: Bool
    public var pictureID: UInt16?
    public var temporalLayer: UInt8
    public var switchingUp: Bool
    public var spatialLayer: UInt8
    public var interLayerDependency: Bool
    public var tl0PictureIndex: UInt8?
    /// Where the scalability structure starts (`VP9Scalability`), when present.
    public var scalabilityOffset: Int?
    /// The descriptor's length up to the scalability structure.
    public var length: Int

    /// A layer frame that starts a picture: its bottom spatial layer's first packet.
    public var startsPicture: Bool { startOfFrame && spatialLayer == 0 }
    /// The first packet of a key picture: not predicted from an earlier picture.
    public var startsKeyPicture: Bool { startsPicture && !interPicturePredicted }

    public init?(_ p: UnsafeRawBufferPointer) {
        // Indexed, not `first`: the generic accessor allocates in a debug build.
        guard !p.isEmpty else { return nil }
        let first = p[0]
        interPicturePredicted = first & 0x40 != 0
        flexible = first & 0x10 != 0
        startOfFrame = first & 0x08 != 0
        endOfFrame = first & 0x04 != 0
        pictureID = nil
        temporalLayer = 0
        switchingUp = false
        spatialLayer = 0
        interLayerDependency = false
        tl0PictureIndex = nil
        scalabilityOffset = nil
        var i = 1
        if first & 0x80 != 0 {
            guard i < p.count else { return nil }
            if p[i] & 0x80 != 0 {
                guard i + 1 < p.count else { return nil }
                pictureID = UInt16(p[i] & 0x7F) << 8 | UInt16(p[i + 1])
                i += 2
            } else {
                pictureID = UInt16(p[i])
                i += 1
            }
        }
        if first & 0x20 != 0 {
            guard i < p.count else { return nil }
            temporalLayer = p[i] >> 5
            switchingUp = p[i] & 0x10 != 0
            spatialLayer = p[i] >> 1 & 0x07
            interLayerDependency = p[i] & 0x01 != 0
            i += 1
            if !flexible {
                guard i < p.count else { return nil }
                tl0PictureIndex = p[i]
                i += 1
            }
        }
        if flexible && interPicturePredicted {
            // Up to three reference differences, each with N set when another follows.
            var n = 0
            while true {
                guard i < p.count, n < 3 else { return nil }
                let more = p[i] & 0x01 != 0
                i += 1
                n += 1
                if !more { break }
            }
        }
        if first & 0x02 != 0 {
            guard i < p.count else { return nil }
            scalabilityOffset = i
        }
        length = i
    }

    public init?(_ bytes: [UInt8]) {
        guard let d = bytes.withUnsafeBytes({ VP9Descriptor($0) }) else { return nil }
        self = d
    }
}

/// The scalability structure of a VP9 payload descriptor (RFC 9628 section 4.2.1): how many spatial
/// layers the stream has and, when given, each one's resolution, bottom first. Sent with key
/// pictures; read only then.
public enum VP9Scalability {
    /// The layers' sizes (0 by 0 each when the structure gives no resolutions), or nil when the
    /// structure is truncated.
    public static func layers(_ p: UnsafeRawBufferPointer, at offset: Int) -> [LayerChoice.Size]? {
        guard offset >= 0, offset < p.count else { return nil }
        let head = p[offset]
        let count = Int(head >> 5) + 1
        guard head & 0x10 != 0 else {
            return [LayerChoice.Size](repeating: LayerChoice.Size(width: 0, height: 0), count: count)
        }
        guard offset + 1 + count * 4 <= p.count else { return nil }
        return (0..<count).map { k in
            let at = offset + 1 + k * 4
            return LayerChoice.Size(
                width: Int(p[at]) << 8 | Int(p[at + 1]), height: Int(p[at + 2]) << 8 | Int(p[at + 3]))
        }
    }
}
