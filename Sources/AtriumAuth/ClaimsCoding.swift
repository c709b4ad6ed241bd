public import AtriumJSON
import AtriumModel

/// The JSON form of `TokenClaims`: the registered claims of RFC 7519 section 4.1 and a `grants` object.
extension TokenClaims {
    public func json() -> JSONObject {
        var o = JSONObject()
        o["iss"] = .string(issuer)
        o["sub"] = .string(identity)
        if let name { o["name"] = .string(name) }
        if let issuedAt { o["iat"] = .int(issuedAt) }
        if let notBefore { o["nbf"] = .int(notBefore) }
        o["exp"] = .int(expiresAt)
        o["grants"] = .object(grants.json())
        return o
    }

    /// Reads claims from a decoded payload; wrong types are errors, unknown claims are ignored.
    public init(json o: JSONObject) throws(AuthError) {
        guard let iss = o["iss"]?.stringValue, !iss.isEmpty else { throw .malformedToken("missing iss") }
        guard let exp = o["exp"]?.int64Value else { throw .malformedToken("missing or non-numeric exp") }
        let sub = o["sub"]?.stringValue ?? ""
        func optionalTime(_ key: String) throws(AuthError) -> Int64? {
            guard let v = o[key] else { return nil }
            guard let t = v.int64Value else { throw .malformedToken("\(key) is not a number") }
            return t
        }
        var name: String?
        if let n = o["name"] {
            guard let s = n.stringValue else { throw .malformedToken("name is not a string") }
            name = s
        }
        var grants = Grants()
        if let g = o["grants"] {
            guard let go = g.objectValue else { throw .malformedToken("grants is not an object") }
            grants = try Grants(json: go)
        }
        self.init(
            issuer: iss, identity: sub, name: name, issuedAt: try optionalTime("iat"),
            notBefore: try optionalTime("nbf"), expiresAt: exp, grants: grants)
    }
}

extension Grants {
    public func json() -> JSONObject {
        var o = JSONObject()
        if let room { o["room"] = .string(room) }
        for (key, value) in [
            ("roomJoin", roomJoin), ("roomCreate", roomCreate), ("roomList", roomList),
            ("roomAdmin", roomAdmin), ("canPublish", canPublish), ("canSubscribe", canSubscribe),
        ]
        where value {
            o[key] = .bool(true)
        }
        if let sources = canPublishSources {
            o["canPublishSources"] = .array(TrackSource.allCases.filter(sources.contains).map { .string($0.rawValue) })
        }
        if !canPublishData { o["canPublishData"] = .bool(false) }
        o["role"] = .string(role.rawValue)
        if hidden { o["hidden"] = .bool(true) }
        return o
    }

    public init(json o: JSONObject) throws(AuthError) {
        self.init()
        func flag(_ key: String) throws(AuthError) -> Bool {
            guard let v = o[key] else { return false }
            guard let b = v.boolValue else { throw .malformedToken("grants.\(key) is not a boolean") }
            return b
        }
        if let r = o["room"] {
            guard let s = r.stringValue else { throw .malformedToken("grants.room is not a string") }
            room = s.isEmpty ? nil : s
        }
        roomJoin = try flag("roomJoin")
        roomCreate = try flag("roomCreate")
        roomList = try flag("roomList")
        roomAdmin = try flag("roomAdmin")
        canPublish = try flag("canPublish")
        canSubscribe = try flag("canSubscribe")
        hidden = try flag("hidden")
        if o["canPublishData"] != nil { canPublishData = try flag("canPublishData") }
        if let s = o["canPublishSources"] {
            guard let arr = s.arrayValue else { throw .malformedToken("grants.canPublishSources is not an array") }
            var set = Set<TrackSource>()
            for item in arr {
                guard let str = item.stringValue, let src = TrackSource(rawValue: str) else {
                    throw .malformedToken("grants.canPublishSources has an unknown source")
                }
                set.insert(src)
            }
            canPublishSources = set
        }
        if let r = o["role"] {
            guard let s = r.stringValue, let role = ParticipantRole(rawValue: s) else {
                throw .malformedToken("grants.role is not one of host, cohost, participant, viewer")
            }
            self.role = role
        }
    }
}
