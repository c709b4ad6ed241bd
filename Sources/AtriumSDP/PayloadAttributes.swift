/// `a=rtpmap:<payload type> <encoding name>/<clock rate>[/<encoding parameters>]`
/// (RFC 8866 section 6.6). For audio the encoding parameter is the channel count.
public struct RTPMap: Equatable, Sendable {
    public var payloadType: UInt8
    public var encodingName: String
    public var clockRate: UInt32
    public var channels: UInt16?

    public init(payloadType: UInt8, encodingName: String, clockRate: UInt32, channels: UInt16? = nil) {
        self.payloadType = payloadType
        self.encodingName = encodingName
        self.clockRate = clockRate
        self.channels = channels
    }

    init?(sdp value: Substring) {
        let f = Fields.words(value)
        guard f.count == 2, let pt = Fields.payloadType(f[0]) else { return nil }
        let parts = Fields.split(f[1], on: "/")
        guard parts.count == 2 || parts.count == 3, !parts[0].isEmpty, let clock: UInt32 = Fields.decimal(parts[1])
        else { return nil }
        var channels: UInt16?
        if parts.count == 3 {
            guard let c: UInt16 = Fields.decimal(parts[2]) else { return nil }
            channels = c
        }
        self.init(payloadType: pt, encodingName: String(parts[0]), clockRate: clock, channels: channels)
    }

    var sdpValue: String {
        let base = "\(payloadType) \(encodingName)/\(clockRate)"
        return channels.map { "\(base)/\($0)" } ?? base
    }
}

/// `a=fmtp:<payload type> <format specific parameters>` (RFC 8866 section 6.15), the parameters
/// split into ordered `name=value` pairs (`a=fmtp:101 0-15` gives one bare name, `0-15`).
public struct FMTP: Equatable, Sendable {
    public var payloadType: UInt8
    public var parameters: [FormatParameter]

    public init(payloadType: UInt8, parameters: [FormatParameter]) {
        self.payloadType = payloadType
        self.parameters = parameters
    }

    init?(sdp value: Substring) {
        let (ptText, rest) = Fields.splitOnce(value, at: " ")
        guard let pt = Fields.payloadType(ptText) else { return nil }
        self.init(payloadType: pt, parameters: rest.map(Fields.parameters) ?? [])
    }

    var sdpValue: String { parameters.isEmpty ? "\(payloadType)" : "\(payloadType) \(parameters.sdpValue)" }
}

/// `a=rtcp-fb:<payload type or *> <type> [<parameters>]` (RFC 4585 section 4.2), e.g. `nack pli`,
/// `ccm fir` (RFC 5104), `transport-cc`, `goog-remb`.
public struct RTCPFeedback: Equatable, Sendable {
    /// nil for the wildcard `*`, which applies to every payload type of the section.
    public var payloadType: UInt8?
    public var type: String
    public var parameter: String?

    public init(payloadType: UInt8?, type: String, parameter: String? = nil) {
        self.payloadType = payloadType
        self.type = type
        self.parameter = parameter
    }

    init?(sdp value: Substring) {
        let f = Fields.words(value)
        guard f.count >= 2 else { return nil }
        var pt: UInt8?
        if f[0] != "*" {
            guard let p = Fields.payloadType(f[0]) else { return nil }
            pt = p
        }
        let rest = f.dropFirst(2).map(String.init)
        self.init(payloadType: pt, type: String(f[1]), parameter: rest.isEmpty ? nil : rest.joined(separator: " "))
    }

    var sdpValue: String {
        let base = "\(payloadType.map(String.init) ?? "*") \(type)"
        return parameter.map { "\(base) \($0)" } ?? base
    }
}
