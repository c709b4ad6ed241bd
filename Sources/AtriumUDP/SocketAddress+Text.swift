import AtriumBytes
internal import Glibc

extension SocketAddress: CustomStringConvertible {
    /// Parses `a.b.c.d:port` or `[ipv6]:port` (RFC 3986 section 3.2.2 brackets; no zone ids).
    ///
    /// IPv4 is parsed strictly: four decimal parts 0-255 without leading zeros, so `127.1` or `010.0.0.1`
    /// (which `inet_aton` would read as octal) are refused rather than misread.
    public init(parsing text: String) throws(UDPError) {
        let invalid = UDPError.invalidAddress(text)
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw invalid }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw invalid }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw invalid }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let port = Self.parseDecimal(portText, max: Int(UInt16.max)) else { throw invalid }
        if text.hasPrefix("[") {
            guard let (high, low) = Self.parseIPv6(host) else { throw invalid }
            self = .v6(high: high, low: low, port: UInt16(port), scopeID: 0)
        } else {
            guard let address = Self.parseIPv4(host) else { throw invalid }
            self = .v4(address: address, port: UInt16(port))
        }
    }

    /// `a.b.c.d:port`, or `[ipv6]:port` with the address in RFC 5952 form (lower case, the longest run of
    /// two or more zero groups shortened to `::`).
    public var description: String {
        switch self {
        case .v4(let a, let port):
            let parts = [24, 16, 8, 0].map { String((a >> UInt32($0)) & 0xFF) }
            return parts.joined(separator: ".") + ":" + String(port)
        case .v6(let h, let l, let port, _):
            return "[" + formatIPv6(high: h, low: l) + "]:" + String(port)
        }
    }

    /// Just the address part, without port or brackets (what an SDP candidate line carries).
    public var hostText: String {
        switch self {
        case .v4(let a, _): return [24, 16, 8, 0].map { String((a >> UInt32($0)) & 0xFF) }.joined(separator: ".")
        case .v6(let h, let l, _, _): return formatIPv6(high: h, low: l)
        }
    }

    static func parseDecimal(_ text: Substring, max: Int) -> Int? {
        guard !text.isEmpty, text.count <= 5, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        guard text == "0" || !text.hasPrefix("0"), let v = Int(text), v <= max else { return nil }
        return v
    }

    static func parseIPv4(_ text: Substring) -> UInt32? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: UInt32 = 0
        for part in parts {
            guard part.count <= 3, let v = parseDecimal(part, max: 255) else { return nil }
            out = out << 8 | UInt32(v)
        }
        return out
    }

    static func parseIPv6(_ text: Substring) -> (UInt64, UInt64)? {
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
}
