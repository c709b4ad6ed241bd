import AtriumCongestion
import AtriumRTP
import AtriumUDP

/// Starting viewers from the producers' key-frame caches: a new consumer (or one switching layers)
/// gets the cached picture, each packet through its own mapping and encryption, paced at
/// `MediaConfiguration.replayBitrate`, and then follows the live stream without a gap. Packets that
/// arrive meanwhile join the cache and reach it from there.
extension MediaEngine {
    /// The rx slot replays copy cached packets into (past the socket's batch).
    var replaySlot: Int { rx.count - 1 }

    /// Bytes a replay may send per 20 ms tick.
    var replayBudget: Int { max(1500, Int(config.replayBitrate / 8 / 50)) }

    /// Starts a video viewer of stream `k` (new, resumed, or its transport just secured) by the rule of
    /// `ViewerStart`: a short cached chain, or one of a publisher that does not answer key-frame
    /// requests, is replayed; otherwise the publisher is asked for a key frame, with the cache as the
    /// fallback when none comes in time (`checkFreshStarts`). Nothing servable cached: a request.
    func startViewer(_ c: Consumer, stream k: Int) {
        let p = c.producer
        guard p.isVideo, p.streams.indices.contains(k) else { return }
        guard p.streams[k].cache.isEnabled else {
            requestKeyFrameNow(p, stream: k)
            return
        }
        let cache = p.streams[k].cache
        let age = cache.isServable(now: now) ? cache.keyFrameAt.map { now - $0 } : nil
        switch ViewerStart.decide(keyFrameAge: age, answers: p.streams[k].answers, screenShare: p.isScreenShare) {
        case .request(let after):
            counters.freshStarts += 1
            c.freshStart = (k, now + after)
            if !awaitingFresh.contains(where: { $0 === c }) { awaitingFresh.append(c) }
            requestKeyFrameNow(p, stream: k)
        case .replay, nil:
            if !startFromCache(c, stream: k) { requestKeyFrameNow(p, stream: k) }
        }
    }

    /// Whether stream `k`'s picture is cached at all. A share's always (a late viewer of any layer
    /// starts from it). Of a camera, only a layer some consumer or pipe wants (`reportWanted`), and of a
    /// simulcast camera's layers only the bottom one (where a new viewer starts, always wanted: the one
    /// a recorder and its line read, `record`, `capturePicture`) unless the camera left a key-frame
    /// request unanswered: a browser's camera answers one within a round trip and a frame, and its
    /// upper layers' pictures, the largest, would be held for the rare viewer that starts on them.
    @inline(__always) func cachesPicture(_ p: Producer, stream k: Int) -> Bool {
        if p.isScreenShare { return true }
        return p.wantedMask & (1 << k) != 0 && (k == 0 || p.streams[k].ignoredRequests)
    }

    /// Lets go of the pictures `cachesPicture` no longer keeps, when what it reads changes (a layer no
    /// longer wanted): their buffers go to the worker's spares.
    func releaseUncachedPictures(_ p: Producer) {
        for k in p.streams.indices where p.streams[k].cache.keyFrameAt != nil && !cachesPicture(p, stream: k) {
            p.streams[k].cache.lapse(spares: &pictureSpares)
        }
    }

    /// How long stream `k`'s picture is kept after its key frame (`ViewerStart.keep`). The engine waits
    /// on it while a key-frame request is pending (a start may fall back on it), while a recorder takes
    /// the track (a live stream's line keeps its last picture) and on a pipe producer (its home knows
    /// whether the publisher answers). A stream that once left a request unanswered keeps it whole.
    func cacheKeep(_ p: Producer, stream k: Int) -> Double {
        let waiting = p.streams[k].pendingRequestAt != nil || !p.sinks.isEmpty || p.pipeInput != nil
        let answers = p.streams[k].ignoredRequests ? .never : p.streams[k].answers
        return ViewerStart.keep(answers: answers, screenShare: p.isScreenShare, waiting: waiting)
    }

    /// Every tick: a fresh start whose key frame came is done; one past its bound is replayed from the
    /// cache after all (the publisher did not answer in time).
    func checkFreshStarts() {
        guard !awaitingFresh.isEmpty else { return }
        awaitingFresh.removeAll { c in
            guard let f = c.freshStart, !c.closed, c.keyFrameStream == f.stream else {
                c.freshStart = nil
                return true
            }
            guard now >= f.fallbackAt else { return false }
            c.freshStart = nil
            if startFromCache(c, stream: f.stream) { counters.fallbackStarts += 1 }
            return true
        }
    }

    /// Starts `c` from the cache of stream `k` if it holds a picture young enough, small enough for
    /// the consumer's transport (`replayRoom`), and that transport can send; otherwise returns false
    /// (the caller asks the publisher for a key frame).
    @discardableResult
    func startFromCache(_ c: Consumer, stream k: Int) -> Bool {
        let p = c.producer
        guard p.isVideo, !p.paused, c.replay == nil, c.transport.isSecure, p.streams.indices.contains(k),
            p.streams[k].cache.isServable(now: now), p.streams[k].cache.byteCount <= replayRoom(c.transport)
        else {
            if p.isVideo && p.streams.indices.contains(k) && p.streams[k].cache.isEnabled { counters.cacheMisses += 1 }
            return false
        }
        c.replay = Consumer.Replay(
            stream: k, index: 0, generation: p.streams[k].cache.generation, snapshotEnd: p.streams[k].cache.count)
        replaying.append(c)
        counters.cacheStarts += 1
        // The first burst goes at once: most pictures of a static screen fit in it.
        advanceReplay(c, budget: 2 * replayBudget)
        return true
    }

    /// How many bytes a replay toward `t` may send in all. Unbounded on a transport without an
    /// estimate; toward a paced one, what its pacer lets out within
    /// `Allocator.keyFrameDrain`, less what already waits: the room the allocator gave the track's
    /// step up assumed a key frame, and a camera's cached picture is its key frame and every frame since
    /// (often hundreds of kilobytes), which on a slow link would fill the pacer and have it drop the
    /// packets of every track. A larger picture waits for a key frame asked of the publisher instead.
    func replayRoom(_ t: Transport) -> Int {
        guard t.downlink.estimating else { return .max }
        let room = pacingRate(t, now: now) / 8 * Allocator.keyFrameDrain - Double(t.downlink.paced.bytes)
        return Int(max(room, 0))
    }

    /// Sends the next cached packets of a replay, up to `budget` bytes; ends the replay when it has
    /// caught up with the cache (the live stream).
    func advanceReplay(_ c: Consumer, budget: Int) {
        guard var r = c.replay else { return }
        let p = c.producer
        var spent = 0
        let t0 = now
        while spent < budget {
            let generation = p.streams[r.stream].cache.generation
            if generation != r.generation {
                r.generation = generation
                r.index = 0
                r.snapshotEnd = 0
                if p.streams[r.stream].cache.count == 0 {
                    // Emptied (its bound, a pause) before the viewer caught up: what it got has a hole
                    // that its gap-free sequence numbers hide. It starts again on a key frame.
                    stopReplay(c)
                    c.restart()
                    if let k = c.keyFrameStream { requestKeyFrameNow(p, stream: k) }
                    return
                }
                // A new key frame replaced the picture: go on from it.
            }
            guard r.index < p.streams[r.stream].cache.count else {
                endReplay(c)
                return
            }
            let i = replaySlot
            rx[i].payload.removeAll(keepingCapacity: true)
            let size = p.streams[r.stream].cache.size(r.index)
            _ = p.streams[r.stream].cache.withPacket(r.index) { rx[i].payload.append(contentsOf: $0) }
            r.index += 1
            spent += max(size, 1)
            let replay = r
            withPacket(i) { packet in
                guard let header = try? RTPHeader(parsing: packet) else { return }
                c.replay = replay
                c.compressing = replay.index <= replay.snapshotEnd
                let info = classify(packet, producer: p, header: header, recovered: false, keyFrameNeeded: true)
                let sent = deliver(
                    packet, to: c, producer: p, stream: replay.stream, info: info, header: header,
                    sequence: header.sequenceNumber, timestamp: header.timestamp, now: t0)
                // Held for the viewer's NACKs as a live packet is (the picture may be let go or
                // replaced before it asks).
                if sent, p.streams[replay.stream].buffer?.contains(header.sequenceNumber) == false {
                    p.streams[replay.stream].buffer?.store(packet, sequence: header.sequenceNumber, now: t0)
                }
            }
        }
        c.replay = r
    }

    /// Takes a consumer out of the replays (caught up, cut short, or closed).
    func stopReplay(_ c: Consumer) {
        guard c.replay != nil else { return }
        c.replay = nil
        c.compressing = false
        replaying.removeAll { $0 === c }
    }

    func endReplay(_ c: Consumer) {
        stopReplay(c)
        // Nothing usable was cached after all: the usual way.
        if let k = c.keyFrameStream { requestKeyFrameNow(c.producer, stream: k) }
    }

    /// A viewer switching to stream `k` asks the publisher for a key frame of it: the viewer keeps its
    /// current layer until then, where a replay of the cache would show it nothing new meanwhile (and
    /// an SVC viewer's stream goes on, so older packets cannot be sent into it).
    func switchLayer(_ c: Consumer, to k: Int) {
        requestKeyFrameNow(c.producer, stream: k)
    }

    /// Every tick: each replay in progress sends its share.
    func advanceReplays() {
        guard !replaying.isEmpty else { return }
        for c in replaying { advanceReplay(c, budget: replayBudget) }
    }
}
