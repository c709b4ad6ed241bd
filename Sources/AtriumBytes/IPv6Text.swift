/// RFC 5952 text for an IPv6 address given as two big-endian 64-bit halves: lower-case hex groups without
/// leading zeros, the longest run of two or more zero groups (the first on a tie) shortened to `::`.
public func formatIPv6(high: UInt64, low: UInt64) -> String {
    let groups = (0..<8).map { i -> UInt16 in
        UInt16(truncatingIfNeeded: (i < 4 ? high : low) >> UInt64(48 - 16 * (i % 4)))
    }
    var best = (start: -1, length: 0)
    var i = 0
    while i < 8 {
        var j = i
        while j < 8 && groups[j] == 0 { j += 1 }
        if j - i > best.length && j - i >= 2 { best = (i, j - i) }
        i = max(j, i + 1)
    }
    let text = groups.map { String($0, radix: 16) }
    guard best.start >= 0 else { return text.joined(separator: ":") }
    return text[0..<best.start].joined(separator: ":") + "::"
        + text[(best.start + best.length)...].joined(separator: ":")
}
