/// The VP8 payload descriptor (RFC 7741 section 4.2), read for layer decisions and rewritten in place
/// so that a viewer's decoder sees one continuous stream across simulcast switches:
///
/// ```
///  X R N S R PID        (S: start of a partition, PID: partition index)
///  I L T K RSV          (when X)
///  M PictureID (7 or 15 bits)                 (when I; M: 15 bits)
///  TL0PICIDX                                  (when L)
///  TID(2) Y KEYIDX(5)                         (when T or K; Y: layer sync)
/// ```
///
/// Pure and allocation-free; a truncated descriptor parses as nil, never traps.
public struct VP8Descriptor: Equatable, Sendable {
    public var startOfPartition: Bool
    public var partitionIndex: UInt8
    public var pictureID: UInt16?
    /// The picture ID takes 15 bits (M set), else 7.
    public var longPictureID: Bool
    public var tl0PictureIndex: UInt8?
    public var temporalLayer: UInt8?
    public var layerSync: Bool
    /// The descriptor's length: the VP8 payload starts there.
    public var length: Int
    /// Where the picture ID and TL0PICIDX sit, for the rewrite.
    var pictureIDOffset: Int?
    var tl0Offset: Int?

    /// Whether the packet starts a frame: the start of partition 0.
    public var startsFrame: Bool { startOfPartition && partitionIndex == 0 }

    public init?(_ p: UnsafeRawBufferPointer) {
        // Indexed, not `first`: the generic accessor allocates in a debug build.
        guard !p.isEmpty else { return nil }
        let first = p[0]
        startOfPartition = first & 0x10 != 0
        partitionIndex = first & 0x07
        pictureID = nil
        longPictureID = false
        tl0PictureIndex = nil
        temporalLayer = nil
        layerSync = false
        pictureIDOffset = nil
        tl0Offset = nil
        var i = 1
        if first & 0x80 != 0 {
            guard i < p.count else { return nil }
            let ext = p[i]
            i += 1
            if ext & 0x80 != 0 {
                guard i < p.count else { return nil }
                pictureIDOffset = i
                if p[i] & 0x80 != 0 {
                    guard i + 1 < p.count else { return nil }
                    longPictureID = true
                    pictureID = UInt16(p[i] & 0x7F) << 8 | UInt16(p[i + 1])
                    i += 2
                } else {
                    pictureID = UInt16(p[i])
                    i += 1
                }
            }
            if ext & 0x40 != 0 {
                guard i < p.count else { return nil }
                tl0Offset = i
                tl0PictureIndex = p[i]
                i += 1
            }
            if ext & 0x30 != 0 {
                guard i < p.count else { return nil }
                if ext & 0x20 != 0 {
                    temporalLayer = p[i] >> 6
                    layerSync = p[i] & 0x20 != 0
                }
                i += 1
            }
        }
        length = i
        guard length <= p.count else { return nil }
    }

    public init?(_ bytes: [UInt8]) {
        guard let d = bytes.withUnsafeBytes({ VP8Descriptor($0) }) else { return nil }
        self = d
    }
}

/// Keeps a consumer's VP8 picture IDs and TL0PICIDX continuous across the streams it forwards (each
/// simulcast stream counts its own): after a switch, the first picture of the new stream follows the
/// newest one sent. Rewrites in place, keeping each field's width (a 7-bit picture ID wraps at 128).
/// Pure value, one per consumer.
///
/// "Newest", not "last": a packet of the current stream older than one already sent (a publisher's
/// retransmission, including the RTX padding Chromium sends as old packets again, or a reordered
/// one) keeps its rewrite but does not move the count back. Else a switch right after it would
/// number the new stream's pictures and base-layer indices behind ones the viewer already has, and
/// Chromium's VP8 reference finder drops them ("already received") until its own key-frame request.
public struct VP8Rewriter: Equatable, Sendable {
    /// What is added to the picture ID and TL0PICIDX of the stream forwarded now.
    public private(set) var pictureOffset: UInt16 = 0
    public private(set) var tl0Offset: UInt8 = 0
    /// The newest picture ID (in the width it was written) and TL0PICIDX sent.
    public private(set) var lastPicture: UInt16?
    public private(set) var lastTL0: UInt8?
    private var lastPictureLong = true
    private var resync = true
    /// The input picture ID of the last picture dropped (a temporal layer above the viewer's).
    private var lastDropped: UInt16?

    public init() {}

    /// The next packet comes from another stream (a layer switch) or starts the consumer.
    public mutating func sync() {
        resync = true
        lastDropped = nil
    }

    /// A packet of the forwarded stream is not sent (its temporal layer is above the viewer's): the
    /// pictures after it move down by one, so the viewer sees consecutive picture IDs and never waits
    /// for a picture it will not get (libwebrtc's reference finder holds a frame while an earlier
    /// picture ID is missing; mediasoup drops the picture ID the same way). TL0PICIDX needs nothing:
    /// only base-layer pictures count it, and the base layer is always sent.
    public mutating func drop(_ d: VP8Descriptor) {
        guard !resync, let p = d.pictureID else { return }
        // Each picture once, whatever its packets' order: only a newer one than the last dropped.
        if let last = lastDropped, !Self.isNewer(p, than: last, bits: d.longPictureID ? 15 : 7) { return }
        lastDropped = p
        pictureOffset &-= 1
    }

    /// Rewrites the descriptor at the start of `payload`, parsed as `d`.
    public mutating func rewrite(_ payload: UnsafeMutableRawBufferPointer, _ d: VP8Descriptor) {
        if resync {
            resync = false
            if let p = d.pictureID { pictureOffset = lastPicture.map { $0 &+ 1 &- p } ?? 0 }
            if let t = d.tl0PictureIndex {
                // A base-layer picture continues the count; a higher-layer one reuses the last index.
                tl0Offset = lastTL0.map { $0 &+ ((d.temporalLayer ?? 0) == 0 ? 1 : 0) &- t } ?? 0
            }
        }
        let written = Self.apply(payload, d, pictureOffset: pictureOffset, tl0Offset: tl0Offset)
        if let p = written.picture {
            let bits: UInt16 = d.longPictureID ? 15 : 7
            // Another width than the last one's: the new one counts from here.
            if let last = lastPicture, lastPictureLong == d.longPictureID {
                if Self.isNewer(p, than: last, bits: bits) { lastPicture = p }
            } else {
                lastPicture = p
            }
            lastPictureLong = d.longPictureID
        }
        if let t = written.tl0 {
            if let last = lastTL0 {
                if Self.isNewer(UInt16(t), than: UInt16(last), bits: 8) { lastTL0 = t }
            } else {
                lastTL0 = t
            }
        }
    }

    /// Whether `a` follows `b` in a count of `bits` bits that wraps (less than half the range ahead).
    static func isNewer(_ a: UInt16, than b: UInt16, bits: UInt16) -> Bool {
        let mask: UInt16 = (1 << bits) &- 1
        let ahead = (a &- b) & mask
        return ahead != 0 && ahead < (mask >> 1) &+ 1
    }

    /// Writes a descriptor's fields shifted by the given offsets (a retransmission is rewritten as its
    /// first copy was); returns the values written.
    @discardableResult
    public static func apply(
        _ payload: UnsafeMutableRawBufferPointer, _ d: VP8Descriptor, pictureOffset: UInt16, tl0Offset: UInt8
    ) -> (picture: UInt16?, tl0: UInt8?) {
        var lastPicture: UInt16?
        var lastTL0: UInt8?
        if let p = d.pictureID, let at = d.pictureIDOffset {
            let out = p &+ pictureOffset
            if d.longPictureID {
                let v = out & 0x7FFF
                payload[at] = 0x80 | UInt8(v >> 8)
                payload[at + 1] = UInt8(v & 0xFF)
                lastPicture = v
            } else {
                let v = out & 0x7F
                payload[at] = UInt8(v)
                lastPicture = v
            }
        }
        if let t = d.tl0PictureIndex, let at = d.tl0Offset {
            let out = t &+ tl0Offset
            payload[at] = out
            lastTL0 = out
        }
        return (lastPicture, lastTL0)
    }
}
