public import AtriumModel

/// What a token allows, carried in its `grants` claim. Absent fields grant nothing, except
/// `canPublishSources`, whose absence means every source (subject to `canPublish` and the role), and
/// `canPublishData`, whose absence allows sending data messages (chat, reactions) as in LiveKit.
public struct Grants: Equatable, Sendable, Codable {
    /// The room (name or id) the token is scoped to; nil for a token not tied to one room.
    public var room: String?
    public var roomJoin = false
    public var roomCreate = false
    public var roomList = false
    public var roomAdmin = false
    public var canPublish = false
    public var canSubscribe = false
    /// nil: every source. An empty set: none.
    public var canPublishSources: Set<TrackSource>?
    /// Sending data messages (`send_data`, data channels); hosts can revoke it live.
    public var canPublishData = true
    public var role: ParticipantRole = .participant
    /// Hidden participants (recorders, bots) are not announced to others.
    public var hidden = false

    public init() {}

    /// Whether these grants allow publishing a track from `source` (pure; the hub adds room policy).
    public func allowsPublishing(_ source: TrackSource) -> Bool {
        guard canPublish, role != .viewer else { return false }
        return canPublishSources?.contains(source) ?? true
    }
}

/// The claims Atrium reads from a token (RFC 7519 section 4.1 plus our own).
public struct TokenClaims: Equatable, Sendable {
    /// `iss`: the API key whose secret signed the token.
    public var issuer: String
    /// `sub`: the participant's identity.
    public var identity: String
    /// `name`: a display name.
    public var name: String?
    public var issuedAt: Int64?
    public var notBefore: Int64?
    public var expiresAt: Int64
    public var grants: Grants

    public init(
        issuer: String, identity: String, name: String? = nil, issuedAt: Int64? = nil,
        notBefore: Int64? = nil, expiresAt: Int64, grants: Grants
    ) {
        self.issuer = issuer
        self.identity = identity
        self.name = name
        self.issuedAt = issuedAt
        self.notBefore = notBefore
        self.expiresAt = expiresAt
        self.grants = grants
    }
}
