/// Why an SDP text was refused. Every case that comes from a line names it (1-based), so a peer's
/// bad offer can be reported precisely; nothing in this module traps on input.
public enum SDPError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text is larger than `SessionDescription.maximumSize`.
    case tooLarge(bytes: Int)
    /// The first line is not `v=` (RFC 8866 section 5: the description starts with `v=`).
    case missingVersion
    /// `v=` is not `0`, the only version RFC 8866 section 5.1 defines.
    case unsupportedVersion(line: Int)
    /// The line is not `<letter>=<value>`, or holds a NUL or CR (RFC 8866 section 9: `text`).
    case malformedLine(line: Int)
    /// A line the session part must have (`o`, `s` or `t`) is absent.
    case missingLine(type: String)
    /// A line that may appear once, or only at session level, appears again or inside a media section.
    case unexpectedLine(line: Int, type: String)
    /// `o=` does not have its six fields, or sess-id/sess-version are not 64-bit numbers (RFC 8829 5.2.1).
    case invalidOrigin(line: Int)
    /// `c=` is not `<nettype> <addrtype> <address>` (RFC 8866 section 5.7).
    case invalidConnection(line: Int)
    /// `t=` is not two decimal times (RFC 8866 section 5.9).
    case invalidTiming(line: Int)
    /// `b=` is not `<bwtype>:<bandwidth>` (RFC 8866 section 5.8).
    case invalidBandwidth(line: Int)
    /// `m=` is not `<media> <port>[/<count>] <proto> <fmt> ...` (RFC 8866 section 5.14).
    case invalidMedia(line: Int)
    /// A payload type is not a number from 0 to 127 (RFC 3550 section 5.1), in `m=` or an attribute.
    case invalidPayloadType(line: Int, value: String)
    /// A known attribute's value does not follow its grammar; `name` is the attribute name.
    case invalidAttribute(line: Int, name: String)

    /// The 1-based line number the error refers to, when there is one.
    public var line: Int? {
        switch self {
        case .tooLarge, .missingVersion, .missingLine: return nil
        case .unsupportedVersion(let line), .malformedLine(let line), .unexpectedLine(let line, _),
            .invalidOrigin(let line), .invalidConnection(let line), .invalidTiming(let line),
            .invalidBandwidth(let line), .invalidMedia(let line), .invalidPayloadType(let line, _),
            .invalidAttribute(let line, _):
            return line
        }
    }

    public var description: String {
        switch self {
        case .tooLarge(let bytes): return "SDP of \(bytes) bytes is larger than allowed"
        case .missingVersion: return "SDP does not start with v="
        case .unsupportedVersion(let line): return "line \(line): only v=0 is supported"
        case .malformedLine(let line): return "line \(line): not <type>=<value>"
        case .missingLine(let type): return "missing \(type)= line"
        case .unexpectedLine(let line, let type): return "line \(line): unexpected \(type)= line"
        case .invalidOrigin(let line): return "line \(line): invalid o= line"
        case .invalidConnection(let line): return "line \(line): invalid c= line"
        case .invalidTiming(let line): return "line \(line): invalid t= line"
        case .invalidBandwidth(let line): return "line \(line): invalid b= line"
        case .invalidMedia(let line): return "line \(line): invalid m= line"
        case .invalidPayloadType(let line, let value): return "line \(line): invalid payload type '\(value)'"
        case .invalidAttribute(let line, let name): return "line \(line): invalid a=\(name) value"
        }
    }
}
