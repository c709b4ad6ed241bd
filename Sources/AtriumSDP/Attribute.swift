/// One `a=` line (RFC 8866 section 5.13). The attributes JSEP negotiation needs are typed; any other
/// attribute is kept verbatim in `.other`, so `serialize(parse(x))` carries it through unchanged.
/// A known attribute whose value breaks its grammar is an error, not silently kept.
public enum Attribute: Equatable, Sendable {
    // Session or media level.
    case group(Group)
    case msidSemantic(MsidSemantic)
    case fingerprint(Fingerprint)
    case iceUfrag(String)
    case icePwd(String)
    case iceOptions([String])
    case iceLite
    case setup(Setup)
    case direction(MediaDirection)
    case extmapAllowMixed
    case extmap(Extmap)
    // Media level.
    case mid(String)
    case rtcp(RTCPAddress)
    case rtcpMux
    case rtcpRsize
    case msid(Msid)
    case ssrc(SSRCAttribute)
    case ssrcGroup(SSRCGroup)
    case rtpmap(RTPMap)
    case fmtp(FMTP)
    case rtcpFeedback(RTCPFeedback)
    case rid(RID)
    case simulcast(Simulcast)
    case candidate(Candidate)
    case endOfCandidates
    case bundleOnly
    /// Any other attribute: `a=<name>` (value nil) or `a=<name>:<value>`, exactly as written.
    case other(name: String, value: String?)

    /// Parses the text after `a=`; `line` is used only to report errors.
    static func parse(_ text: Substring, line: Int) throws(SDPError) -> Attribute {
        let (nameText, valueText) = Fields.splitOnce(text, at: ":")
        let name = String(nameText)
        guard let value = valueText else { return flag(name) }
        func typed<T>(_ parsed: T?, _ make: (T) -> Attribute) throws(SDPError) -> Attribute {
            guard let parsed else { throw .invalidAttribute(line: line, name: name) }
            return make(parsed)
        }
        func nonEmpty(_ make: (String) -> Attribute) throws(SDPError) -> Attribute {
            guard !value.isEmpty else { throw .invalidAttribute(line: line, name: name) }
            return make(String(value))
        }
        switch name {
        case "group": return try typed(Group(sdp: value), Attribute.group)
        case "msid-semantic": return try typed(MsidSemantic(sdp: value), Attribute.msidSemantic)
        case "fingerprint": return try typed(Fingerprint(sdp: value), Attribute.fingerprint)
        case "ice-ufrag": return try nonEmpty(Attribute.iceUfrag)
        case "ice-pwd": return try nonEmpty(Attribute.icePwd)
        case "ice-options": return .iceOptions(Fields.words(value).map(String.init))
        case "setup": return try typed(Setup(rawValue: String(value)), Attribute.setup)
        case "extmap": return try typed(Extmap(sdp: value), Attribute.extmap)
        case "mid": return try nonEmpty(Attribute.mid)
        case "rtcp": return try typed(RTCPAddress(sdp: value), Attribute.rtcp)
        case "msid": return try typed(Msid(sdp: value), Attribute.msid)
        case "ssrc": return try typed(SSRCAttribute(sdp: value), Attribute.ssrc)
        case "ssrc-group": return try typed(SSRCGroup(sdp: value), Attribute.ssrcGroup)
        case "rtpmap":
            try checkPayloadType(value, line: line)
            return try typed(RTPMap(sdp: value), Attribute.rtpmap)
        case "fmtp":
            try checkPayloadType(value, line: line)
            return try typed(FMTP(sdp: value), Attribute.fmtp)
        case "rtcp-fb":
            try checkPayloadType(value, line: line, wildcard: true)
            return try typed(RTCPFeedback(sdp: value), Attribute.rtcpFeedback)
        case "rid": return try typed(RID(sdp: value), Attribute.rid)
        case "simulcast": return try typed(Simulcast(sdp: value), Attribute.simulcast)
        case "candidate": return try typed(Candidate(sdp: value), Attribute.candidate)
        default: return .other(name: name, value: String(value))
        }
    }

    /// Attributes without a value (RFC 8866 section 5.13: property attributes).
    private static func flag(_ name: String) -> Attribute {
        switch name {
        case "ice-lite": return .iceLite
        case "extmap-allow-mixed": return .extmapAllowMixed
        case "rtcp-mux": return .rtcpMux
        case "rtcp-rsize": return .rtcpRsize
        case "end-of-candidates": return .endOfCandidates
        case "bundle-only": return .bundleOnly
        default:
            if let direction = MediaDirection(rawValue: name) { return .direction(direction) }
            return .other(name: name, value: nil)
        }
    }

    /// Reports a bad payload type in the first field of rtpmap/fmtp/rtcp-fb as such.
    private static func checkPayloadType(_ value: Substring, line: Int, wildcard: Bool = false) throws(SDPError) {
        let first = Fields.words(value).first ?? ""
        if wildcard && first == "*" { return }
        guard Fields.payloadType(first) != nil else { throw .invalidPayloadType(line: line, value: String(first)) }
    }

    /// The text after `a=`.
    var sdpValue: String {
        switch self {
        case .group(let v): return "group:\(v.sdpValue)"
        case .msidSemantic(let v): return "msid-semantic:\(v.sdpValue)"
        case .fingerprint(let v): return "fingerprint:\(v.sdpValue)"
        case .iceUfrag(let v): return "ice-ufrag:\(v)"
        case .icePwd(let v): return "ice-pwd:\(v)"
        case .iceOptions(let v): return "ice-options:\(v.joined(separator: " "))"
        case .iceLite: return "ice-lite"
        case .setup(let v): return "setup:\(v.rawValue)"
        case .direction(let v): return v.rawValue
        case .extmapAllowMixed: return "extmap-allow-mixed"
        case .extmap(let v): return "extmap:\(v.sdpValue)"
        case .mid(let v): return "mid:\(v)"
        case .rtcp(let v): return "rtcp:\(v.sdpValue)"
        case .rtcpMux: return "rtcp-mux"
        case .rtcpRsize: return "rtcp-rsize"
        case .msid(let v): return "msid:\(v.sdpValue)"
        case .ssrc(let v): return "ssrc:\(v.sdpValue)"
        case .ssrcGroup(let v): return "ssrc-group:\(v.sdpValue)"
        case .rtpmap(let v): return "rtpmap:\(v.sdpValue)"
        case .fmtp(let v): return "fmtp:\(v.sdpValue)"
        case .rtcpFeedback(let v): return "rtcp-fb:\(v.sdpValue)"
        case .rid(let v): return "rid:\(v.sdpValue)"
        case .simulcast(let v): return "simulcast:\(v.sdpValue)"
        case .candidate(let v): return "candidate:\(v.sdpValue)"
        case .endOfCandidates: return "end-of-candidates"
        case .bundleOnly: return "bundle-only"
        case .other(let name, let value): return value.map { "\(name):\($0)" } ?? name
        }
    }
}
