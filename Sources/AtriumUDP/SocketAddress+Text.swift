import AtriumBytes

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
        guard let port = parseDecimal(portText, max: Int(UInt16.max)) else { throw invalid }
        if text.hasPrefix("[") {
            guard let (high, low) = parseIPv6(host) else { throw invalid }
            self = .v6(high: high, low: low, port: UInt16(port), scopeID: 0)
        } else {
            guard let address = parseIPv4(host) else { throw invalid }
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
}
