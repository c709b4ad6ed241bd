import AtriumAuth
import AtriumModel
import Testing

@testable import AtriumRooms

/// A room driven through its public functions, with deterministic ids.
struct RoomHarness {
    var state: RoomState
    var n = 0

    init(_ configure: (inout SharePolicy) -> Void = { _ in }) {
        var room = Room(id: RoomID("rm_0000000000000000"), name: "r", createdAt: 0)
        configure(&room.sharePolicy)
        state = RoomState(room: room)
    }

    mutating func next(_ prefix: String) -> String {
        n += 1
        return "\(prefix)\(n)"
    }

    @discardableResult
    mutating func join(
        _ identity: String, _ role: ParticipantRole, sources: Set<TrackSource>? = nil,
        hidden: Bool = false
    ) throws -> ParticipantID {
        var g = Grants()
        g.role = role
        g.canPublish = true
        g.canSubscribe = true
        g.canPublishSources = sources
        g.hidden = hidden
        let id = ParticipantID("pa_" + identity)
        _ = try state.join(
            id: id, identity: identity, name: identity, metadata: "", grants: g, autoSubscribe: true, now: 0)
        return id
    }

    /// Publishes a track; returns (track id, share id if a share started, events).
    mutating func publish(_ owner: ParticipantID, _ source: TrackSource) throws -> (TrackID, ShareID?, [RoomEvent]) {
        let tid = TrackID(next("tr_"))
        let sid = ShareID(next("sh_"))
        let events = try state.publish(
            Track(id: tid, owner: owner, source: source, name: ""), now: Int64(n), newShareID: sid)
        let started = events.contains { if case .shareStarted(let s) = $0 { s.id == sid } else { false } }
        return (tid, started ? sid : nil, events)
    }
}

func stopReasons(_ events: [RoomEvent]) -> [ShareStopReason] {
    events.compactMap { if case .shareStopped(_, let r, _) = $0 { r } else { nil } }
}

@Suite struct RoomStateTests {
    @Test func shareLifecycleAndAudio() throws {
        var h = RoomHarness()
        let a = try h.join("a", .participant)
        let b = try h.join("b", .participant)
        let (video, sid, events) = try h.publish(a, .screenShare)
        #expect(sid != nil)
        #expect(events.count == 2)
        #expect(h.state.participants[b]?.subscriptions[video] == .high, "auto-subscribed")
        let (audio, noShare, _) = try h.publish(a, .screenShareAudio)
        #expect(noShare == nil)
        #expect(h.state.shares.first?.audioTrack == audio)
        #expect(throws: HubError.noActiveShare) { try h.publish(b, .screenShareAudio) }
        #expect(try h.state.pause(sid!, by: a).count == 1)
        #expect(try h.state.pause(sid!, by: a).isEmpty, "pausing twice is a no-op")
        #expect(throws: HubError.notAllowed("only the sharer pauses a share")) { try h.state.pause(sid!, by: b) }
        #expect(try h.state.resume(sid!, by: a).count == 1)
        let stopped = try h.state.stopShare(sid!, by: .participant(a), reason: .captureEnded)
        #expect(stopReasons(stopped) == [.captureEnded])
        #expect(h.state.tracks.isEmpty, "share audio stops with its share")
        #expect(h.state.participants[b]?.subscriptions.isEmpty == true)
    }

    /// (scenario, expected stop reasons)
    @Test func stopReasonTable() throws {
        // grab mode while locked: a cohost pre-empts a host
        var h = RoomHarness {
            $0.shareMode = .grab
            $0.shareLocked = true
        }
        let host = try h.join("h", .host)
        let co = try h.join("c", .cohost)
        _ = try h.publish(host, .screenShare)
        #expect(stopReasons(try h.publish(co, .screenShare).2) == [.preempted])

        // revoke while paused
        h = RoomHarness()
        let host2 = try h.join("h", .host)
        let a = try h.join("a", .participant)
        let (_, sid, _) = try h.publish(a, .screenShare)
        _ = try h.state.pause(sid!, by: a)
        let revoked = try h.state.setPermission(a, source: .screenShare, granted: false, by: .participant(host2))
        #expect(stopReasons(revoked) == [.permissionRevoked])
        #expect(throws: HubError.notAllowed("publishing screen_share is not permitted")) {
            try h.publish(a, .screenShare)
        }

        // sharer leaves while paused
        h = RoomHarness()
        let b = try h.join("b", .participant)
        let (_, sid2, _) = try h.publish(b, .screenShare)
        _ = try h.state.pause(sid2!, by: b)
        #expect(stopReasons(h.state.leave(b, reason: .left)) == [.publisherLeft])

        // disconnected, removed, room ended
        for (reason, expected): (LeaveReason, ShareStopReason) in [
            (.disconnected, .disconnected), (.removed, .moderated),
            (.roomEnded, .roomEnded), (.replaced, .publisherLeft),
        ] {
            h = RoomHarness()
            let p = try h.join("p", .participant)
            _ = try h.publish(p, .screenShare)
            #expect(stopReasons(h.state.leave(p, reason: reason)) == [expected], "\(reason)")
        }

        // locking stops a participant's share, not a cohost's
        h = RoomHarness {
            $0.shareMode = .multi
            $0.maxConcurrentShares = 3
        }
        let hh = try h.join("h", .host)
        let cc = try h.join("c", .cohost)
        let pp = try h.join("p", .participant)
        _ = try h.publish(cc, .screenShare)
        _ = try h.publish(pp, .screenShare)
        let locked = try h.state.setLock(true, by: .participant(hh))
        #expect(stopReasons(locked) == [.locked])
        #expect(h.state.shares.count == 1 && h.state.shares[0].sharer == cc)

        // moderated stop by a cohost
        let sid3 = h.state.shares[0].id
        #expect(throws: HubError.notAllowed("only hosts and cohosts may do this")) {
            try h.state.stopShare(sid3, by: .participant(pp), reason: .userStopped)
        }
        #expect(stopReasons(try h.state.stopShare(sid3, by: .participant(hh), reason: .userStopped)) == [.moderated])
    }

    @Test func twoHostsRacingToLock() throws {
        var h = RoomHarness()
        let h1 = try h.join("h1", .host)
        let h2 = try h.join("h2", .host)
        #expect(try h.state.setLock(true, by: .participant(h1)).count == 1)
        #expect(try h.state.setLock(true, by: .participant(h2)).isEmpty, "the second lock is a no-op")
        #expect(h.state.policy.shareLocked)
        let c = try h.join("c", .cohost)
        #expect(throws: HubError.notAllowed("only hosts may do this")) {
            try h.state.setLock(false, by: .participant(c))
        }
        #expect(try h.state.setLock(false, by: .admin).count == 1)
    }

    @Test func requestGrantFlow() throws {
        var h = RoomHarness { $0.shareRequestRequired = true }
        let host = try h.join("h", .host)
        let a = try h.join("a", .participant)
        #expect(throws: HubError.notAllowed("screen sharing is not permitted")) { try h.publish(a, .screenShare) }
        let rid = ShareRequestID("rq_1")
        let asked = try h.state.requestShare(by: a, requestID: rid, now: 10)
        #expect(asked == [.shareRequested(ShareRequest(id: rid, requester: a, createdAt: 10, expiresAt: 70))])
        #expect(throws: HubError.requestPending) {
            try h.state.requestShare(by: a, requestID: ShareRequestID("rq_2"), now: 11)
        }
        #expect(throws: HubError.notAllowed("only hosts and cohosts may do this")) {
            try h.state.answer(rid, grant: true, by: .participant(a))
        }
        let answered = try h.state.answer(rid, grant: true, by: .participant(host))
        #expect(answered.count == 2)
        #expect(h.state.participants[a]?.shareGranted == true)
        #expect(try h.publish(a, .screenShare).1 != nil)
        // a denied request and an expired one
        let b = try h.join("b", .participant)
        _ = try h.state.requestShare(by: b, requestID: ShareRequestID("rq_3"), now: 100)
        #expect(h.state.expireRequests(now: 159).isEmpty)
        let expired = h.state.expireRequests(now: 160)
        #expect(expired.count == 1)
        #expect(h.state.requests.isEmpty)
    }

    @Test func presenceReplaceFullAndHidden() throws {
        var h = RoomHarness()
        h.state.room.maxParticipants = 2
        _ = try h.join("a", .participant)
        let hidden = try h.join("rec", .participant, hidden: true)
        #expect(throws: HubError.roomFull) { try h.join("c", .participant) }
        // Same identity: the old one leaves with `replaced`, the count stays.
        var g = Grants()
        g.canPublish = true
        let events = try h.state.join(
            id: ParticipantID("pa_a2"), identity: "a", name: "a", metadata: "", grants: g,
            autoSubscribe: true, now: 1)
        #expect(events.count == 2)
        if case .participantLeft(_, let reason) = events[0] {
            #expect(reason == .replaced)
        } else {
            Issue.record("no leave")
        }
        #expect(RoomEvent.participantJoined(h.state.participants[hidden]!).audience == .nobody)
        #expect(throws: HubError.notAllowed("publishing camera is not permitted")) { try h.publish(hidden, .camera) }
    }

    @Test func subscriptions() throws {
        var h = RoomHarness()
        let a = try h.join("a", .participant)
        var g = Grants()
        g.role = .viewer
        g.canSubscribe = true
        let v = ParticipantID("pa_v")
        _ = try h.state.join(id: v, identity: "v", name: "v", metadata: "", grants: g, autoSubscribe: false, now: 0)
        let (cam, _, _) = try h.publish(a, .camera)
        #expect(h.state.participants[v]?.subscriptions.isEmpty == true, "opted out of auto-subscribe")
        try h.state.subscribe(v, to: cam, quality: .low)
        #expect(h.state.participants[v]?.subscriptions[cam] == .low)
        #expect(throws: HubError.notAllowed("subscribing is not permitted")) {
            try h.state.subscribe(a, to: cam, quality: .high)
        }
        #expect(throws: HubError.trackNotFound) { try h.state.subscribe(v, to: TrackID("tr_x"), quality: .high) }
        _ = h.state.leave(a, reason: .left)
        #expect(throws: HubError.publisherLeft) { try h.state.subscribe(v, to: cam, quality: .high) }
    }

    @Test func moderation() throws {
        var h = RoomHarness()
        let host = try h.join("h", .host)
        let co = try h.join("c", .cohost)
        let a = try h.join("a", .participant)
        let (mic, _, _) = try h.publish(a, .microphone)
        #expect(try h.state.setMuted(mic, true, by: .participant(co)).count == 1)
        #expect(throws: HubError.notAllowed("only the publisher can unmute its track")) {
            try h.state.setMuted(mic, false, by: .participant(host))
        }
        #expect(try h.state.setMuted(mic, false, by: .participant(a)).count == 1)
        #expect(throws: HubError.notAllowed("a cohost cannot act on a host")) {
            try h.state.remove(host, by: .participant(co))
        }
        let removed = try h.state.remove(a, by: .participant(co))
        #expect(removed.contains { if case .participantLeft(_, .removed) = $0 { true } else { false } })
        let ended = try h.state.end(by: .participant(host))
        #expect(h.state.participants.isEmpty)
        #expect(ended.first == .roomEnded(by: .participant(host)))
    }
}
