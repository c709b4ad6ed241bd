/// The bytes of retransmission a transport may still send: a share of the media it is sent, saved up
/// to a burst (a lost key frame's worth), so that repairs never take more than that share of a link.
struct RetransmissionBudget: Equatable {
    /// Retransmissions may use this percentage of the media bytes sent...
    static let share = 30
    /// ... saved up to this many bytes, starting from the same.
    static let burst = 96 * 1024

    private(set) var allowance = Self.burst
    /// Retransmissions refused (budget, repeat, a layer the viewer left): a metric.
    var refused = 0

    /// `bytes` of media were sent (at most a datagram's worth).
    mutating func earn(_ bytes: Int) { allowance = min(Self.burst, allowance + bytes * Self.share / 100) }

    /// Takes `bytes` for a retransmission when the budget has them; false (and one more refused) otherwise.
    mutating func spend(_ bytes: Int) -> Bool {
        guard allowance >= bytes else {
            refused += 1
            return false
        }
        allowance -= bytes
        return true
    }
}
