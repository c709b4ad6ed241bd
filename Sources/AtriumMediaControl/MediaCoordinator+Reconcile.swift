import AtriumForwarding
import AtriumJSEP
import AtriumMedia
package import AtriumModel
package import AtriumRooms
import AtriumSDP

/// Keeping the worker in step with the rooms: producers started, paused and closed, transports of
/// those who left closed, subscriber sections added and ended, consumers' layer preferences.
extension MediaCoordinator {
    /// Brings forwarding in line with a room's state after a change (nil: the room ended).
    package func reconcile(_ room: RoomID, _ state: RoomState?) {
        // Producers whose track is gone end now; paused shares pause.
        for (trackID, info) in producers where info.room == room {
            guard let track = state?.tracks[trackID] else {
                producers[trackID] = nil
                wantedLayers[trackID] = nil
                layerStats[trackID] = nil
                if info.submitted { plane.submit(.closeProducer(id: trackID.rawValue)) }
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
                if info.submitted { plane.submit(.pauseProducer(id: trackID.rawValue, paused: paused)) }
            }
        }
        // Producers bound since the last reconcile start now, in the order they were bound.
        let starting = producers.values.filter { $0.room == room && !$0.submitted }.sorted { $0.serial < $1.serial }
        for info in starting {
            var spec = info.spec
            spec.paused = info.paused
            plane.submit(.addProducer(spec))
            producers[info.track]?.submitted = true
        }
        // Participants who left lose their transports.
        for (pid, peer) in peers where peer.room == room && state?.participants[pid] == nil {
            if let pub = peer.publisher { plane.submit(.closeTransport(id: pub.transport)) }
            if let sub = peer.subscriber {
                plane.submit(.closeTransport(id: sub.transport))
                estimates[sub.transport] = nil
                bottlenecks.remove(sub.transport)
            }
            peers[pid] = nil
            kept[pid] = nil
            viewports[pid] = nil
            allocations[pid] = nil
        }
        guard let state else {
            // The room ended: its router goes with everything still on it.
            plane.submit(.closeRouter(id: room.rawValue))
            speakers[room] = nil
            announced[room] = nil
            stage[room] = nil
            return
        }
        // Each participant receives what it is subscribed to among the tracks that have media.
        for pid in state.order {
            guard let p = state.participants[pid], p.canSubscribe else {
                // Nothing to keep for one that receives nothing.
                kept[pid] = nil
                continue
            }
            if peers[pid]?.subscriber?.player != nil {
                updatePlayer(pid, state)
                continue
            }
            let wanted = Set(p.subscriptions.keys.filter { producers[$0] != nil })
            updateSubscriber(pid, room: room, state: state, wanted: wanted, data: p.dataChannels)
        }
        // Subscriptions, qualities, viewports and the stage may have changed: each viewer's share of
        // its estimate again.
        updateStage(room, state)
        allocateAll(in: room)
    }

    /// `data`: the participant asked for data channels, which its subscriber connection carries from
    /// the first offer on (that connection then opens at once, tracks or not).
    func updateSubscriber(
        _ pid: ParticipantID, room: RoomID, state: RoomState, wanted: Set<TrackID>, data: Bool = false
    ) {
        var peer = peers[pid] ?? Peer(room: room)
        var changed = false
        if peer.subscriber == nil, let k = kept.removeValue(forKey: pid) {
            peer.subscriber = subscriber(continuing: k, pid, room: room, data: data)
            changed = true
        }
        if peer.subscriber == nil {
            guard !wanted.isEmpty || data else { return }
            peer.subscriber = openSubscriber(pid, room: room, data: data)
            changed = data
        }
        guard var sub = peer.subscriber else { return }
        // A changed quality or viewport reaches the consumers that exist; new ones get it at creation.
        for i in sub.sections.indices where sub.sections[i].active {
            let wish = preference(pid, sub.sections[i].track, state)
            guard wish != sub.sections[i].preference else { continue }
            sub.sections[i].preference = wish
            if let c = sub.sections[i].consumer { plane.submit(.setPreference(consumer: c, wish)) }
        }
        for i in sub.sections.indices where sub.sections[i].active && !wanted.contains(sub.sections[i].track) {
            sub.sections[i].active = false
            // Its payload types serve the next section of the same codec configuration: the ended
            // section keeps the same mapping, which BUNDLE allows (RFC 8843 section 9.1).
            sub.freedCodecs[Self.configuration(sub.sections[i].codec, sub.sections[i].parameters), default: []]
                .append(sub.sections[i].codec)
            if let c = sub.sections[i].consumer { plane.submit(.closeConsumer(id: c)) }
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

    /// `set_viewport`: the tile size a viewer shows a track in (0 by 0: none), reconciled at once.
    package func setViewport(_ pid: ParticipantID, _ track: TrackID, width: Int, height: Int, in state: RoomState) {
        viewports[pid, default: [:]][track] =
            width > 0 && height > 0 ? LayerChoice.Size(width: width, height: height) : nil
        reconcile(state.room.id, state)
    }
}
