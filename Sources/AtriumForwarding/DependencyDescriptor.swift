/// The AV1 RTP dependency descriptor header extension (AV1 RTP specification, appendix A), read for
/// SVC layer decisions: every packet's mandatory fields, and, on the packets that carry it (key
/// frames), the template dependency structure that maps a frame's template to its spatial and
/// temporal layer. Pure; the mandatory fields allocate nothing, a structure (rare) does; truncated or
/// inconsistent input parses as nil, never traps.
public struct DependencyDescriptor: Equatable, Sendable {
    public var startOfFrame: Bool
    public var endOfFrame: Bool
    public var templateID: UInt8
    public var frameNumber: UInt16
    /// Set when this packet carries a new template dependency structure.
    public var structure: DependencyStructure?

    public init?(_ p: UnsafeRawBufferPointer) {
        guard p.count >= 3 else { return nil }
        startOfFrame = p[0] & 0x80 != 0
        endOfFrame = p[0] & 0x40 != 0
        templateID = p[0] & 0x3F
        frameNumber = UInt16(p[1]) << 8 | UInt16(p[2])
        structure = nil
        guard p.count > 3 else { return }
        var r = BitReader(p, bitOffset: 24)
        guard let present = r.bit(), r.bits(4) != nil else { return nil }
        if present {
            guard let s = DependencyStructure(reading: &r) else { return nil }
            structure = s
        }
    }

    public init?(_ bytes: [UInt8]) {
        guard let d = bytes.withUnsafeBytes({ DependencyDescriptor($0) }) else { return nil }
        self = d
    }
}

/// A template dependency structure: per template, its spatial and temporal layer; the spatial
/// layers' render sizes when given.
public struct DependencyStructure: Equatable, Sendable {
    public var templateIDOffset: UInt8
    public var decodeTargets: Int
    /// Per template (in template order): its layer.
    public var templates: [VideoLayer]
    /// Render width and height per spatial layer, bottom first; empty when not given.
    public var resolutions: [LayerChoice.Size]

    /// The number of spatial layers the templates name.
    public var spatialLayers: Int { (templates.map(\.spatial).max() ?? 0) + 1 }

    /// The layer of a frame sent with `templateID`, or nil when no template has that id.
    public func layer(templateID: UInt8) -> VideoLayer? {
        let index = (Int(templateID) + 64 - Int(templateIDOffset)) % 64
        return index < templates.count ? templates[index] : nil
    }

    init?(reading r: inout BitReader) {
        guard let offset = r.bits(6), let dtMinusOne = r.bits(5) else { return nil }
        templateIDOffset = UInt8(offset)
        let dtCount = Int(dtMinusOne) + 1
        decodeTargets = dtCount
        // Template layers: each next_layer_idc says how the next template's layer relates.
        var layers: [VideoLayer] = []
        var spatial = 0
        var temporal = 0
        while true {
            guard layers.count < 64 else { return nil }
            layers.append(VideoLayer(spatial: spatial, temporal: temporal))
            guard let next = r.bits(2) else { return nil }
            if next == 3 { break }
            if next == 1 {
                temporal += 1
            } else if next == 2 {
                temporal = 0
                spatial += 1
            }
        }
        templates = layers
        // Decode target indications, 2 bits per template and target.
        guard r.skip(2 * layers.count * dtCount) else { return nil }
        // Frame differences: each template's list ends with a 0 flag.
        for _ in layers {
            var n = 0
            while true {
                guard let follows = r.bit(), n <= 16 else { return nil }
                if !follows { break }
                guard r.skip(4) else { return nil }
                n += 1
            }
        }
        // Chains.
        guard let chains = r.nonSymmetric(dtCount + 1) else { return nil }
        if chains > 0 {
            for _ in 0..<dtCount { guard r.nonSymmetric(chains) != nil else { return nil } }
            guard r.skip(4 * layers.count * chains) else { return nil }
        }
        guard let hasResolutions = r.bit() else { return nil }
        var sizes: [LayerChoice.Size] = []
        if hasResolutions {
            let count = (layers.map(\.spatial).max() ?? 0) + 1
            for _ in 0..<count {
                guard let w = r.bits(16), let h = r.bits(16) else { return nil }
                sizes.append(LayerChoice.Size(width: Int(w) + 1, height: Int(h) + 1))
            }
        }
        resolutions = sizes
    }
}

/// Reads bits most significant first from a buffer, failing (nil) past its end.
struct BitReader {
    let p: UnsafeRawBufferPointer
    var position: Int

    init(_ p: UnsafeRawBufferPointer, bitOffset: Int) {
        self.p = p
        position = bitOffset
    }

    mutating func bit() -> Bool? { bits(1).map { $0 == 1 } }

    mutating func bits(_ n: Int) -> UInt32? {
        guard n >= 0, n <= 32, position + n <= p.count * 8 else { return nil }
        var v: UInt32 = 0
        for _ in 0..<n {
            v = v << 1 | UInt32(p[position >> 3] >> (7 - UInt8(position & 7)) & 1)
            position += 1
        }
        return v
    }

    mutating func skip(_ n: Int) -> Bool {
        guard n >= 0, position + n <= p.count * 8 else { return false }
        position += n
        return true
    }

    /// `ns(n)`: a value below `n` in the fewest bits (AV1 specification section 4.10.10).
    mutating func nonSymmetric(_ n: Int) -> Int? {
        guard n > 0 else { return nil }
        var w = 0
        var x = n
        while x != 0 {
            x >>= 1
            w += 1
        }
        let m = (1 << w) - n
        guard let v = bits(w - 1).map(Int.init) else { return nil }
        if v < m { return v }
        guard let extra = bits(1).map(Int.init) else { return nil }
        return (v << 1) - m + extra
    }
}
