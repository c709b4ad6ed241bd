internal import Glibc

/// Parses a dotted-quad IPv4 address strictly: four decimal parts 0-255 without leading zeros, so
/// `127.1` or `010.0.0.1` (which `inet_aton` would read as octal) are refused rather than misread.
/// Returns the address in host byte order (`127.0.0.1` is `0x7F00_0001`).
public func parseIPv4(_ text: Substring) -> UInt32? {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 4 else { return nil }
    var out: UInt32 = 0
    for part in parts {
        guard part.count <= 3, let v = parseDecimal(part, max: 255) else { return nil }
        out = out << 8 | UInt32(v)
    }
    return out
}

/// Parses IPv6 text (RFC 4291 section 2.2, no zone id) into two big-endian 64-bit halves.
public func parseIPv6(_ text: Substring) -> (high: UInt64, low: UInt64)? {
    var storage = in6_addr()
    let ok = String(text).withCString { inet_pton(AF_INET6, $0, &storage) }
    guard ok == 1 else { return nil }
    return withUnsafeBytes(of: &storage) { raw -> (UInt64, UInt64) in
        var h: UInt64 = 0
        var l: UInt64 = 0
        for (i, b) in raw.prefix(16).enumerated() {
            if i < 8 { h = h << 8 | UInt64(b) } else { l = l << 8 | UInt64(b) }
        }
        return (h, l)
    }
}

/// A decimal number without sign or leading zeros, at most `max`.
public func parseDecimal(_ text: Substring, max: Int) -> Int? {
    guard !text.isEmpty, text.count <= 5, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
    guard text == "0" || !text.hasPrefix("0"), let v = Int(text), v <= max else { return nil }
    return v
}
