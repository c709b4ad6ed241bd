public import AtriumModel

/// What changed in a room. The signaling layer turns each into messages for its audience.
public enum RoomEvent: Equatable, Sendable, Codable {
    case participantJoined(Participant)
    case participantLeft(Participant, LeaveReason)
    case participantUpdated(Participant)
    case trackPublished(Track)
    case trackUnpublished(Track, reason: String)
    case trackMuted(Track, by: Actor)
    case shareStarted(Share)
    case sharePaused(Share)
    case shareResumed(Share)
    case shareStopped(Share, ShareStopReason, by: Actor)
    case permissionsChanged(Participant, by: Actor)
    case shareLockChanged(locked: Bool, by: Actor)
    case sharePolicyChanged(SharePolicy, by: Actor)
    case shareRequested(ShareRequest)
    case shareRequestResolved(ShareRequest, ShareRequestOutcome, by: Actor?)
    case roomEnded(by: Actor)
    /// A data message, to its recipients.
    case data(DataMessage)
    case attributesChanged(Participant, by: Actor)
}

/// Who acted: a participant, or the admin API (an application server).
public enum Actor: Equatable, Sendable, Codable {
    case participant(ParticipantID)
    case admin
}

/// Who receives an event.
public enum Audience: Equatable, Sendable {
    /// Every connected participant except the listed ones.
    case everyone(except: [ParticipantID])
    /// Moderators (hosts and cohosts) and the listed participants.
    case moderatorsAnd([ParticipantID])
    /// Exactly these participants.
    case only([ParticipantID])
    case nobody
}

extension RoomEvent {
    /// The audience of each event: presence is not announced for hidden participants nor to the subject;
    /// permission changes and share requests go to the participant concerned and the moderators.
    public var audience: Audience {
        switch self {
        case .participantJoined(let p), .participantUpdated(let p):
            p.hidden ? .nobody : .everyone(except: [p.id])
        case .participantLeft(let p, _):
            p.hidden ? .nobody : .everyone(except: [p.id])
        case .permissionsChanged(let p, _):
            .moderatorsAnd([p.id])
        case .attributesChanged(let p, _):
            p.hidden ? .moderatorsAnd([p.id]) : .everyone(except: [])
        case .data(let m):
            m.to.map { .only($0) } ?? .everyone(except: m.from.map { [$0] } ?? [])
        case .shareRequested(let r):
            .moderatorsAnd([r.requester])
        case .shareRequestResolved(let r, _, _):
            .moderatorsAnd([r.requester])
        case .trackPublished, .trackUnpublished, .trackMuted, .shareStarted, .sharePaused, .shareResumed,
            .shareStopped, .shareLockChanged, .sharePolicyChanged, .roomEnded:
            .everyone(except: [])
        }
    }
}

extension RoomEvent {
    /// Whether the media plane can ignore it (data and attributes change no track or subscription).
    public var isBesideMedia: Bool {
        switch self {
        case .data, .attributesChanged: true
        default: false
        }
    }
}
