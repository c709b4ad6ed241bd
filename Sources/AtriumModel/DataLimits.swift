/// The bounds of a data message a client sends and a participant's attributes (docs/protocol.md).
public enum DataLimits {
    /// The largest payload, in UTF-8 bytes.
    public static let maxPayloadBytes = 16 * 1024
    public static let maxTopicBytes = 64
    /// The most participants one message may name in `to`.
    public static let maxRecipients = 100
}

/// The bounds of a participant's attributes (documented in docs/protocol.md).
public enum AttributeLimits {
    public static let maxKeys = 32
    public static let maxKeyBytes = 64
    public static let maxValueBytes = 1024
}
