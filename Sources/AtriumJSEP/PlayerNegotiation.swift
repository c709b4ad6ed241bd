public import AtriumSDP

/// One receiving section of a player's offer (WHEP: the client offers, the server sends).
public struct PlayerSection: Equatable, Sendable {
    public var index: Int
    public var mid: String
    public var kind: MediaKind
    /// The server codecs the section takes, each as the offer wrote it (its payload types, format
    /// parameters, feedback), in the server's order of preference. Empty: the section is rejected.
    public var codecs: [SelectedCodec]
    /// The ids the offer gave the header extensions the server writes.
    public var extensions: HeaderExtensionIDs
    /// The SSRCs the server sends this section with (its RTX SSRC for video).
    public var ssrc: UInt32
    public var rtxSSRC: UInt32

    /// The codec the section takes for a track of `name`, nil when it takes none.
    public func codec(_ name: ServerCodec.Name) -> SelectedCodec? { codecs.first { $0.server.name == name } }
}

/// A player's offer: receive-only (or send-receive) audio and video sections, which the server answers
/// `sendonly` with its own SSRCs and every codec it forwards that the section offers, so that a section
/// can carry tracks of different codecs over its life (the player follows the room's share).
public struct PlayerOffer: Equatable, Sendable {
    public var sdp: SessionDescription
    public var remote: RemoteTransport
    public var sections: [PlayerSection]

    /// Parses and checks an offer: BUNDLE over every live section, rtcp-mux, ICE credentials, a sha-256
    /// fingerprint, a mid on every section. `ssrcs` draws the server's SSRCs (two per section).
    public init(text: String, ssrcs: () -> UInt32) throws(JSEPError) {
        let sdp: SessionDescription
        do { sdp = try SessionDescription.parse(text) } catch { throw .invalidSDP(error) }
        self.sdp = sdp
        remote = try RemoteTransport(sdp)
        var mids = Set<String>()
        var sections: [PlayerSection] = []
        for (i, m) in sdp.media.enumerated() {
            guard let mid = m.mid else { throw .unsupported("media section \(i) has no a=mid") }
            guard mids.insert(mid).inserted else { throw .unsupported("mid \"\(mid)\" appears twice") }
            let live = (m.port != 0 || m.bundleOnly) && (m.direction == .recvonly || m.direction == .sendrecv)
            guard live, m.kind == .audio || m.kind == .video else { continue }
            guard m.rtcpMux else { throw .unsupported("media section \(mid) has no a=rtcp-mux") }
            let codecs = ServerCodecs.preference.filter { $0.kind == m.kind }.compactMap { server in
                ServerCodecs.select(from: m, only: server)
            }
            guard !codecs.isEmpty else { continue }
            sections.append(
                PlayerSection(
                    index: i, mid: mid, kind: m.kind, codecs: codecs,
                    extensions: HeaderExtensionIDs(extmaps: m.extmaps),
                    ssrc: ssrcs(), rtxSSRC: ssrcs()))
        }
        guard !sections.isEmpty else {
            throw .unsupported("the offer receives no audio or video in a codec the server forwards")
        }
        guard let bundle = sdp.bundleGroup, sections.allSatisfy({ bundle.mids.contains($0.mid) }) else {
            throw .unsupported("every media section must be in one a=group:BUNDLE (use bundlePolicy max-bundle)")
        }
        self.sections = sections
    }

    /// The server's DTLS role in the answer (RFC 8842): passive unless the offerer is passive itself.
    public var answerSetup: Setup { remote.setup == .passive ? .active : .passive }

    /// The transport-wide sequence number extension's id, when a section negotiated transport-cc: the
    /// player then sends the feedback the server estimates its link from.
    public var transportWideCC: UInt8? {
        sections.lazy.filter { $0.codecs.contains(where: \.transportCC) }.compactMap(\.extensions.transportWideCC)
            .first
    }

    /// The answer: each taken section `sendonly` with its codecs (the offer's payload types), RTX where
    /// offered, the feedback both sides use, the header extensions the server writes (by the offer's
    /// ids) and the section's SSRCs under `streamID`; the others rejected at port 0.
    public func answer(local: LocalTransport, streamID: String, sessionID: UInt64) -> SessionDescription {
        var out = SessionDescription(
            origin: Origin(
                username: "atrium", sessionID: sessionID, sessionVersion: 1, networkType: "IN", addressType: "IP4",
                address: "127.0.0.1"))
        out.attributes.append(.group(Group(semantics: "BUNDLE", mids: sections.map(\.mid))))
        out.attributes.append(.iceLite)
        out.attributes.append(.msidSemantic(MsidSemantic(semantic: "WMS", identifiers: [streamID])))
        if sdp.extmapAllowMixed { out.attributes.append(.extmapAllowMixed) }
        for (i, offered) in sdp.media.enumerated() {
            guard let s = sections.first(where: { $0.index == i }) else {
                out.media.append(
                    PublishOffer.rejected(offered, mid: offered.mid ?? String(i), local: local, setup: answerSetup))
                continue
            }
            var m = MediaDescription(
                kind: offered.kind, port: local.port, proto: offered.proto, formats: [], connection: local.connection)
            m.attributes = local.attributes(setup: answerSetup) + [.mid(s.mid)]
            let av1 = s.codec(.av1) != nil
            for e in offered.extmaps
            where Self.writtenURIs.contains(e.uri) || (av1 && e.uri == HeaderExtensionIDs.dependencyDescriptorURI) {
                // Audio levels on audio only, as the server writes them.
                if e.uri == HeaderExtensionIDs.audioLevelURI && s.kind != .audio { continue }
                m.attributes.append(.extmap(Extmap(id: e.id, uri: e.uri)))
            }
            m.attributes += [.direction(.sendonly), .rtcpMux]
            if offered.rtcpReducedSize { m.attributes.append(.rtcpRsize) }
            for codec in s.codecs { m.appendAnswered(codec) }
            let track = "\(streamID)-\(s.mid)"
            m.attributes.append(.msid(Msid(streamID: streamID, trackID: track)))
            let rtx = s.kind == .video && s.codecs.contains { $0.nack && $0.offeredRTX != nil }
            if rtx { m.attributes.append(.ssrcGroup(SSRCGroup(semantics: "FID", ssrcs: [s.ssrc, s.rtxSSRC]))) }
            for ssrc in [s.ssrc] + (rtx ? [s.rtxSSRC] : []) {
                m.attributes.append(.ssrc(SSRCAttribute(ssrc: ssrc, name: "cname", value: streamID)))
                m.attributes.append(.ssrc(SSRCAttribute(ssrc: ssrc, name: "msid", value: "\(streamID) \(track)")))
            }
            out.media.append(m)
        }
        return out
    }

    /// The header extensions the server writes towards a receiver.
    static let writtenURIs = [
        HeaderExtensionIDs.absSendTimeURI, HeaderExtensionIDs.transportWideCCURI, HeaderExtensionIDs.audioLevelURI,
    ]
}
