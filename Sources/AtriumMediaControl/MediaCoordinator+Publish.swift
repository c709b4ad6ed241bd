import AtriumJSEP
import AtriumMedia
package import AtriumModel
public import AtriumProtocol
import AtriumRoomCoding
package import AtriumRooms
import AtriumSDP

/// `publish_offer`: binding a publisher connection's transceivers to tracks with an SDP answer
/// (docs/protocol.md section 14). The request is checked first (`PublishRequest`); then the
/// publisher transport is opened or updated, each section gets a decision from values alone
/// (`plan`), the decisions are applied (tracks published or ended through `MediaRooms`, producers
/// recorded), and one reconcile starts the new producers and offers them to subscribers.
extension MediaCoordinator {
    /// Answers a publisher's offer. Every refusal after the checks of `PublishRequest` is a section's
    /// (`rejected`), never the request's.
    package func publishOffer(
        _ request: PublishRequest, by me: ParticipantID, in room: RoomID, rooms: any MediaRooms, now t: Int64
    ) -> PublishAnswer {
        let offer = request.offer
        var pub = publisherTransport(me, in: room, remote: Self.remote(offer), rooms: rooms, now: t)
        // Publishing runs the hub once per track; subscribers are offered the new tracks once, at the end.
        holdReconcile = true
        var outcome = PublishOutcome()
        for s in offer.sections {
            let plan = Self.plan(
                s, bindings: pub.bindings, entry: request.entries[s.mid], state: rooms.state(room), me: me)
            apply(plan, to: s, publisher: &pub, outcome: &outcome, by: me, in: room, rooms: rooms, now: t)
        }
        if !outcome.refused.isEmpty {
            plane.submit(.reject(transport: pub.transport, mids: outcome.refused, ssrcs: outcome.refusedSSRCs))
        }
        let answer = offer.answer(
            local: local(pub.ufrag, pub.password, room: room, transport: pub.transport),
            accepted: Set(outcome.accepted.map(\.0.mid)),
            refused: outcome.refused, sessionID: sessionID, version: pub.version)
        pub.version += 1
        var peer = peers[me] ?? Peer(room: room)
        peer.publisher = pub
        peers[me] = peer
        // The new producers start, and subscribers learn of them, now that every section is bound.
        holdReconcile = false
        reconcile(room, rooms.state(room))
        let state = rooms.state(room)
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
            transportWideCCExtensionID: twcc ? offer.sections.lazy.compactMap(\.extensions.transportWideCC).first : nil)
    }

    /// The publisher transport for an offer: opened on the first one; on a later one updated, with new
    /// ICE credentials after an ICE restart, and the tracks of the old connection ended when the offer
    /// comes from another one (another DTLS certificate).
    func publisherTransport(
        _ me: ParticipantID, in room: RoomID, remote: RemoteSpec, rooms: any MediaRooms, now t: Int64
    ) -> Publisher {
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
            return pub
        }
        if pub.remoteFingerprint != remote.fingerprint {
            // A new RTCPeerConnection: the old one's transceivers are gone, and so are their tracks.
            let old = pub.bindings.values
            pub.bindings = [:]
            pub.remoteFingerprint = remote.fingerprint
            for track in old { rooms.unpublish(track, by: me, in: room, now: t) }
        }
        if pub.remoteUfrag != remote.ufrag {
            // The client restarted ICE (RFC 8445 section 9): both sides change credentials.
            (pub.ufrag, pub.password) = credentials()
        }
        pub.remoteUfrag = remote.ufrag
        plane.submit(
            .updateTransport(id: pub.transport, remote: remote, localUfrag: pub.ufrag, localPassword: pub.password))
        return pub
    }

    /// What becomes of one section of an offer, from the section, the connection's bindings, the
    /// section's entry in `tracks` and the room: no effects.
    static func plan(
        _ s: OfferedSection, bindings: [String: TrackID], entry: PublishRequest.Entry?, state: RoomState?,
        me: ParticipantID
    ) -> SectionPlan {
        let bound = bindings[s.mid]
        // A stopped transceiver ends its track.
        if s.stopped || s.kind == nil { return .stop(ending: bound) }
        if let bound {
            guard let track = state?.tracks[bound] else {
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
            guard let id, let existing = state?.tracks[id], existing.owner == me else {
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

    /// Carries out a section's plan: the hub calls it needs, the binding, the producer recorded.
    func apply(
        _ plan: SectionPlan, to s: OfferedSection, publisher pub: inout Publisher, outcome: inout PublishOutcome,
        by me: ParticipantID, in room: RoomID, rooms: any MediaRooms, now t: Int64
    ) {
        switch plan {
        case .stop(let ending):
            if let ending {
                pub.bindings[s.mid] = nil
                rooms.unpublish(ending, by: me, in: room, now: t)
            }
            outcome.refused.insert(s.mid)
        case .keep(let track):
            outcome.accepted.append((s, track))
        case .reject(let code, let message, let unbind):
            if unbind { pub.bindings[s.mid] = nil }
            outcome.reject(s, code, message)
        case .bind(let track, let codec):
            bind(track, to: s, codec: codec, publisher: &pub, in: room)
            outcome.accepted.append((s, track))
        case .publish(let request, let codec):
            do throws(HubError) {
                let track = try rooms.publish(request, by: me, in: room, now: t).0
                bind(track, to: s, codec: codec, publisher: &pub, in: room)
                outcome.accepted.append((s, track))
            } catch {
                outcome.reject(s, error.code, error.message)
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
