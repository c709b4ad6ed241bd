import AtriumAuth
import AtriumCluster
import AtriumJSON
import AtriumModel
import Testing

@testable import AtriumRooms

/// Every command, event and refusal survives the trip between nodes: encoded to JSON text by
/// `JSONValueEncoder`, parsed back and decoded by `JSONValueDecoder`, it is the same value.
@Suite struct HubCommandCodingTests {
    static let alice = ParticipantID("pa_alice")
    static let room = RoomID("rm_0000000000000001")

    static var participant: Participant {
        var g = Participant(
            id: alice, identity: "alice", name: "Alice \u{1F600}", metadata: #"{"k":"v"}"#, role: .cohost,
            hidden: false, joinedAt: 1_700_000_000, sources: [.camera, .screenShare], canSubscribe: true,
            autoSubscribe: true)
        g.subscriptions = [TrackID("tr_1"): .low, TrackID("tr_2"): .high]
        g.shareGranted = true
        g.connected = false
        g.canPublishData = false
        g.attributes = ["hand": "raised", "emoji": "\u{1F44B}"]
        return g
    }

    static let track = Track(
        id: TrackID("tr_1"), owner: alice, source: .screenShare, name: "screen", width: 1280, height: 720,
        layers: [
            SimulcastLayer(rid: "q", width: 320, height: 180), SimulcastLayer(rid: "f", width: 1280, height: 720),
        ],
        muted: true, shareID: ShareID("sh_1"))

    static var share: Share {
        var s = Share(id: ShareID("sh_1"), sharer: alice, videoTrack: TrackID("tr_1"), startedAt: 5)
        s.audioTrack = TrackID("tr_2")
        s.state = .paused
        return s
    }

    static let request = ShareRequest(id: ShareRequestID("rq_1"), requester: alice, createdAt: 3, expiresAt: 63)

    static var policy: SharePolicy {
        var p = SharePolicy()
        p.shareMode = .multi
        p.maxConcurrentShares = 3
        p.whoCanShare = .cohost
        p.shareRequestRequired = true
        p.shareLocked = true
        return p
    }

    static var settings: Room {
        var r = Room(id: room, name: nil, createdAt: 1)
        r.maxParticipants = 10
        r.emptyTimeout = 60
        r.metadata = "m"
        r.sharePolicy = policy
        r.chatHistory = 7
        return r
    }

    static var grants: Grants {
        var g = Grants()
        g.room = "r"
        g.roomJoin = true
        g.canPublish = true
        g.canPublishSources = [.microphone]
        g.role = .host
        g.hidden = true
        g.canPublishData = false
        return g
    }

    static let message = DataMessage(
        id: MessageID("dm_1"), from: alice, topic: "chat", payload: "hi \u{1F600}", to: [ParticipantID("pa_b")],
        at: 1_700_000_000_123)

    static let commands: [HubCommand] = [
        .join(
            JoinRequest(
                participant: alice, identity: "alice", name: "A", metadata: "", grants: grants, autoSubscribe: false)),
        .leave(alice, reason: .disconnected),
        .setConnected(alice, true),
        .update(name: "B", metadata: nil),
        .updateParticipant(alice, name: nil, metadata: "x", sources: [.camera, .microphone]),
        .updateParticipant(alice, name: nil, metadata: nil, sources: nil),
        .publish(track, share: ShareID("sh_1")),
        .unpublish(TrackID("tr_1"), reason: .captureEnded),
        .setMuted(TrackID("tr_1"), true),
        .subscribe(TrackID("tr_1"), quality: .medium),
        .unsubscribe(TrackID("tr_1")),
        .pauseShare(ShareID("sh_1")),
        .resumeShare(ShareID("sh_1")),
        .stopShare(ShareID("sh_1"), reason: .moderated),
        .requestShare(ShareRequestID("rq_1")),
        .answerShareRequest(ShareRequestID("rq_1"), grant: false),
        .setShareLock(true),
        .setSharePolicy(policy),
        .setPermission(alice, source: .screenShareAudio, granted: true),
        .removeParticipant(alice),
        .endRoom,
        .expireRequests,
        .applySettings(settings),
        .setDataPermission(alice, granted: false),
        .sendData(message),
        .sendData(DataMessage(id: MessageID("dm_2"), from: nil, topic: "t", payload: "", to: nil, at: 0)),
        .setAttributes(alice, ["hand": "raised", "emoji": nil]),
    ]

    static let events: [RoomEvent] = [
        .participantJoined(participant),
        .participantLeft(participant, .roomEnded),
        .participantUpdated(participant),
        .trackPublished(track),
        .trackUnpublished(track, reason: "publisher_left"),
        .trackMuted(track, by: .admin),
        .shareStarted(share),
        .sharePaused(share),
        .shareResumed(share),
        .shareStopped(share, .permissionRevoked, by: .participant(alice)),
        .permissionsChanged(participant, by: .admin),
        .shareLockChanged(locked: true, by: .participant(alice)),
        .sharePolicyChanged(policy, by: .admin),
        .shareRequested(request),
        .shareRequestResolved(request, .expired, by: nil),
        .shareRequestResolved(request, .granted, by: .admin),
        .roomEnded(by: .admin),
        .data(message),
        .attributesChanged(participant, by: .participant(alice)),
    ]

    static let errors: [HubError] = [
        .badRequest("b"), .invalidField("f", "m"), .notJoined, .roomFull,
        .roomNotFound("r"), .invalidRoomName("a b"), .notAllowed("no"), .shareLocked, .shareInProgress,
        .tooManyShares, .noActiveShare, .alreadyPublished, .trackNotFound, .participantNotFound, .shareNotFound,
        .requestNotFound, .requestPending, .publisherLeft, .dataNotAllowed, .roomElsewhere(node: "n2"),
        .clusterUnavailable("down"),
    ]

    /// Through JSON text, as the relay sends it.
    static func trip<T: Codable>(_ value: T) throws -> T {
        let text = try JSONValueEncoder().encode(value).bytes()
        return try JSONValueDecoder().decode(T.self, from: try JSONParser.parse(text))
    }

    @Test(arguments: commands)
    func commandRoundTrips(_ c: HubCommand) throws {
        #expect(try Self.trip(c) == c)
        let addressed = RoomCommand(room: Self.room, actor: .participant(Self.alice), command: c)
        #expect(try Self.trip(addressed) == addressed)
    }

    @Test(arguments: events)
    func eventRoundTrips(_ e: RoomEvent) throws {
        #expect(try Self.trip(e) == e)
    }

    @Test(arguments: errors)
    func refusalRoundTrips(_ e: HubError) throws {
        #expect(try Self.trip(CommandOutcome.refused(e)) == .refused(e))
    }

    @Test func outcomesAndTheirRelayMessagesRoundTrip() throws {
        let outcome = CommandOutcome.events(Self.events)
        #expect(try Self.trip(outcome) == outcome)
        let body = try JSONValueEncoder().encode(RoomCommand(room: Self.room, actor: .admin, command: .endRoom))
        for m in [RelayMessage.command(from: "n1", call: "n1:4", body: body), .commandReply(call: "n1:4", body: body)] {
            #expect(RelayMessage(bytes: m.json.bytes()) == m)
        }
    }

    /// The tables above name every case: a new command or event fails to compile here until it has a row.
    @Test func theTablesCoverEveryCase() {
        func name(_ c: HubCommand) -> String {
            switch c {
            case .join: "join"
            case .leave: "leave"
            case .setConnected: "setConnected"
            case .update: "update"
            case .updateParticipant: "updateParticipant"
            case .publish: "publish"
            case .unpublish: "unpublish"
            case .setMuted: "setMuted"
            case .subscribe: "subscribe"
            case .unsubscribe: "unsubscribe"
            case .pauseShare: "pauseShare"
            case .resumeShare: "resumeShare"
            case .stopShare: "stopShare"
            case .requestShare: "requestShare"
            case .answerShareRequest: "answerShareRequest"
            case .setShareLock: "setShareLock"
            case .setSharePolicy: "setSharePolicy"
            case .setPermission: "setPermission"
            case .removeParticipant: "removeParticipant"
            case .endRoom: "endRoom"
            case .expireRequests: "expireRequests"
            case .applySettings: "applySettings"
            case .setDataPermission: "setDataPermission"
            case .sendData: "sendData"
            case .setAttributes: "setAttributes"
            }
        }
        #expect(Set(Self.commands.map(name)).count == 25)
        #expect(Set(Self.events.map { String(describing: $0).prefix { $0 != "(" } }).count == 18)
    }

    /// Malformed input from another node is a `DecodingError`, never a trap.
    @Test(arguments: [
        #"{}"#, #"{"endRoom":{},"expireRequests":{}}"#, #"{"setShareLock":{"_0":"yes"}}"#,
        #"{"setMuted":{"_0":"tr_1"}}"#, #"{"nope":{}}"#, #"[]"#, #"{"stopShare":{"_0":"sh","reason":"bored"}}"#,
        #"{"subscribe":{"_0":7,"quality":"low"}}"#,
    ])
    func malformedCommandsAreRefused(_ text: String) throws {
        let value = try JSONParser.parse(Array(text.utf8))
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(HubCommand.self, from: value) }
    }

    @Test func integersOutOfRangeAreRefused() throws {
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Int8.self, from: .int(300)) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(UInt.self, from: .int(-1)) }
        #expect(throws: (any Error).self) { try JSONValueEncoder().encode(UInt64.max) }
        #expect(try JSONValueDecoder().decode(Int64.self, from: .int(Int64.min)) == Int64.min)
    }

    /// The caller of a relayed command tells no answer from an answer it cannot read (a node of
    /// another version), and takes the owner's outcome when it can.
    @Test func aCommandsAnswerIsReadOrRefusedWithItsReason() throws {
        let unread = try JSONParser.parse(Array(#"{"events":"soon"}"#.utf8))
        let events = try JSONValueEncoder().encode(CommandOutcome.refused(.roomNotFound("rm_1")))
        let table: [(RelayMessage?, Result<[RoomEvent], HubError>)] = [
            (nil, .failure(.clusterUnavailable("the node running the room did not answer in time"))),
            (
                .httpReply(call: "n:1", status: 200, headers: [], body: ""),
                .failure(.clusterUnavailable("the node running the room did not answer in time"))
            ),
            (
                .commandReply(call: "n:1", body: unread),
                .failure(.clusterUnavailable("the node running the room answered in a form this node cannot read"))
            ),
            (.commandReply(call: "n:1", body: events), .failure(.roomNotFound("rm_1"))),
            (.commandReply(call: "n:1", body: try JSONValueEncoder().encode(CommandOutcome.events([]))), .success([])),
        ]
        for (answer, expected) in table { #expect(CommandOutcome.result(of: answer) == expected) }
    }
}
