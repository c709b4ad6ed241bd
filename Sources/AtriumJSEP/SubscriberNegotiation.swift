public import AtriumSDP

/// One section of the server's offer to a subscriber: a track it receives, or a stopped one (port 0).
public struct SubscriberSection: Equatable, Sendable {
    public var mid: String
    public var kind: MediaKind
    public var codec: ServerCodec
    /// The publisher's format parameters (H264 profile, Opus options), written with the server's
    /// payload type.
    public var parameters: [FormatParameter]
    public var ssrc: UInt32
    public var rtxSSRC: UInt32?
    /// `a=msid:<streamID> <trackID>`: the publisher's participant id and the track id.
    public var streamID: String
    public var trackID: String
    public var cname: String
    public var active: Bool

    public init(
        mid: String, kind: MediaKind, codec: ServerCodec, parameters: [FormatParameter], ssrc: UInt32,
        rtxSSRC: UInt32?, streamID: String, trackID: String, cname: String, active: Bool
    ) {
        self.mid = mid
        self.kind = kind
        self.codec = codec
        self.parameters = parameters
        self.ssrc = ssrc
        self.rtxSSRC = rtxSSRC
        self.streamID = streamID
        self.trackID = trackID
        self.cname = cname
        self.active = active
    }
}

/// The server's offers to a subscriber and the checks on its answers.
public enum SubscriberNegotiation {
    /// An offer with one `sendonly` section per live track. A section whose track ended stays, `inactive`
    /// and without SSRCs, on the same transport and in the BUNDLE group: a BUNDLE group whose sections
    /// were all rejected would end the transport, and browsers refuse (or rebuild ICE and DTLS for) the
    /// next offer.
    /// With `data`, a data channel section (mid `data`) comes first, on every offer of the connection.
    public static func offer(
        sections: [SubscriberSection], local: LocalTransport, sessionID: UInt64, version: UInt64, data: Bool = false
    ) -> SessionDescription {
        var out = SessionDescription(
            origin: Origin(
                username: "atrium", sessionID: sessionID, sessionVersion: version, networkType: "IN",
                addressType: "IP4", address: "127.0.0.1"))
        let mids = (data ? [dataMid] : []) + sections.map(\.mid)
        if !mids.isEmpty { out.attributes.append(.group(Group(semantics: "BUNDLE", mids: mids))) }
        out.attributes.append(.iceLite)
        out.attributes.append(.msidSemantic(MsidSemantic(semantic: "WMS", identifiers: ["*"])))
        if data {
            var m = MediaDescription(
                kind: .application, port: local.port, proto: "UDP/DTLS/SCTP", formats: ["webrtc-datachannel"],
                connection: local.connection)
            m.attributes =
                local.attributes(setup: .actpass) + [
                    .mid(dataMid), .other(name: "sctp-port", value: "5000"),
                    .other(name: "max-message-size", value: String(DataChannelSDP.maxMessageSize)),
                ]
            out.media.append(m)
        }
        for s in sections {
            var m = MediaDescription(kind: s.kind, port: local.port, formats: [], connection: local.connection)
            m.attributes = local.attributes(setup: .actpass)
            m.attributes.append(.mid(s.mid))
            if s.active {
                let ext = HeaderExtensionIDs.subscriber
                m.attributes += ext.extmaps.filter { s.kind == .audio || $0.uri != HeaderExtensionIDs.audioLevelURI }
                    .map(Attribute.extmap)
                if s.codec.name == .av1 {
                    m.attributes.append(
                        .extmap(
                            Extmap(
                                id: UInt16(HeaderExtensionIDs.subscriberDependencyDescriptorID),
                                uri: HeaderExtensionIDs.dependencyDescriptorURI)))
                }
            }
            m.attributes += [.direction(s.active ? .sendonly : .inactive), .rtcpMux, .rtcpRsize]
            let pt = s.codec.payloadType
            let feedback: [RTCPFeedback] =
                s.codec.isVideo
                ? [
                    RTCPFeedback(payloadType: pt, type: "ccm", parameter: "fir"),
                    RTCPFeedback(payloadType: pt, type: "nack"),
                    RTCPFeedback(payloadType: pt, type: "nack", parameter: "pli"),
                    RTCPFeedback(payloadType: pt, type: "transport-cc"),
                    // For a receiver that takes only REMB: its own estimate is then used.
                    RTCPFeedback(payloadType: pt, type: "goog-remb"),
                ] : []
            m.appendCodec(
                payloadType: pt, server: s.codec, parameters: s.parameters, feedback: feedback,
                rtxPayloadType: s.codec.rtxPayloadType)
            if s.active {
                m.attributes.append(.msid(Msid(streamID: s.streamID, trackID: s.trackID)))
                if let rtx = s.rtxSSRC, s.codec.rtxPayloadType != nil {
                    m.attributes.append(.ssrcGroup(SSRCGroup(semantics: "FID", ssrcs: [s.ssrc, rtx])))
                }
                for ssrc in [s.ssrc] + (s.codec.rtxPayloadType != nil ? [s.rtxSSRC].compactMap { $0 } : []) {
                    m.attributes.append(.ssrc(SSRCAttribute(ssrc: ssrc, name: "cname", value: s.cname)))
                    m.attributes.append(
                        .ssrc(SSRCAttribute(ssrc: ssrc, name: "msid", value: "\(s.streamID) \(s.trackID)")))
                }
            }
            out.media.append(m)
        }
        return out
    }

    /// The mid of the data channel section.
    public static let dataMid = "data"

    /// A subscriber's answer to an offer, checked.
    public struct Answer: Equatable, Sendable {
        /// The peer's SCTP port when it accepted the data channel section.
        public var sctpPort: UInt16? = nil
        public var remote: RemoteTransport
        /// The mids the subscriber accepted (not port 0, receiving).
        public var accepted: Set<String>
        /// Per accepted mid: does the subscriber take RTX and NACK for it.
        public var rtx: Set<String>
        public var nack: Set<String>
        /// Per accepted mid: the payload types the answer gives the offered codec and its RTX. An
        /// answerer may renumber (aiortc takes only 96-127 as its own and answers with its numbers);
        /// the server then sends with the answer's (RFC 8829 section 5.3.1: the answer's numbers are
        /// what the answerer expects to receive).
        public var payloadTypes: [String: AnsweredPayloadTypes]
        /// The transport-wide sequence number extension's id when the answer kept it: the subscriber
        /// then sends transport-wide feedback the server estimates its bandwidth from.
        public var transportWideCC: UInt8?
    }

    public struct AnsweredPayloadTypes: Equatable, Sendable {
        public var media: UInt8
        public var rtx: UInt8?
    }

    public static func answer(text: String, offer: SessionDescription) throws(JSEPError) -> Answer {
        let sdp: SessionDescription
        do { sdp = try SessionDescription.parse(text) } catch { throw .invalidSDP(error) }
        let offeredMids = offer.media.compactMap(\.mid)
        guard sdp.media.compactMap(\.mid) == offeredMids else {
            throw .unsupported("the answer's media sections do not match the offer's (mids \(offeredMids))")
        }
        let remote = try RemoteTransport(sdp)
        // An answer settles the DTLS roles (RFC 8842 section 5.3) and has credentials of its own: this
        // also refuses the server's own offer sent back.
        guard remote.setup == .active || remote.setup == .passive else {
            throw .unsupported("an answer's a=setup is active or passive, not \(remote.setup.rawValue)")
        }
        guard offer.media.first(where: { $0.port != 0 })?.iceUfrag != remote.ufrag else {
            throw .unsupported("the answer carries the offer's own ICE credentials")
        }
        var accepted = Set<String>()
        var rtx = Set<String>()
        var nack = Set<String>()
        var payloadTypes: [String: AnsweredPayloadTypes] = [:]
        for (m, o) in zip(sdp.media, offer.media) {
            guard let mid = m.mid, m.port != 0, o.port != 0, o.direction == .sendonly,
                m.direction == .recvonly || m.direction == .sendrecv
            else { continue }
            let codecs = m.codecs
            // The offered codec in the answer, by name and clock rate (and channels): a section whose
            // answer names none of it is not accepted.
            guard let offered = o.codecs.first(where: { !$0.isRTX }),
                let chosen = codecs.first(where: {
                    $0.isNamed(offered.name) && $0.clockRate == offered.clockRate
                        && ($0.channels ?? 1) == (offered.channels ?? 1)
                })
            else { continue }
            accepted.insert(mid)
            let answeredRTX = m.rtxPayloadType(for: chosen.payloadType)
            payloadTypes[mid] = AnsweredPayloadTypes(media: chosen.payloadType, rtx: answeredRTX)
            if answeredRTX != nil { rtx.insert(mid) }
            if codecs.contains(where: { c in c.feedback.contains { $0.type == "nack" && $0.parameter == nil } }) {
                nack.insert(mid)
            }
        }
        if !accepted.isEmpty {
            guard rtcpMuxOnAll(sdp, accepted) else { throw .unsupported("the answer has no a=rtcp-mux") }
        }
        let twcc = sdp.media.lazy.compactMap { HeaderExtensionIDs(extmaps: $0.extmaps).transportWideCC }.first
        let data = zip(sdp.media, offer.media).first { m, o in m.isDataChannel && o.isDataChannel && m.port != 0 }
        return Answer(
            sctpPort: data.map { $0.0.sctpPort ?? 5000 }, remote: remote, accepted: accepted, rtx: rtx, nack: nack,
            payloadTypes: payloadTypes, transportWideCC: twcc)
    }

    static func rtcpMuxOnAll(_ sdp: SessionDescription, _ mids: Set<String>) -> Bool {
        sdp.media.filter { $0.mid.map(mids.contains) ?? false }.allSatisfy(\.rtcpMux)
    }
}
