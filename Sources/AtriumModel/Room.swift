/// A room as the admin API and the store know it: identity, limits, metadata and share policy.
/// Participants and tracks are live state owned by the signaling hub, not part of this value.
public struct Room: Equatable, Sendable, Codable {
    public static let maxNameLength = 128
    public static let maxMetadataLength = 16 * 1024
    public static let maxParticipantsLimit = 10_000
    public static let maxEmptyTimeout = 7 * 24 * 3600
    /// The most chat messages a room may keep for its joiners.
    public static let maxChatHistory = 1000

    public var id: RoomID
    /// Optional unique name; tokens may scope to the name or the id.
    public var name: String?
    /// Seconds since the Unix epoch.
    public var createdAt: Int64
    public var updatedAt: Int64
    /// 0 means no limit.
    public var maxParticipants: Int = 0
    /// Seconds an empty room lives before the hub closes it.
    public var emptyTimeout: Int = 300
    /// Opaque application data, at most `maxMetadataLength` characters (Unicode scalars).
    public var metadata: String = ""
    public var sharePolicy = SharePolicy()
    /// How many of the last `chat` messages the live room keeps and gives to joiners (0: none).
    public var chatHistory: Int = 100
    /// End-to-end encrypted: clients encrypt every frame with keys the server never holds; the server
    /// refuses what would need to read them (recording, live streaming).
    public var e2ee = false

    public init(id: RoomID, name: String?, createdAt: Int64) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.updatedAt = createdAt
    }

    /// Room names: 1 to 128 characters of `A-Z a-z 0-9 _ - .`, not dots alone (URL normalisation would
    /// resolve `.` and `..`), so they are safe in URLs, logs and tokens.
    public static func isValidName(_ name: String) -> Bool {
        let u = name.utf8
        guard !u.isEmpty, u.count <= maxNameLength, !u.allSatisfy({ $0 == 0x2E }) else { return false }
        return u.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                || c == 0x5F || c == 0x2D || c == 0x2E
        }
    }

    /// Why `name` is refused (`invalid_room_name`), in the words every surface uses.
    public static func invalidNameMessage(_ name: String) -> String {
        "\"\(name)\" is not a valid room name: 1 to \(maxNameLength) characters of A-Z a-z 0-9 _ - . (no spaces)"
    }

    /// Whether a token's room scope (a name or an id) designates this room.
    public func matchesScope(_ scope: String) -> Bool {
        scope == id.rawValue || (name != nil && scope == name)
    }
}
