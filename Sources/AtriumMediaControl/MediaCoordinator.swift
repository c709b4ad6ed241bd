import AtriumForwarding
import AtriumICE
import AtriumJSEP
package import AtriumMedia
package import AtriumModel
import AtriumRooms
import AtriumSDP
import AtriumUDP

/// The signaling side of the media plane, on the service thread: each participant's publisher and
/// subscriber transports, the binding of publisher mids to tracks, and the subscriber's offers. After
/// every change of a room it reconciles what the worker forwards with the room state, so every way a
/// track ends (unpublish, share stop for any reason, revoke, leave, room end) ends its forwarding,
/// and every track a `publish_offer` binds starts forwarding through the same reconcile. It drives
/// the media plane through `MediaPlane` and the rooms through `MediaRooms`; what it tells
/// participants waits in `outbox` for the endpoint.
public final class MediaCoordinator {
    /// A track with media: where it comes from, how the worker receives it and how subscribers are
    /// offered it. Recorded when a publisher's offer binds the track; the reconcile hands `spec` to
    /// the worker (`submitted`) and closes it when the track is gone.
    struct ProducerInfo {
        var track: TrackID
        var owner: ParticipantID
        var room: RoomID
        var codec: ServerCodec
        var parameters: [FormatParameter]
        var paused: Bool
        /// The producer as the worker gets it (`paused` is the info's at the time it is added).
        var spec: ProducerSpec
        /// Whether the worker has been given the producer.
        var submitted = false
        /// Recording order: producers of one offer start in the order of its sections.
        var serial: UInt64 = 0
    }

    struct Publisher {
        var transport: String
        var ufrag: String
        var password: String
        var remoteUfrag: String
        /// The DTLS certificate of the client's peer connection: another one is another connection.
        var remoteFingerprint: [UInt8]
        var bindings: [String: TrackID] = [:]
        var version: UInt64 = 1
    }

    struct Section {
        var mid: String
        var track: TrackID
        var publisher: ParticipantID
        var source: TrackSource
        var kind: MediaKind
        var codec: ServerCodec
        var parameters: [FormatParameter]
        var ssrc: UInt32
        var rtxSSRC: UInt32
        var active: Bool
        var consumer: String?
        /// The layer preference the consumer was last given.
        var preference = LayerPreference()
    }

    struct Subscriber {
        var transport: String
        var ufrag: String
        var password: String
        var sections: [Section] = []
        var nextMid = 0
        /// Payload types given to sections so far: each section gets its own, so a receiver that
        /// demultiplexes RTX by payload type (aiortc) finds the right track.
        var usedPayloadTypes: Set<UInt8> = []
        /// Codecs (with their payload types) of ended sections, by configuration, for reuse.
        var freedCodecs: [String: [ServerCodec]] = [:]
        var revision = 0
        /// The offer waiting for its answer, and the message that carried it (resent after a resume).
        var pending: (revision: Int, offer: SessionDescription, message: MediaMessage)?
        var dirty = false
        /// The connection was replaced while it had nothing to carry: the next offer says `reset`.
        var resetPending = false
        /// Its offers carry a data channel section (the participant joined with `dataChannels`).
        var data = false
        /// A player's connection (WHEP): the client offered it, and its sections follow the room
        /// (`MediaCoordinator+Player`) instead of subscriptions; the server never offers on it.
        var player: Player?
        /// The session id of its offers' `o=` line, when it goes on from another node's (a kept
        /// connection); the coordinator's otherwise.
        var sessionID: UInt64?
    }

    struct Peer {
        var room: RoomID
        var publisher: Publisher?
        var subscriber: Subscriber?
    }

    let plane: any MediaPlane
    let fingerprint: Fingerprint
    let sessionID: UInt64
    var peers: [ParticipantID: Peer] = [:]
    /// Subscriber connections participants joining again kept from their room's lost node, until
    /// their subscriber is made (`MediaCoordinator+Kept`).
    var kept: [ParticipantID: KeptSubscriberConnection] = [:]
    var producers: [TrackID: ProducerInfo] = [:]
    /// The tile size each viewer shows a track in (`set_viewport`), by viewer and track.
    var viewports: [ParticipantID: [TrackID: LayerChoice.Size]] = [:]
    /// The layers last said to be wanted of each simulcast track (`layers_wanted`), resent on resume.
    var wantedLayers: [TrackID: [String]] = [:]
    /// Subscriber transports whose path the worker knows to be narrow now (`MediaEvent.bottleneck`).
    var bottlenecks: Set<String> = []
    /// The speakers last announced per room, and that announcement (sent again to whoever joins or
    /// resumes, who would otherwise see nobody speaking until the speakers change).
    var speakers: [RoomID: [ParticipantID]] = [:]
    var announced: [RoomID: ActiveSpeakers] = [:]
    /// Each worker's last audio level report: the speakers are worked out from all of them, so one
    /// worker's report does not clear the rooms another worker's producers speak in.
    var levelReports: [Int: [AudioLevel]] = [:]
    /// What the allocator works from (`MediaCoordinator+Allocation`): each subscriber transport's
    /// estimate, each video track's measured layers, the screen-share tracks on stage per room, and
    /// what it last gave each viewer.
    var estimates: [String: Double] = [:]
    var layerStats: [TrackID: [LayerStats]] = [:]
    var stage: [RoomID: Set<TrackID>] = [:]
    var allocations: [ParticipantID: ViewerAllocation] = [:]
    /// Seconds on a monotonic clock, for the allocator's holds (tests set their own).
    var clock: () -> Double = {
        let c = ContinuousClock()
        let start = c.now
        return { Double((c.now - start).components.seconds) + Double((c.now - start).components.attoseconds) * 1e-18 }
    }()
    var counter: UInt64 = 0
    /// The data channels open on each transport, by kind (lossy or reliable), and the messages
    /// participants sent on theirs until the endpoint takes them (`takeData`).
    var dataChannels: [String: [Bool: Int]] = [:]
    var dataIn: [DataFromChannel] = []
    /// Each transport's last reported state (a WHIP session ends when its transport fails).
    var transportStates: [String: MediaEvent.TransportState] = [:]
    /// Counts producers recorded, for their `serial`.
    var producerSerial: UInt64 = 0
    /// Messages for participants, oldest first, until the endpoint takes them (`takeMessages`).
    private(set) var outbox: [(ParticipantID, MediaMessage)] = []
    var rng = SystemRandomNumberGenerator()

    public init(plane: any MediaPlane) {
        self.plane = plane
        fingerprint = Fingerprint(hashFunction: "sha-256", bytes: plane.fingerprint)
        sessionID = UInt64.random(in: 1...UInt64(Int64.max), using: &rng)
    }

    /// Queues a message for a participant.
    func push(_ pid: ParticipantID, _ message: MediaMessage) { outbox.append((pid, message)) }

    /// The messages queued since the last call, oldest first: the endpoint sends each to its participant.
    package func takeMessages() -> [(ParticipantID, MediaMessage)] {
        defer { outbox.removeAll() }
        return outbox
    }

    func local(_ ufrag: String, _ password: String, room: RoomID, transport: String) -> LocalTransport {
        let digest = plane.fingerprint(transport: transport)
        return LocalTransport(
            ufrag: ufrag, password: password,
            fingerprint: digest == fingerprint.bytes
                ? fingerprint : Fingerprint(hashFunction: "sha-256", bytes: digest),
            candidates: candidates(for: room, transport: transport))
    }

    /// The host candidates of the worker the transport opened on (with several media workers each has
    /// its own port; a big room's viewers may be on another worker than its publishers): the UDP
    /// ones, then RFC 6544 passive TCP ones with a lower priority.
    func candidates(for room: RoomID, transport: String) -> [Candidate] {
        let udp = plane.candidateAddresses(room: room.rawValue, transport: transport)
        var out = udp.enumerated().map { i, a in
            Candidate(
                foundation: "\(i + 1)", component: 1, transport: "udp",
                priority: ICECandidate.priority(
                    typePreference: ICECandidate.hostTypePreference, localPreference: UInt16(65535 - i),
                    component: ICECandidate.rtpComponent), address: a.hostText, port: a.port,
                kind: .host)
        }
        out += plane.tcpCandidateAddresses(room: room.rawValue, transport: transport).enumerated().map { i, a in
            Candidate(
                foundation: "\(udp.count + i + 1)", component: 1, transport: "tcp",
                priority: ICECandidate.priority(
                    typePreference: ICECandidate.hostTypePreference,
                    localPreference: ICECandidate.passiveTCPLocalPreference(index: i),
                    component: ICECandidate.rtpComponent), address: a.hostText, port: a.port,
                kind: .host, tcpType: "passive")
        }
        return out
    }

    func credentials() -> (String, String) {
        let c = ICECredentials.random(using: &rng)
        return (c.ufrag, c.password)
    }

    /// Ended sections a subscriber connection may gather before the server starts a new one.
    static let maxEndedSections = 24

    /// A codec with the server's own default payload types again.
    static func serverDefault(_ codec: ServerCodec) -> ServerCodec {
        ServerCodecs.preference.first { $0.name == codec.name } ?? codec
    }

    /// Dynamic payload types usable on a muxed port (RFC 5761 section 4 keeps 64-95 for RTCP).
    static let payloadTypePool: [UInt8] = Array(96...127) + Array(35...63)

    /// The codec with payload types of its own in this subscriber connection; the server's defaults once
    /// the pool is used up (receivers then tell tracks apart by SSRC, as browsers do).
    static func allocate(_ codec: ServerCodec, in used: inout Set<UInt8>) -> ServerCodec {
        var c = codec
        let needed = codec.rtxPayloadType == nil ? 1 : 2
        let free = payloadTypePool.filter { !used.contains($0) }.prefix(needed)
        guard free.count == needed else { return codec }
        c.payloadType = free[free.startIndex]
        used.insert(c.payloadType)
        if needed == 2 {
            c.rtxPayloadType = free[free.startIndex + 1]
            used.insert(free[free.startIndex + 1])
        }
        return c
    }

    /// What must match for two sections of one BUNDLE group to share payload types: the codec and its
    /// format parameters.
    static func configuration(_ codec: ServerCodec, _ parameters: [FormatParameter]) -> String {
        "\(codec.name)/\(codec.clockRate)/\(codec.channels ?? 1) " + parameters.map { "\($0)" }.joined(separator: ";")
    }

    func nextID(_ prefix: String) -> String {
        counter += 1
        return "\(prefix)\(counter)"
    }
}

extension MediaCoordinator {
    /// The producer the worker has for a track, for a recorder to follow; nil while the track has no
    /// media in the worker yet.
    package func producer(of track: TrackID) -> ProducerSpec? {
        guard let info = producers[track], info.submitted else { return nil }
        return info.spec
    }
}
