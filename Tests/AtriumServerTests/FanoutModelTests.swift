import Testing

@testable import AtriumCluster

/// The fan-out model behind docs/cluster.md's worked estimate: its figures for 10,000 viewers of one
/// share over 20 nodes are the ones written there, and the rules hold at the edges of the input.
@Suite struct FanoutModelTests {
    static let share = [
        FanoutModel.Layer("q", bitrate: 150_000), FanoutModel.Layer("h", bitrate: 500_000),
        FanoutModel.Layer("f", bitrate: 1_500_000),
    ]

    @Test func tenThousandViewersOverTwentyNodes() {
        let nodes = FanoutModel.plan(
            FanoutModel.Room(
                viewers: 10_000, nodes: 20, ownerViewers: 500, layers: Self.share, mix: [0.1, 0.3, 0.6],
                audioBitrate: 40_000))
        #expect(nodes.count == 20)
        let owner = nodes[0]
        // The figures of docs/cluster.md ("A worked estimate").
        #expect(owner.viewers == 500 && owner.viewersOut == 552_500_000 && owner.linksOut == 41_610_000)
        #expect(nodes.dropFirst().allSatisfy { $0.viewers == 500 && $0.linkIn == 2_190_000 })
        #expect(nodes.dropFirst().allSatisfy { $0.viewersOut == 552_500_000 && $0.linksOut == 0 })
        #expect(nodes.reduce(0) { $0 + $1.viewers } == 10_000)
    }

    @Test func anEdgeReceivesOnlyTheLayersItsViewersWant() {
        // 21 viewers, 500 on the owner at most: one node's worth; the second node gets the 1 left,
        // on the top layer only (the largest share), so one layer and the audio cross its link.
        let nodes = FanoutModel.plan(
            FanoutModel.Room(
                viewers: 501, nodes: 2, ownerViewers: 500, layers: Self.share, mix: [0.1, 0.3, 0.6],
                audioBitrate: 40_000))
        #expect(nodes.map(\.viewers) == [500, 1])
        #expect(nodes[1].linkIn == 1_540_000 && nodes[0].linksOut == 1_540_000)
    }

    @Test func oneNodeCarriesEveryViewerAndNoLink() {
        let nodes = FanoutModel.plan(
            FanoutModel.Room(
                viewers: 800, nodes: 1, ownerViewers: 500, layers: Self.share, mix: [0, 0, 1], audioBitrate: 0))
        #expect(nodes.count == 1 && nodes[0].viewers == 800 && nodes[0].linksOut == 0)
        #expect(nodes[0].viewersOut == 800 * 1_500_000)
    }

    @Test func viewersAreSplitInWholeNumbersByLargestRemainder() {
        #expect(FanoutModel.split(10, [0.33, 0.33, 0.34]) == [3, 3, 4])
        #expect(FanoutModel.split(1, [0.1, 0.3, 0.6]) == [0, 0, 1])
        #expect(FanoutModel.split(5, [Double.nan, 0.5, 0.5]).reduce(0, +) <= 5)
        #expect(
            FanoutModel.plan(
                FanoutModel.Room(viewers: 5, nodes: 0, ownerViewers: 1, layers: [], mix: [], audioBitrate: 0)
            ).isEmpty)
    }
}
