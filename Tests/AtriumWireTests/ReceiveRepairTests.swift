import Testing

@testable import AtriumRTP

/// A native viewer's repair decisions on the manual clock: NACK at once, again after the retry
/// interval up to the limit, give the gap up, then PLI at most once per interval.
@Suite struct ReceiveRepairTests {
    static let ms: UInt64 = 1_000_000

    struct Step {
        var at: UInt64
        var missing: [UInt16]
        var needsKeyFrame = false
        var expected: ReceiveRepair.Actions
    }

    static let table: [(String, [Step])] = [
        (
            "a gap is NACKed at once, then again every retry interval, four times in all",
            [
                Step(at: 0, missing: [10, 11], expected: .init(nack: [10, 11])),
                Step(at: 50 * ms, missing: [10, 11], expected: .init()),
                Step(at: 100 * ms, missing: [10, 11], expected: .init(nack: [10, 11])),
                Step(at: 200 * ms, missing: [10, 11], expected: .init(nack: [10, 11])),
                Step(at: 300 * ms, missing: [10, 11], expected: .init(nack: [10, 11])),
                Step(at: 400 * ms, missing: [10, 11], expected: .init()),
            ]
        ),
        (
            "a repaired packet is not asked for again; a new gap is asked for at once",
            [
                Step(at: 0, missing: [10, 11], expected: .init(nack: [10, 11])),
                Step(at: 20 * ms, missing: [11, 20], expected: .init(nack: [20])),
                Step(at: 100 * ms, missing: [11, 20], expected: .init(nack: [11])),
                Step(at: 120 * ms, missing: [], expected: .init()),
                Step(at: 130 * ms, missing: [11], expected: .init(nack: [11])),
            ]
        ),
        (
            "a gap missing for a second is given up; the key frame it needs is asked for once per interval",
            [
                Step(at: 0, missing: [5], expected: .init(nack: [5])),
                Step(at: 100 * ms, missing: [5], expected: .init(nack: [5])),
                Step(at: 200 * ms, missing: [5], expected: .init(nack: [5])),
                Step(at: 300 * ms, missing: [5], expected: .init(nack: [5])),
                Step(at: 999 * ms, missing: [5], expected: .init()),
                Step(at: 1000 * ms, missing: [5], expected: .init(giveUp: true)),
                Step(at: 1010 * ms, missing: [], needsKeyFrame: true, expected: .init(keyFrameRequest: true)),
                Step(at: 1200 * ms, missing: [], needsKeyFrame: true, expected: .init()),
                Step(at: 1510 * ms, missing: [], needsKeyFrame: true, expected: .init(keyFrameRequest: true)),
                Step(at: 1600 * ms, missing: [], needsKeyFrame: false, expected: .init()),
            ]
        ),
    ]

    @Test(arguments: table.indices) func decisions(_ i: Int) {
        let (name, steps) = Self.table[i]
        var r = ReceiveRepair()
        for s in steps {
            let got = r.update(missing: s.missing, needsKeyFrame: s.needsKeyFrame, now: s.at)
            #expect(got == s.expected, "\(name), at \(s.at / Self.ms) ms")
        }
    }

    @Test func aDecoderFailureAsksForAKeyFrameAtMostOncePerInterval() {
        var r = ReceiveRepair()
        let first = r.keyFrameWanted(now: 0)
        let soon = r.keyFrameWanted(now: 100 * Self.ms)
        let byGap = r.update(missing: [], needsKeyFrame: true, now: 200 * Self.ms).keyFrameRequest
        let later = r.keyFrameWanted(now: 500 * Self.ms)
        #expect(first && !soon && !byGap && later)
        #expect(r.keyFrameRequestsSent == 2)
    }

    @Test func countsWhatItAsksFor() {
        var r = ReceiveRepair()
        _ = r.update(missing: [1, 2, 3], needsKeyFrame: false, now: 0)
        _ = r.update(missing: [3], needsKeyFrame: false, now: 100 * Self.ms)
        #expect(r.nacksSent == 4)
    }
}
