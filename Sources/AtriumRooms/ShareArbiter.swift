public import AtriumModel

/// The pure decision on a request to start a share, from the sharer, the room's policy and the shares
/// already running. Tested as a table (`ShareArbiterTests`).
public enum ShareDecision: Equatable, Sendable {
    case allow
    /// Allowed by stopping these shares first (grab mode), each with reason `preempted`.
    case allowPreempting([ShareID])
    case refuse(HubError)
}

public enum ShareArbiter {
    /// Whether `p` may share at all under `policy`, ignoring the lock and the running shares.
    public static func isPermitted(_ p: Participant, policy: SharePolicy) -> Bool {
        guard p.role != .viewer, !p.hidden, p.sources.contains(.screenShare) else { return false }
        if p.shareGranted { return true }
        switch p.role {
        case .host: return true
        case .cohost: return policy.whoCanShare != .host
        case .participant: return policy.whoCanShare == .anyone && !policy.shareRequestRequired
        case .viewer: return false
        }
    }

    /// Decides a new share. Order: the lock (only moderators share while locked), then permission,
    /// then the policy's concurrency rule.
    public static func decide(_ p: Participant, policy: SharePolicy, active: [Share]) -> ShareDecision {
        if policy.shareLocked && !p.isModerator { return .refuse(.shareLocked) }
        guard isPermitted(p, policy: policy) else { return .refuse(.notAllowed("screen sharing is not permitted")) }
        if active.contains(where: { $0.sharer == p.id }) { return .refuse(.shareInProgress) }
        switch policy.shareMode {
        case .single:
            return active.isEmpty ? .allow : .refuse(.shareInProgress)
        case .multi:
            return active.count < max(1, policy.maxConcurrentShares) ? .allow : .refuse(.tooManyShares)
        case .grab:
            return active.isEmpty ? .allow : .allowPreempting(active.map(\.id))
        }
    }

    /// Shares that must stop when the lock is set: every share whose sharer is not a moderator.
    public static func stoppedByLock(_ shares: [Share], participants: [ParticipantID: Participant]) -> [ShareID] {
        shares.filter { participants[$0.sharer]?.isModerator != true }.map(\.id)
    }

    /// Shares that must stop after a policy change that no longer permits their sharer, or that exceed
    /// the new concurrency limit (the newest stop first).
    public static func stoppedByPolicy(
        _ shares: [Share], participants: [ParticipantID: Participant],
        policy: SharePolicy
    ) -> [ShareID] {
        var stop = shares.filter { s in
            guard let p = participants[s.sharer] else { return true }
            return !isPermitted(p, policy: policy) || (policy.shareLocked && !p.isModerator)
        }.map(\.id)
        let remaining = shares.filter { !stop.contains($0.id) }.sorted { $0.startedAt < $1.startedAt }
        let limit = policy.shareMode == .multi ? max(1, policy.maxConcurrentShares) : 1
        if remaining.count > limit { stop += remaining[limit...].map(\.id) }
        return stop
    }
}
