import AtriumJSON
import AtriumMedia
public import AtriumUDP

/// A room's new owner taking over the viewers' connections its lost owner made on edges
/// (docs/cluster.md, "The owner lost"): the edge kept each (`orphans`), the client joins the room
/// again on its new owner with the last offer it applied, and the new owner asks the node holding
/// that transport to run it under a name of its own. The ICE password in the offer, which only the
/// client and the transport know, is the proof. The connection stays up throughout (ICE, DTLS, SRTP
/// unchanged); its old tracks have ended with the old owner's pipe producers, and the new owner's
/// offers go on from the old one.
extension ClusterMediaPlane {
    /// An edge keeps a lost owner's viewers' connections this long for the room's new owner.
    public static let orphanGrace = 30.0
    /// A take-over asked of an edge and not answered within this long has failed.
    public static let adoptionBound = 5.0

    public func adopt(id: String, room: String, ufrag: String, password: String, addresses: [SocketAddress]) -> Bool {
        if addresses.contains(where: local.candidateAddresses.contains) {
            // Here: this node was an edge of the lost owner and owns the room now.
            guard let t = hosted(room: room, ufrag: ufrag, password: password) else { return false }
            forgetHosted(t)
            aliases[id] = t
            aliasOf[t] = id
            localTransportRoom[t] = room
            roomTransportsHere[room, default: 0] += 1
            log("a viewer's connection kept here taken over as \(id)")
            // Where it stands (connected, its data channels), told again under its new name.
            local.submit(.restate(transport: t))
            return true
        }
        guard let peer = peers().first(where: { p in p.mediaAddresses.contains(where: addresses.contains) }),
            peer.fingerprint.count == 32, ensureLink(to: peer)
        else { return false }
        let asked = send(
            .object([
                "op": "adopt", "id": .string(id), "room": .string(room), "ufrag": .string(ufrag),
                "password": .string(password),
            ]), peer.id)
        guard asked else { return false }
        remoteTransports[id] = peer.id
        remoteRoom[id] = room
        pendingAdoptions[id] = now() + Self.adoptionBound
        return true
    }

    /// A transport run here for some owner (or kept since its owner was lost) of `room`, with these
    /// local ICE credentials.
    func hosted(room: String, ufrag: String, password: String) -> String? {
        hostedCredentials.first { t, c in
            hostedRoom[t] == room && c.ufrag == ufrag && Self.same(c.password, password)
        }?.key
    }

    /// Compares two secrets in time independent of where they differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var d: UInt8 = 0
        for i in x.indices { d |= x[i] ^ y[i] }
        return d == 0
    }

    /// Edge: a room's new owner asks to run a kept connection as its transport `id`.
    func adoptAsked(from owner: String, _ body: JSONValue) {
        guard let id = body["id"]?.stringValue, id.utf8.count <= 128, let room = body["room"]?.stringValue,
            let ufrag = body["ufrag"]?.stringValue, let password = body["password"]?.stringValue
        else {
            log("a take-over request from \(owner) that is not one")
            return
        }
        guard let t = hosted(room: room, ufrag: ufrag, password: password) else {
            _ = send(.object(["op": "adopt_refused", "id": .string(id)]), owner)
            return
        }
        let name = Self.scope(id, owner)
        if let old = aliasOf[t] { aliases[old] = nil }
        aliases[name] = t
        aliasOf[t] = name
        orphans[t] = nil
        hostedTransports[t] = owner
        log("a viewer's connection taken over by \(owner)")
        _ = send(.object(["op": "adopted", "id": .string(id)]), owner)
        // Where it stands (connected, its data channels), told to the new owner under its name.
        local.submit(.restate(transport: t))
    }

    /// Owner: an edge's answer to a take-over. Refused (or, in `adoptionsDue`, unanswered), the
    /// transport is reported failed: the coordinator renews the connection.
    func adoptionAnswered(from node: String, _ body: JSONValue) {
        guard let id = body["id"]?.stringValue, pendingAdoptions[id] != nil, remoteTransports[id] == node else {
            return
        }
        pendingAdoptions[id] = nil
        if body["op"]?.stringValue == "adopt_refused" { failAdoption(id, cancel: false) }
    }

    func adoptionsDue() {
        guard !pendingAdoptions.isEmpty else { return }
        let t0 = now()
        for (id, deadline) in pendingAdoptions where t0 > deadline {
            pendingAdoptions[id] = nil
            failAdoption(id, cancel: true)
        }
    }

    func failAdoption(_ id: String, cancel: Bool) {
        log("a kept viewer's connection was not taken over; renewed")
        // Unanswered: an edge that answers late must not go on running it for nobody.
        if cancel, let node = remoteTransports[id] { toEdge(.closeTransport(id: id), node) }
        remoteTransports[id] = nil
        remoteRoom[id] = nil
        remoteEvents.append(.transportState(id: id, state: .failed))
    }

    /// A relay link to `peer`, made if there is none or the last one failed.
    func ensureLink(to peer: Peer) -> Bool {
        if let e = edges[peer.id], let why = linkFailure(e) {
            // As `edgesGone` would at the next round: its viewers there fail (and are renewed).
            log("the relay link to edge \(peer.id) failed (\(why)); its viewers' transports failed")
            remoteEvents += dropEdge(peer.id)
        }
        if edges[peer.id] == nil {
            guard openLink(to: peer) else { return false }
        }
        edges[peer.id]?.peer = peer
        return true
    }
}
