import Testing

@testable import AtriumCongestion

/// A REMB-only viewer's estimate as tables: REMBs in (time, SSRCs, bit/s), the estimate and what the
/// allocator is given out.
@Suite struct REMBEstimateTests {
    struct Row: Sendable, CustomStringConvertible {
        var name: String
        var reports: [(Double, [UInt32], Double)]
        var now: Double
        var estimate: Double?
        var description: String { name }
    }

    static let rows: [Row] = [
        Row(name: "Chrome: one REMB for every stream", reports: [(0, [1, 2], 900_000)], now: 1, estimate: 900_000),
        Row(
            name: "aiortc: one per track, added up", reports: [(0, [1], 300_000), (0.5, [2], 200_000)], now: 1,
            estimate: 500_000),
        Row(
            name: "a newer report for the same streams replaces the older",
            reports: [(0, [1], 300_000), (0.5, [2], 200_000), (1, [1], 250_000)], now: 1.5, estimate: 450_000),
        Row(
            name: "SSRC order does not matter", reports: [(0, [1, 2], 300_000), (0.5, [2, 1], 400_000)], now: 1,
            estimate: 400_000),
        Row(
            name: "a report over some of another's streams replaces it",
            reports: [(0, [1], 300_000), (0.5, [1, 2], 700_000)], now: 1, estimate: 700_000),
        Row(
            name: "a track no longer reported stops counting",
            reports: [(0, [1], 300_000), (0, [2], 200_000), (2, [1], 300_000)], now: 3, estimate: 300_000),
        Row(name: "nothing fresh", reports: [(0, [1], 300_000)], now: 10, estimate: nil),
    ]

    @Test(arguments: rows)
    func reportsAddUpOverTheirStreams(_ row: Row) {
        var r = REMBEstimate()
        for (t, ssrcs, bitrate) in row.reports { r.received(bitrate: bitrate, ssrcs: ssrcs, now: t) }
        #expect(r.estimate(now: row.now) == row.estimate)
    }

    /// (REMBs of one stream in, time asked, what the allocator gets): everything its tracks need
    /// while the receiver's REMB only rises (its own 1.5 times cap holds it, not its link); its REMB for
    /// 6 s after it went down; no limit before the first allocation unless it went down.
    @Test(
        arguments: [
            ([(0.0, 600_000.0), (1, 650_000)], 1.5, 2_000_000.0 as Double?, 2_000_000.0),
            ([(0.0, 600_000.0), (1, 650_000)], 1.5, nil, REMBEstimate.unlimited),
            ([(0.0, 600_000.0), (1, 400_000)], 1.5, nil, 400_000),
            ([(0.0, 3_000_000.0)], 0.5, 2_000_000, 3_000_000),
            ([(0.0, 600_000.0), (1, 400_000)], 1.5, 2_000_000, 400_000),
            ([(0.0, 600_000.0), (1, 400_000), (2, 420_000)], 4, 2_000_000, 420_000),
            ([(0.0, 600_000.0), (1, 400_000), (2, 420_000), (3, 440_000)], 7.1, 2_000_000, 2_000_000),
            // Noise (under 3 %) is not a decrease.
            ([(0.0, 600_000.0), (1, 590_000)], 1.5, 2_000_000, 2_000_000),
        ] as [([(Double, Double)], Double, Double?, Double)])
    func aRisingREMBIsTheReceiversCapAFallingOneItsLink(
        _ reports: [(Double, Double)], _ now: Double, _ needed: Double?, _ expected: Double
    ) {
        var r = REMBEstimate()
        for (t, bitrate) in reports { r.received(bitrate: bitrate, ssrcs: [7], now: t) }
        let remb = r.estimate(now: now) ?? 0
        #expect(r.forAllocation(remb: remb, needed: needed, now: now) == expected)
    }
}
