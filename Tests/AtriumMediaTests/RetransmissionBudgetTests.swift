import Testing

@testable import AtriumMedia

/// Retransmission toward a transport spends at most a share of the media it is sent, saved up to a
/// burst: the budget as a value, step by step.
@Suite struct RetransmissionBudgetTests {
    enum Step: Sendable, CustomTestStringConvertible {
        case earn(Int)
        case spend(Int, granted: Bool)

        var testDescription: String {
            switch self {
            case .earn(let n): "earn \(n)"
            case .spend(let n, let granted): "spend \(n) \(granted ? "granted" : "refused")"
            }
        }
    }

    static let burst = RetransmissionBudget.burst

    /// Steps and the allowance and refusals after them.
    static let rows: [([Step], allowance: Int, refused: Int)] = [
        ([], burst, 0),
        // Full at the start: media sent earns nothing more.
        ([.earn(1200)], burst, 0),
        // A lost key frame's worth at once, then no more.
        ([.spend(burst, granted: true), .spend(1, granted: false)], 0, 1),
        // 30 % of what is sent comes back: 1,000 bytes of media pay for 300 of repair.
        ([.spend(burst, granted: true), .earn(1000), .spend(301, granted: false), .spend(300, granted: true)], 0, 1),
        // 1,200-byte packets earn 360 each: a 1,200-byte repair needs four of them.
        ([.spend(burst, granted: true), .earn(1200), .earn(1200), .earn(1200), .spend(1200, granted: false)], 1080, 1),
        (
            [
                .spend(burst, granted: true), .earn(1200), .earn(1200), .earn(1200), .earn(1200),
                .spend(1200, granted: true),
            ],
            240, 0
        ),
        // Saving up stops at the burst.
        ([.spend(1000, granted: true)] + Array(repeating: .earn(1500), count: 10), burst, 0),
    ]

    @Test(arguments: rows)
    func theBudgetIsAShareOfTheMediaSavedUpToABurst(steps: [Step], allowance: Int, refused: Int) {
        var budget = RetransmissionBudget()
        for step in steps {
            switch step {
            case .earn(let n): budget.earn(n)
            case .spend(let n, let granted): #expect(budget.spend(n) == granted, "\(step.testDescription)")
            }
        }
        #expect(budget.allowance == allowance)
        #expect(budget.refused == refused)
    }
}
