import AtriumJSON
import AtriumMedia

/// A publisher placed on an edge (docs/cluster.md, "Publishers on edges"): its transport and tracks
/// run there; each track is piped up the relay link to the owner, where a pipe producer stands for
/// it. The owner's viewers consume that pipe producer, and the other edges' viewers get it piped on
/// to them; the edge's own viewers consume the track where it is. What the track's home measures
/// (the layers wanted of the publisher, its layers, audio levels, its end) comes back as events.
extension ClusterMediaPlane {
    /// `room/participant` of a transport, from its label (`participant/pub`, `participant/sub`).
    static func participant(_ spec: TransportSpec) -> String? {
        guard let slash = spec.label.lastIndex(of: "/") else { return nil }
        return "\(spec.router)/\(spec.label[..<slash])"
    }

    /// Owner: a track published on `node`: its pipe producer here (the room's home worker, fed from
    /// the link under a tag this node chose), then the track on the edge, then the edge told to pipe
    /// it up under that tag. Everything here is in place before the first packet can come.
    func relayUp(_ spec: ProducerSpec, from node: String) {
        guard var edge = edges[node], let room = remoteRoom[spec.transport] else { return }
        let w = local.home(ofRoom: room)
        let pipe =
            edge.inPipes[w]
            ?? PipeLink(from: -1, to: w, wakeFar: local.workers[w].pipeWakeup, wakeHome: edge.link.wakeup)
        edge.inPipes[w] = pipe
        edges[node] = edge
        nextTag &+= 1
        let tag = nextTag
        nextLocalTag &+= 1
        edge.link.route(tag: tag, pipe, local: nextLocalTag, direction: .inbound)
        producerSpecs[spec.id] = spec
        producerRoom[spec.id] = room
        relayedFrom[spec.id] = (node, tag)
        local.addRelayedProducer(spec, router: room, link: pipe, tag: nextLocalTag)
        toEdge(.addProducer(spec), node)
        guard edges[node] != nil else { return }
        let ask = numbered(.object(["op": "pipe_up", "producer": .string(spec.id), "tag": .int(Int64(tag))]), node)
        if !send(ask, node) {
            // As a command not sent: what that edge runs for this node is unknown.
            log("the pipe of a track published on \(node) was not asked for; its transports failed")
            unreachable[node] = now() + Self.unreachableFor
            remoteEvents += dropEdge(node)
        }
    }

    /// Owner: a track published on an edge is gone (closed, its transport or room closed, its edge
    /// lost): its pipe producer here and on the other edges closes, its route on the link goes.
    func forgetRelayed(_ id: String) {
        guard let from = relayedFrom.removeValue(forKey: id) else { return }
        edges[from.node]?.link.unroute(tag: from.tag, direction: .inbound)
        local.submit(.closeProducer(id: id))
        unpipeFromEdges(id)
        producerSpecs[id] = nil
        producerRoom[id] = nil
    }

    /// Owner: the pipe producers of `id` on the edges it was piped to close, and their routes go.
    func unpipeFromEdges(_ id: String) {
        for (node, tag) in piped.removeValue(forKey: id) ?? [:] {
            toEdge(.closeProducer(id: id), node)
            edges[node]?.link.unroute(tag: tag)
        }
    }

    /// Edge: the owner asks for a track published here, piped up under its tag: a pipe from the
    /// track's worker into the link, the worker told to copy into it (its cached picture first).
    func pipeUp(from owner: String, _ body: JSONValue) {
        inSequence(body, from: owner)
        guard var o = owners[owner], let id = body["producer"]?.stringValue,
            let tag = body["tag"]?.int64Value.flatMap({ UInt32(exactly: $0) })
        else {
            log("a pipe request from \(owner) that is not one")
            return
        }
        let scoped = Self.scope(id, owner)
        guard let hosted = hostedProducers[scoped], hosted.owner == owner, o.up[scoped] == nil,
            let w = local.worker(ofProducer: scoped)
        else {
            log("\(owner) asked for the pipe of a track it has not published here, refused")
            return
        }
        let pipe =
            o.upPipes[w] ?? PipeLink(from: w, to: -1, wakeFar: o.link.wakeup, wakeHome: local.workers[w].pipeWakeup)
        o.upPipes[w] = pipe
        nextTag &+= 1
        o.up[scoped] = (tag, nextTag, hosted.transport)
        o.link.route(tag: tag, pipe, local: nextTag, direction: .outbound)
        owners[owner] = o
        local.workers[w].submit(.pipeProducer(id: scoped, link: pipe, tag: nextTag))
    }

    /// Edge: forgets the hosted tracks `gone` picks (their transport closed), and their routes.
    func forgetHostedProducers(_ gone: ((owner: String, transport: String)) -> Bool) {
        for (id, h) in hostedProducers where gone(h) {
            hostedProducers[id] = nil
            if let u = owners[h.owner]?.up.removeValue(forKey: id) {
                owners[h.owner]?.link.unroute(tag: u.link, direction: .outbound)
            }
        }
    }

    /// Edge: an event about tracks (not transports) of the local workers: what concerns an owner's
    /// publisher here goes to that owner. nil: not such an event (it stays here as it is); .some(nil):
    /// all of it went; .some(e): the part that stays here.
    func toOwners(_ e: MediaEvent) -> MediaEvent?? {
        guard !hostedProducers.isEmpty || !levelOwners.isEmpty else { return nil }
        switch e {
        case .producerEnded(let id, _), .layersWanted(let id, _), .layers(let id, _):
            guard let owner = hostedProducers[id]?.owner else { return nil }
            if let body = RemoteMediaCoding.encode(Self.unscoped(e, owner)) {
                _ = send(.object(["op": "event", "event": body]), owner)
            }
            return .some(nil)
        case .audioLevels(let levels, let worker):
            var byOwner: [String: [AudioLevel]] = [:]
            var here: [AudioLevel] = []
            for l in levels {
                if let owner = hostedProducers[l.producer]?.owner {
                    byOwner[owner, default: []].append(l)
                } else {
                    here.append(l)
                }
            }
            // An owner spoken for last time and not now hears the empty report that ends it.
            for owner in Set(byOwner.keys).union(levelOwners[worker] ?? []) {
                let report = Self.unscoped(.audioLevels(byOwner[owner] ?? [], worker: worker), owner)
                if let body = RemoteMediaCoding.encode(report) {
                    _ = send(.object(["op": "event", "event": body]), owner)
                }
            }
            levelOwners[worker] = byOwner.isEmpty ? nil : Set(byOwner.keys)
            return .some(.audioLevels(here, worker: worker))
        default: return nil
        }
    }

    /// Owner: an edge's event about tracks published there, kept only for those (an audio level
    /// report under a key of that edge's worker, apart from this node's workers').
    func fromEdge(_ e: MediaEvent, _ node: String) -> MediaEvent? {
        switch e {
        case .producerEnded(let id, _), .layersWanted(let id, _), .layers(let id, _):
            return relayedFrom[id]?.node == node ? e : nil
        case .audioLevels(let levels, let worker):
            guard worker >= 0, worker < Self.levelKeyStride else { return nil }
            let key: Int
            if let k = levelKeys[node] {
                key = k
            } else {
                key = Self.levelKeyStride * (levelKeys.count + 1)
                levelKeys[node] = key
            }
            levelWorkers[node, default: []].insert(worker)
            return .audioLevels(levels.filter { relayedFrom[$0.producer]?.node == node }, worker: key + worker)
        default: return nil
        }
    }

    /// Audio level keys: this node's workers below it, each edge's workers from a multiple of it.
    static let levelKeyStride = 1 << 16
}
