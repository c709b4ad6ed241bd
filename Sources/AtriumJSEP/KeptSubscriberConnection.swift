public import AtriumSDP

/// What a subscriber connection the server offered is, read back from the last offer the client
/// applied: enough for another node to go on offering on the same connection (a participant that
/// joins again after its room's node was lost keeps its connection to an edge node). The server wrote
/// the offer (`SubscriberNegotiation.offer`); anything else is refused.
public struct KeptSubscriberConnection: Equatable, Sendable {
    public struct Section: Equatable, Sendable {
        public var mid: String
        public var kind: MediaKind
        /// The server's codec with the section's payload types.
        public var codec: ServerCodec
        public var parameters: [FormatParameter]
    }

    /// The server side's ICE credentials (the transport's own: the client proves its hold on the
    /// connection by knowing the password).
    public var ufrag: String
    public var password: String
    /// Where the transport is: its host candidates.
    public var addresses: [(host: String, port: UInt16)]
    public var sessionID: UInt64
    public var version: UInt64
    public var data: Bool
    /// Its media sections in order, each kept (ended) in the next offers.
    public var sections: [Section]

    public static func == (a: Self, b: Self) -> Bool {
        a.ufrag == b.ufrag && a.password == b.password && a.addresses.map(\.host) == b.addresses.map(\.host)
            && a.addresses.map(\.port) == b.addresses.map(\.port) && a.sessionID == b.sessionID
            && a.version == b.version && a.data == b.data && a.sections == b.sections
    }

    /// At most this many sections: a server's connection is renewed past 24 ended ones.
    public static let maxSections = 64

    public init(offer text: String) throws(JSEPError) {
        let sdp: SessionDescription
        do { sdp = try SessionDescription.parse(text) } catch { throw .invalidSDP(error) }
        guard !sdp.media.isEmpty, sdp.media.count <= Self.maxSections + 1 else {
            throw .unsupported("a subscriber offer has 1 to \(Self.maxSections) media sections")
        }
        var ufrag: String?
        var password: String?
        var addresses: [(String, UInt16)] = []
        var sections: [Section] = []
        var data = false
        var mids = Set<String>()
        for m in sdp.media {
            var mid: String?
            for a in m.attributes {
                switch a {
                case .iceUfrag(let u): ufrag = ufrag ?? u
                case .icePwd(let p): password = password ?? p
                case .mid(let v): mid = v
                case .candidate(let c) where c.transport.lowercased() == "udp" && c.kind == .host:
                    if !addresses.contains(where: { $0 == (c.address, c.port) }) {
                        addresses.append((c.address, c.port))
                    }
                default: break
                }
            }
            guard let mid, mids.insert(mid).inserted else { throw .unsupported("a section without a mid of its own") }
            if m.isDataChannel {
                guard mid == SubscriberNegotiation.dataMid else {
                    throw .unsupported("a data section not the server's")
                }
                data = true
                continue
            }
            guard let first = m.codecs.first,
                var codec = ServerCodecs.preference.first(where: {
                    $0.kind == m.kind && first.isNamed($0.encodingName) && $0.clockRate == first.clockRate
                })
            else { throw .unsupported("section \(mid): not a codec the server offers") }
            codec.payloadType = first.payloadType
            codec.rtxPayloadType = codec.isVideo ? m.rtxPayloadType(for: first.payloadType) : nil
            sections.append(Section(mid: mid, kind: m.kind, codec: codec, parameters: first.parameters))
        }
        guard let ufrag, let password, !addresses.isEmpty else {
            throw .unsupported("a subscriber offer names its ICE credentials and host candidates")
        }
        self.ufrag = ufrag
        self.password = password
        self.addresses = addresses
        self.sessionID = sdp.origin.sessionID
        self.version = sdp.origin.sessionVersion
        self.data = data
        self.sections = sections
    }
}
