/// The media type of an `m=` line (RFC 8866 section 5.14).
public enum MediaKind: Equatable, Sendable {
    case audio, video, application
    case other(String)

    init(_ text: String) {
        switch text {
        case "audio": self = .audio
        case "video": self = .video
        case "application": self = .application
        default: self = .other(text)
        }
    }

    var sdpValue: String {
        switch self {
        case .audio: return "audio"
        case .video: return "video"
        case .application: return "application"
        case .other(let text): return text
        }
    }
}

/// One media section: `m=<media> <port>[/<number of ports>] <proto> <fmt> ...` and the `c=`, `b=`
/// and `a=` lines under it (RFC 8866 section 5.14). In JSEP each is one transceiver (RFC 8829
/// section 5.2.1); port 0 means rejected, or bundled and not yet negotiated with `a=bundle-only`
/// (RFC 8843 section 6).
public struct MediaDescription: Equatable, Sendable, AttributeList {
    public var kind: MediaKind
    public var port: UInt16
    public var portCount: UInt16?
    public var proto: String
    /// The format list as written: payload types for RTP profiles, e.g. `webrtc-datachannel` otherwise.
    public var formats: [String]
    public var connection: ConnectionData?
    public var bandwidths: [Bandwidth]
    public var otherLines: [SDPLine]
    public var attributes: [Attribute]

    public init(
        kind: MediaKind, port: UInt16, portCount: UInt16? = nil, proto: String = "UDP/TLS/RTP/SAVPF",
        formats: [String], connection: ConnectionData? = nil, bandwidths: [Bandwidth] = [],
        otherLines: [SDPLine] = [], attributes: [Attribute] = []
    ) {
        self.kind = kind
        self.port = port
        self.portCount = portCount
        self.proto = proto
        self.formats = formats
        self.connection = connection
        self.bandwidths = bandwidths
        self.otherLines = otherLines
        self.attributes = attributes
    }

    /// True for the RTP profiles (`RTP/AVP`, `UDP/TLS/RTP/SAVPF`, ...), whose formats are payload types.
    public var isRTP: Bool { Self.isRTP(proto: proto) }

    static func isRTP(proto: String) -> Bool { proto.split(separator: "/").contains("RTP") }

    /// The payload types of the `m=` line, in preference order (empty for non-RTP sections).
    public var payloadTypes: [UInt8] { isRTP ? formats.compactMap { Fields.payloadType(Substring($0)) } : [] }

    /// Parses the value of an `m=` line.
    init(mediaLine value: Substring, line: Int) throws(SDPError) {
        let f = Fields.words(value)
        guard f.count >= 3 else { throw .invalidMedia(line: line) }
        let (portText, countText) = Fields.splitOnce(f[1], at: "/")
        guard !f[0].isEmpty, let port: UInt16 = Fields.decimal(portText) else { throw .invalidMedia(line: line) }
        var count: UInt16?
        if let countText {
            guard let c: UInt16 = Fields.decimal(countText) else { throw .invalidMedia(line: line) }
            count = c
        }
        let proto = String(f[2])
        let formats = f.dropFirst(3).map(String.init)
        if Self.isRTP(proto: proto) {
            guard !formats.isEmpty else { throw .invalidMedia(line: line) }
            for format in formats where Fields.payloadType(Substring(format)) == nil {
                throw .invalidPayloadType(line: line, value: format)
            }
        }
        self.init(kind: MediaKind(String(f[0])), port: port, portCount: count, proto: proto, formats: formats)
    }

    var mediaLineValue: String {
        let port = portCount.map { "\(self.port)/\($0)" } ?? "\(self.port)"
        return ([kind.sdpValue, port, proto] + formats).joined(separator: " ")
    }
}

extension MediaDescription {
    /// A WebRTC data channel section (RFC 8841): `m=application ... UDP/DTLS/SCTP webrtc-datachannel`.
    public var isDataChannel: Bool {
        kind == .application && proto.uppercased().hasSuffix("DTLS/SCTP") && formats == ["webrtc-datachannel"]
    }

    /// Its `a=sctp-port` (RFC 8841 section 5), when it is a valid port.
    public var sctpPort: UInt16? {
        for case .other(let name, let value) in attributes where name == "sctp-port" {
            if let v = value, let port = UInt16(v), port > 0 { return port }
        }
        return nil
    }
}
