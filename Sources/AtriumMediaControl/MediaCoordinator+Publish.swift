import AtriumJSEP
import AtriumMedia
package import AtriumModel
package import AtriumProtocol
import AtriumRoomCoding
package import AtriumRooms
import AtriumSDP

/// `publish_offer`: binding a publisher connection's transceivers to tracks with an SDP answer
/// (docs/protocol.md section 14), in two steps around the room's changes. `planOffer` checks the
/// offer against the room, opens or updates the publisher transport and decides each section from
/// values alone (`plan`); the edge then makes the room changes the plan asks for through the hub
/// (tracks ended, tracks published); `answerOffer` binds the sections to the tracks, records their
/// producers and runs one reconcile, which starts them and offers them to subscribers. Media control
/// reads the rooms and follows their changes; it never changes a room itself.
extension MediaCoordinator {
    /// A publisher's offer between its plan and its answer.
    package struct PendingOffer {
        let request: PublishRequest
        let me: ParticipantID
        let room: RoomID
        var publisher: Publisher
        var sections: [(OfferedSection, SectionPlan)] = []
        /// The tracks the room must end first: the old connection's (a new `RTCPeerConnection`) and
        /// those of stopped transceivers.
        package var ending: [TrackID] = []
        /// The new tracks the room must publish, by mid, in the offer's order.
        package var publishing: [(mid: String, request: TrackRequest)] = []
    }

    /// Plans the answer to a publisher's offer: the transport opened or updated, each section decided.
    package func planOffer(_ request: PublishRequest, by me: ParticipantID, in room: RoomID, state: RoomState?)
        -> PendingOffer
    {
        let offer = request.offer
        let (pub, ended) = publisherTransport(me, in: room, remote: Self.remote(offer))
        var pending = PendingOffer(request: request, me: me, room: room, publisher: pub, ending: ended)
        for s in offer.sections {
            let plan = Self.plan(
                s, bindings: pending.publisher.bindings, entry: request.entries[s.mid], state: state, me: me,
                ending: Set(pending.ending))
            // The bindings as the plan leaves them, so that a later section sees a track bound already.
            switch plan {
            case .stop(let ending?):
                pending.publisher.bindings[s.mid] = nil
                pending.ending.append(ending)
            case .bind(let track, _): pending.publisher.bindings[s.mid] = track.id
            case .reject(_, _, unbind: true): pending.publisher.bindings[s.mid] = nil
            case .publish(let r, _): pending.publishing.append((s.mid, r))
            case .stop(nil), .keep, .reject: break
            }
            pending.sections.append((s, plan))
        }
        return pending
    }

    /// Answers a planned offer once the room made its changes (`published`: each new track, or why
    /// the hub refused it). Every refusal is a section's (`rejected`), never the request's.
    package func answerOffer(
        _ pending: PendingOffer, published: [String: Result<Track, HubError>], rooms: any MediaRooms
    ) -> PublishAnswer {
        let room = pending.room
        var pub = pending.publisher
        var outcome = PublishOutcome()
        for (s, plan) in pending.sections {
            apply(plan, to: s, publisher: &pub, outcome: &outcome, published: published[s.mid], in: room)
        }
        if !outcome.refused.isEmpty {
            plane.submit(.reject(transport: pub.transport, mids: outcome.refused, ssrcs: outcome.refusedSSRCs))
        }
        let answer = pending.request.offer.answer(
            local: local(pub.ufrag, pub.password, room: room, transport: pub.transport),
            accepted: Set(outcome.accepted.map(\.0.mid)),
            refused: outcome.refused, sessionID: sessionID, version: pub.version)
        pub.version += 1
        var peer = peers[pending.me] ?? Peer(room: room)
        peer.publisher = pub
        peers[pending.me] = peer
        // The new producers start, and subscribers learn of them, now that every section is bound.
        let state = rooms.state(room)
        reconcile(room, state)
        return PublishAnswer(
            sdp: answer.serialized(),
            tracks: outcome.accepted.map { s, track in
                PublishAnswer.Bound(
                    mid: s.mid, track: track.id, source: track.source, share: state?.tracks[track.id]?.shareID)
            },
            rejected: outcome.rejected)
    }

    /// The peer's side of the publisher transport, from its offer.
    static func remote(_ offer: PublishOffer) -> RemoteSpec {
        let twcc = offer.sections.contains { $0.codec?.transportCC == true }
        return RemoteSpec(
            ufrag: offer.remote.ufrag, password: offer.remote.password, fingerprint: offer.remote.fingerprint.bytes,
            dtlsClient: offer.answerSetup == .active,
            midExtensionID: offer.sections.lazy.compactMap(\.extensions.mid).first,
            transportWideCCExtensionID: twcc ? offer.sections.lazy.compactMap(\.extensions.transportWideCC).first : nil,
            sctpPort: offer.sctpPort)
    }

    /// The publisher transport for an offer: opened on the first one; on a later one updated, with new
    /// ICE credentials after an ICE restart, and (returned) the tracks of the old connection, which
    /// end, when the offer comes from another one (another DTLS certificate).
    func publisherTransport(_ me: ParticipantID, in room: RoomID, remote: RemoteSpec) -> (Publisher, [TrackID]) {
        guard var pub = peers[me]?.publisher else {
            let (u, pw) = credentials()
            let pub = Publisher(
                transport: nextID("pub-"), ufrag: u, password: pw, remoteUfrag: remote.ufrag,
                remoteFingerprint: remote.fingerprint)
            plane.submit(
                .openTransport(
                    TransportSpec(
                        id: pub.transport, router: room.rawValue, label: "\(me.rawValue)/pub", localUfrag: u,
                        localPassword: pw,
                        remote: remote)))
            return (pub, [])
        }
        var ended: [TrackID] = []
        if pub.remoteFingerprint != remote.fingerprint {
            // A new RTCPeerConnection: the old one's transceivers are gone, and so are their tracks.
            ended = pub.bindings.sorted { $0.key < $1.key }.map(\.value)
            pub.bindings = [:]
            pub.remoteFingerprint = remote.fingerprint
        }
        if pub.remoteUfrag != remote.ufrag {
            // The client restarted ICE (RFC 8445 section 9): both sides change credentials.
            (pub.ufrag, pub.password) = credentials()
        }
        pub.remoteUfrag = remote.ufrag
        plane.submit(
            .updateTransport(id: pub.transport, remote: remote, localUfrag: pub.ufrag, localPassword: pub.password))
        return (pub, ended)
    }

    /// What becomes of one section of an offer, from the section, the connection's bindings, the
    /// section's entry in `tracks` and the room (where the tracks `ending` are gone): no effects.
    static func plan(
        _ s: OfferedSection, bindings: [String: TrackID], entry: PublishRequest.Entry?, state: RoomState?,
        me: ParticipantID, ending: Set<TrackID> = []
    ) -> SectionPlan {
        func track(_ id: TrackID) -> Track? { ending.contains(id) ? nil : state?.tracks[id] }
        let bound = bindings[s.mid]
        // A stopped transceiver ends its track.
        if s.stopped || s.kind == nil { return .stop(ending: bound) }
        if let bound {
            guard let track = track(bound) else {
                return .reject(HubError.trackNotFound.code, "the track bound to this mid has ended", unbind: true)
            }
            return .keep(track)
        }
        guard let entry else { return .reject("unbound_mid", "no entry in tracks binds mid \"\(s.mid)\"") }
        guard let codec = s.codec else {
            return .reject("no_common_codec", "none of the offered codecs is forwarded (\(Self.codecList))")
        }
        let kind: TrackKind = s.kind == .audio ? .audio : .video
        switch entry {
        case .existing(let id):
            guard let id, let existing = track(id), existing.owner == me else {
                return .reject(HubError.trackNotFound.code, HubError.trackNotFound.message)
            }
            guard !bindings.values.contains(existing.id) else {
                let error = HubError.invalidField("tracks", "track \(id.rawValue) is already bound")
                return .reject(error.code, error.message)
            }
            guard existing.kind == kind else {
                return .reject("kind_mismatch", "track \(existing.id.rawValue) is \(existing.kind.rawValue)")
            }
            return .bind(existing, codec)
        case .new(let source, let request):
            guard TrackKind(source: source) == kind else {
                return .reject(
                    "kind_mismatch",
                    "\(source.rawValue) is \(TrackKind(source: source).rawValue), the transceiver is \(kind.rawValue)")
            }
            switch request {
            case .success(let r): return .publish(r, codec)
            case .failure(let error): return .reject(error.code, error.message)
            }
        }
    }

    /// Carries out a section's plan once the room made its changes: the binding, the producer recorded.
    func apply(
        _ plan: SectionPlan, to s: OfferedSection, publisher pub: inout Publisher, outcome: inout PublishOutcome,
        published: Result<Track, HubError>?, in room: RoomID
    ) {
        switch plan {
        case .stop:
            outcome.refused.insert(s.mid)
        case .keep(let track):
            outcome.accepted.append((s, track))
        case .reject(let code, let message, let unbind):
            if unbind { pub.bindings[s.mid] = nil }
            outcome.reject(s, code, message)
        case .bind(let track, let codec):
            bind(track, to: s, codec: codec, publisher: &pub, in: room)
            outcome.accepted.append((s, track))
        case .publish(_, let codec):
            switch published {
            case .success(let track):
                bind(track, to: s, codec: codec, publisher: &pub, in: room)
                outcome.accepted.append((s, track))
            case .failure(let error):
                outcome.reject(s, error.code, error.message)
            case nil:
                outcome.reject(s, HubError.trackNotFound.code, "the track was not published")
            }
        }
    }

    /// Binds a section to a track and records the producer the next reconcile starts.
    func bind(
        _ track: Track, to s: OfferedSection, codec: SelectedCodec, publisher pub: inout Publisher, in room: RoomID
    ) {
        pub.bindings[s.mid] = track.id
        let existing = producers[track.id]
        producerSerial += 1
        producers[track.id] = ProducerInfo(
            track: track.id, owner: track.owner, room: room, codec: codec.server, parameters: codec.offered.parameters,
            paused: existing?.paused ?? false,
            spec: Self.producerSpec(s, codec: codec, track: track, transport: pub.transport),
            submitted: existing?.submitted ?? false, serial: existing?.serial ?? producerSerial)
    }

    /// The producer the worker receives a bound section with.
    static func producerSpec(_ s: OfferedSection, codec: SelectedCodec, track: Track, transport: String) -> ProducerSpec
    {
        ProducerSpec(
            id: track.id.rawValue, transport: transport, mid: s.mid, source: track.source.rawValue,
            kind: track.kind == .audio ? .audio : .video,
            videoCodec: codec.server.isVideo ? codec.server.encodingName : nil,
            clockRate: codec.server.clockRate, payloadType: codec.offered.payloadType,
            rtxPayloadType: codec.nack ? codec.offeredRTX : nil, ssrc: s.ssrc, rtxSSRC: s.rtxSSRC,
            audioLevelID: s.extensions.audioLevel, absSendTimeID: s.extensions.absSendTime,
            paused: false, encodings: Self.encodings(s.simulcast, declared: track.layers),
            ridExtensionID: s.simulcast?.ridExtensionID ?? s.extensions.rid,
            repairedRidExtensionID: s.simulcast?.repairedRidExtensionID ?? s.extensions.repairedRid,
            dependencyDescriptorID: codec.server.name == .av1 ? s.extensions.dependencyDescriptor : nil)
    }

    /// The accepted simulcast streams, bottom layer first: in the order of the track's declared
    /// `layers` (with their sizes), then any other accepted rid in the offer's order (sized by its
    /// `a=rid` restrictions when written).
    static func encodings(_ simulcast: AcceptedSimulcast?, declared: [SimulcastLayer]) -> [EncodingSpec] {
        guard let simulcast else { return [] }
        let offered = Dictionary(simulcast.layers.map { ($0.rid, $0) }, uniquingKeysWith: { a, _ in a })
        var out: [EncodingSpec] = []
        for d in declared where offered[d.rid] != nil && !out.contains(where: { $0.rid == d.rid }) {
            out.append(EncodingSpec(rid: d.rid, width: d.width, height: d.height))
        }
        for l in simulcast.layers where !out.contains(where: { $0.rid == l.rid }) {
            out.append(
                EncodingSpec(
                    rid: l.rid, width: l.maxWidth.map { Int(min($0, 16384)) } ?? 0,
                    height: l.maxHeight.map { Int(min($0, 16384)) } ?? 0))
        }
        return out
    }

    static let codecList = "video VP8, H264 (packetization-mode 1, baseline or main), VP9 profile 0, AV1; audio Opus"
}
