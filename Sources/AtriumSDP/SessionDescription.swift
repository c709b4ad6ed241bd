/// A session description (RFC 8866 section 5) as JSEP uses it (RFC 8829 section 5.2): the session
/// part and its media sections, as plain values. `parse` accepts CRLF or bare LF line ends;
/// `serialized()` writes CRLF, with the lines in RFC 8866 order and attributes in their parsed order.
public struct SessionDescription: Equatable, Sendable, AttributeList {
    /// Larger texts are refused before parsing: a browser offer with many transceivers is tens of KB.
    public static let maximumSize = 1 << 20

    public var origin: Origin
    public var sessionName: String
    public var connection: ConnectionData?
    public var bandwidths: [Bandwidth]
    /// The `t=` lines; JSEP writes exactly one, `t=0 0`.
    public var timing: [Timing]
    public var otherLines: [SDPLine]
    public var attributes: [Attribute]
    public var media: [MediaDescription]

    public init(
        origin: Origin, sessionName: String = "-", connection: ConnectionData? = nil, bandwidths: [Bandwidth] = [],
        timing: [Timing] = [Timing()], otherLines: [SDPLine] = [], attributes: [Attribute] = [],
        media: [MediaDescription] = []
    ) {
        self.origin = origin
        self.sessionName = sessionName
        self.connection = connection
        self.bandwidths = bandwidths
        self.timing = timing
        self.otherLines = otherLines
        self.attributes = attributes
        self.media = media
    }

    /// Parses an SDP text; see `SDPParser`.
    public static func parse(_ text: String) throws(SDPError) -> SessionDescription {
        try SDPParser.parse(Array(text.utf8))
    }

    /// Parses SDP bytes (UTF-8; invalid sequences become U+FFFD rather than an error).
    public static func parse(_ bytes: [UInt8]) throws(SDPError) -> SessionDescription {
        try SDPParser.parse(bytes)
    }

    /// The SDP text, CRLF-terminated lines (RFC 8866 section 5).
    public func serialized() -> String {
        var lines = ["v=0", "o=\(origin.sdpValue)", "s=\(sessionName)"]
        lines += otherLines.filter { $0.rank == 0 }.map { "\($0.type)=\($0.value)" }
        if let connection { lines.append("c=\(connection.sdpValue)") }
        lines += bandwidths.map { "b=\($0.sdpValue)" }
        lines += timing.map { "t=\($0.sdpValue)" }
        lines += otherLines.filter { $0.rank != 0 }.map { "\($0.type)=\($0.value)" }
        lines += attributes.map { "a=\($0.sdpValue)" }
        for m in media {
            lines.append("m=\(m.mediaLineValue)")
            lines += m.otherLines.filter { $0.rank == 0 }.map { "\($0.type)=\($0.value)" }
            if let connection = m.connection { lines.append("c=\(connection.sdpValue)") }
            lines += m.bandwidths.map { "b=\($0.sdpValue)" }
            lines += m.otherLines.filter { $0.rank != 0 }.map { "\($0.type)=\($0.value)" }
            lines += m.attributes.map { "a=\($0.sdpValue)" }
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}
