/// Small tokenizing helpers shared by the line parsers. They never trap: every number goes through
/// a checked conversion, and every split result is read with bounds-checked accessors.
enum Fields {
    /// Splits on spaces (and tabs), dropping empty fields, as RFC 8866's `SP`-separated grammars need
    /// when peers put two spaces where one belongs. Works on UTF-8 bytes: the separators are ASCII.
    static func words(_ text: Substring) -> [Substring] {
        var out: [Substring] = []
        var start: String.Index?
        let bytes = text.utf8
        var i = bytes.startIndex
        while i != bytes.endIndex {
            let c = bytes[i]
            if c == 0x20 || c == 0x09 {
                if let s = start { out.append(text[s..<i]) }
                start = nil
            } else if start == nil {
                start = i
            }
            i = bytes.index(after: i)
        }
        if let s = start { out.append(text[s..<bytes.endIndex]) }
        return out
    }

    /// Splits on an ASCII separator, keeping empty pieces.
    static func split(_ text: Substring, on separator: Unicode.Scalar) -> [Substring] {
        let sep = UInt8(ascii: separator)
        var out: [Substring] = []
        let bytes = text.utf8
        var start = bytes.startIndex
        var i = bytes.startIndex
        while i != bytes.endIndex {
            if bytes[i] == sep {
                out.append(text[start..<i])
                start = bytes.index(after: i)
            }
            i = bytes.index(after: i)
        }
        out.append(text[start..<bytes.endIndex])
        return out
    }

    /// Splits at the first occurrence of an ASCII separator; the second part is nil when it does not occur.
    static func splitOnce(_ text: Substring, at separator: Unicode.Scalar) -> (Substring, Substring?) {
        guard let i = text.utf8.firstIndex(of: UInt8(ascii: separator)) else { return (text, nil) }
        return (text[text.startIndex..<i], text[text.utf8.index(after: i)...])
    }

    /// A decimal number of only ASCII digits (no sign, no spaces), or nil when it does not fit `T`.
    static func decimal<T: FixedWidthInteger & UnsignedInteger>(_ text: Substring) -> T? {
        guard let value = decimal64(text) else { return nil }
        return T(exactly: value)
    }

    /// The digit loop, non-generic so it stays fast in debug builds; overflow gives nil.
    static func decimal64(_ text: Substring) -> UInt64? {
        var value: UInt64 = 0
        var digits = 0
        for c in text.utf8 {
            guard c >= 0x30 && c <= 0x39 else { return nil }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(c &- 0x30))
            guard !o1 && !o2 else { return nil }
            value = sum
            digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// An RTP payload type: 0 to 127 (RFC 3550 section 5.1, seven bits).
    static func payloadType(_ text: Substring) -> UInt8? {
        guard let value = decimal64(text), value <= 127 else { return nil }
        return UInt8(truncatingIfNeeded: value)
    }

    /// One or more ASCII digits, nothing else.
    static func isDigits(_ text: Substring) -> Bool {
        !text.utf8.isEmpty && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// RFC 8866's `alpha-numeric`: ASCII letters and digits.
    static func isAlphaNumeric(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
    }

    static func isHexDigit(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
    }

    /// Trims spaces and tabs at both ends.
    static func trimmed(_ text: Substring) -> Substring {
        let bytes = text.utf8
        guard let first = bytes.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }),
            let last = bytes.lastIndex(where: { $0 != 0x20 && $0 != 0x09 })
        else { return text[text.endIndex...] }
        return text[first..<bytes.index(after: last)]
    }

    /// The `;`-separated `name[=value]` list of `a=fmtp` (RFC 8866 section 6.15) and `a=rid`
    /// restrictions (RFC 8851 section 10), in order; empty entries are skipped.
    static func parameters(_ text: Substring) -> [FormatParameter] {
        split(text, on: ";").compactMap { part in
            let item = trimmed(part)
            if item.isEmpty { return nil }
            let (name, value) = splitOnce(item, at: "=")
            return FormatParameter(name: String(trimmed(name)), value: value.map { String(trimmed($0)) })
        }
    }
}

/// One `name=value` (or bare `name`) entry of a format-parameter list, kept in order.
public struct FormatParameter: Equatable, Hashable, Sendable {
    public var name: String
    public var value: String?

    public init(name: String, value: String?) {
        self.name = name
        self.value = value
    }

    var sdpValue: String { value.map { "\(name)=\($0)" } ?? name }
}

extension [FormatParameter] {
    /// The value of the first parameter named `name` (ASCII case-insensitive, as RFC 8866 section 6.15
    /// leaves case to each format and codecs compare names that way).
    public func value(for name: String) -> String? {
        let key = name.lowercased()
        return first(where: { $0.name.lowercased() == key })?.value
    }

    var sdpValue: String { map(\.sdpValue).joined(separator: ";") }
}
