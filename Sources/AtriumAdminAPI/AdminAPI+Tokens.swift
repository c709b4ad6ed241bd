import AtriumAuth
import AtriumHTTP
import AtriumJSON
import AtriumModel

/// `POST /v1/tokens`: an application server with a room-admin token mints participant tokens, signed
/// with the same API key, without holding the secret itself.
extension AdminAPI {
    static let tokenFields: Set<String> = [
        "room", "identity", "name", "role", "sources", "canPublish", "canSubscribe", "hidden", "ttl", "canPublishData",
    ]

    func mintToken(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let claims = try authenticate(request)
        let body = try jsonBody(request)
        for key in body.keys where !Self.tokenFields.contains(key) { throw .invalidField(key, "unknown field") }
        guard let room = body["room"]?.stringValue, !room.isEmpty else {
            throw .invalidField("room", "a room name or id is required")
        }
        guard let identity = body["identity"]?.stringValue, ParticipantIdentity.isValid(identity) else {
            throw .invalidField(
                "identity", "1 to 256 characters without control characters or '/', and not '.' or '..'")
        }
        do throws(AuthError) { try claims.authorize(.mintToken(room: room)) } catch { throw .auth(error) }
        var grants = Grants()
        grants.room = room
        grants.roomJoin = true
        if let r = body["role"] { grants.role = try RoomCoding.enumValue(r, "role") }
        grants.canPublish = grants.role != .viewer
        grants.canSubscribe = true
        if let v = body["canPublish"] { grants.canPublish = try RoomCoding.bool(v, "canPublish") }
        if let v = body["canSubscribe"] { grants.canSubscribe = try RoomCoding.bool(v, "canSubscribe") }
        if let v = body["hidden"] { grants.hidden = try RoomCoding.bool(v, "hidden") }
        if let v = body["canPublishData"] { grants.canPublishData = try RoomCoding.bool(v, "canPublishData") }
        if let v = body["sources"] {
            guard let arr = v.arrayValue else { throw .invalidField("sources", "expected an array of sources") }
            var set = Set<TrackSource>()
            for item in arr { set.insert(try RoomCoding.enumValue(item, "sources")) }
            grants.canPublishSources = set
        }
        var name: String?
        if let v = body["name"] {
            guard let s = v.stringValue, s.unicodeScalars.count <= 256 else {
                throw .invalidField("name", "expected a string of at most 256 characters")
            }
            name = s
        }
        var ttl: Int64 = 3600
        if let v = body["ttl"] { ttl = Int64(try RoomCoding.int(v, "ttl", 60...Int(Self.maxTokenTTL))) }
        guard let secret = verifier.keys[claims.issuer] else { throw .auth(.unknownKey(claims.issuer)) }
        let now = env.now()
        let token = TokenIssuer(key: claims.issuer, secret: secret)
            .token(identity: identity, name: name, grants: grants, ttl: ttl, now: now)
        return Self.json(
            201,
            [
                "token": .string(token), "identity": .string(identity), "room": .string(room),
                "expiresAt": .int(now + ttl),
            ])
    }
}
