/// RFC 5952 text for an IPv6 address given as two big-endian 64-bit halves: lower-case hex groups without
/// leading zeros, the longest run of two or more zero groups (the first on a tie) shortened to `::`.
public func formatIPv6(high: UInt64, low: UInt64) -> String {
    let groups: [UInt16] = (0..<8).map { (i: Int) -> UInt16 in
        let half: UInt64 = i < 4 ? high : low
        let shift: UInt64 = UInt64(48 - 16 * (i % 4))
        return UInt16(truncatingIfNeeded: half >> shift)
    }
    var best = (start: -1, length: 0)
    var i = 0
    while i < 8 {
        var j = i
        while j < 8 && groups[j] == 0 { j += 1 }
        if j - i > best.length && j - i >= 2 { best = (i, j - i) }
        i = max(j, i + 1)
    }
    let text: [String] = groups.map { String($0, radix: 16) }
    guard best.start >= 0 else { return text.joined(separator: ":") }
    let before: String = text[0..<best.start].joined(separator: ":")
    let after: String = text[(best.start + best.length)...].joined(separator: ":")
    return before + "::" + after
}
