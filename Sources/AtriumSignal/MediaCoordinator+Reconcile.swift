import AtriumForwarding
import AtriumJSEP
import AtriumJSON
import AtriumMedia
import AtriumModel
import AtriumRooms
import AtriumSDP

/// Keeping the worker in step with the rooms, and the subscriber connection's offers.
extension MediaCoordinator {
    /// Brings forwarding in line with a room's state after a change (nil: the room ended).
    func reconcile(_ room: RoomID, _ state: RoomState?) {
        if holdReconcile && state != nil { return }
        // Producers whose track is gone end now; paused shares pause.
        for (trackID, info) in producers where info.room == room {
            guard let track = state?.tracks[trackID] else {
                producers[trackID] = nil
                wantedLayers[trackID] = nil
                worker.submit(.closeProducer(id: trackID.rawValue))
                if var peer = peers[info.owner], var pub = peer.publisher {
                    pub.bindings = pub.bindings.filter { $0.value != trackID }
                    peer.publisher = pub
                    peers[info.owner] = peer
                }
                continue
            }
            // A paused share and a muted track are not forwarded, whatever the client keeps sending.
            let paused =
                track.muted || track.shareID.flatMap { id in state?.shares.first { $0.id == id } }?.state == .paused
            if paused != info.paused {
                producers[trackID]?.paused = paused
                worker.submit(.pauseProducer(id: trackID.rawValue, paused: paused))
            }
        }
        // Participants who left lose their transports.
        for (pid, peer) in peers where peer.room == room && state?.participants[pid] == nil {
            if let pub = peer.publisher { worker.submit(.closeTransport(id: pub.transport)) }
            if let sub = peer.subscriber { worker.submit(.closeTransport(id: sub.transport)) }
            peers[pid] = nil
            viewports[pid] = nil
        }
        guard let state else {
            speakers[room] = nil
            return
        }
        // Each participant receives what it is subscribed to among the tracks that have media.
        for pid in state.order {
            guard let p = state.participants[pid], p.canSubscribe else { continue }
            let wanted = Set(p.subscriptions.keys.filter { producers[$0] != nil })
            updateSubscriber(pid, room: room, state: state, wanted: wanted)
        }
    }

    func updateSubscriber(_ pid: ParticipantID, room: RoomID, state: RoomState, wanted: Set<TrackID>) {
        var peer = peers[pid] ?? Peer(room: room)
        if peer.subscriber == nil {
            guard !wanted.isEmpty else { return }
            let (u, pw) = credentials()
            let id = nextID("sub-")
            worker.submit(
                .openTransport(
                    TransportSpec(
                        id: id, label: "\(pid.rawValue)/sub", localUfrag: u, localPassword: pw, remote: nil)))
            peer.subscriber = Subscriber(transport: id, ufrag: u, password: pw)
        }
        guard var sub = peer.subscriber else { return }
        var changed = false
        // A changed quality or viewport reaches the consumers that exist; new ones get it at creation.
        for i in sub.sections.indices where sub.sections[i].active {
            let wish = preference(pid, sub.sections[i].track, state)
            guard wish != sub.sections[i].preference else { continue }
            sub.sections[i].preference = wish
            if let c = sub.sections[i].consumer { worker.submit(.setPreference(consumer: c, wish)) }
        }
        for i in sub.sections.indices where sub.sections[i].active && !wanted.contains(sub.sections[i].track) {
            sub.sections[i].active = false
            // Its payload types serve the next section of the same codec configuration: the ended
            // section keeps the same mapping, which BUNDLE allows (RFC 8843 section 9.1).
            sub.freedCodecs[Self.configuration(sub.sections[i].codec, sub.sections[i].parameters), default: []]
                .append(sub.sections[i].codec)
            if let c = sub.sections[i].consumer { worker.submit(.closeConsumer(id: c)) }
            sub.sections[i].consumer = nil
            changed = true
        }
        let present = Set(sub.sections.filter(\.active).map(\.track))
        for trackID in wanted.sorted(by: { $0.rawValue < $1.rawValue }) where !present.contains(trackID) {
            guard let info = producers[trackID], let track = state.tracks[trackID] else { continue }
            let key = Self.configuration(info.codec, info.parameters)
            let codec = sub.freedCodecs[key]?.popLast() ?? Self.allocate(info.codec, in: &sub.usedPayloadTypes)
            sub.sections.append(
                Section(
                    mid: String(sub.nextMid), track: trackID, publisher: info.owner, source: track.source,
                    kind: info.codec.kind, codec: codec,
                    parameters: info.parameters,
                    ssrc: UInt32.random(in: 1...UInt32.max, using: &rng),
                    rtxSSRC: UInt32.random(in: 1...UInt32.max, using: &rng), active: true, consumer: nil,
                    preference: preference(pid, trackID, state)))
            sub.nextMid += 1
            changed = true
        }
        peer.subscriber = sub
        peers[pid] = peer
        if changed { negotiate(pid) }
    }

    /// Sends the next subscriber offer, or marks one due when an offer is still waiting for its answer.
    func negotiate(_ pid: ParticipantID) {
        guard var peer = peers[pid], var sub = peer.subscriber else { return }
        if sub.pending != nil {
            sub.dirty = true
            peer.subscriber = sub
            peers[pid] = peer
            return
        }
        sub.dirty = false
        sub.revision += 1
        // Ended sections are never removed from a connection (JSEP keeps them; aiortc cannot reuse one):
        // past `maxEndedSections` the server starts a new subscriber connection with the live tracks only,
        // so that a day-long meeting's offers and answers stay small.
        var reset = sub.resetPending
        if sub.sections.filter({ !$0.active }).count >= Self.maxEndedSections {
            reset = true
            worker.submit(.closeTransport(id: sub.transport))
            let (u, pw) = credentials()
            sub.transport = nextID("sub-")
            (sub.ufrag, sub.password) = (u, pw)
            worker.submit(
                .openTransport(
                    TransportSpec(
                        id: sub.transport, label: "\(pid.rawValue)/sub", localUfrag: u, localPassword: pw, remote: nil))
            )
            sub.usedPayloadTypes = []
            sub.freedCodecs = [:]
            sub.nextMid = 0
            sub.sections = sub.sections.filter(\.active).map { s in
                var n = s
                n.mid = String(sub.nextMid)
                sub.nextMid += 1
                n.codec = Self.allocate(Self.serverDefault(s.codec), in: &sub.usedPayloadTypes)
                n.consumer = nil
                n.ssrc = UInt32.random(in: 1...UInt32.max, using: &rng)
                n.rtxSSRC = UInt32.random(in: 1...UInt32.max, using: &rng)
                return n
            }
        }
        // Nothing live to offer on the new connection yet: the reset goes with the next offer.
        if reset && sub.sections.isEmpty {
            sub.resetPending = true
            sub.revision -= 1
            peer.subscriber = sub
            peers[pid] = peer
            return
        }
        sub.resetPending = false
        let sections = sub.sections.map { s in
            SubscriberSection(
                mid: s.mid, kind: s.kind, codec: s.codec, parameters: s.parameters, ssrc: s.ssrc, rtxSSRC: s.rtxSSRC,
                streamID: s.publisher.rawValue, trackID: s.track.rawValue, cname: s.publisher.rawValue, active: s.active
            )
        }
        let offer = SubscriberNegotiation.offer(
            sections: sections, local: local(sub.ufrag, sub.password), sessionID: sessionID,
            version: UInt64(sub.revision))
        let tracks: [JSONValue] = sub.sections.filter(\.active).map { s in
            .object([
                "mid": .string(s.mid), "trackId": .string(s.track.rawValue),
                "participantId": .string(s.publisher.rawValue), "source": .string(s.source.rawValue),
            ])
        }
        var message: JSONObject = [
            "type": "subscriber_offer", "revision": .int(Int64(sub.revision)), "sdp": .string(offer.serialized()),
            "tracks": .array(tracks),
        ]
        if reset { message["reset"] = .bool(true) }
        sub.pending = (sub.revision, offer, message)
        peer.subscriber = sub
        peers[pid] = peer
        push(pid, message)
    }

    /// The subscriber's answer: the transport learns the peer, accepted sections get their consumers.
    func subscriberAnswer(_ pid: ParticipantID, revision: Int, sdp: String) throws(HubError) {
        guard var peer = peers[pid], var sub = peer.subscriber, let pending = sub.pending else {
            throw .media(code: "stale_revision", message: "no subscriber offer is waiting for an answer")
        }
        guard pending.revision == revision else {
            throw .media(
                code: "stale_revision", message: "the offer waiting for an answer is revision \(pending.revision)")
        }
        let answer: SubscriberNegotiation.Answer
        do {
            answer = try SubscriberNegotiation.answer(text: sdp, offer: pending.offer)
        } catch {
            throw .media(code: error.code, message: error.description)
        }
        let remote = RemoteSpec(
            ufrag: answer.remote.ufrag, password: answer.remote.password, fingerprint: answer.remote.fingerprint.bytes,
            dtlsClient: answer.remote.setup == .passive)
        worker.submit(
            .updateTransport(id: sub.transport, remote: remote, localUfrag: sub.ufrag, localPassword: sub.password))
        let ext = HeaderExtensionIDs.subscriber
        for i in sub.sections.indices where sub.sections[i].active && sub.sections[i].consumer == nil {
            let s = sub.sections[i]
            guard answer.accepted.contains(s.mid) else { continue }
            let id = "\(pid.rawValue)/\(s.track.rawValue)/\(s.mid)"
            let video = s.codec.isVideo
            // Sent with the numbers the answer gave (the offer's when it kept them).
            let answered = answer.payloadTypes[s.mid]
            worker.submit(
                .addConsumer(
                    ConsumerSpec(
                        id: id, producer: s.track.rawValue, transport: sub.transport, ssrc: s.ssrc,
                        rtxSSRC: video ? s.rtxSSRC : nil, payloadType: answered?.media ?? s.codec.payloadType,
                        rtxPayloadType: video && s.codec.rtxPayloadType != nil ? answered?.rtx : nil,
                        nack: video && answer.nack.contains(s.mid), audioLevelID: video ? nil : ext.audioLevel,
                        absSendTimeID: ext.absSendTime, preference: s.preference)))
            sub.sections[i].consumer = id
        }
        sub.pending = nil
        let again = sub.dirty
        peer.subscriber = sub
        peers[pid] = peer
        if again { negotiate(pid) }
    }

    /// After a join or a resume: an offer made while the participant had no socket is sent (again),
    /// and so are the layers wanted of its simulcast tracks.
    func resumed(_ pid: ParticipantID) {
        if let message = peers[pid]?.subscriber?.pending?.message { push(pid, message) }
        for (track, info) in producers where info.owner == pid {
            if let rids = wantedLayers[track] { push(pid, Self.layersWantedMessage(track, rids)) }
        }
    }

    /// What a viewer asked of a track: its subscription's quality and its viewport.
    func preference(_ pid: ParticipantID, _ track: TrackID, _ state: RoomState) -> LayerPreference {
        let quality: LayerChoice.Quality =
            switch state.participants[pid]?.subscriptions[track] ?? .high {
            case .low: .low
            case .medium: .medium
            case .high: .high
            }
        return LayerPreference(quality: quality, viewport: viewports[pid]?[track])
    }

    static func layersWantedMessage(_ track: TrackID, _ rids: [String]) -> JSONObject {
        ["type": "layers_wanted", "trackId": .string(track.rawValue), "rids": .array(rids.map { .string($0) })]
    }
}
