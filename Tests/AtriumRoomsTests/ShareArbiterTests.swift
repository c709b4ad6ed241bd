import AtriumAuth
import AtriumModel
import Testing

@testable import AtriumRooms

func participant(
    _ n: String, _ role: ParticipantRole, sources: Set<TrackSource> = Set(TrackSource.allCases),
    granted: Bool = false
) -> Participant {
    var p = Participant(
        id: ParticipantID("pa_" + n), identity: n, name: n, metadata: "", role: role, hidden: false, joinedAt: 0,
        sources: role == .viewer ? [] : sources, canSubscribe: true, autoSubscribe: true)
    p.shareGranted = granted
    return p
}

func policy(
    _ mode: ShareMode = .single, max: Int = 1, who: WhoCanShare = .anyone, request: Bool = false,
    locked: Bool = false
) -> SharePolicy {
    var p = SharePolicy()
    p.shareMode = mode
    p.maxConcurrentShares = max
    p.whoCanShare = who
    p.shareRequestRequired = request
    p.shareLocked = locked
    return p
}

func share(_ n: Int, by p: Participant) -> Share {
    Share(id: ShareID("sh_\(n)"), sharer: p.id, videoTrack: TrackID("tr_\(n)"), startedAt: Int64(n))
}

@Suite struct ShareArbiterTests {
    static let host = participant("host", .host)
    static let cohost = participant("co", .cohost)
    static let alice = participant("alice", .participant)
    static let bob = participant("bob", .participant)
    static let viewer = participant("viewer", .viewer)
    static let noScreen = participant("cam", .participant, sources: [.camera, .microphone])
    static let grantedAlice = participant("alice", .participant, granted: true)

    /// Every combination that matters: (sharer, policy, running shares, decision).
    @Test func table() {
        let h = Self.host, c = Self.cohost, a = Self.alice, b = Self.bob
        let rows: [(String, Participant, SharePolicy, [Share], ShareDecision)] = [
            ("participant, open room", a, policy(), [], .allow),
            ("viewer", Self.viewer, policy(), [], .refuse(.notAllowed("screen sharing is not permitted"))),
            ("no screen grant", Self.noScreen, policy(), [], .refuse(.notAllowed("screen sharing is not permitted"))),
            ("locked: participant", a, policy(locked: true), [], .refuse(.shareLocked)),
            ("locked: host", h, policy(locked: true), [], .allow),
            ("locked: cohost", c, policy(locked: true), [], .allow),
            ("locked beats missing permission", Self.noScreen, policy(locked: true), [], .refuse(.shareLocked)),
            ("locked: granted participant", Self.grantedAlice, policy(locked: true), [], .refuse(.shareLocked)),
            (
                "whoCanShare host: cohost", c, policy(who: .host), [],
                .refuse(.notAllowed("screen sharing is not permitted"))
            ),
            ("whoCanShare host: host", h, policy(who: .host), [], .allow),
            ("whoCanShare cohost: cohost", c, policy(who: .cohost), [], .allow),
            (
                "whoCanShare cohost: participant", a, policy(who: .cohost), [],
                .refuse(.notAllowed("screen sharing is not permitted"))
            ),
            ("whoCanShare cohost: granted", Self.grantedAlice, policy(who: .cohost), [], .allow),
            ("request required", a, policy(request: true), [], .refuse(.notAllowed("screen sharing is not permitted"))),
            ("request required, granted", Self.grantedAlice, policy(request: true), [], .allow),
            ("request required: host", h, policy(request: true), [], .allow),
            ("single: busy", b, policy(), [share(1, by: a)], .refuse(.shareInProgress)),
            ("single: host also refused", h, policy(), [share(1, by: a)], .refuse(.shareInProgress)),
            ("own second share", a, policy(.multi, max: 4), [share(1, by: a)], .refuse(.shareInProgress)),
            ("multi: room left", b, policy(.multi, max: 2), [share(1, by: a)], .allow),
            ("multi: full", h, policy(.multi, max: 2), [share(1, by: a), share(2, by: b)], .refuse(.tooManyShares)),
            ("grab: pre-empts", b, policy(.grab), [share(1, by: a)], .allowPreempting([ShareID("sh_1")])),
            (
                "grab while locked: participant", b, policy(.grab, locked: true), [share(1, by: h)],
                .refuse(.shareLocked)
            ),
            (
                "grab while locked: cohost pre-empts host", c, policy(.grab, locked: true), [share(1, by: h)],
                .allowPreempting([ShareID("sh_1")])
            ),
            ("grab: empty", a, policy(.grab), [], .allow),
        ]
        for (name, p, pol, active, expected) in rows {
            #expect(ShareArbiter.decide(p, policy: pol, active: active) == expected, "\(name)")
        }
    }

    @Test func lockStopsOnlyNonModerators() {
        let ps = Dictionary(uniqueKeysWithValues: [Self.host, Self.cohost, Self.alice].map { ($0.id, $0) })
        let shares = [share(1, by: Self.host), share(2, by: Self.cohost), share(3, by: Self.alice)]
        #expect(ShareArbiter.stoppedByLock(shares, participants: ps) == [ShareID("sh_3")])
    }

    @Test func policyChangeStopsWhatItNoLongerAllows() {
        let ps = Dictionary(uniqueKeysWithValues: [Self.host, Self.alice, Self.bob].map { ($0.id, $0) })
        let shares = [share(1, by: Self.alice), share(2, by: Self.bob), share(3, by: Self.host)]
        // multi(3) -> multi(2): the newest stops.
        #expect(
            ShareArbiter.stoppedByPolicy(shares, participants: ps, policy: policy(.multi, max: 2)) == [ShareID("sh_3")])
        // whoCanShare host: participants' shares stop.
        #expect(
            ShareArbiter.stoppedByPolicy(shares, participants: ps, policy: policy(.multi, max: 3, who: .host))
                == [ShareID("sh_1"), ShareID("sh_2")])
    }
}
