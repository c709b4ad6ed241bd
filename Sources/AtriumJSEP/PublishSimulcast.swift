import AtriumSDP

/// How the server negotiates a publisher's offer.
public struct PublishOptions: Equatable, Sendable {
    /// Accept simulcast (RFC 8853) on video sections whose codec is VP8 or H264: up to three of the
    /// offered `a=rid` streams are answered `a=rid:<id> recv` with `a=simulcast:recv <ids>`, and each
    /// section's accepted layers are in `OfferedSection.simulcast`.
    ///
    /// Off by default: today's media engine forwards one stream per track (a producer has one SSRC),
    /// so the server declines simulcast and the browser sends a single encoding. Turn it on only with
    /// an engine that maps rid-tagged streams to layers.
    public var simulcast: Bool

    public init(simulcast: Bool = false) {
        self.simulcast = simulcast
    }
}

/// The simulcast the answer accepts for one video section: its layers in the offer's order (the
/// publisher's order, usually lowest resolution first) and the header extension ids that tell a
/// packet's layer. Without SSRCs in the offer (Chrome writes none), a stream is known only by these.
public struct AcceptedSimulcast: Equatable, Sendable {
    /// One simulcast stream the server accepted: the rid it arrives with (the RFC 8852 header
    /// extension `rtp-stream-id`) and the offer's restrictions for it, when written.
    public struct Layer: Equatable, Sendable {
        public var rid: String
        /// The offer marked this stream `~` (RFC 8853 section 5.1): it starts paused. The answer keeps
        /// the mark.
        public var paused: Bool
        /// `max-width`, `max-height` and `max-fps` of the offer's `a=rid` line (RFC 8851 section 5).
        public var maxWidth: UInt32?
        public var maxHeight: UInt32?
        public var maxFPS: UInt32?

        public init(
            rid: String, paused: Bool = false, maxWidth: UInt32? = nil, maxHeight: UInt32? = nil, maxFPS: UInt32? = nil
        ) {
            self.rid = rid
            self.paused = paused
            self.maxWidth = maxWidth
            self.maxHeight = maxHeight
            self.maxFPS = maxFPS
        }
    }

    public var layers: [Layer]
    /// `urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id` (RFC 8852 section 3.3): the rid of a media packet.
    public var ridExtensionID: UInt8
    /// `urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id` (RFC 8852 section 3.3): the rid an RTX
    /// packet repairs, when offered.
    public var repairedRidExtensionID: UInt8?

    /// At most this many layers are accepted; further streams are left out of the answer.
    public static let maximumLayers = 3

    /// The codecs forwarded as simulcast. VP9 and AV1 carry their layers inside one stream (SVC) and
    /// need nothing in SDP: their sections stay single-stream.
    public static let codecs: Set<ServerCodec.Name> = [.vp8, .h264]

    public init(layers: [Layer], ridExtensionID: UInt8, repairedRidExtensionID: UInt8? = nil) {
        self.layers = layers
        self.ridExtensionID = ridExtensionID
        self.repairedRidExtensionID = repairedRidExtensionID
    }

    /// The answerer's choice for one offered section (RFC 8853 section 5.3.2), or nil to decline
    /// simulcast and answer the section single-stream. Simulcast is accepted for a video section whose
    /// chosen codec is VP8 or H264 and that offers the `rtp-stream-id` extension. For each sent
    /// stream, in the offer's order, the first alternative is kept that has an `a=rid ... send` line
    /// (RFC 8853 section 5.1) whose `pt=` list, if any, names the chosen codec's payload type; streams
    /// with no such alternative are removed, and so is every stream after the third kept. An answerer
    /// may remove streams and alternatives but never add or reorder them.
    init?(offered m: MediaDescription, codec: SelectedCodec?, extensions: HeaderExtensionIDs) {
        guard m.kind == .video, let codec, Self.codecs.contains(codec.server.name), let simulcast = m.simulcast,
            let ridExtensionID = extensions.rid
        else { return nil }
        let sent = m.rids.filter { $0.direction == .send }
        var layers: [Layer] = []
        var used = Set<String>()
        for stream in simulcast.send where layers.count < Self.maximumLayers {
            for alternative in stream where !used.contains(alternative.rid) {
                guard let rid = sent.first(where: { $0.id == alternative.rid }),
                    rid.payloadTypes.isEmpty || rid.payloadTypes.contains(codec.offered.payloadType)
                else { continue }
                used.insert(rid.id)
                layers.append(
                    Layer(
                        rid: rid.id, paused: alternative.paused, maxWidth: rid.maxWidth, maxHeight: rid.maxHeight,
                        maxFPS: rid.maxFPS))
                break
            }
        }
        guard !layers.isEmpty else { return nil }
        self.init(layers: layers, ridExtensionID: ridExtensionID, repairedRidExtensionID: extensions.repairedRid)
    }

    /// The answer's lines for these layers: `a=rid:<id> recv` for each (RFC 8851 section 6), then
    /// `a=simulcast:recv <ids>` in the same order (RFC 8853 section 5.3.2).
    var answerAttributes: [Attribute] {
        layers.map { .rid(RID(id: $0.rid, direction: .recv)) } + [
            .simulcast(Simulcast(receive: layers.map { [Simulcast.Alternative(rid: $0.rid, paused: $0.paused)] }))
        ]
    }
}
