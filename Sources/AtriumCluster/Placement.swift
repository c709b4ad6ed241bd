/// Picks the node for a new live room: power of two choices (Mitzenmacher) — two live, non-draining
/// nodes at random, the less loaded wins. Nearly as even as asking every node, without every node
/// herding onto the one that looked least loaded a heartbeat ago. Pure: the random draw is injected.
public enum Placement {
    public static func choose(
        among nodes: [NodeInfo], random: (Int) -> Int
    ) -> NodeID? {
        let live = nodes.filter { !$0.draining }
        guard !live.isEmpty else { return nil }
        if live.count == 1 { return live[0].id }
        let i = abs(random(live.count)) % live.count
        var j = abs(random(live.count - 1)) % (live.count - 1)
        if j >= i { j += 1 }
        let a = live[i], b = live[j]
        if a.load.score != b.load.score { return a.load.score < b.load.score ? a.id : b.id }
        return min(a.id, b.id)
    }
}
