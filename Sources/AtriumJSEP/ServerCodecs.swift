public import AtriumSDP

/// A codec the server forwards, with the payload types it uses in its own offers (to subscribers).
/// Publishers keep their own payload types; the forwarding core maps them per consumer.
public struct ServerCodec: Equatable, Sendable {
    public enum Name: String, Sendable, CaseIterable {
        case opus, vp8, vp9, h264, av1
    }

    public var name: Name
    public var kind: MediaKind
    public var encodingName: String
    public var clockRate: UInt32
    public var channels: UInt16?
    /// The payload type in the server's offers.
    public var payloadType: UInt8
    /// The RTX payload type in the server's offers (video only).
    public var rtxPayloadType: UInt8?

    public var isVideo: Bool { kind == .video }
}

/// The codec chosen for one offered section: the server's codec and how the offerer wrote it.
public struct SelectedCodec: Equatable, Sendable {
    public var server: ServerCodec
    /// The offer's payload type, parameters and feedback for it.
    public var offered: Codec
    /// The offer's RTX payload type for it, if the offer has one.
    public var offeredRTX: UInt8?
    /// Feedback both sides use: what we answer.
    public var nack: Bool
    public var pli: Bool
    public var fir: Bool
    public var remb: Bool
    public var transportCC: Bool
}

/// What the server accepts, in its order of preference: VP8 first (every browser and aiortc decode it),
/// H264 (packetization-mode 1, baseline, constrained baseline or main), VP9, AV1; Opus for audio.
public enum ServerCodecs {
    public static let opus = ServerCodec(
        name: .opus, kind: .audio, encodingName: "opus", clockRate: 48000, channels: 2, payloadType: 111)
    public static let vp8 = ServerCodec(
        name: .vp8, kind: .video, encodingName: "VP8", clockRate: 90000, payloadType: 96, rtxPayloadType: 97)
    public static let h264 = ServerCodec(
        name: .h264, kind: .video, encodingName: "H264", clockRate: 90000, payloadType: 102, rtxPayloadType: 103)
    public static let vp9 = ServerCodec(
        name: .vp9, kind: .video, encodingName: "VP9", clockRate: 90000, payloadType: 98, rtxPayloadType: 99)
    public static let av1 = ServerCodec(
        name: .av1, kind: .video, encodingName: "AV1", clockRate: 90000, payloadType: 45, rtxPayloadType: 46)

    public static let preference: [ServerCodec] = [opus, vp8, h264, vp9, av1]

    /// H264 profiles forwarded: baseline (0x42, which includes constrained baseline) and main (0x4D).
    static let h264Profiles: Set<UInt8> = [0x42, 0x4D]

    /// Whether the server can forward this offered codec as `server`.
    public static func matches(_ codec: Codec, _ server: ServerCodec) -> Bool {
        guard codec.isNamed(server.encodingName), codec.clockRate == server.clockRate else { return false }
        switch server.name {
        case .opus: return (codec.channels ?? 1) <= 2
        case .h264:
            guard codec.h264PacketizationMode == 1,
                let profile = codec.h264ProfileLevelID
            else { return false }
            return h264Profiles.contains(profile.profileIDC)
        case .vp9:
            // Profile 0 only (8-bit 4:2:0), the one every decoder has.
            return (codec.parameters.value(for: "profile-id") ?? "0") == "0"
        case .vp8, .av1: return true
        }
    }

    /// The first server codec, in the server's order, that the section offers; nil when none is.
    public static func select(from section: MediaDescription) -> SelectedCodec? {
        preference.lazy.compactMap { select(from: section, only: $0) }.first
    }

    /// The offered codec the server can forward as `server`, nil when the section offers none.
    public static func select(from section: MediaDescription, only server: ServerCodec) -> SelectedCodec? {
        guard server.kind == section.kind, let codec = section.codecs.first(where: { matches($0, server) }) else {
            return nil
        }
        let fb = codec.feedback
        func has(_ type: String, _ parameter: String? = nil) -> Bool {
            fb.contains { $0.type == type && $0.parameter == parameter }
        }
        return SelectedCodec(
            server: server, offered: codec,
            offeredRTX: server.isVideo ? section.rtxPayloadType(for: codec.payloadType) : nil,
            nack: server.isVideo && has("nack"), pli: server.isVideo && has("nack", "pli"),
            fir: server.isVideo && has("ccm", "fir"), remb: has("goog-remb"), transportCC: has("transport-cc"))
    }
}

extension MediaDescription {
    /// Appends an offered codec as an answer takes it: the offer's payload type and parameters, the
    /// feedback both sides use, and its RTX format when NACK is used (publisher and player answers).
    mutating func appendAnswered(_ codec: SelectedCodec) {
        let pt = codec.offered.payloadType
        var feedback: [RTCPFeedback] = []
        if codec.remb { feedback.append(RTCPFeedback(payloadType: pt, type: "goog-remb")) }
        if codec.transportCC { feedback.append(RTCPFeedback(payloadType: pt, type: "transport-cc")) }
        if codec.fir { feedback.append(RTCPFeedback(payloadType: pt, type: "ccm", parameter: "fir")) }
        if codec.nack { feedback.append(RTCPFeedback(payloadType: pt, type: "nack")) }
        if codec.pli { feedback.append(RTCPFeedback(payloadType: pt, type: "nack", parameter: "pli")) }
        appendCodec(
            payloadType: pt, server: codec.server, parameters: codec.offered.parameters, feedback: feedback,
            rtxPayloadType: codec.nack ? codec.offeredRTX : nil)
    }

    /// Appends `a=rtpmap`, `a=fmtp` and `a=rtcp-fb` for one codec and its RTX format.
    mutating func appendCodec(
        payloadType: UInt8, server: ServerCodec, parameters: [FormatParameter], feedback: [RTCPFeedback],
        rtxPayloadType: UInt8?
    ) {
        formats.append(String(payloadType))
        attributes.append(
            .rtpmap(
                RTPMap(
                    payloadType: payloadType, encodingName: server.encodingName, clockRate: server.clockRate,
                    channels: server.channels)))
        for f in feedback { attributes.append(.rtcpFeedback(f)) }
        if !parameters.isEmpty { attributes.append(.fmtp(FMTP(payloadType: payloadType, parameters: parameters))) }
        if let rtx = rtxPayloadType {
            formats.append(String(rtx))
            attributes.append(.rtpmap(RTPMap(payloadType: rtx, encodingName: "rtx", clockRate: server.clockRate)))
            attributes.append(
                .fmtp(FMTP(payloadType: rtx, parameters: [FormatParameter(name: "apt", value: String(payloadType))])))
        }
    }
}
