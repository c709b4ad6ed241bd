/// A record kept by 16-bit sequence number (RTP or transport-wide) in a power-of-two table: the low
/// bits of the number index it, `tag` (-1: empty) says which number holds the slot.
protocol SequenceRecord {
    var tag: Int32 { get }
    init()
}

/// A `SequenceRecord` that knows when it was written (`at`), for a table sized by need.
protocol TimedSequenceRecord: SequenceRecord {
    var at: Double { get }
}

/// Tables of `SequenceRecord`s. One sized by need (`TimedSequenceRecord`s) starts small and doubles, up to a maximum, when
/// a record would overwrite another number's written within the hold (one the table must still answer
/// for); an old one is overwritten in place.
enum SequenceTable {
    /// The slot for `sequence` in `table` (non-empty), after doubling the table if writing there
    /// would overwrite another number's record younger than `hold`.
    static func slot<R: TimedSequenceRecord>(
        _ sequence: UInt16, in table: inout [R], now: Double, hold: Double, maximum: Int
    ) -> Int {
        let i = Int(sequence) & (table.count - 1)
        let old = table[i]
        guard old.tag >= 0, old.tag != Int32(sequence), now - old.at < hold, table.count < maximum else { return i }
        var next = [R](repeating: R(), count: table.count * 2)
        for r in table where r.tag >= 0 { next[Int(r.tag) & (next.count - 1)] = r }
        table = next
        return Int(sequence) & (table.count - 1)
    }

    /// The record `sequence` holds in `table`, if it still does.
    static func find<R: SequenceRecord>(_ sequence: UInt16, in table: [R]) -> R? {
        guard !table.isEmpty else { return nil }
        let r = table[Int(sequence) & (table.count - 1)]
        return r.tag == Int32(sequence) ? r : nil
    }
}
