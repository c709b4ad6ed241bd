import AtriumJSEP
import AtriumMedia
package import AtriumModel
package import AtriumRooms
import AtriumSDP

/// Players (WHEP): a client-offered connection that only receives. Its sections are the offer's; the
/// tracks they carry follow the room, not subscriptions: the active share with its audio, or one
/// participant's tracks. When the followed track changes, the section's consumer is replaced by one of
/// the new track on the same SSRC, which continues the old one's sequence numbers and timeline
/// (`ConsumerSpec.continuous`): the player sees one stream whose picture changed, with no new offer,
/// as long as the section took the new track's codec. Its consumers are allocated and start from the
/// key-frame cache like any subscriber's.
extension MediaCoordinator {
    /// What a player follows.
    package enum Follow: Equatable, Sendable {
        /// The room's active share (the newest running one, else the newest paused one) and its audio,
        /// else its sharer's microphone.
        case share
        /// One participant's tracks, by identity: camera then screen share, microphone then share audio.
        case participant(String)
    }

    struct Player {
        var follow: Follow
        /// The offer's sections, by mid, with the codecs each takes.
        var sections: [String: PlayerSection]
    }

    /// Opens a player's connection from its offer and answers it; its sections start carrying what
    /// it follows at once.
    package func play(
        offer text: String, by pid: ParticipantID, in room: RoomID, follow: Follow, state: RoomState?
    ) throws(NegotiationError) -> String {
        let offer: PlayerOffer
        do {
            offer = try PlayerOffer(text: text) { UInt32.random(in: 1...UInt32.max, using: &rng) }
        } catch {
            throw .media(code: error.code, message: error.description)
        }
        let (u, pw) = credentials()
        let id = nextID("play-")
        plane.submit(
            .openTransport(
                TransportSpec(
                    id: id, router: room.rawValue, label: "\(pid.rawValue)/play", localUfrag: u, localPassword: pw,
                    remote: RemoteSpec(
                        ufrag: offer.remote.ufrag, password: offer.remote.password,
                        fingerprint: offer.remote.fingerprint.bytes, dtlsClient: offer.answerSetup == .active,
                        transportWideCCExtensionID: offer.transportWideCC),
                    role: .subscriber)))
        var sub = Subscriber(transport: id, ufrag: u, password: pw)
        sub.player = Player(
            follow: follow, sections: Dictionary(uniqueKeysWithValues: offer.sections.map { ($0.mid, $0) }))
        var peer = peers[pid] ?? Peer(room: room)
        peer.subscriber = sub
        peers[pid] = peer
        let answer = offer.answer(
            local: local(u, pw, room: room, transport: id), streamID: "atrium-\(room.rawValue)", sessionID: sessionID)
        if let state { updatePlayer(pid, state) }
        allocate(pid)
        return answer.serialized()
    }

    /// Whether a player's connection failed or lost its peer (no ICE consent): its session ends.
    package func playerGone(_ pid: ParticipantID) -> Bool {
        let state = peers[pid]?.subscriber.flatMap { transportStates[$0.transport] }
        return state == .disconnected || state == .failed
    }

    /// Points each of a player's sections at the track it should carry now.
    func updatePlayer(_ pid: ParticipantID, _ state: RoomState) {
        guard var peer = peers[pid], var sub = peer.subscriber, let player = sub.player else { return }
        let wanted = Self.playerTracks(player.follow, state) { producers[$0] != nil }
        var video = wanted.video[...]
        var audio = wanted.audio[...]
        for offered in player.sections.values.sorted(by: { $0.index < $1.index }) {
            // The next followed track of the section's kind whose codec the section takes.
            var target: (TrackID, ProducerInfo, SelectedCodec)?
            while target == nil, let track = offered.kind == .video ? video.popFirst() : audio.popFirst() {
                if let info = producers[track], let codec = offered.codec(info.codec.name) {
                    target = (track, info, codec)
                }
            }
            let i = sub.sections.firstIndex { $0.mid == offered.mid }
            let current = i.flatMap { sub.sections[$0].active ? sub.sections[$0].track : nil }
            guard current != target?.0 else { continue }
            if let i, let c = sub.sections[i].consumer { plane.submit(.closeConsumer(id: c)) }
            guard let (track, info, codec) = target, let source = state.tracks[track]?.source else {
                if let i {
                    sub.sections[i].active = false
                    sub.sections[i].consumer = nil
                }
                continue
            }
            let consumer = "\(pid.rawValue)/\(track.rawValue)/\(offered.mid)"
            let section = Section(
                mid: offered.mid, track: track, publisher: info.owner, source: source, kind: offered.kind,
                codec: codec.server, parameters: info.parameters, ssrc: offered.ssrc, rtxSSRC: offered.rtxSSRC,
                active: true, consumer: consumer)
            if let i { sub.sections[i] = section } else { sub.sections.append(section) }
            let isVideo = offered.kind == .video
            let rtx = isVideo && codec.nack ? codec.offeredRTX : nil
            plane.submit(
                .addConsumer(
                    ConsumerSpec(
                        id: consumer, producer: track.rawValue, transport: sub.transport, ssrc: offered.ssrc,
                        rtxSSRC: isVideo ? offered.rtxSSRC : nil, payloadType: codec.offered.payloadType,
                        rtxPayloadType: rtx, nack: isVideo && codec.nack,
                        audioLevelID: isVideo ? nil : offered.extensions.audioLevel,
                        absSendTimeID: offered.extensions.absSendTime, preference: section.preference,
                        dependencyDescriptorID: info.codec.name == .av1 ? offered.extensions.dependencyDescriptor : nil,
                        continuous: true)))
        }
        peer.subscriber = sub
        peers[pid] = peer
    }

    /// The tracks a player follows, video and audio, best first, among those `hasMedia` says the worker
    /// receives. Pure: the room and what has media in, tracks out.
    static func playerTracks(_ follow: Follow, _ state: RoomState, hasMedia: (TrackID) -> Bool)
        -> (video: [TrackID], audio: [TrackID])
    {
        switch follow {
        case .share:
            let live = state.shares.filter { hasMedia($0.videoTrack) }
            guard let share = live.last(where: { $0.state == .started }) ?? live.last else { return ([], []) }
            let microphone = state.tracks(of: share.sharer).first { $0.source == .microphone }?.id
            let audio = [share.audioTrack, microphone].compactMap { $0 }.filter(hasMedia)
            return ([share.videoTrack], audio)
        case .participant(let identity):
            guard let p = state.participant(identity: identity) else { return ([], []) }
            let tracks = state.tracks(of: p.id).filter { hasMedia($0.id) }
            func of(_ sources: [TrackSource]) -> [TrackID] {
                sources.flatMap { s in tracks.filter { $0.source == s }.map(\.id) }
            }
            return (of([.camera, .screenShare]), of([.microphone, .screenShareAudio]))
        }
    }
}
