/// One payload type of a media section with everything the negotiation layer matches on: its
/// `a=rtpmap` (or the static RFC 3551 assignment), `a=fmtp` parameters and `a=rtcp-fb` lines.
public struct Codec: Equatable, Sendable {
    public var payloadType: UInt8
    public var name: String
    public var clockRate: UInt32
    public var channels: UInt16?
    public var parameters: [FormatParameter]
    /// The section's `a=rtcp-fb` lines for this payload type, then those for `*`.
    public var feedback: [RTCPFeedback]

    public init(
        payloadType: UInt8, name: String, clockRate: UInt32, channels: UInt16? = nil,
        parameters: [FormatParameter] = [], feedback: [RTCPFeedback] = []
    ) {
        self.payloadType = payloadType
        self.name = name
        self.clockRate = clockRate
        self.channels = channels
        self.parameters = parameters
        self.feedback = feedback
    }

    /// Encoding names are case-insensitive (RFC 8866 section 6.6).
    public func isNamed(_ other: String) -> Bool { name.lowercased() == other.lowercased() }

    /// An RTX retransmission format (RFC 4588 section 8.1).
    public var isRTX: Bool { isNamed("rtx") }

    /// For RTX, the payload type it repairs: `apt` (RFC 4588 section 8.1).
    public var associatedPayloadType: UInt8? {
        guard isRTX, let apt = parameters.value(for: "apt") else { return nil }
        return Fields.payloadType(Substring(apt))
    }

    /// The static payload types of RFC 3551 section 6 that browsers still offer, for sections that
    /// list them without an `a=rtpmap`.
    static func staticPayloadType(_ pt: UInt8) -> Codec? {
        switch pt {
        case 0: return Codec(payloadType: 0, name: "PCMU", clockRate: 8000, channels: 1)
        case 3: return Codec(payloadType: 3, name: "GSM", clockRate: 8000, channels: 1)
        case 8: return Codec(payloadType: 8, name: "PCMA", clockRate: 8000, channels: 1)
        case 9: return Codec(payloadType: 9, name: "G722", clockRate: 8000, channels: 1)
        case 13: return Codec(payloadType: 13, name: "CN", clockRate: 8000, channels: 1)
        default: return nil
        }
    }
}

extension MediaDescription {
    /// The section's codecs in `m=` preference order. A payload type with neither an `a=rtpmap` nor a
    /// static assignment is left out: nothing can be negotiated for it.
    public var codecs: [Codec] {
        let maps = rtpmaps
        let params = fmtps
        let feedback = rtcpFeedback
        return payloadTypes.compactMap { pt in
            var codec: Codec
            if let map = maps.first(where: { $0.payloadType == pt }) {
                codec = Codec(payloadType: pt, name: map.encodingName, clockRate: map.clockRate, channels: map.channels)
            } else if let known = Codec.staticPayloadType(pt) {
                codec = known
            } else {
                return nil
            }
            codec.parameters = params.first(where: { $0.payloadType == pt })?.parameters ?? []
            codec.feedback =
                feedback.filter { $0.payloadType == pt } + feedback.filter { $0.payloadType == nil }
            return codec
        }
    }

    /// The codec for one payload type, if the section lists it.
    public func codec(payloadType: UInt8) -> Codec? { codecs.first { $0.payloadType == payloadType } }

    /// The RTX payload type whose `apt` names `payloadType` (RFC 4588 section 8.1), if any.
    public func rtxPayloadType(for payloadType: UInt8) -> UInt8? {
        codecs.first { $0.associatedPayloadType == payloadType }?.payloadType
    }
}
