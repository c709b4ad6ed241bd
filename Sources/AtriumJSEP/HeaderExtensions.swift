public import AtriumSDP

/// The RTP header extensions the media plane reads or writes, by URI, and their ids in one direction
/// of one transport (ids are per peer: a browser picks them in its offer).
public struct HeaderExtensionIDs: Equatable, Sendable {
    public static let midURI = "urn:ietf:params:rtp-hdrext:sdes:mid"
    public static let ridURI = "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"
    public static let repairedRidURI = "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id"
    public static let absSendTimeURI = "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time"
    public static let transportWideCCURI = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
    public static let audioLevelURI = "urn:ietf:params:rtp-hdrext:ssrc-audio-level"
    /// The AV1 RTP specification's dependency descriptor (appendix A): answered and forwarded on AV1
    /// sections, where it gives each frame's spatial and temporal layer.
    public static let dependencyDescriptorURI =
        "https://aomediacodec.github.io/av1-rtp-spec/#dependency-descriptor-rtp-header-extension"
    /// The id the server gives it towards subscribers (AV1 sections only).
    public static let subscriberDependencyDescriptorID: UInt8 = 3

    /// What a publisher may send us, in the answer's order.
    public static let publishURIs = [midURI, ridURI, repairedRidURI, absSendTimeURI, transportWideCCURI, audioLevelURI]

    public var mid: UInt8?
    public var rid: UInt8?
    public var repairedRid: UInt8?
    public var absSendTime: UInt8?
    public var transportWideCC: UInt8?
    public var audioLevel: UInt8?
    public var dependencyDescriptor: UInt8?

    public init(
        mid: UInt8? = nil, rid: UInt8? = nil, repairedRid: UInt8? = nil, absSendTime: UInt8? = nil,
        transportWideCC: UInt8? = nil, audioLevel: UInt8? = nil, dependencyDescriptor: UInt8? = nil
    ) {
        self.dependencyDescriptor = dependencyDescriptor
        self.mid = mid
        self.rid = rid
        self.repairedRid = repairedRid
        self.absSendTime = absSendTime
        self.transportWideCC = transportWideCC
        self.audioLevel = audioLevel
    }

    /// The ids of the URIs we understand among a section's `a=extmap` lines (one-byte ids only: 1-14,
    /// or up to 255 when the two-byte form is allowed; ids above 255 are ignored).
    public init(extmaps: [Extmap]) {
        func id(_ uri: String) -> UInt8? {
            extmaps.first { $0.uri == uri && $0.id >= 1 && $0.id <= 255 }.map { UInt8($0.id) }
        }
        self.init(
            mid: id(Self.midURI), rid: id(Self.ridURI), repairedRid: id(Self.repairedRidURI),
            absSendTime: id(Self.absSendTimeURI), transportWideCC: id(Self.transportWideCCURI),
            audioLevel: id(Self.audioLevelURI), dependencyDescriptor: id(Self.dependencyDescriptorURI))
    }

    /// The ids the server uses towards subscribers (its own offers).
    public static let subscriber = HeaderExtensionIDs(absSendTime: 2, transportWideCC: 4, audioLevel: 1)

    /// `a=extmap` lines for these ids.
    public var extmaps: [Extmap] {
        var out: [Extmap] = []
        let pairs: [(UInt8?, String)] = [
            (audioLevel, Self.audioLevelURI), (absSendTime, Self.absSendTimeURI), (mid, Self.midURI),
            (rid, Self.ridURI), (repairedRid, Self.repairedRidURI), (transportWideCC, Self.transportWideCCURI),
            (dependencyDescriptor, Self.dependencyDescriptorURI),
        ]
        for (id, uri) in pairs {
            if let id { out.append(Extmap(id: UInt16(id), uri: uri)) }
        }
        return out.sorted { $0.id < $1.id }
    }
}
