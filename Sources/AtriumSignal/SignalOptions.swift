public import AtriumAuth
import AtriumModel
import AtriumProtocol

/// Limits and timers of the signaling endpoint.
public struct SignalOptions: Sendable {
    /// Seconds a new connection has to send its token.
    public var authTimeout: Double = 10
    /// Seconds without any message before a connection is considered dead (clients ping every 10 s).
    public var idleTimeout: Int64 = 30
    /// Seconds a participant whose socket dropped may resume before it leaves with reason disconnected.
    public var resumeWindow: Int64 = 20
    /// Sustained messages per second per connection, and the burst above it.
    public var rateLimit: Double = 50
    public var rateBurst: Double = 100
    /// Messages dropped within one second that make the server close the connection (4029).
    public var rateDropLimit = 200
    /// Seconds between two `network_quality` pushes to each room with media.
    public var networkQualityInterval: Int64 = 5
    /// TURN servers and the secret their time-limited credentials are signed with; nil: none given to
    /// clients (they reach the media plane directly, over UDP or ICE-TCP).
    public var turn: TURNSettings?

    public init() {}
}

extension GrantsInfo {
    /// A token's grants as `welcome` shows them.
    init(_ g: Grants) {
        self.init()
        room = g.room
        roomJoin = g.roomJoin
        roomCreate = g.roomCreate
        roomList = g.roomList
        roomAdmin = g.roomAdmin
        canPublish = g.canPublish
        canSubscribe = g.canSubscribe
        canPublishSources = g.canPublishSources.map { s in TrackSource.allCases.filter(s.contains) }
        role = g.role
        hidden = g.hidden
        canPublishData = g.canPublishData
    }
}
