public import AtriumSDP

/// One media section of a publisher's offer as the server sees it.
public struct OfferedSection: Equatable, Sendable {
    public enum Kind: String, Sendable {
        case audio, video
    }

    public var index: Int
    public var mid: String
    /// nil for a section that is neither audio nor video (a data channel): always rejected.
    public var kind: Kind?
    /// The client stopped this transceiver (port 0) or it does not send.
    public var stopped: Bool
    public var codec: SelectedCodec?
    /// The primary and RTX SSRCs from `a=ssrc`/`a=ssrc-group:FID`, when the offer lists them.
    public var ssrc: UInt32?
    public var rtxSSRC: UInt32?
    /// The ids of the offer's `a=rid ... send` lines (RFC 8851), in order, whether or not simulcast is
    /// accepted.
    public var rids: [String]
    public var extensions: HeaderExtensionIDs
    /// A data channel section (`m=application ... webrtc-datachannel`) that is not stopped, with the
    /// peer's SCTP port (5000 when it names none).
    public var sctpPort: UInt16? = nil
    /// The simulcast layers the answer accepts; nil when it declines simulcast (always, unless
    /// `PublishOptions.simulcast` is on) and the publisher sends one stream.
    public var simulcast: AcceptedSimulcast?
}

/// A publisher's offer, checked and reduced to what the forwarding core needs.
public struct PublishOffer: Equatable, Sendable {
    public var sdp: SessionDescription
    public var remote: RemoteTransport
    public var sections: [OfferedSection]
    /// How the offer is negotiated; the server passes none, and so declines simulcast.
    public var options: PublishOptions

    /// Parses and checks an offer: BUNDLE over every live section, rtcp-mux, ICE credentials, a sha-256
    /// fingerprint, and a mid on every section.
    public init(text: String, options: PublishOptions = PublishOptions()) throws(JSEPError) {
        let parsed: SessionDescription
        do { parsed = try SessionDescription.parse(text) } catch { throw .invalidSDP(error) }
        try self.init(parsed, options: options)
    }

    public init(_ sdp: SessionDescription, options: PublishOptions = PublishOptions()) throws(JSEPError) {
        self.sdp = sdp
        self.options = options
        remote = try RemoteTransport(sdp)
        guard !sdp.media.isEmpty else { throw .unsupported("the offer has no media section") }
        var mids = Set<String>()
        var sections: [OfferedSection] = []
        for (i, m) in sdp.media.enumerated() {
            guard let mid = m.mid else { throw .unsupported("media section \(i) has no a=mid") }
            guard mids.insert(mid).inserted else { throw .unsupported("mid \"\(mid)\" appears twice") }
            let kind: OfferedSection.Kind? =
                switch m.kind {
                case .audio: .audio
                case .video: .video
                default: nil
                }
            let stopped = (m.port == 0 && !m.bundleOnly) || !(m.direction == .sendonly || m.direction == .sendrecv)
            if !stopped && kind != nil {
                guard m.rtcpMux else { throw .unsupported("media section \(mid) has no a=rtcp-mux") }
            }
            let fid = m.ssrcGroups.first { $0.semantics == "FID" && $0.ssrcs.count == 2 }
            let codec = kind == nil ? nil : ServerCodecs.select(from: m)
            let extensions = HeaderExtensionIDs(extmaps: m.extmaps)
            sections.append(
                OfferedSection(
                    index: i, mid: mid, kind: kind, stopped: stopped, codec: codec,
                    ssrc: fid?.ssrcs[0] ?? m.ssrcs.first, rtxSSRC: fid?.ssrcs[1],
                    rids: m.rids.filter { $0.direction == .send }.map(\.id), extensions: extensions,
                    simulcast: options.simulcast && !stopped
                        ? AcceptedSimulcast(offered: m, codec: codec, extensions: extensions) : nil))
            if m.isDataChannel && (m.port != 0 || m.bundleOnly) && !sections.contains(where: { $0.sctpPort != nil }) {
                sections[sections.count - 1].sctpPort = m.sctpPort ?? 5000
            }
        }
        let live = sections.filter { (!$0.stopped && $0.kind != nil) || $0.sctpPort != nil }.map(\.mid)
        if !live.isEmpty {
            guard let bundle = sdp.bundleGroup, live.allSatisfy(bundle.mids.contains) else {
                throw .unsupported("every media section must be in one a=group:BUNDLE (use bundlePolicy max-bundle)")
            }
        }
        self.sections = sections
    }

    /// The server's DTLS role in the answer (RFC 8842): passive (DTLS server) unless the offerer insists
    /// on being passive itself.
    public var answerSetup: Setup { remote.setup == .passive ? .active : .passive }

    /// The answer: each accepted section `recvonly` with its codec, RTX and the feedback we act on,
    /// and its simulcast layers (`a=rid ... recv`, `a=simulcast:recv`) when they were accepted.
    /// A section refused by policy (`refused`: permission, lock, an unbound mid) is answered
    /// `inactive` on the same transport and in the BUNDLE group, so that the client's BUNDLE transport
    /// survives even when nothing is accepted; stopped sections and those without a forwarded codec
    /// are rejected at port 0.
    public func answer(
        local: LocalTransport, accepted: Set<String>, refused: Set<String> = [], sessionID: UInt64, version: UInt64
    ) -> SessionDescription {
        var out = SessionDescription(
            origin: Origin(
                username: "atrium", sessionID: sessionID, sessionVersion: version, networkType: "IN",
                addressType: "IP4", address: "127.0.0.1"))
        let bundled = sections.filter {
            ($0.codec != nil && (accepted.contains($0.mid) || (refused.contains($0.mid) && !$0.stopped)))
                || $0.sctpPort != nil
        }.map(\.mid)
        if !bundled.isEmpty { out.attributes.append(.group(Group(semantics: "BUNDLE", mids: bundled))) }
        out.attributes.append(.iceLite)
        out.attributes.append(.msidSemantic(MsidSemantic(semantic: "WMS", identifiers: ["*"])))
        if sdp.extmapAllowMixed { out.attributes.append(.extmapAllowMixed) }
        for s in sections {
            let offered = sdp.media[s.index]
            if s.sctpPort != nil {
                out.media.append(Self.dataChannel(offered, mid: s.mid, local: local, setup: answerSetup))
                continue
            }
            guard let codec = s.codec, bundled.contains(s.mid) else {
                out.media.append(Self.rejected(offered, mid: s.mid, local: local, setup: answerSetup))
                continue
            }
            let live = accepted.contains(s.mid)
            var m = MediaDescription(
                kind: offered.kind, port: local.port, proto: offered.proto, formats: [], connection: local.connection)
            m.attributes = local.attributes(setup: answerSetup)
            m.attributes += [.mid(s.mid)]
            let av1 = codec.server.name == .av1
            for e in offered.extmaps
            where HeaderExtensionIDs.publishURIs.contains(e.uri)
                || (av1 && e.uri == HeaderExtensionIDs.dependencyDescriptorURI)
            {
                m.attributes.append(.extmap(Extmap(id: e.id, uri: e.uri)))
            }
            m.attributes += [.direction(live ? .recvonly : .inactive), .rtcpMux]
            if offered.rtcpReducedSize { m.attributes.append(.rtcpRsize) }
            m.appendAnswered(codec)
            if live, let simulcast = s.simulcast { m.attributes += simulcast.answerAttributes }
            out.media.append(m)
        }
        return out
    }

    /// The peer's SCTP port when the offer has a data channel section (accepted: data channels are
    /// for everyone; sending on them is the room's `canPublishData`).
    public var sctpPort: UInt16? { sections.lazy.compactMap(\.sctpPort).first }

    /// The answer to a data channel section (RFC 8841): our SCTP port 5000 and the largest message.
    static func dataChannel(_ offered: MediaDescription, mid: String, local: LocalTransport, setup: Setup)
        -> MediaDescription
    {
        var m = MediaDescription(
            kind: .application, port: local.port, proto: offered.proto, formats: ["webrtc-datachannel"],
            connection: local.connection)
        m.attributes =
            local.attributes(setup: setup) + [
                .mid(mid), .other(name: "sctp-port", value: "5000"),
                .other(name: "max-message-size", value: String(DataChannelSDP.maxMessageSize)),
            ]
        return m
    }

    /// A rejected section (RFC 8829 section 5.3.1): port 0, the same kind and protocol, one format.
    /// It keeps the transport attributes: some stacks (aiortc) read ICE credentials, setup and
    /// rtcp-mux from every section, and candidates from the last one.
    static func rejected(_ offered: MediaDescription, mid: String, local: LocalTransport, setup: Setup)
        -> MediaDescription
    {
        var m = MediaDescription(
            kind: offered.kind, port: 0, proto: offered.proto, formats: Array(offered.formats.prefix(1)),
            connection: ConnectionData(address: "0.0.0.0"))
        m.attributes = local.attributes(setup: setup) + [.mid(mid), .direction(.inactive), .rtcpMux]
        // Some stacks read the codec of even a rejected section: keep the first format's rtpmap.
        if let first = offered.payloadTypes.first, let map = offered.rtpmaps.first(where: { $0.payloadType == first }) {
            m.attributes.append(.rtpmap(map))
        }
        return m
    }
}

/// What the server announces for data channels in its descriptions.
public enum DataChannelSDP {
    /// `a=max-message-size` (RFC 8841 section 6): the largest message the server takes.
    public static let maxMessageSize = 262_144
}
