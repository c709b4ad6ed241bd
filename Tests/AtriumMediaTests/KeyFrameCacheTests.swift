import AtriumDTLS
import AtriumRTP
import Testing

@testable import AtriumMedia

/// The key-frame cache as tables, and late viewers started from it through the engine in memory.
@Suite struct KeyFrameCacheTests {
    static let limits = KeyFrameCache.Limits(bytes: 1000, packets: 8, age: 60)

    enum Step {
        case key(UInt16, Int)
        case delta(UInt16, Int)
        case at(Double)
    }

    /// Rows: the packets stored (sequence, size) at times, then what the cache holds and serves.
    @Test(
        arguments: [
            ("nothing before a key frame", [Step.delta(1, 100), .delta(2, 100)], [UInt16](), false),
            (
                "a key frame and its deltas", [.delta(1, 100), .key(2, 100), .delta(3, 50), .delta(4, 50)], [2, 3, 4],
                true
            ),
            (
                "the next key frame replaces them", [.key(2, 100), .delta(3, 50), .key(9, 100), .delta(10, 10)],
                [9, 10], true
            ),
            (
                "a late retransmission of an older packet is left out", [.key(5, 100), .delta(4, 100), .delta(6, 10)],
                [5, 6], true
            ),
            (
                "past the byte bound: nothing until the next key frame", [.key(1, 600), .delta(2, 600), .delta(3, 10)],
                [], false
            ),
            ("past the packet bound", [.key(1, 10)] + (2...9).map { Step.delta(UInt16($0), 10) }, [], false),
            ("too old to serve", [.key(1, 10), .at(61)], [1], false),
            (
                "across the sequence wrap", [.key(65534, 10), .delta(65535, 10), .delta(0, 10)], [65534, 65535, 0], true
            ),
        ] as [(String, [Step], [UInt16], Bool)])
    func cacheRows(_ name: String, _ steps: [Step], _ held: [UInt16], _ servable: Bool) throws {
        var cache = KeyFrameCache(limits: Self.limits)
        var spares = PictureSpares()
        var now = 0.0
        for step in steps {
            switch step {
            case .key(let s, let n), .delta(let s, let n):
                var isKey = false
                if case .key = step { isKey = true }
                let packet = try RTPPacketWriter.packet(
                    payloadType: 96, sequenceNumber: s, timestamp: 0, ssrc: 1,
                    payload: [UInt8](repeating: 0, count: max(0, n - 12)))
                packet.withUnsafeBytes {
                    _ = cache.store($0, sequence: s, startsKeyFrame: isKey, now: now, spares: &spares)
                }
            case .at(let t):
                now = t
            }
        }
        let sequences = try (0..<cache.count).map { i in
            try #require(cache.withPacket(i) { try? RTPHeader(parsing: Array($0)).sequenceNumber } ?? nil)
        }
        #expect(sequences == held, "\(name)")
        #expect(cache.isServable(now: now) == servable, "\(name)")
    }

    /// A picture kept for a while after its key frame (a camera that answers requests): let go at the
    /// first packet past that, asking for nothing; its buffers go to the worker's spares, and the next
    /// picture (of this stream or another) takes them back, so storing it allocates nothing; spares no
    /// picture took between two trims are freed.
    @Test func aPictureKeptForAWhileIsLetGoAndItsBuffersReused() throws {
        var cache = KeyFrameCache(limits: KeyFrameCache.Limits(bytes: 100_000, packets: 1000, age: 60))
        var other = KeyFrameCache(limits: KeyFrameCache.Limits(bytes: 100_000, packets: 1000, age: 60))
        var spares = PictureSpares()
        func store(_ s: UInt16, key: Bool = false, at now: Double, keep: Double = 1.5) -> Bool {
            let packet: [UInt8] = [0x80, 96, UInt8(s >> 8), UInt8(s & 0xFF)] + [UInt8](repeating: 0, count: 96)
            return packet.withUnsafeBytes {
                cache.store($0, sequence: s, startsKeyFrame: key, now: now, keepFor: keep, spares: &spares)
            }
        }
        #expect(!store(1, key: true, at: 0))
        for s in 2...45 { #expect(!store(UInt16(s), at: Double(s) / 30)) }
        #expect(cache.count == 45 && cache.isServable(now: 1.5))
        let held = cache.bytesHeld
        #expect(!store(46, at: 1.55), "let go without asking for a key frame")
        #expect(cache.count == 0 && !cache.isServable(now: 1.55) && cache.bytesHeld == 0)
        #expect(spares.count == 1 && spares.bytesHeld == held, "its buffers are the worker's spares")
        #expect(!store(47, at: 1.6) && cache.count == 0, "nothing kept until the next key frame")
        // Another stream's key frame takes them.
        let packet: [UInt8] = [0x80, 96, 0, 9] + [UInt8](repeating: 0, count: 96)
        packet.withUnsafeBytes { _ = other.store($0, sequence: 9, startsKeyFrame: true, now: 2, spares: &spares) }
        #expect(spares.count == 0 && other.bytesHeld == held)
        packet.withUnsafeBytes {
            _ = other.store($0, sequence: 10, startsKeyFrame: false, now: 4, keepFor: 1.5, spares: &spares)
        }
        #expect(spares.count == 1 && other.bytesHeld == 0)
        // This stream's next key frame takes them back.
        #expect(!store(48, key: true, at: 3) && !store(49, at: 3.03))
        #expect(cache.count == 2 && cache.isServable(now: 3.03) && cache.bytesHeld == held, "the same buffers")
        #expect(spares.count == 0)
        // The fewest spares on hand between two trims were not needed: the second trim frees them.
        _ = store(50, at: 5)
        #expect(spares.count == 1)
        spares.trim()
        #expect(spares.count == 1, "the first trim starts the count")
        spares.trim()
        #expect(spares.count == 0 && spares.bytesHeld == 0, "not taken since the last trim")
        // Of several spares a picture takes the one that fits the last picture let go most tightly.
        var small = [UInt8](repeating: 0, count: 10_000)
        var large = [UInt8](repeating: 0, count: 50_000)
        var fit = [UInt8](repeating: 0, count: 5_000)
        var e1: [Int] = [0]
        var e2: [Int] = [0]
        var e3: [Int] = [0]
        spares.give(&large, &e1)
        spares.give(&small, &e2)
        spares.give(&fit, &e3)
        var b: [UInt8] = []
        var e: [Int] = []
        spares.take(fitting: 8_000, &b, &e)
        #expect(b.capacity >= 10_000 && b.capacity < 50_000 && spares.count == 2)
        var b2: [UInt8] = []
        spares.take(fitting: 80_000, &b2, &e)
        #expect(b2.capacity >= 50_000 && spares.count == 1, "none fits: the largest")
    }

    /// How long a picture is kept after its key frame, by what the publisher's answers say, its
    /// source, and whether the engine waits on it.
    @Test(
        arguments: [
            (ViewerStart.Answers.within(0.05), false, false, 1.5),
            (.within(0.05), true, false, Double.infinity),
            (.within(0.05), false, true, .infinity),
            (.unknown, false, false, 1.5),
            (.unknown, true, false, .infinity),
            (.never, false, false, .infinity),
        ] as [(ViewerStart.Answers, Bool, Bool, Double)])
    func keepRows(_ answers: ViewerStart.Answers, _ share: Bool, _ waiting: Bool, _ expected: Double) {
        #expect(ViewerStart.keep(answers: answers, screenShare: share, waiting: waiting) == expected)
    }

    @Test func aDisabledCacheKeepsNothing() throws {
        var cache = KeyFrameCache(limits: .disabled)
        let packet: [UInt8] = [0x80, 96, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]
        var spares = PictureSpares()
        packet.withUnsafeBytes { _ = cache.store($0, sequence: 1, startsKeyFrame: true, now: 0, spares: &spares) }
        #expect(cache.count == 0 && !cache.isServable(now: 0) && !cache.isEnabled)
    }

    // MARK: - Through the engine

    /// A camera whose encoder sends one key frame (it ignores key-frame requests, as a static screen
    /// makes it), deltas after it, and a viewer that joins later.
    final class Room {
        let media: EmbeddedMedia
        let publisher: EmbeddedPeer
        var sequence: UInt16 = 65_000
        var frame = 0

        init(source: String = "screen_share", configure: (inout MediaConfiguration) -> Void = { _ in }) throws {
            media = try EmbeddedMedia(configure: configure)
            publisher = try EmbeddedPeer(
                port: 45_000, transport: "pub", serverFingerprint: media.engine.certificate.fingerprint)
            try publisher.connect(to: media, midExtensionID: 1)
            media.apply(
                .addProducer(
                    ProducerSpec(
                        id: "screen", transport: "pub", mid: "0", source: source, kind: .video,
                        videoCodec: "VP8", clockRate: 90_000, payloadType: 96, rtxPayloadType: nil, ssrc: 4242,
                        rtxSSRC: nil, audioLevelID: nil, absSendTimeID: nil, paused: false)))
        }

        /// One frame of `packets` packets of `size` payload bytes; the first frame is the key frame.
        func sendFrame(packets: Int = 1, size: Int = 100, key: Bool = false) throws {
            for n in 0..<packets {
                var payload: [UInt8] = [n == 0 ? 0x10 : 0x00]
                if n == 0 {
                    payload +=
                        frame == 0 || key ? [0x50, 0x01, 0x00, 0x9D, 0x01, 0x2A, 0x80, 0x07, 0x38, 0x04] : [0x51]
                }
                payload += [UInt8](repeating: UInt8(truncatingIfNeeded: frame), count: size)
                try publisher.send(
                    rtp: RTPPacketWriter.packet(
                        payloadType: 96, sequenceNumber: sequence, timestamp: UInt32(frame) * 3000, ssrc: 4242,
                        marker: n == packets - 1, payload: payload), to: media)
                sequence &+= 1
            }
            frame += 1
        }

        func viewer(_ port: UInt16) throws -> EmbeddedPeer {
            let v = try EmbeddedPeer(
                port: port, transport: "sub\(port)", serverFingerprint: media.engine.certificate.fingerprint)
            try v.connect(to: media)
            media.apply(
                .addConsumer(
                    ConsumerSpec(
                        id: "c\(port)", producer: "screen", transport: "sub\(port)", ssrc: UInt32(port),
                        rtxSSRC: nil, payloadType: 100, rtxPayloadType: nil, nack: true, audioLevelID: nil,
                        absSendTimeID: nil)))
            try v.receive(from: media)
            return v
        }

        /// The encoder answers a request: a key frame, then a delta, a tick apart.
        func answer() throws {
            try sendFrame(key: true)
            media.advance(by: 0.02)
            try sendFrame()
            media.advance(by: 0.02)
        }

        func plis() throws -> Int {
            try publisher.receive(from: media)
            defer { publisher.rtcp.removeAll() }
            return publisher.rtcp.filter { if case .pictureLossIndication = $0 { true } else { false } }.count
        }
    }

    static func frames(_ v: EmbeddedPeer) throws -> [(sequence: UInt16, frame: UInt8, timestamp: UInt32)] {
        try v.rtp.map { p in
            let h = try RTPHeader(parsing: p)
            return (h.sequenceNumber, p[h.payloadRange.upperBound - 1], h.timestamp)
        }
    }

    @Test func aLateViewerGetsTheCurrentPictureAtOnceAndFollowsLive() throws {
        let room = try Room()
        for _ in 0..<30 {
            try room.sendFrame()
            room.media.advance(by: 1.0 / 30)
        }
        room.media.advance(by: 20)
        _ = try room.plis()
        let v = try room.viewer(45_001)
        // The key frame and the 29 deltas after it, in one go (3.9 KB: within the first burst).
        let cached = try Self.frames(v)
        #expect(cached.map(\.frame) == (0..<30).map(UInt8.init))
        // What the replay sent is held for the viewer's NACKs, as live packets are (nobody watched
        // the share before: nothing was).
        let buffer = try #require(room.media.engine.producers["screen"]?.streams[0].buffer)
        #expect((0..<30).allSatisfy { buffer.contains(65_000 &+ UInt16($0)) })
        try room.sendFrame()
        room.media.advance(by: 0.05)
        try v.receive(from: room.media)
        let all = try Self.frames(v)
        #expect(all.last?.frame == 30)
        for (a, b) in zip(all, all.dropFirst()) { #expect(b.sequence == a.sequence &+ 1) }
        // Captured over a second, sent at once: the cached frames are one tick apart, and the live
        // stream goes on after them at its own pace.
        for (a, b) in zip(cached, cached.dropFirst()) { #expect(b.timestamp &- a.timestamp == 1) }
        let step = Int32(bitPattern: all[30].timestamp &- all[29].timestamp)
        #expect(step > 0 && step < 9000)
        #expect(try room.plis() == 0, "a viewer served from the cache asks the sharer for nothing")
        #expect(room.media.engine.counters.cacheStarts == 1)
        #expect(room.media.engine.counters.firstFrame.counts == [1, 0])
        let stats = try #require(room.media.engine.snapshot().tracks.first)
        #expect(stats.width == 1920 && stats.height == 1080, "the key frame's size, as a metric")
    }

    @Test func aLargePictureIsPacedAndLivePacketsWaitInTheCache() throws {
        let room = try Room { $0.replayBitrate = 800_000 }  // 2 KB per 20 ms tick
        try room.sendFrame(packets: 40, size: 1000)  // a 40 KB key frame
        room.media.advance(by: 0.1)
        let v = try room.viewer(45_002)
        let first = try Self.frames(v).count
        #expect(first > 0 && first < 40, "the first burst only")
        for _ in 0..<5 {
            try room.sendFrame(packets: 1, size: 100)
            room.media.advance(by: 0.1)
        }
        room.media.advance(by: 1)
        try v.receive(from: room.media)
        let all = try Self.frames(v)
        #expect(all.count == 45)
        for (a, b) in zip(all, all.dropFirst()) { #expect(b.sequence == a.sequence &+ 1) }
        #expect(try room.plis() == 0)
    }

    @Test func aCachePastItsBoundAsksForAKeyFrameToFillAgain() throws {
        let room = try Room { $0.keyFrameCacheBytes = 3000 }
        try room.sendFrame()
        room.media.advance(by: 1)
        _ = try room.plis()
        for _ in 0..<40 { try room.sendFrame(size: 100) }
        #expect(try room.plis() == 1)
        #expect(!room.media.engine.producers["screen"]!.streams[0].cache.isServable(now: room.media.clock.now))
    }

    @Test func aNackForACachedPacketOlderThanTheBufferIsAnswered() throws {
        let room = try Room()
        for _ in 0..<600 { try room.sendFrame(size: 20) }  // past the 512-packet buffer
        room.media.advance(by: 0.1)
        let v = try room.viewer(45_003)
        let first = try #require(try Self.frames(v).first)
        #expect(try Self.frames(v).count == 600)
        try v.forgetReceived()
        room.media.advance(by: 0.2)
        try v.send(
            rtcp: [.nack(GenericNACK(senderSSRC: 9, mediaSSRC: 45_003, lost: [first.sequence]))], to: room.media)
        try v.receive(from: room.media)
        let again = try Self.frames(v)
        #expect(again.map(\.sequence) == [first.sequence] && again.first?.frame == 0)
    }

    @Test func twentyJoinersWithoutACacheCostTheSharerOneKeyFrameRequestPerInterval() throws {
        let room = try Room { $0.keyFrameCacheBytes = 0 }
        try room.sendFrame()
        room.media.advance(by: 1)
        _ = try room.plis()
        var viewers: [EmbeddedPeer] = []
        for n in 0..<20 {
            viewers.append(try room.viewer(45_100 + UInt16(n)))
            room.media.advance(by: 0.01)
        }
        // Twenty joins in 0.2 s: one request now, none more within the 300 ms interval.
        #expect(try room.plis() == 1)
        #expect(room.media.engine.counters.cacheMisses == 0, "disabled: not a miss")
        withExtendedLifetime(viewers) {}
    }

    // MARK: - How a viewer starts (ViewerStart)

    /// The decision as a table: the cached key frame's age, what the publisher's answers say, and
    /// whether it is a screen share.
    @Test(
        arguments: [
            (nil, ViewerStart.Answers.never, false, nil as ViewerStart?),
            (nil, .within(0.05), true, nil),
            (nil, .unknown, true, nil),
            (nil, .unknown, false, .request(fallbackAfter: 1.0)),
            (nil, .within(0.05), false, .request(fallbackAfter: 0.1)),
            (0.3, .within(0.05), false, .replay),
            (3.0, .within(0.05), false, .request(fallbackAfter: 0.1)),
            (3.0, .within(0.2), false, .request(fallbackAfter: 0.4)),
            (3.0, .within(0.9), false, .request(fallbackAfter: 1.0)),
            (3.0, .never, false, .replay),
            (3.0, .unknown, false, .request(fallbackAfter: 1.0)),
            (3.0, .unknown, true, .replay),
            (3.0, .within(0.05), true, .request(fallbackAfter: 0.1)),
        ] as [(Double?, ViewerStart.Answers, Bool, ViewerStart?)])
    func startRows(_ age: Double?, _ answers: ViewerStart.Answers, _ share: Bool, _ expected: ViewerStart?) {
        #expect(ViewerStart.decide(keyFrameAge: age, answers: answers, screenShare: share) == expected)
    }

    /// A live camera sending for two seconds since its key frame: its cached chain is long.
    static func liveCamera() throws -> Room {
        let room = try Room(source: "camera")
        for _ in 0..<60 {
            try room.sendFrame()
            room.media.advance(by: 1.0 / 30)
        }
        _ = try room.plis()
        return room
    }

    @Test func aLongChainOfACameraThatAnswersStartsOnAFreshKeyFrameWithoutReplay() throws {
        let room = try Self.liveCamera()
        let v = try room.viewer(45_010)
        room.media.advance(by: 0.02)
        try v.receive(from: room.media)
        #expect(try room.plis() == 1, "a key frame is asked for")
        #expect(v.rtp.isEmpty, "no replay of two seconds of old frames")
        // The encoder answers with its next frame.
        try room.answer()
        try v.receive(from: room.media)
        #expect(try Self.frames(v).map(\.frame) == [60, 61], "the live picture from its key frame on")
        let c = room.media.engine.counters
        #expect(c.freshStarts == 1 && c.cacheStarts == 0 && c.fallbackStarts == 0)
        if case .within(let t) = room.media.engine.producers["screen"]?.streams[0].answers {
            #expect(abs(t - 0.02) < 1e-9, "the answer took a tick")
        } else {
            Issue.record("the answer was not noted")
        }
        // A camera known to answer: its picture is let go 1.5 s after the key frame, with no request.
        for _ in 0..<60 {
            try room.sendFrame()
            room.media.advance(by: 1.0 / 30)
        }
        let cache = try #require(room.media.engine.producers["screen"]?.streams[0].cache)
        #expect(cache.count == 0 && !cache.isServable(now: room.media.clock.now))
        #expect(try room.plis() == 0)
    }

    /// A camera that does not answer key-frame requests (never asked before): its picture was let go
    /// 1.5 s after the key frame, so a late viewer is a fresh start and waits; once its request went
    /// unanswered, the camera's next picture is kept whole and the next viewer is replayed at once.
    @Test func aCameraThatDoesNotAnswerIsKeptWholeOnceKnownAndTheNextViewerReplayed() throws {
        let room = try Self.liveCamera()
        let cache = { try #require(room.media.engine.producers["screen"]?.streams[0].cache) }
        #expect(try cache().count == 0, "let go 1.5 s after its key frame")
        let v = try room.viewer(45_011)
        #expect(try room.plis() == 1)
        #expect(room.media.engine.counters.freshStarts == 1)
        // Deltas only: no answer. The viewer gives up before the request is made again.
        for _ in 0..<15 {
            try room.sendFrame()
            room.media.advance(by: 1.0 / 30)
        }
        try v.receive(from: room.media)
        #expect(v.rtp.isEmpty, "waiting for a key frame")
        room.media.apply(.closeConsumer(id: "c45011"))
        for _ in 0..<18 {
            try room.sendFrame()
            room.media.advance(by: 1.0 / 30)
        }
        #expect(room.media.engine.producers["screen"]?.streams[0].answers == .never)
        // The encoder's own next key frame and two seconds of deltas: kept whole.
        try room.sendFrame(key: true)
        room.media.advance(by: 1.0 / 30)
        for _ in 0..<60 {
            try room.sendFrame()
            room.media.advance(by: 1.0 / 30)
        }
        #expect(try cache().count == 61)
        _ = try room.plis()
        let w = try room.viewer(45_012)
        #expect(try Self.frames(w).first?.frame == 93, "replayed at once from the key frame")
        #expect(try room.plis() == 0)
        #expect(room.media.engine.counters.cacheStarts == 1 && room.media.engine.counters.fallbackStarts == 0)
    }

    /// A camera never asked, a second after its key frame: a viewer's request goes unanswered, and the
    /// picture, kept while the request waits (past the 1.5 s a camera keeps one), is replayed after
    /// the bound.
    @Test func aCameraThatDoesNotAnswerIsReplayedFromThePictureKeptWhileItsRequestWaits() throws {
        let room = try Room(source: "camera")
        for _ in 0..<30 {
            try room.sendFrame()
            room.media.advance(by: 1.0 / 30)
        }
        _ = try room.plis()
        let v = try room.viewer(45_013)
        #expect(try room.plis() == 1)
        for _ in 0..<30 {
            try room.sendFrame()
            room.media.advance(by: 1.0 / 30)
        }
        room.media.advance(by: 0.1)
        try v.receive(from: room.media)
        #expect(try Self.frames(v).first?.frame == 0, "the cached picture from its key frame")
        #expect(room.media.engine.counters.fallbackStarts == 1)
    }

    @Test func aBurstOfJoinersIsOneRequestAndOneKeyFrame() throws {
        let room = try Self.liveCamera()
        let viewers = try (0..<10).map { try room.viewer(45_020 + UInt16($0)) }
        room.media.advance(by: 0.02)
        #expect(try room.plis() == 1, "one request for all ten")
        try room.sendFrame(key: true)
        room.media.advance(by: 0.02)
        for v in viewers {
            try v.receive(from: room.media)
            #expect(try Self.frames(v).map(\.frame) == [60])
        }
        #expect(room.media.engine.counters.freshStarts == 10 && room.media.engine.counters.cacheStarts == 0)
    }

    /// A viewer resumed after a bandwidth pause of two seconds starts by the same rule as a new one:
    /// the camera's chain is long and it answers, so it is asked for a key frame and the viewer gets
    /// the live picture from it, not the frames it missed while paused.
    @Test func aViewerResumedAfterAPauseGetsTheLivePictureNotTheFramesItMissed() throws {
        let room = try Self.liveCamera()
        let v = try room.viewer(45_030)
        room.media.advance(by: 0.02)
        _ = try room.plis()
        try room.sendFrame(key: true)
        room.media.advance(by: 0.02)
        try v.receive(from: room.media)
        #expect(try Self.frames(v).map(\.frame) == [60])
        func allocate(paused: Bool) {
            room.media.apply(
                .allocate(
                    transport: "sub45030",
                    TransportAllocation(
                        allocated: 0, wanted: 0, entries: [.init(consumer: "c45030", ceiling: nil, paused: paused)])))
        }
        allocate(paused: true)
        for _ in 0..<60 {
            try room.sendFrame()
            room.media.advance(by: 1.0 / 30)
        }
        v.rtp.removeAll()
        try v.receive(from: room.media)
        #expect(v.rtp.isEmpty, "nothing while paused")
        let fresh = room.media.engine.counters.freshStarts
        allocate(paused: false)
        room.media.advance(by: 0.02)
        try v.receive(from: room.media)
        #expect(try room.plis() == 1, "a key frame is asked for")
        #expect(v.rtp.isEmpty, "no replay of the two seconds it missed")
        try room.answer()
        try v.receive(from: room.media)
        #expect(try Self.frames(v).map(\.frame) == [121, 122], "the live picture from its key frame on")
        #expect(room.media.engine.counters.freshStarts == fresh + 1)
    }
}
