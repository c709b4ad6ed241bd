/// What one room fanned out over a cluster carries, node by node: the model docs/cluster.md's
/// worked estimate comes from (a test checks the figures written there). Pure arithmetic on the
/// relay design:
///
/// - the owner keeps the publisher and up to `ownerViewers` viewers; the others are spread evenly
///   over the other nodes (placement draws the least loaded of two, which evens them out);
/// - each edge receives, over its one relay link from the owner, one copy of each layer some viewer
///   there wants, and the audio once;
/// - each viewer receives the layer it wants and the audio.
///
/// Viewers are given layers in `mix` proportions, largest remainders first, so the counts are whole.
public enum FanoutModel {
    public struct Layer: Equatable, Sendable {
        public var name: String
        /// Bits per second.
        public var bitrate: Int

        public init(_ name: String, bitrate: Int) {
            self.name = name
            self.bitrate = bitrate
        }
    }

    public struct Room: Equatable, Sendable {
        public var viewers: Int
        public var nodes: Int
        /// Viewers on the owner before new ones go to edges.
        public var ownerViewers: Int
        public var layers: [Layer]
        /// The share of viewers on each layer (summing to 1).
        public var mix: [Double]
        public var audioBitrate: Int

        public init(viewers: Int, nodes: Int, ownerViewers: Int, layers: [Layer], mix: [Double], audioBitrate: Int) {
            self.viewers = viewers
            self.nodes = nodes
            self.ownerViewers = ownerViewers
            self.layers = layers
            self.mix = mix
            self.audioBitrate = audioBitrate
        }
    }

    /// One node's share (bits per second).
    public struct Node: Equatable, Sendable {
        public var isOwner: Bool
        public var viewers: Int
        /// Over its relay link from the owner (0 on the owner).
        public var linkIn: Int
        /// Over the owner's relay links to the edges, summed (0 on an edge).
        public var linksOut: Int
        /// To its own viewers.
        public var viewersOut: Int
    }

    /// The owner first, then the edges.
    public static func plan(_ room: Room) -> [Node] {
        guard room.nodes > 0, room.viewers >= 0 else { return [] }
        let onOwner = room.nodes == 1 ? room.viewers : min(room.viewers, max(0, room.ownerViewers))
        let rest = room.viewers - onOwner
        let edges = room.nodes - 1
        var nodes = [node(owner: true, viewers: onOwner, room)]
        for e in 0..<edges {
            let n = rest / edges + (e < rest % edges ? 1 : 0)
            nodes.append(node(owner: false, viewers: n, room))
        }
        let out = nodes.dropFirst().reduce(0) { $0 + $1.linkIn }
        nodes[0].linksOut = out
        return nodes
    }

    static func node(owner: Bool, viewers: Int, _ room: Room) -> Node {
        let counts = split(viewers, room.mix)
        var toViewers = 0
        var wanted = 0
        for (i, layer) in room.layers.enumerated() where i < counts.count {
            toViewers += counts[i] * (layer.bitrate + room.audioBitrate)
            if counts[i] > 0 { wanted += layer.bitrate }
        }
        let linkIn = owner || viewers == 0 ? 0 : wanted + room.audioBitrate
        return Node(isOwner: owner, viewers: viewers, linkIn: linkIn, linksOut: 0, viewersOut: toViewers)
    }

    /// `n` split in proportions `mix` (whole numbers summing to `n`, largest remainders first).
    static func split(_ n: Int, _ mix: [Double]) -> [Int] {
        let exact = mix.map { ($0.isFinite ? min(max($0, 0), 1) : 0) * Double(n) }
        var counts = exact.map { Int($0.rounded(.down)) }
        let order = exact.indices.sorted { (exact[$0] - Double(counts[$0])) > (exact[$1] - Double(counts[$1])) }
        var left = n - counts.reduce(0, +)
        for i in order where left > 0 {
            counts[i] += 1
            left -= 1
        }
        return counts
    }
}
