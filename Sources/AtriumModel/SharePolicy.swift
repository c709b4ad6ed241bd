/// How a room arbitrates screen shares.
public enum ShareMode: String, CaseIterable, Sendable, Codable {
    /// One share at a time; a second is refused with `share_in_progress`.
    case single
    /// Up to `maxConcurrentShares` at once; one more is refused with `too_many_shares`.
    case multi
    /// A new share pre-empts the current one, whose sharer is told `preempted`.
    case grab
}

/// Who may start a share (before grants and the lock are considered).
public enum WhoCanShare: String, CaseIterable, Sendable, Codable {
    case host
    case cohost
    case anyone
}

/// A room's screen-share policy. Enforced by the signaling hub and the media plane.
public struct SharePolicy: Equatable, Sendable, Codable {
    public static let maxConcurrentSharesLimit = 16

    public var shareMode: ShareMode = .single
    /// Used in `multi` mode; `single` and `grab` allow one share.
    public var maxConcurrentShares: Int = 1
    public var whoCanShare: WhoCanShare = .anyone
    /// When true, a participant without an explicit grant asks a host first.
    public var shareRequestRequired: Bool = false
    /// While locked only hosts and cohosts may share.
    public var shareLocked: Bool = false

    public init() {}
}
