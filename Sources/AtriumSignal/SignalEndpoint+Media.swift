import AtriumJSEP
import AtriumJSON
import AtriumMedia
import AtriumModel
import AtriumRooms
import AtriumSDP

/// `publish` and `publish_offer`: announcing tracks, and binding them to the publisher connection's
/// transceivers with an SDP answer (docs/protocol.md section 14).
extension SignalEndpoint {
    /// Publishes one track from a `publish` request or a `publish_offer` entry (same fields).
    func publishTrack(_ f: Fields, member: Member, now t: Int64) throws(HubError) -> (Track, [RoomEvent]) {
        let source: TrackSource = try f.enumValue("source")
        if let kind = try f.optionalString("kind"), kind != TrackKind(source: source).rawValue {
            throw .invalidField("kind", "\(source.rawValue) is \(TrackKind(source: source).rawValue)")
        }
        var layers: [SimulcastLayer] = []
        if let raw = f.object["layers"] {
            guard let arr = raw.arrayValue, arr.count <= 4 else {
                throw .invalidField("layers", "expected up to 4 layers")
            }
            for item in arr {
                guard let o = item.objectValue else { throw .invalidField("layers", "expected objects") }
                let lf = Fields(object: o)
                layers.append(
                    SimulcastLayer(
                        rid: try lf.string("rid", max: 16), width: try lf.int("width", 0...16384),
                        height: try lf.int("height", 0...16384)))
            }
        }
        let track = Track(
            id: hub.ids.track(), owner: member.participant, source: source,
            name: try f.optionalString("name", max: 256) ?? "", width: try f.optionalInt("width", 0...16384) ?? 0,
            height: try f.optionalInt("height", 0...16384) ?? 0, layers: layers,
            muted: try f.optionalBool("muted") ?? false)
        let shareID = hub.ids.share()
        let events = try hub.perform(member.room, now: t) { s throws(HubError) in
            try s.publish(track, now: t, newShareID: shareID)
        }
        return (track, events)
    }

    func publishOffer(_ f: Fields, member: Member, now t: Int64) throws(HubError) -> JSONObject {
        guard let media else { throw .media(code: "media_unavailable", message: "this server runs without media") }
        let me = member.participant
        let text = try f.string("sdp", max: 65536)
        var entries: [String: Fields] = [:]
        if let raw = f.object["tracks"] {
            guard let list = raw.arrayValue, list.count <= 16 else {
                throw .invalidField("tracks", "expected an array of up to 16 objects")
            }
            for item in list {
                guard let o = item.objectValue else { throw .invalidField("tracks", "expected objects") }
                let entry = Fields(object: o)
                let mid = try entry.string("mid", max: 32)
                guard entries[mid] == nil else { throw .invalidField("tracks", "mid \"\(mid)\" appears twice") }
                if o["trackId"] == nil { _ = try entry.enumValue("source") as TrackSource }
                entries[mid] = entry
            }
        }
        let offer: PublishOffer
        do {
            offer = try PublishOffer(text: text, options: PublishOptions(simulcast: true))
        } catch {
            throw .media(code: error.code, message: error.description)
        }
        for mid in entries.keys where !offer.sections.contains(where: { $0.mid == mid }) {
            throw .invalidField("tracks", "mid \"\(mid)\" is not in the offer")
        }
        let twcc = offer.sections.contains { $0.codec?.transportCC == true }
        let remote = RemoteSpec(
            ufrag: offer.remote.ufrag, password: offer.remote.password, fingerprint: offer.remote.fingerprint.bytes,
            dtlsClient: offer.answerSetup == .active,
            midExtensionID: offer.sections.lazy.compactMap(\.extensions.mid).first,
            transportWideCCExtensionID: twcc ? offer.sections.lazy.compactMap(\.extensions.transportWideCC).first : nil)
        var pub: MediaCoordinator.Publisher
        if let existing = media.peers[me]?.publisher {
            pub = existing
            if pub.remoteFingerprint != remote.fingerprint {
                // A new RTCPeerConnection: the old one's transceivers are gone, and so are their tracks.
                let old = pub.bindings.values
                pub.bindings = [:]
                pub.remoteFingerprint = remote.fingerprint
                for track in old {
                    _ = try? hub.perform(member.room, now: t) { st throws(HubError) in
                        try st.unpublish(track, by: me, reason: .userStopped)
                    }
                }
            }
            if pub.remoteUfrag != remote.ufrag {
                // The client restarted ICE (RFC 8445 section 9): both sides change credentials.
                (pub.ufrag, pub.password) = media.credentials()
            }
            pub.remoteUfrag = remote.ufrag
            media.worker.submit(
                .updateTransport(id: pub.transport, remote: remote, localUfrag: pub.ufrag, localPassword: pub.password))
        } else {
            let (u, pw) = media.credentials()
            pub = MediaCoordinator.Publisher(
                transport: media.nextID("pub-"), ufrag: u, password: pw, remoteUfrag: remote.ufrag,
                remoteFingerprint: remote.fingerprint)
            media.worker.submit(
                .openTransport(
                    TransportSpec(
                        id: pub.transport, label: "\(me.rawValue)/pub", localUfrag: u, localPassword: pw,
                        remote: remote)))
        }
        // Publishing runs the hub once per track; subscribers are offered the new tracks once, at the end.
        media.holdReconcile = true
        defer { media.holdReconcile = false }
        var accepted: [(OfferedSection, Track)] = []
        var rejected: [JSONValue] = []
        var rejectedMids = Set<String>()
        var rejectedSSRCs = Set<UInt32>()
        func reject(_ s: OfferedSection, _ code: String, _ message: String) {
            rejected.append(.object(["mid": .string(s.mid), "code": .string(code), "message": .string(message)]))
            rejectedMids.insert(s.mid)
            if let x = s.ssrc { rejectedSSRCs.insert(x) }
            if let x = s.rtxSSRC { rejectedSSRCs.insert(x) }
        }
        for s in offer.sections {
            let bound = pub.bindings[s.mid]
            if s.stopped || s.kind == nil {
                // A stopped transceiver ends its track.
                if let bound {
                    pub.bindings[s.mid] = nil
                    _ = try? hub.perform(member.room, now: t) { st throws(HubError) in
                        try st.unpublish(bound, by: me, reason: .userStopped)
                    }
                }
                rejectedMids.insert(s.mid)
                continue
            }
            if let bound {
                if let track = hub.state(member.room)?.tracks[bound] {
                    accepted.append((s, track))
                } else {
                    pub.bindings[s.mid] = nil
                    reject(s, HubError.trackNotFound.code, "the track bound to this mid has ended")
                }
                continue
            }
            guard let entry = entries[s.mid] else {
                reject(s, "unbound_mid", "no entry in tracks binds mid \"\(s.mid)\"")
                continue
            }
            guard let codec = s.codec else {
                reject(s, "no_common_codec", "none of the offered codecs is forwarded (\(Self.codecList))")
                continue
            }
            let kind: TrackKind = s.kind == .audio ? .audio : .video
            do throws(HubError) {
                let track: Track
                if let id = entry.object["trackId"] {
                    guard let raw = id.stringValue, let existing = hub.state(member.room)?.tracks[TrackID(raw)],
                        existing.owner == me
                    else { throw .trackNotFound }
                    guard !pub.bindings.values.contains(existing.id) else {
                        throw .invalidField("tracks", "track \(raw) is already bound")
                    }
                    track = existing
                } else {
                    let source: TrackSource = try entry.enumValue("source")
                    guard TrackKind(source: source) == kind else {
                        reject(
                            s, "kind_mismatch",
                            "\(source.rawValue) is \(TrackKind(source: source).rawValue), the transceiver is \(kind.rawValue)"
                        )
                        continue
                    }
                    track = try publishTrack(entry, member: member, now: t).0
                }
                guard track.kind == kind else {
                    reject(s, "kind_mismatch", "track \(track.id.rawValue) is \(track.kind.rawValue)")
                    continue
                }
                pub.bindings[s.mid] = track.id
                media.producers[track.id] = MediaCoordinator.ProducerInfo(
                    track: track.id, owner: me, room: member.room, codec: codec.server,
                    parameters: codec.offered.parameters, paused: false)
                media.worker.submit(
                    .addProducer(
                        ProducerSpec(
                            id: track.id.rawValue, transport: pub.transport, mid: s.mid, source: track.source.rawValue,
                            kind: kind == .audio ? .audio : .video,
                            videoCodec: codec.server.isVideo ? codec.server.encodingName : nil,
                            clockRate: codec.server.clockRate, payloadType: codec.offered.payloadType,
                            rtxPayloadType: codec.nack ? codec.offeredRTX : nil, ssrc: s.ssrc, rtxSSRC: s.rtxSSRC,
                            audioLevelID: s.extensions.audioLevel, absSendTimeID: s.extensions.absSendTime,
                            paused: false, encodings: Self.encodings(s.simulcast, declared: track.layers),
                            ridExtensionID: s.simulcast?.ridExtensionID ?? s.extensions.rid,
                            repairedRidExtensionID: s.simulcast?.repairedRidExtensionID ?? s.extensions.repairedRid)))
                accepted.append((s, track))
            } catch {
                reject(s, error.code, error.message)
            }
        }
        if !rejectedMids.isEmpty {
            media.worker.submit(.reject(transport: pub.transport, mids: rejectedMids, ssrcs: rejectedSSRCs))
        }
        let answer = offer.answer(
            local: media.local(pub.ufrag, pub.password), accepted: Set(accepted.map(\.0.mid)), refused: rejectedMids,
            sessionID: media.sessionID, version: pub.version)
        pub.version += 1
        var peer = media.peers[me] ?? MediaCoordinator.Peer(room: member.room)
        peer.publisher = pub
        media.peers[me] = peer
        // Subscribers learn of the new media now that the producers exist.
        media.holdReconcile = false
        media.reconcile(member.room, hub.state(member.room))
        let state = hub.state(member.room)
        let tracks: [JSONValue] = accepted.map { s, track in
            var o: JSONObject = [
                "mid": .string(s.mid), "trackId": .string(track.id.rawValue), "source": .string(track.source.rawValue),
            ]
            if let share = state?.tracks[track.id]?.shareID { o["shareId"] = .string(share.rawValue) }
            return .object(o)
        }
        return ["sdp": .string(answer.serialized()), "tracks": .array(tracks), "rejected": .array(rejected)]
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
