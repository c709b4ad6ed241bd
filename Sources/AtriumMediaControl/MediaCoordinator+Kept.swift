import AtriumJSEP
import AtriumMedia
package import AtriumModel
import AtriumSDP
import AtriumUDP

/// A participant that joins again after its room's node was lost, with the subscriber connection it
/// kept (docs/cluster.md, "The owner lost"): its viewer connection on an edge goes on under the room's
/// new owner, which offers on it from where the old offers left off (their sections ended, the room's
/// tracks added after them). When no node holds the connection any more, a new one is offered with
/// `reset`.
extension MediaCoordinator {
    /// Reads the last subscriber offer the participant applied (`join`'s `subscriberOffer`), before
    /// its join: its subscriber connection is then taken over rather than made.
    package func keep(_ pid: ParticipantID, offer: String) throws(NegotiationError) {
        do {
            kept[pid] = try KeptSubscriberConnection(offer: offer)
        } catch {
            throw .media(code: error.code, message: "subscriberOffer: \(error.description)")
        }
    }

    /// The join did not happen after all.
    package func forgetKept(_ pid: ParticipantID) { kept[pid] = nil }

    /// The subscriber of a participant that kept its connection: taken over when the plane can (the
    /// old sections ended, payload types, mids, session id and revision going on), else a new
    /// connection whose first offer says `reset`.
    func subscriber(continuing k: KeptSubscriberConnection, _ pid: ParticipantID, room: RoomID, data: Bool)
        -> Subscriber
    {
        let id = nextID("sub-")
        // Revisions continue from the kept offer's version (bounded: it came from the client).
        let revision = Int(min(k.version, 1 << 40))
        let addresses = k.addresses.compactMap { a in try? SocketAddress(parsing: Self.hostPort(a.host, a.port)) }
        guard plane.adopt(id: id, room: room.rawValue, ufrag: k.ufrag, password: k.password, addresses: addresses)
        else {
            var sub = openSubscriber(pid, room: room, data: data, id: id)
            sub.revision = revision
            sub.resetPending = true
            return sub
        }
        var sub = Subscriber(transport: id, ufrag: k.ufrag, password: k.password, data: data || k.data)
        sub.revision = revision
        sub.sessionID = k.sessionID
        for s in k.sections {
            sub.sections.append(
                Section(
                    mid: s.mid, track: TrackID(""), publisher: ParticipantID(""),
                    source: s.kind == .video ? .camera : .microphone, kind: s.kind, codec: s.codec,
                    parameters: s.parameters, ssrc: 0, rtxSSRC: 0, active: false, consumer: nil))
            sub.usedPayloadTypes.insert(s.codec.payloadType)
            if let rtx = s.codec.rtxPayloadType { sub.usedPayloadTypes.insert(rtx) }
            // Its payload types serve the next section of the same configuration, as an ended one's do.
            sub.freedCodecs[Self.configuration(s.codec, s.parameters), default: []].append(s.codec)
            if let n = Int(s.mid), n >= sub.nextMid, n < 1 << 20 { sub.nextMid = n + 1 }
        }
        return sub
    }

    static func hostPort(_ host: String, _ port: UInt16) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
