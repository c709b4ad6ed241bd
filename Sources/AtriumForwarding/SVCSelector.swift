/// The per-packet decision of a consumer of an SVC stream: one RTP stream that carries spatial and
/// temporal layers (VP9 L1T3, L3T3_KEY), as mediasoup's `SvcConsumer` makes it. Pure; the owner (a
/// consumer on the media worker) tells its `SeqManager` about each drop, so the output stays gap-free,
/// and sets the marker bit where the decision says the forwarded picture ends.
///
/// Changes take effect at the start of a picture (its bottom spatial layer's first packet):
/// - spatial down at any picture (a lower layer never depends on a higher one); spatial up only at a
///   key picture, which the owner asks the publisher for (k-SVC: the upper layers refer to the lower
///   ones only there);
/// - temporal down at any picture; up at a key picture, a base-layer picture, or a switching-up point
///   (VP9's U bit).
/// A viewer never freezes during a switch: until the key picture it keeps its current layers.
public struct SVCSelector: Equatable, Sendable {
    public enum DropReason: Equatable, Sendable {
        /// Nothing forwarded yet, and this is not the start of a key picture.
        case waitingKeyFrame
        /// A layer above what the viewer gets.
        case aboveTarget
    }

    public enum Decision: Equatable, Sendable {
        /// Forward; `endsPicture`: the last packet of the highest layer the viewer gets in this
        /// picture, which must carry the RTP marker bit.
        case forward(endsPicture: Bool)
        case drop(DropReason)
    }

    public private(set) var target: VideoLayer
    /// The layers forwarded now; nil before the first key picture.
    public private(set) var current: VideoLayer?

    public init(target: VideoLayer) {
        self.target = target
    }

    /// Sets the layers to reach, clamped to the stream's spatial layers when known (`spatialLayers`,
    /// 0: unknown). Returns true when a key picture is needed to get there (a spatial switch up).
    public mutating func select(desired: VideoLayer, spatialLayers: Int) -> Bool {
        var t = desired
        if spatialLayers > 0 { t.spatial = min(t.spatial, spatialLayers - 1) }
        target = t
        guard let c = current else { return true }
        return t.spatial > c.spatial
    }

    /// Forgets the layers forwarded (after a pause): the next key picture starts the viewer again.
    public mutating func restart() {
        current = nil
    }

    /// Decides one packet by its layer indices and what it starts or ends: `pictureStart` (the first
    /// packet of the picture's bottom layer frame), `keyPicture` (and that picture is not predicted
    /// from an earlier one), `switchingUp` (VP9's U bit), `endOfFrame` (the last packet of its layer
    /// frame).
    public mutating func decide(
        spatial: Int, temporal: Int, pictureStart: Bool, keyPicture: Bool, switchingUp: Bool, endOfFrame: Bool
    ) -> Decision {
        if pictureStart {
            if var c = current {
                if target.spatial < c.spatial || (target.spatial > c.spatial && keyPicture) {
                    c.spatial = target.spatial
                }
                if target.temporal < c.temporal || keyPicture || temporal == 0 || switchingUp {
                    c.temporal = target.temporal
                }
                current = c
            } else if keyPicture {
                current = target
            }
        }
        guard let c = current else { return .drop(.waitingKeyFrame) }
        guard spatial <= c.spatial, temporal <= c.temporal else { return .drop(.aboveTarget) }
        return .forward(endsPicture: endOfFrame && spatial == c.spatial)
    }
}
