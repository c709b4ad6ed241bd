public import AtriumJSON
public import AtriumModel

/// A room's settings as the cluster stores them in Redis: one JSON object per room, every field named,
/// so that any node (any version that knows these names) reads what another wrote.
public enum RoomRecord {
    public static func encode(_ r: Room) -> JSONValue {
        let p = r.sharePolicy
        return .object([
            "id": .string(r.id.rawValue), "name": r.name.map { .string($0) } ?? .null,
            "createdAt": .int(r.createdAt), "updatedAt": .int(r.updatedAt),
            "maxParticipants": .int(Int64(r.maxParticipants)), "emptyTimeout": .int(Int64(r.emptyTimeout)),
            "metadata": .string(r.metadata), "shareMode": .string(p.shareMode.rawValue),
            "maxConcurrentShares": .int(Int64(p.maxConcurrentShares)), "whoCanShare": .string(p.whoCanShare.rawValue),
            "shareRequestRequired": .bool(p.shareRequestRequired), "shareLocked": .bool(p.shareLocked),
            "chatHistory": .int(Int64(r.chatHistory)), "e2ee": .bool(r.e2ee),
        ])
    }

    /// Reads a stored room; nil when the value is not one this version wrote (the store reports it).
    public static func decode(_ bytes: [UInt8]) -> Room? {
        guard let v = try? JSONParser.parse(bytes), let id = v["id"]?.stringValue, RoomID.isWellFormed(id),
            let created = v["createdAt"]?.int64Value, let updated = v["updatedAt"]?.int64Value
        else { return nil }
        var r = Room(id: RoomID(id), name: v["name"]?.stringValue, createdAt: created)
        r.updatedAt = updated
        r.maxParticipants = int(v["maxParticipants"], 0...Room.maxParticipantsLimit) ?? 0
        r.emptyTimeout = int(v["emptyTimeout"], 0...Room.maxEmptyTimeout) ?? 300
        r.metadata = v["metadata"]?.stringValue ?? ""
        r.sharePolicy.shareMode = v["shareMode"]?.stringValue.flatMap(ShareMode.init(rawValue:)) ?? .single
        r.sharePolicy.maxConcurrentShares =
            int(v["maxConcurrentShares"], 1...SharePolicy.maxConcurrentSharesLimit) ?? 1
        r.sharePolicy.whoCanShare = v["whoCanShare"]?.stringValue.flatMap(WhoCanShare.init(rawValue:)) ?? .anyone
        r.sharePolicy.shareRequestRequired = v["shareRequestRequired"]?.boolValue ?? false
        r.sharePolicy.shareLocked = v["shareLocked"]?.boolValue ?? false
        r.chatHistory = int(v["chatHistory"], 0...Room.maxChatHistory) ?? 100
        r.e2ee = v["e2ee"]?.boolValue ?? false
        return r
    }

    static func int(_ v: JSONValue?, _ range: ClosedRange<Int>) -> Int? {
        guard let n = v?.int64Value, n >= Int64(range.lowerBound), n <= Int64(range.upperBound) else { return nil }
        return Int(n)
    }
}
