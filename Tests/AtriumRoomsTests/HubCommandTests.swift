import AtriumAuth
import AtriumModel
import AtriumRooms
import AtriumStore
import Testing

/// `RoomState.apply` as a table: one room (host h, participants a and b, cohost c, viewer v; a shares
/// sh_a on tr_as and has a camera tr_ac; b's share request rq_b is pending), one command per row from
/// one actor, and the events it causes or the refusal.
@Suite struct HubCommandTests {
    enum Expect: Sendable, Equatable {
        case events([String])
        case refused(HubError)
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var actor: Actor
        var command: HubCommand
        var expect: Expect
        var testDescription: String { "\(actor) \(command)" }
        init(_ actor: Actor, _ command: HubCommand, _ expect: Expect) {
            self.actor = actor
            self.command = command
            self.expect = expect
        }
    }

    static func p(_ name: String) -> Actor { .participant(ParticipantID("pa_" + name)) }
    static let a = ParticipantID("pa_a")
    static let b = ParticipantID("pa_b")
    static let sh = ShareID("sh_a")
    static let screen = TrackID("tr_as")
    static let camera = TrackID("tr_ac")

    static func grants(_ role: ParticipantRole) -> Grants {
        var g = Grants()
        g.role = role
        g.canPublish = true
        g.canSubscribe = true
        return g
    }

    static func join(_ name: String, _ role: ParticipantRole) -> HubCommand {
        .join(
            JoinRequest(
                participant: ParticipantID("pa_" + name), identity: name, name: name, metadata: "",
                grants: grants(role), autoSubscribe: true))
    }

    /// The room every row starts from, itself built with commands.
    static func fixture() throws -> RoomState {
        var s = RoomState(room: Room(id: RoomID("rm_0000000000000000"), name: "r", createdAt: 0))
        for (name, role) in [("h", ParticipantRole.host), ("a", .participant), ("b", .participant), ("c", .cohost)] {
            _ = try s.apply(join(name, role), by: p(name), now: 10)
        }
        _ = try s.apply(join("v", .viewer), by: p("v"), now: 10)
        let shareTrack = Track(id: screen, owner: a, source: .screenShare, name: "screen")
        _ = try s.apply(.publish(shareTrack, share: sh), by: .participant(a), now: 10)
        _ = try s.apply(
            .publish(Track(id: camera, owner: a, source: .camera, name: ""), share: ShareID("sh_x")),
            by: .participant(a), now: 10)
        _ = try s.apply(.requestShare(ShareRequestID("rq_b")), by: .participant(b), now: 10)
        return s
    }

    static func aShareStops(_ reason: String) -> [String] {
        ["share_stopped:sh_a:\(reason)", "unpublished:tr_as:\(reason)"]
    }
    static let hostOnly = Expect.refused(.notAllowed("only hosts may do this"))
    static let moderatorsOnly = Expect.refused(.notAllowed("only hosts and cohosts may do this"))
    static var hostPolicy: SharePolicy {
        var policy = SharePolicy()
        policy.whoCanShare = .host
        return policy
    }
    static var lockedRoom: Room {
        var r = Room(id: RoomID("rm_0000000000000000"), name: "r", createdAt: 0)
        r.sharePolicy.shareLocked = true
        return r
    }

    static let rows: [Row] = [
        Row(p("a"), .update(name: "A", metadata: nil), .events(["updated:a"])),
        Row(.admin, .update(name: "A", metadata: nil), .refused(.notAllowed("this request is a participant's own"))),
        Row(p("a"), .setMuted(camera, true), .events(["muted:tr_ac:true"])),
        Row(p("h"), .setMuted(camera, true), .events(["muted:tr_ac:true"])),
        Row(p("h"), .setMuted(camera, false), .refused(.notAllowed("only the publisher can unmute its track"))),
        Row(p("a"), .setMuted(camera, false), .events([])),
        Row(p("a"), .pauseShare(sh), .events(["share_paused:sh_a"])),
        Row(p("b"), .pauseShare(sh), .refused(.notAllowed("only the sharer pauses a share"))),
        Row(p("a"), .resumeShare(sh), .events([])),
        Row(p("a"), .resumeShare(ShareID("sh_none")), .refused(.shareNotFound)),
        Row(p("a"), .stopShare(sh, reason: .userStopped), .events(aShareStops("user_stopped"))),
        Row(
            p("a"), .stopShare(sh, reason: .locked),
            .refused(.invalidField("reason", "must be user_stopped or capture_ended"))),
        Row(p("h"), .stopShare(sh, reason: .userStopped), .events(aShareStops("moderated"))),
        Row(.admin, .stopShare(sh, reason: .moderated), .events(aShareStops("moderated"))),
        Row(p("b"), .stopShare(sh, reason: .userStopped), moderatorsOnly),
        Row(p("a"), .unpublish(camera, reason: .userStopped), .events(["unpublished:tr_ac:unpublished"])),
        Row(p("a"), .unpublish(screen, reason: .userStopped), .events(aShareStops("user_stopped"))),
        Row(p("b"), .unpublish(camera, reason: .userStopped), .refused(.trackNotFound)),
        Row(p("h"), .setShareLock(true), .events(["lock:true"] + aShareStops("locked"))),
        Row(.admin, .setShareLock(true), .events(["lock:true"] + aShareStops("locked"))),
        Row(p("h"), .setShareLock(false), .events([])),
        Row(p("c"), .setShareLock(true), hostOnly),
        Row(p("h"), .setSharePolicy(hostPolicy), .events(["policy"] + aShareStops("policy_changed"))),
        Row(p("a"), .setSharePolicy(hostPolicy), hostOnly),
        Row(
            p("h"), .setPermission(a, source: .screenShare, granted: false),
            .events(["permissions:a"] + aShareStops("permission_revoked"))),
        Row(p("b"), .setPermission(a, source: .screenShare, granted: false), moderatorsOnly),
        Row(
            p("h"), .setPermission(ParticipantID("pa_v"), source: .camera, granted: true),
            .refused(.notAllowed("viewers and hidden participants cannot publish"))),
        Row(
            p("h"), .answerShareRequest(ShareRequestID("rq_b"), grant: true),
            .events(["resolved:rq_b:granted", "permissions:b"])),
        Row(p("c"), .answerShareRequest(ShareRequestID("rq_b"), grant: false), .events(["resolved:rq_b:denied"])),
        Row(p("h"), .answerShareRequest(ShareRequestID("rq_none"), grant: true), .refused(.requestNotFound)),
        Row(p("a"), .answerShareRequest(ShareRequestID("rq_b"), grant: true), moderatorsOnly),
        Row(p("b"), .requestShare(ShareRequestID("rq_2")), .refused(.requestPending)),
        Row(p("v"), .requestShare(ShareRequestID("rq_3")), .refused(.notAllowed("viewers cannot share"))),
        Row(p("a"), .requestShare(ShareRequestID("rq_4")), .events(["requested:rq_4"])),
        Row(
            p("h"), .removeParticipant(a),
            .events(aShareStops("moderated") + ["unpublished:tr_ac:publisher_left", "left:a:removed"])),
        Row(p("c"), .removeParticipant(ParticipantID("pa_h")), .refused(.notAllowed("a cohost cannot act on a host"))),
        Row(p("h"), .removeParticipant(ParticipantID("pa_none")), .refused(.participantNotFound)),
        Row(
            p("h"), .endRoom,
            .events(
                ["ended", "left:h:room_ended"] + aShareStops("room_ended")
                    + [
                        "unpublished:tr_ac:publisher_left", "left:a:room_ended", "resolved:rq_b:cancelled",
                        "left:b:room_ended", "left:c:room_ended", "left:v:room_ended",
                    ])),
        Row(p("c"), .endRoom, hostOnly),
        Row(p("b"), .subscribe(camera, quality: .low), .events([])),
        Row(p("v"), .subscribe(TrackID("tr_none"), quality: .high), .refused(.trackNotFound)),
        Row(p("a"), .subscribe(camera, quality: .high), .refused(.notAllowed("subscribing is not permitted"))),
        Row(p("b"), .unsubscribe(camera), .events([])),
        Row(p("b"), .unsubscribe(TrackID("tr_none")), .refused(.trackNotFound)),
        Row(
            .admin, .updateParticipant(a, name: "A", metadata: nil, sources: [.camera]),
            .events(["updated:a", "permissions:a", "permissions:a"] + aShareStops("permission_revoked"))),
        Row(
            p("h"), .updateParticipant(a, name: "A", metadata: nil, sources: nil),
            .refused(.notAllowed("only the admin API changes another participant"))),
        Row(
            p("b"),
            .publish(Track(id: TrackID("tr_bs"), owner: b, source: .screenShare, name: ""), share: ShareID("s")),
            .refused(.shareInProgress)),
        Row(
            p("a"), .publish(Track(id: TrackID("tr_bc"), owner: b, source: .camera, name: ""), share: ShareID("s")),
            .refused(.notAllowed("a participant publishes its own tracks"))),
        Row(
            p("b"), .publish(Track(id: TrackID("tr_bc"), owner: b, source: .camera, name: ""), share: ShareID("s")),
            .events(["published:tr_bc"])),
        Row(
            p("a"), .publish(Track(id: TrackID("tr_a2"), owner: a, source: .camera, name: ""), share: ShareID("s")),
            .refused(.alreadyPublished)),
        Row(.admin, .expireRequests, .events(["resolved:rq_b:expired"])),
        Row(p("b"), .leave(b, reason: .left), .events(["resolved:rq_b:cancelled", "left:b:left"])),
        Row(p("a"), .setConnected(a, false), .events([])),
        Row(
            p("a2"),
            .join(
                JoinRequest(
                    participant: ParticipantID("pa_a2"), identity: "a", name: "a", metadata: "",
                    grants: grants(.participant), autoSubscribe: true)),
            .events(
                aShareStops("publisher_left") + ["unpublished:tr_ac:publisher_left", "left:a:replaced", "joined:a"])),
        Row(.admin, .applySettings(lockedRoom), .events(["lock:true"] + aShareStops("locked"))),
    ]

    @Test(arguments: rows)
    func apply(_ row: Row) throws {
        var state = try Self.fixture()
        let got: Expect
        do throws(HubError) {
            got = .events(try state.apply(row.command, by: row.actor, now: 100).map(Self.summary))
        } catch {
            got = .refused(error)
        }
        #expect(got == row.expect)
    }

    /// The hub applies commands to rooms live here only; on one node, a room live nowhere is
    /// `room_not_found` whether applied or routed.
    @Test func hubAppliesToLiveRoomsAndRoutesNowhereElseOnOneNode() throws {
        let hub = Hub(
            store: MemoryRoomStore(), ids: IDGenerator(random: { 7 }), autoCreate: .any,
            makeRoomID: { RoomID.make(millis: 1, random: 1) })
        let room = try hub.open(scope: "r", grants: Grants(), now: 0)
        #expect(try hub.apply(Self.join("h", .host), in: room, by: Self.p("h"), now: 0).count == 1)
        #expect(throws: HubError.roomNotFound("rm_none")) {
            try hub.apply(.endRoom, in: RoomID("rm_none"), by: .admin, now: 0)
        }
        let elsewhere = RoomCommand(room: RoomID("rm_none"), actor: .admin, command: .endRoom)
        #expect(hub.route(elsewhere, now: 0) == .failure(.roomNotFound("rm_none")))
        let here = RoomCommand(room: room, actor: .admin, command: .setShareLock(true))
        #expect(try hub.route(here, now: 0).get().map(Self.summary) == ["lock:true"])
        #expect(hub.state(room)?.policy.shareLocked == true)
    }

    /// A change of the room's settings the store cannot keep is refused with `store_unavailable`, and
    /// the live room keeps its settings (the live and the stored policy never differ); other commands
    /// go on.
    @Test func aPolicyTheStoreCannotKeepIsRefusedAndTheRoomUnchanged() throws {
        let store = MemoryRoomStore()
        let hub = Hub(
            store: store, ids: IDGenerator(random: { 7 }), autoCreate: .any,
            makeRoomID: { RoomID.make(millis: 1, random: 1) })
        let room = try hub.open(scope: "r", grants: Grants(), now: 0)
        #expect(try hub.apply(Self.join("h", .host), in: room, by: Self.p("h"), now: 0).count == 1)
        store.close()
        #expect(throws: HubError.storeUnavailable("backend(\"store is closed\")")) {
            try hub.apply(.setShareLock(true), in: room, by: .admin, now: 1)
        }
        #expect(hub.state(room)?.policy.shareLocked == false)
        #expect(try hub.apply(Self.join("a", .participant), in: room, by: Self.p("a"), now: 2).count == 1)
    }

    final class Changes: HubOutput {
        var changed: [(RoomID, Bool)] = []
        func deliver(_ event: RoomEvent, room: RoomID, to recipients: [ParticipantID]) {}
        func ended(_ participant: ParticipantID, room: RoomID, reason: LeaveReason) {}
        func roomChanged(_ room: RoomID, state: RoomState?) { changed.append((room, state != nil)) }
    }

    /// A room closed by its empty timeout reaches media control as a room that ended (nil state), so
    /// its router, worker placement and stage are freed as for an ended room.
    @Test func aRoomClosedByItsEmptyTimeoutIsEndedForMediaControl() throws {
        let hub = Hub(
            store: MemoryRoomStore(), ids: IDGenerator(random: { 7 }), autoCreate: .any,
            makeRoomID: { RoomID.make(millis: 1, random: 1) })
        let changes = Changes()
        hub.output = changes
        let room = try hub.open(scope: "r", grants: Grants(), now: 0)
        _ = try hub.apply(Self.join("h", .host), in: room, by: Self.p("h"), now: 0)
        _ = try hub.apply(.leave(ParticipantID("pa_h"), reason: .left), in: room, by: Self.p("h"), now: 1)
        changes.changed.removeAll()
        let timeout = Int64(hub.state(room)?.room.emptyTimeout ?? 0)
        hub.tick(now: 1 + timeout - 1)
        #expect(changes.changed.isEmpty && hub.state(room) != nil)
        hub.tick(now: 1 + timeout)
        #expect(hub.state(room) == nil)
        #expect(changes.changed.count == 1 && changes.changed.first?.0 == room && changes.changed.first?.1 == false)
    }

    static func summary(_ e: RoomEvent) -> String {
        switch e {
        case .participantJoined(let p): "joined:\(p.identity)"
        case .participantLeft(let p, let r): "left:\(p.identity):\(r.rawValue)"
        case .participantUpdated(let p): "updated:\(p.identity)"
        case .trackPublished(let t): "published:\(t.id)"
        case .trackUnpublished(let t, let reason): "unpublished:\(t.id):\(reason)"
        case .trackMuted(let t, _): "muted:\(t.id):\(t.muted)"
        case .shareStarted(let s): "share_started:\(s.id)"
        case .sharePaused(let s): "share_paused:\(s.id)"
        case .shareResumed(let s): "share_resumed:\(s.id)"
        case .shareStopped(let s, let r, _): "share_stopped:\(s.id):\(r.rawValue)"
        case .permissionsChanged(let p, _): "permissions:\(p.identity)"
        case .shareLockChanged(let locked, _): "lock:\(locked)"
        case .sharePolicyChanged: "policy"
        case .shareRequested(let r): "requested:\(r.id)"
        case .shareRequestResolved(let r, let o, _): "resolved:\(r.id):\(o.rawValue)"
        case .roomEnded: "ended"
        case .data(let m): "data:\(m.topic):\(m.payload)"
        case .attributesChanged(let p, _): "attributes:\(p.identity)"
        }
    }
}
