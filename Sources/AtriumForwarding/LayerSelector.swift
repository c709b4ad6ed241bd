/// One layer of a video track: a spatial layer (a simulcast stream, or an SVC spatial layer) and a
/// temporal layer within it. Higher is better in both.
public struct VideoLayer: Hashable, Sendable, CustomStringConvertible {
    public var spatial: Int
    public var temporal: Int

    public init(spatial: Int, temporal: Int) {
        self.spatial = spatial
        self.temporal = temporal
    }

    public var description: String { "S\(spatial)T\(temporal)" }
}

/// The per-packet decision of a consumer of a layered track, as mediasoup's `SimulcastConsumer` and
/// LiveKit's video layer selector make it: which packets of which stream go to this viewer. Pure; the
/// owner (one consumer on the media worker) applies the decisions to its `SeqManager` and
/// `TimestampMapper`:
///
/// - `forward(switched: true)`: the first packet of a new spatial stream (or the very first): the
///   owner re-syncs its sequence numbers and timeline to it, so the output stays continuous.
/// - `drop(.temporalAboveTarget)`: a packet of the current stream the viewer does not get: the owner
///   tells its `SeqManager`, so the output stays gap-free.
/// - other drops concern another stream's sequence space and change nothing.
///
/// Spatial switches, up or down, happen on a key frame of the target stream (simulcast streams are
/// independent); until then the current stream goes on, so the viewer never freezes during a switch.
/// Temporal switches happen at frame starts: down at any one, up only at a layer-sync point (VP8's
/// Y bit, a base-layer frame, a key frame), where the decoder has every frame the next one refers to.
public struct LayerSelector: Equatable, Sendable {
    public enum DropReason: Equatable, Sendable {
        /// Nothing forwarded yet and this is not a key frame of a stream at or below the target.
        case waitingKeyFrame
        /// A packet of a spatial stream that is not the one forwarded.
        case otherStream
        /// A packet of the forwarded stream in a temporal layer above what the viewer gets.
        case temporalAboveTarget
    }

    public enum Decision: Equatable, Sendable {
        case forward(switched: Bool)
        case drop(DropReason)
    }

    /// What the viewer should get: its quality, viewport and bandwidth say so (`select`).
    public private(set) var target: VideoLayer
    /// The stream forwarded now, and its temporal layer; nil before the first key frame.
    public private(set) var current: VideoLayer?

    public init(target: VideoLayer) {
        self.target = target
    }

    /// Sets the layer to reach, clamped to what arrives: the best spatial stream at or below
    /// `desired.spatial` among `available` (the lowest available one when none is that low). Returns
    /// the spatial stream a key frame is needed from (to ask the publisher, throttled by the owner),
    /// or nil when no spatial switch is pending. A current stream that stopped arriving is left at
    /// once for the next one down, without waiting for feedback.
    ///
    /// `bounded`: `desired` is a bandwidth ceiling (the viewer's allocation), which no stream may
    /// exceed: when none at or below it arrives, the target stays there and nothing new starts until
    /// one does (a resumed viewer on a slow link is not started on a higher stream while the low one
    /// is missing for a moment).
    public mutating func select(desired: VideoLayer, available: Set<Int>, bounded: Bool = false) -> Int? {
        let within = available.filter({ $0 <= desired.spatial }).max()
        guard let best = within ?? (bounded ? nil : available.min()) else {
            target = desired
            return nil
        }
        target = VideoLayer(spatial: best, temporal: desired.temporal)
        if let c = current, !available.contains(c.spatial) { current = nil }
        return current?.spatial == target.spatial ? nil : target.spatial
    }

    /// A bandwidth ceiling below the stream forwarded: that stream is left at once instead of at the
    /// target's key frame (the viewer holds its last picture meanwhile, one round trip to the
    /// publisher), since every packet of it only deepens the congestion the ceiling answers and
    /// delays the key frame behind it. Returns whether it was left.
    public mutating func leave(above ceiling: Int) -> Bool {
        guard let c = current, c.spatial > ceiling else { return false }
        current = nil
        return true
    }

    /// Forgets the stream forwarded (after a pause): the next key frame at or below the target starts
    /// the viewer again.
    public mutating func restart() {
        current = nil
    }

    /// Decides one packet: its spatial stream, temporal layer (nil when the payload says none: one
    /// layer), whether it starts a key frame, whether it starts a frame, and whether that frame is a
    /// temporal layer-sync point.
    public mutating func decide(
        spatial: Int, temporal: Int?, keyFrame: Bool, frameStart: Bool, layerSync: Bool
    ) -> Decision {
        let tid = temporal ?? 0
        guard let c = current else {
            // The first picture: a key frame of any stream up to the target, the closest first.
            guard keyFrame, spatial <= target.spatial else { return .drop(.waitingKeyFrame) }
            current = VideoLayer(spatial: spatial, temporal: target.temporal)
            return .forward(switched: true)
        }
        if spatial != c.spatial {
            // A switch: on a key frame of the target stream, or, going up opportunistically, of any
            // stream between the current one and the target.
            let towardTarget =
                spatial == target.spatial
                || (c.spatial < target.spatial && spatial > c.spatial && spatial < target.spatial)
            guard keyFrame, towardTarget else { return .drop(.otherStream) }
            current = VideoLayer(spatial: spatial, temporal: target.temporal)
            return .forward(switched: true)
        }
        var layer = c
        if frameStart {
            if target.temporal < layer.temporal {
                layer.temporal = target.temporal
            } else if target.temporal > layer.temporal {
                // From a key frame or a base-layer frame on, every frame's references are forwarded; a
                // sync frame of layer t depends on the base layer only, so layer t is safe from it.
                if keyFrame || tid == 0 {
                    layer.temporal = target.temporal
                } else if layerSync, tid > layer.temporal, tid <= target.temporal {
                    layer.temporal = tid
                }
            }
            current = layer
        }
        return tid <= layer.temporal ? .forward(switched: false) : .drop(.temporalAboveTarget)
    }
}
