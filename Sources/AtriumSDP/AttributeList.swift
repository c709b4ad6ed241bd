/// Typed views over an ordered attribute list, shared by the session and each media section. JSEP
/// lets several attributes sit at either level (RFC 8829 section 5.8: a media-level value wins).
public protocol AttributeList {
    var attributes: [Attribute] { get }
}

extension AttributeList {
    /// `a=group` lines (RFC 5888); the BUNDLE group is `bundleGroup`.
    public var groups: [Group] { attributes.compactMap { if case .group(let v) = $0 { v } else { nil } } }

    /// The first `a=group:BUNDLE` (RFC 8843 section 7); JSEP with max-bundle writes exactly one.
    public var bundleGroup: Group? { groups.first { $0.semantics == "BUNDLE" } }

    public var msidSemantic: MsidSemantic? {
        attributes.lazy.compactMap { if case .msidSemantic(let v) = $0 { v } else { nil } }.first
    }

    /// Every `a=fingerprint` (RFC 8122 section 5 allows several; aiortc sends sha-256, -384 and -512).
    public var fingerprints: [Fingerprint] {
        attributes.compactMap { if case .fingerprint(let v) = $0 { v } else { nil } }
    }

    public var iceUfrag: String? {
        attributes.lazy.compactMap { if case .iceUfrag(let v) = $0 { v } else { nil } }.first
    }

    public var icePwd: String? { attributes.lazy.compactMap { if case .icePwd(let v) = $0 { v } else { nil } }.first }

    public var iceOptions: [String] {
        attributes.lazy.compactMap { if case .iceOptions(let v) = $0 { v } else { nil } }.first ?? []
    }

    public var isICELite: Bool { attributes.contains(.iceLite) }

    public var setup: Setup? { attributes.lazy.compactMap { if case .setup(let v) = $0 { v } else { nil } }.first }

    /// The direction attribute written at this level, if any (RFC 8866 section 6.7).
    public var directionAttribute: MediaDirection? {
        attributes.lazy.compactMap { if case .direction(let v) = $0 { v } else { nil } }.first
    }

    public var extmapAllowMixed: Bool { attributes.contains(.extmapAllowMixed) }

    /// `a=extmap` lines (RFC 8285 section 8), in order.
    public var extmaps: [Extmap] { attributes.compactMap { if case .extmap(let v) = $0 { v } else { nil } } }

    /// The extension id negotiated for `uri` at this level, e.g. `urn:ietf:params:rtp-hdrext:sdes:mid`.
    /// The ids depend on each offer's section order: never hard-code them.
    public func extmapID(for uri: String) -> UInt16? { extmaps.first { $0.uri == uri }?.id }

    /// Values of attributes this module does not model, by name.
    public func otherAttributes(named name: String) -> [String?] {
        attributes.compactMap { if case .other(name, let v) = $0 { v } else { nil } }
    }
}

extension MediaDescription {
    public var mid: String? { attributes.lazy.compactMap { if case .mid(let v) = $0 { v } else { nil } }.first }

    /// The section's direction; `sendrecv` when none is written (RFC 8866 section 6.7).
    public var direction: MediaDirection { directionAttribute ?? .sendrecv }

    public var rtcpMux: Bool { attributes.contains(.rtcpMux) }
    public var rtcpReducedSize: Bool { attributes.contains(.rtcpRsize) }
    public var rtcp: RTCPAddress? { attributes.lazy.compactMap { if case .rtcp(let v) = $0 { v } else { nil } }.first }
    public var msids: [Msid] { attributes.compactMap { if case .msid(let v) = $0 { v } else { nil } } }
    public var ssrcAttributes: [SSRCAttribute] {
        attributes.compactMap { if case .ssrc(let v) = $0 { v } else { nil } }
    }
    /// The distinct SSRCs of `a=ssrc` lines, in first-seen order.
    public var ssrcs: [UInt32] {
        var seen = Set<UInt32>()
        return ssrcAttributes.compactMap { seen.insert($0.ssrc).inserted ? $0.ssrc : nil }
    }
    public var ssrcGroups: [SSRCGroup] { attributes.compactMap { if case .ssrcGroup(let v) = $0 { v } else { nil } } }
    public var rtpmaps: [RTPMap] { attributes.compactMap { if case .rtpmap(let v) = $0 { v } else { nil } } }
    public var fmtps: [FMTP] { attributes.compactMap { if case .fmtp(let v) = $0 { v } else { nil } } }
    public var rtcpFeedback: [RTCPFeedback] {
        attributes.compactMap { if case .rtcpFeedback(let v) = $0 { v } else { nil } }
    }
    public var rids: [RID] { attributes.compactMap { if case .rid(let v) = $0 { v } else { nil } } }
    public var simulcast: Simulcast? {
        attributes.lazy.compactMap { if case .simulcast(let v) = $0 { v } else { nil } }.first
    }
    public var candidates: [Candidate] { attributes.compactMap { if case .candidate(let v) = $0 { v } else { nil } } }
    public var endOfCandidates: Bool { attributes.contains(.endOfCandidates) }
    public var bundleOnly: Bool { attributes.contains(.bundleOnly) }
}
