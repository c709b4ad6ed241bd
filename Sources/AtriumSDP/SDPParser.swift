/// The line-level SDP parser (RFC 8866 section 5): `<type>=<value>` lines, the session part up to
/// the first `m=`, then one media section per `m=`. It is lenient where browsers differ (CRLF or LF,
/// blank lines, line order inside a part) and strict about every value it models.
enum SDPParser {
    private struct Line {
        var number: Int
        var type: UInt8
        var value: Substring
    }

    static func parse(_ bytes: [UInt8]) throws(SDPError) -> SessionDescription {
        guard bytes.count <= SessionDescription.maximumSize else { throw .tooLarge(bytes: bytes.count) }
        let lines = try splitLines(bytes)
        guard let first = lines.first, first.type == UInt8(ascii: "v") else { throw .missingVersion }
        guard first.value == "0" else { throw .unsupportedVersion(line: first.number) }

        var origin: Origin?
        var name: String?
        var session = SessionDescription(origin: Origin(sessionID: 0, sessionVersion: 0), timing: [])
        var current: MediaDescription?

        for line in lines.dropFirst() {
            let type = Character(Unicode.Scalar(line.type))
            if line.type == UInt8(ascii: "m") {
                if let m = current { session.media.append(m) }
                current = try MediaDescription(mediaLine: line.value, line: line.number)
                continue
            }
            if current != nil {
                // Mutated through the optional so the section's arrays are not copied per line.
                try media(line, type: type, into: &current)
                continue
            }
            switch type {
            case "o":
                guard origin == nil else { throw .unexpectedLine(line: line.number, type: "o") }
                guard let o = Origin(sdp: line.value) else { throw .invalidOrigin(line: line.number) }
                origin = o
            case "s":
                guard name == nil else { throw .unexpectedLine(line: line.number, type: "s") }
                name = String(line.value)
            case "c":
                guard session.connection == nil else { throw .unexpectedLine(line: line.number, type: "c") }
                session.connection = try connection(line)
            case "b": session.bandwidths.append(try bandwidth(line))
            case "t":
                guard let t = Timing(sdp: line.value) else { throw .invalidTiming(line: line.number) }
                session.timing.append(t)
            case "a": session.attributes.append(try Attribute.parse(line.value, line: line.number))
            case "v": throw .unexpectedLine(line: line.number, type: "v")
            default: session.otherLines.append(SDPLine(type: type, value: String(line.value)))
            }
        }
        if let m = current { session.media.append(m) }
        guard let origin else { throw .missingLine(type: "o") }
        guard let name else { throw .missingLine(type: "s") }
        guard !session.timing.isEmpty else { throw .missingLine(type: "t") }
        session.origin = origin
        session.sessionName = name
        return session
    }

    /// Lines allowed inside a media section: `i`, `c`, `b`, `k`, `a` (RFC 8866 section 5).
    private static func media(_ line: Line, type: Character, into m: inout MediaDescription?) throws(SDPError) {
        switch type {
        case "a": m?.attributes.append(try Attribute.parse(line.value, line: line.number))
        case "c":
            guard m?.connection == nil else { throw .unexpectedLine(line: line.number, type: "c") }
            m?.connection = try connection(line)
        case "b": m?.bandwidths.append(try bandwidth(line))
        case "i", "k": m?.otherLines.append(SDPLine(type: type, value: String(line.value)))
        default: throw .unexpectedLine(line: line.number, type: String(type))
        }
    }

    private static func connection(_ line: Line) throws(SDPError) -> ConnectionData {
        guard let c = ConnectionData(sdp: line.value) else { throw .invalidConnection(line: line.number) }
        return c
    }

    private static func bandwidth(_ line: Line) throws(SDPError) -> Bandwidth {
        guard let b = Bandwidth(sdp: line.value) else { throw .invalidBandwidth(line: line.number) }
        return b
    }

    /// Splits on LF, drops one CR before it, skips blank lines, and checks the `<a-z>=` prefix.
    /// NUL and stray CR are refused: RFC 8866 section 9 excludes them from `text`. One pass over the
    /// bytes, with indices kept inside `bytes.indices` by the loop conditions.
    private static func splitLines(_ bytes: [UInt8]) throws(SDPError) -> [Line] {
        var lines: [Line] = []
        var number = 0
        var start = 0
        while start < bytes.count {
            number += 1
            var end = start
            var forbidden = false
            while end < bytes.count, bytes[end] != UInt8(ascii: "\n") {
                let b = bytes[end]
                // A CR is allowed only as the last byte of the line (CRLF, or CR at the very end).
                if b == 0 || (b == UInt8(ascii: "\r") && end + 1 < bytes.count && bytes[end + 1] != UInt8(ascii: "\n"))
                {
                    forbidden = true
                }
                end += 1
            }
            let lineStart = start
            start = end + 1
            if end > lineStart, bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            if end == lineStart { continue }
            let type = bytes[lineStart]
            guard end - lineStart >= 2, type >= UInt8(ascii: "a"), type <= UInt8(ascii: "z"),
                bytes[lineStart + 1] == UInt8(ascii: "="), !forbidden
            else { throw .malformedLine(line: number) }
            let value = String(decoding: bytes[(lineStart + 2)..<end], as: UTF8.self)
            lines.append(Line(number: number, type: type, value: Substring(value)))
        }
        return lines
    }
}
