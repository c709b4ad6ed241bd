/// Which spatial layer a viewer should get, from what it asked for: a quality and, for cameras, the
/// size of the tile it shows the track in. Pure; the result is the `desired` spatial layer handed to
/// `LayerSelector.select`, which clamps it to the layers that arrive.
///
/// The quality mapping is VideoSDK's, which meeting products already speak: with three layers `low`,
/// `medium` and `high` are the bottom, middle and top layer; with two, `low` and `medium` are the
/// bottom one and `high` the top; with one, every quality is that layer. A viewport applies to
/// cameras only (a screen share keeps full resolution and follows its own quality): the smallest
/// layer that covers the tile, or the top one when none does, and never more than the quality allows.
public enum LayerChoice {
    public enum Quality: String, Sendable, CaseIterable {
        case low, medium, high
    }

    /// A layer's or a tile's size in pixels.
    public struct Size: Equatable, Sendable {
        public var width: Int
        public var height: Int

        public init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }
    }

    /// The layer for a quality among `count` layers (0 is the bottom one).
    public static func spatial(quality: Quality, layerCount count: Int) -> Int {
        guard count > 1 else { return 0 }
        switch quality {
        case .low: return 0
        case .medium: return (count - 1) / 2
        case .high: return count - 1
        }
    }

    /// The smallest of `layers` (bottom first) that covers `viewport`; the top one when none does.
    /// A layer of unknown size (0) covers nothing.
    public static func spatial(covering viewport: Size, layers: [Size]) -> Int {
        guard !layers.isEmpty else { return 0 }
        return layers.firstIndex { $0.width >= viewport.width && $0.height >= viewport.height } ?? layers.count - 1
    }

    /// The layer for a viewer: its quality, narrowed by its viewport for a camera.
    public static func spatial(quality: Quality, viewport: Size?, layers: [Size], screenShare: Bool) -> Int {
        let byQuality = spatial(quality: quality, layerCount: layers.count)
        guard !screenShare, let viewport, viewport.width > 0, viewport.height > 0 else { return byQuality }
        return min(byQuality, spatial(covering: viewport, layers: layers))
    }
}
