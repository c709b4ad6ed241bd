import AtriumForwarding

/// Simulcast upkeep: which of a producer's streams arrive (the consumers' selectors follow at once),
/// and which of them someone wants (told to the publisher, which may turn the others off).
extension MediaEngine {
    /// Recomputes the streams of a simulcast producer that arrive (a packet within
    /// `Producer.streamTimeout`); when that changed, every consumer's selector is pointed again and
    /// the key frames a switch needs are asked for. A stream that stopped is left at once for the next
    /// one down, without waiting for feedback.
    func streamsChanged(_ p: Producer) {
        guard p.isSimulcast else {
            p.availableMask = 1
            return
        }
        let t0 = now
        var mask: UInt8 = 0
        for k in p.streams.indices {
            if let last = p.streams[k].lastPacketAt, t0 - last < Producer.streamTimeout { mask |= 1 << k }
        }
        guard mask != p.availableMask else { return }
        p.availableMask = mask
        for c in p.consumers {
            if let k = c.reselect(available: mask) { switchLayer(c, to: k) }
        }
    }

    /// Reports the rids of a simulcast producer that some consumer's preference asks for (the bottom
    /// one always, so a new viewer starts at once), when they changed. The preference, not the
    /// bandwidth ceiling: a layer a viewer's link holds back keeps arriving, so its measured rate (not
    /// a guess from its size) decides when the viewer may step up to it; turned off, it could stay
    /// off for good (its guessed cost kept out of reach of an estimate that only probing raises).
    func reportWanted(_ p: Producer) {
        guard p.isSimulcast else { return }
        var wanted: UInt8 = 1
        for c in p.consumers where !c.closed && !c.bandwidthPaused { wanted |= 1 << c.preferredLayer.spatial }
        // A pipe producer piped on asks for what its own far side wants too.
        for o in p.pipes { wanted |= o.wanted }
        // A camera's layer nobody wants any more lets its picture go (`cachesPicture`).
        if wanted != p.wantedMask {
            p.wantedMask = wanted
            releaseUncachedPictures(p)
        }
        if let input = p.pipeInput {
            // The home worker tells the publisher, for its viewers and every far worker's together.
            pipeWanted(p, input, mask: wanted)
            return
        }
        let rids = p.streams.indices.filter { wanted & (1 << $0) != 0 }.compactMap { p.streams[$0].rid }
        guard rids != p.reportedWanted else { return }
        p.reportedWanted = rids
        events.append(.layersWanted(producer: p.spec.id, rids: rids))
    }
}

/// What an SVC consumer's selector needs of a packet, from VP9's payload descriptor or AV1's
/// dependency descriptor.
struct SVCPacket {
    var spatial: Int
    var temporal: Int
    var pictureStart: Bool
    var keyPicture: Bool
    var switchingUp: Bool
    var endOfFrame: Bool
}

extension SVCPacket {
    init(_ d: VP9Descriptor) {
        self.init(
            spatial: Int(d.spatialLayer), temporal: Int(d.temporalLayer), pictureStart: d.startsPicture,
            keyPicture: d.startsKeyPicture, switchingUp: d.switchingUp, endOfFrame: d.endOfFrame)
    }
}
