import AtriumJSEP
import AtriumMedia
package import AtriumModel
import AtriumProtocol
import AtriumRooms
import AtriumSDP

/// The subscriber connection's offers and answers (docs/protocol.md section 14, `subscriber_offer`
/// and `subscriber_answer`).
extension MediaCoordinator {
    /// Sends the next subscriber offer, or marks one due when an offer is still waiting for its answer.
    func negotiate(_ pid: ParticipantID) {
        // A player's connection is the client's to offer.
        guard var peer = peers[pid], var sub = peer.subscriber, sub.player == nil else { return }
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
            replaceTransport(&sub, pid, room: peer.room)
        }
        // Nothing live to offer on the new connection yet: the reset goes with the next offer.
        if reset && sub.sections.isEmpty && !sub.data {
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
            sections: sections, local: local(sub.ufrag, sub.password, room: peer.room, transport: sub.transport),
            sessionID: sub.sessionID ?? sessionID,
            version: UInt64(sub.revision), data: sub.data)
        let tracks = sub.sections.filter(\.active).map { s in
            MediaMessage.OfferedTrack(mid: s.mid, track: s.track, publisher: s.publisher, source: s.source)
        }
        let message = MediaMessage.subscriberOffer(
            revision: sub.revision, sdp: offer.serialized(), tracks: tracks, reset: reset)
        sub.pending = (sub.revision, offer, message)
        peer.subscriber = sub
        peers[pid] = peer
        push(pid, message)
    }

    /// A new subscriber connection in place of `sub`'s: the old transport closed, a new one opened
    /// (placed afresh: on an edge node of a big room, the one chosen now), the live sections kept with
    /// new mids, payload types and SSRCs, their consumers made again on the answer.
    func replaceTransport(_ sub: inout Subscriber, _ pid: ParticipantID, room: RoomID) {
        plane.submit(.closeTransport(id: sub.transport))
        // What was known of the old one goes with it (a failed edge's transport reports no `closed`).
        estimates[sub.transport] = nil
        bottlenecks.remove(sub.transport)
        transportStates[sub.transport] = nil
        dataChannels[sub.transport] = nil
        let fresh = openSubscriber(pid, room: room, data: sub.data)
        (sub.transport, sub.ufrag, sub.password) = (fresh.transport, fresh.ufrag, fresh.password)
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

    /// A new subscriber connection's transport, opened (placed by the plane: here, or on an edge),
    /// with nothing offered on it yet.
    func openSubscriber(_ pid: ParticipantID, room: RoomID, data: Bool, id: String? = nil) -> Subscriber {
        let (u, pw) = credentials()
        let id = id ?? nextID("sub-")
        plane.submit(
            .openTransport(
                TransportSpec(
                    id: id, router: room.rawValue, label: "\(pid.rawValue)/sub", localUfrag: u, localPassword: pw,
                    remote: nil, role: .subscriber)))
        return Subscriber(transport: id, ufrag: u, password: pw, data: data)
    }

    /// A subscriber connection that failed (the edge node carrying it left the cluster or its link
    /// went silent; or the client was silent past ICE consent) is renewed by the server: a new
    /// connection, offered with `reset` (an offer still waiting for its answer is void: its answer
    /// is `stale_revision`).
    func renewSubscriber(transport: String) {
        guard let (pid, peer) = peers.first(where: { $0.value.subscriber?.transport == transport }),
            var sub = peer.subscriber, sub.player == nil
        else { return }
        replaceTransport(&sub, pid, room: peer.room)
        sub.pending = nil
        sub.dirty = false
        sub.resetPending = true
        peers[pid]?.subscriber = sub
        negotiate(pid)
    }

    /// The subscriber's answer: the transport learns the peer, accepted sections get their consumers.
    package func subscriberAnswer(_ pid: ParticipantID, revision: Int, sdp: String) throws(NegotiationError) {
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
            dtlsClient: answer.remote.setup == .passive, transportWideCCExtensionID: answer.transportWideCC,
            sctpPort: answer.sctpPort)
        plane.submit(
            .updateTransport(id: sub.transport, remote: remote, localUfrag: sub.ufrag, localPassword: sub.password))
        let ext = HeaderExtensionIDs.subscriber
        for i in sub.sections.indices where sub.sections[i].active && sub.sections[i].consumer == nil {
            let s = sub.sections[i]
            guard answer.accepted.contains(s.mid) else { continue }
            let id = "\(pid.rawValue)/\(s.track.rawValue)/\(s.mid)"
            let video = s.codec.isVideo
            // Sent with the numbers the answer gave (the offer's when it kept them).
            let answered = answer.payloadTypes[s.mid]
            plane.submit(
                .addConsumer(
                    ConsumerSpec(
                        id: id, producer: s.track.rawValue, transport: sub.transport, ssrc: s.ssrc,
                        rtxSSRC: video ? s.rtxSSRC : nil, payloadType: answered?.media ?? s.codec.payloadType,
                        rtxPayloadType: video && s.codec.rtxPayloadType != nil ? answered?.rtx : nil,
                        nack: video && answer.nack.contains(s.mid), audioLevelID: video ? nil : ext.audioLevel,
                        absSendTimeID: ext.absSendTime, preference: s.preference,
                        dependencyDescriptorID: s.codec.name == .av1
                            ? HeaderExtensionIDs.subscriberDependencyDescriptorID : nil)))
            sub.sections[i].consumer = id
        }
        sub.pending = nil
        let again = sub.dirty
        peer.subscriber = sub
        peers[pid] = peer
        // New consumers get their share of the viewer's estimate at once.
        allocate(pid)
        if again { negotiate(pid) }
    }

    /// After a join or a resume: an offer made while the participant had no socket is sent (again),
    /// and so are the layers wanted of its simulcast tracks.
    package func resumed(_ pid: ParticipantID) {
        if let message = peers[pid]?.subscriber?.pending?.message { push(pid, message) }
        for (track, info) in producers where info.owner == pid {
            if let rids = wantedLayers[track] { push(pid, .layersWanted(track: track, rids: rids)) }
        }
    }
}
