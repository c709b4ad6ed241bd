import AtriumJSON
import AtriumModel
import AtriumProtocol

/// The JSON form of a room and the validation of create and update bodies. Unknown fields are refused,
/// so a misspelt setting is an error rather than silently ignored.
enum RoomCoding {
    static let settingFields: Set<String> = [
        "name", "maxParticipants", "emptyTimeout", "metadata", "shareMode", "maxConcurrentShares", "whoCanShare",
        "shareRequestRequired", "shareLocked", "chatHistory", "e2ee",
    ]

    static func json(_ r: Room) -> JSONValue {
        let p = r.sharePolicy
        return .object([
            "id": .string(r.id.rawValue),
            "name": r.name.map { .string($0) } ?? .null,
            "createdAt": .int(r.createdAt),
            "updatedAt": .int(r.updatedAt),
            "maxParticipants": .int(Int64(r.maxParticipants)),
            "emptyTimeout": .int(Int64(r.emptyTimeout)),
            "metadata": .string(r.metadata),
            "shareMode": .string(p.shareMode.rawValue),
            "maxConcurrentShares": .int(Int64(p.maxConcurrentShares)),
            "whoCanShare": .string(p.whoCanShare.rawValue),
            "shareRequestRequired": .bool(p.shareRequestRequired),
            "shareLocked": .bool(p.shareLocked),
            "chatHistory": .int(Int64(r.chatHistory)),
            "e2ee": .bool(r.e2ee),
        ])
    }

    /// Applies the fields present in `body` to `room` (create and merge-patch alike).
    static func apply(_ body: JSONObject, to room: inout Room) throws(APIError) {
        for key in body.keys where !settingFields.contains(key) {
            throw .invalidField(key, "unknown field")
        }
        if let v = body["name"] {
            switch v {
            case .null: room.name = nil
            case .string(let s):
                guard Room.isValidName(s) else {
                    throw .invalidRoomName(Room.invalidNameMessage(s))
                }
                guard !RoomID.isWellFormed(s) else {
                    throw .invalidField("name", "must not have the shape of a room id")
                }
                room.name = s
            default: throw .invalidField("name", "expected a string or null, got \(v.typeName)")
            }
        }
        if let v = body["maxParticipants"] {
            room.maxParticipants = try int(v, "maxParticipants", 0...Room.maxParticipantsLimit)
        }
        if let v = body["emptyTimeout"] { room.emptyTimeout = try int(v, "emptyTimeout", 0...Room.maxEmptyTimeout) }
        if let v = body["chatHistory"] { room.chatHistory = try int(v, "chatHistory", 0...Room.maxChatHistory) }
        if let v = body["e2ee"] {
            guard let b = v.boolValue else { throw .invalidField("e2ee", "expected a boolean, got \(v.typeName)") }
            room.e2ee = b
        }
        if let v = body["metadata"] {
            guard let s = v.stringValue else { throw .invalidField("metadata", "expected a string, got \(v.typeName)") }
            guard s.unicodeScalars.count <= Room.maxMetadataLength else {
                throw .invalidField("metadata", "longer than \(Room.maxMetadataLength) characters")
            }
            room.metadata = s
        }
        // The share policy's fields, read as `set_share_policy` reads them.
        do throws(ProtocolError) {
            let change = try SharePolicyChange(FieldReader(object: body), allowing: settingFields)
            room.sharePolicy = change.applied(to: room.sharePolicy)
        } catch {
            if case .invalidField(let f, let m) = error { throw .invalidField(f, m) }
            throw .invalidField("body", error.message)
        }
    }

    static func int(_ v: JSONValue, _ field: String, _ range: ClosedRange<Int>) throws(APIError) -> Int {
        // JSON has one number type: 15 and 15.0 are the same integer (as JSON Schema counts them).
        guard let i = v.int64Value else { throw .invalidField(field, "expected an integer, got \(v.typeName)") }
        guard let n = Int(exactly: i), range.contains(n) else {
            throw .invalidField(field, "must be from \(range.lowerBound) to \(range.upperBound)")
        }
        return n
    }

    static func bool(_ v: JSONValue, _ field: String) throws(APIError) -> Bool {
        guard let b = v.boolValue else { throw .invalidField(field, "expected a boolean, got \(v.typeName)") }
        return b
    }

    static func enumValue<E: RawRepresentable & CaseIterable>(_ v: JSONValue, _ field: String) throws(APIError) -> E
    where E.RawValue == String {
        guard let s = v.stringValue, let e = E(rawValue: s) else {
            throw .invalidField(field, "expected one of " + E.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return e
    }
}
