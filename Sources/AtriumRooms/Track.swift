public import AtriumModel

/// A published track. The media plane binds it to a transceiver's mid.
public struct Track: Equatable, Sendable, Codable {
    public var id: TrackID
    public var owner: ParticipantID
    public var source: TrackSource
    public var kind: TrackKind
    public var name: String
    public var width: Int
    public var height: Int
    public var layers: [SimulcastLayer]
    public var muted: Bool
    /// The share this track belongs to (screen_share and screen_share_audio tracks).
    public var shareID: ShareID?

    public init(
        id: TrackID, owner: ParticipantID, source: TrackSource, name: String, width: Int = 0,
        height: Int = 0, layers: [SimulcastLayer] = [], muted: Bool = false, shareID: ShareID? = nil
    ) {
        self.id = id
        self.owner = owner
        self.source = source
        self.kind = TrackKind(source: source)
        self.name = name
        self.width = width
        self.height = height
        self.layers = layers
        self.muted = muted
        self.shareID = shareID
    }
}
