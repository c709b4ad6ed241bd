import AtriumDTLS
import AtriumForwarding
import AtriumRTP
import Testing

@testable import AtriumMedia

/// A room spread over two media workers, in memory: the home engine receives the
/// publisher and pipes its packets to the far engine, whose viewer decodes them; the far viewer's
/// key-frame requests travel home through the reverse ring and reach the publisher as a PLI.
@Suite struct PipeTests {
    static let camera = ProducerSpec(
        id: "cam", transport: "pub", mid: "0", source: "camera", kind: .video, videoCodec: "VP8", clockRate: 90_000,
        payloadType: 96, rtxPayloadType: nil, ssrc: 4242, rtxSSRC: nil, audioLevelID: nil, absSendTimeID: nil,
        paused: false)

    /// Two engines joined by a link, a publisher on the first and the pipe producer on the second.
    final class Spread {
        let home: EmbeddedMedia
        let far: EmbeddedMedia
        let link = PipeLink(from: 0, to: 1, wakeFar: nil, wakeHome: nil, capacity: 64)
        let publisher: EmbeddedPeer
        var sequence: UInt16 = 100
        var frame = 0

        init() throws {
            home = try EmbeddedMedia(seed: 7)
            far = try EmbeddedMedia(seed: 8)
            publisher = try EmbeddedPeer(
                port: 45_000, transport: "pub", serverFingerprint: home.engine.certificate.fingerprint)
            try publisher.connect(to: home, midExtensionID: 1)
            home.apply(.addProducer(PipeTests.camera))
            far.apply(.addPipeProducer(PipeTests.camera, router: "room", link: link, tag: 1))
            home.apply(.pipeProducer(id: "cam", link: link, tag: 1))
        }

        func viewer(_ port: UInt16) throws -> EmbeddedPeer {
            let v = try EmbeddedPeer(
                port: port, transport: "sub\(port)", serverFingerprint: far.engine.certificate.fingerprint)
            try v.connect(to: far)
            far.apply(
                .addConsumer(
                    ConsumerSpec(
                        id: "c\(port)", producer: "cam", transport: "sub\(port)", ssrc: UInt32(port), rtxSSRC: nil,
                        payloadType: 100, rtxPayloadType: nil, nack: true, audioLevelID: nil, absSendTimeID: nil)))
            return v
        }

        /// One frame (the first a key frame) whose payload's last byte is its number.
        func sendFrame() throws {
            var payload: [UInt8] = [0x10]
            payload += frame == 0 ? [0x50, 0x01, 0x00, 0x9D, 0x01, 0x2A, 0x80, 0x07, 0x38, 0x04] : [0x51]
            payload += [UInt8](repeating: UInt8(truncatingIfNeeded: frame), count: 50)
            try publisher.send(
                rtp: RTPPacketWriter.packet(
                    payloadType: 96, sequenceNumber: sequence, timestamp: UInt32(frame) * 3000, ssrc: 4242,
                    marker: true, payload: payload), to: home)
            sequence &+= 1
            frame += 1
        }

        /// What a worker does when woken: drain its pipes, send.
        func pump(_ m: EmbeddedMedia) {
            m.engine.drainPipes()
            m.engine.flush()
            m.collect()
        }

        func plis() throws -> Int {
            try publisher.receive(from: home)
            defer { publisher.rtcp.removeAll() }
            return publisher.rtcp.filter {
                if case .pictureLossIndication(let p) = $0 { p.sources.mediaSSRC == 4242 } else { false }
            }.count
        }
    }

    static func frames(_ v: EmbeddedPeer) throws -> [UInt8] {
        try v.rtp.map { p in p[try RTPHeader(parsing: p).payloadRange.upperBound - 1] }
    }

    @Test func aViewerOnTheFarWorkerDecodesThePublishersPacketsAndItsKeyFrameRequestsReachThePublisher() throws {
        let s = try Spread()
        let v = try s.viewer(46_000)
        // Nothing cached when the pipe started: the home worker asked the publisher for a key frame
        // itself. The far viewer waits for one and asks nothing before the pipe carried some.
        s.far.advance(by: 1.2)
        #expect(s.link.feedback.pop() == nil)
        s.pump(s.home)
        #expect(try s.plis() == 1)
        for _ in 0..<5 { try s.sendFrame() }
        s.pump(s.far)
        try v.receive(from: s.far)
        #expect(try Self.frames(v) == [0, 1, 2, 3, 4])
        let headers = try v.rtp.map { try RTPHeader(parsing: $0) }
        #expect(headers.allSatisfy { $0.ssrc == 46_000 && $0.payloadType == 100 })
        #expect(zip(headers, headers.dropFirst()).allSatisfy { $1.sequenceNumber == $0.sequenceNumber &+ 1 })
        #expect(s.home.engine.counters.pipePacketsOut == 5 && s.far.engine.counters.pipePacketsIn == 5)
        // Received once: on the home worker.
        #expect(s.home.engine.counters.packetsIn == 5 && s.far.engine.counters.packetsIn == 0)
        // The viewer's PLI: the far worker asks home at its next tick; home sends it to the publisher.
        try v.send(rtcp: [.pictureLossIndication(PictureLossIndication(senderSSRC: 1, mediaSSRC: 46_000))], to: s.far)
        s.far.advance(by: 0.4)
        s.home.advance(by: 0.4)
        s.pump(s.home)
        #expect(try s.plis() == 1)
        // Nothing of the pipe reaches the coordinator from the far worker.
        #expect(
            !s.far.events().contains { if case .transportState(let id, _) = $0 { id.hasPrefix("pipe") } else { false } }
        )
    }

    /// A connection taken over by another owner is restated: its state again (connected), and an
    /// unknown transport says nothing.
    @Test func aRestatedTransportReportsItsStateAgain() throws {
        let s = try Spread()
        _ = try s.viewer(46_000)
        _ = s.far.events()
        s.far.apply(.restate(transport: "sub46000"))
        s.far.apply(.restate(transport: "nobody"))
        #expect(s.far.events() == [.transportState(id: "sub46000", state: .connected)])
    }

    /// A pipe that ends (its relay link lost) is no longer fed or polled: the home producer stops
    /// copying into it (nothing more counted, nothing dropped as a full ring), the far side forgets it.
    @Test func anEndedPipeIsNoLongerFed() throws {
        let s = try Spread()
        _ = try s.viewer(46_000)
        for _ in 0..<3 { try s.sendFrame() }
        s.pump(s.far)
        let out = s.home.engine.counters.pipePacketsOut
        #expect(out == 3)
        s.home.apply(.unpipe(link: s.link))
        s.far.apply(.unpipe(link: s.link))
        for _ in 0..<100 { try s.sendFrame() }
        #expect(s.home.engine.counters.pipePacketsOut == out)
        #expect(s.home.engine.counters.dropped[DropReason.pipeFull.rawValue] == 0)
        #expect(s.home.engine.pipesOut.isEmpty && s.far.engine.pipesIn.isEmpty)
        #expect(s.home.engine.producers["cam"]?.pipes.isEmpty == true)
    }

    /// A producer piped after its key frame (a viewer on another worker, or node, came later): the
    /// home worker first hands the far one its cached picture, so the far viewer decodes from it
    /// without a key-frame request, even of a sender that answers none.
    @Test func aProducerPipedLaterHandsTheFarWorkerItsCachedPictureFirst() throws {
        let home = try EmbeddedMedia(seed: 7)
        let far = try EmbeddedMedia(seed: 8)
        let link = PipeLink(from: 0, to: 1, wakeFar: nil, wakeHome: nil, capacity: 64)
        let publisher = try EmbeddedPeer(
            port: 45_000, transport: "pub", serverFingerprint: home.engine.certificate.fingerprint)
        try publisher.connect(to: home, midExtensionID: 1)
        home.apply(.addProducer(Self.camera))
        for frame in 0..<3 {
            var payload: [UInt8] = [0x10]
            payload += frame == 0 ? [0x50, 0x01, 0x00, 0x9D, 0x01, 0x2A, 0x80, 0x07, 0x38, 0x04] : [0x51]
            payload += [UInt8](repeating: UInt8(frame), count: 50)
            try publisher.send(
                rtp: RTPPacketWriter.packet(
                    payloadType: 96, sequenceNumber: UInt16(100 + frame), timestamp: UInt32(frame) * 3000, ssrc: 4242,
                    marker: true, payload: payload), to: home)
        }
        far.apply(.addPipeProducer(Self.camera, router: "room", link: link, tag: 1))
        home.apply(.pipeProducer(id: "cam", link: link, tag: 1))
        #expect(link.packets.count == 3, "the key frame and the two deltas since")
        let v = try EmbeddedPeer(port: 46_000, transport: "sub", serverFingerprint: far.engine.certificate.fingerprint)
        try v.connect(to: far)
        far.engine.drainPipes()
        far.apply(
            .addConsumer(
                ConsumerSpec(
                    id: "c", producer: "cam", transport: "sub", ssrc: 46_000, rtxSSRC: nil, payloadType: 100,
                    rtxPayloadType: nil, nack: true, audioLevelID: nil, absSendTimeID: nil)))
        far.engine.flush()
        far.collect()
        try v.receive(from: far)
        #expect(try Self.frames(v) == [0, 1, 2])
        // The far viewer started from the far worker's own cache: nothing went home.
        #expect(link.feedback.pop() == nil)
    }

    /// A pipe producer piped on (a publisher on an edge node: its pipe producer on the owner feeds
    /// the other edges'): the third engine's viewer gets every frame, received once at home and
    /// forwarded once per hop; its key-frame request goes up both hops to the publisher; the layers
    /// the third engine's viewer wants reach the publisher through the middle one.
    @Test func aPipeProducerPipedOnFeedsAThirdWorkerAndItsRequestsGoUpBothHops() throws {
        let s = try Spread()
        let far = try EmbeddedMedia(seed: 9)
        let onward = PipeLink(from: 1, to: 2, wakeFar: nil, wakeHome: nil, capacity: 64)
        far.apply(.addPipeProducer(Self.camera, router: "room", link: onward, tag: 2))
        s.far.apply(.pipeProducer(id: "cam", link: onward, tag: 2))
        let v = try EmbeddedPeer(port: 47_000, transport: "sub", serverFingerprint: far.engine.certificate.fingerprint)
        try v.connect(to: far)
        far.apply(
            .addConsumer(
                ConsumerSpec(
                    id: "c", producer: "cam", transport: "sub", ssrc: 47_000, rtxSSRC: nil, payloadType: 100,
                    rtxPayloadType: nil, nack: true, audioLevelID: nil, absSendTimeID: nil)))
        // Nothing carried yet: neither the middle nor the far side asks anything; home asked itself.
        far.advance(by: 1.2)
        s.far.advance(by: 1.2)
        s.pump(far)
        s.pump(s.far)
        #expect(onward.feedback.pop() == nil && s.link.feedback.pop() == nil)
        s.pump(s.home)
        #expect(try s.plis() == 1)
        for _ in 0..<5 { try s.sendFrame() }
        s.pump(s.far)
        s.pump(far)
        try v.receive(from: far)
        #expect(try Self.frames(v) == [0, 1, 2, 3, 4])
        #expect(s.home.engine.counters.packetsIn == 5 && s.home.engine.counters.pipePacketsOut == 5)
        #expect(s.far.engine.counters.pipePacketsIn == 5 && s.far.engine.counters.pipePacketsOut == 5)
        #expect(far.engine.counters.pipePacketsIn == 5 && far.engine.counters.packetsIn == 0)
        // The far viewer's PLI: far asks the middle, the middle asks home, home asks the publisher.
        try v.send(rtcp: [.pictureLossIndication(PictureLossIndication(senderSSRC: 1, mediaSSRC: 47_000))], to: far)
        far.advance(by: 0.4)
        s.pump(far)
        s.far.advance(by: 0.4)
        s.pump(s.far)
        s.home.advance(by: 0.4)
        s.pump(s.home)
        #expect(try s.plis() == 1)
    }

    /// The layers a viewer two hops away wants reach the publisher: the middle pipe producer asks
    /// its home for them with its own viewers' (none here).
    @Test func theLayersAViewerTwoHopsAwayWantsReachThePublisher() throws {
        var spec = Self.camera
        spec.ssrc = nil
        spec.encodings = [
            EncodingSpec(rid: "q", width: 320, height: 180), EncodingSpec(rid: "h", width: 640, height: 360),
            EncodingSpec(rid: "f", width: 1280, height: 720),
        ]
        spec.ridExtensionID = 2
        let home = try EmbeddedMedia(seed: 7)
        let mid = try EmbeddedMedia(seed: 8)
        let far = try EmbeddedMedia(seed: 9)
        let up = PipeLink(from: 0, to: 1, wakeFar: nil, wakeHome: nil)
        let onward = PipeLink(from: 1, to: 2, wakeFar: nil, wakeHome: nil)
        let publisher = try EmbeddedPeer(
            port: 45_000, transport: "pub", serverFingerprint: home.engine.certificate.fingerprint)
        try publisher.connect(to: home, midExtensionID: 1)
        home.apply(.addProducer(spec))
        mid.apply(.addPipeProducer(spec, router: "room", link: up, tag: 1))
        home.apply(.pipeProducer(id: "cam", link: up, tag: 1))
        far.apply(.addPipeProducer(spec, router: "room", link: onward, tag: 2))
        mid.apply(.pipeProducer(id: "cam", link: onward, tag: 2))
        let v = try EmbeddedPeer(port: 46_000, transport: "sub", serverFingerprint: far.engine.certificate.fingerprint)
        try v.connect(to: far)
        far.apply(
            .addConsumer(
                ConsumerSpec(
                    id: "c", producer: "cam", transport: "sub", ssrc: 7, rtxSSRC: nil, payloadType: 100,
                    rtxPayloadType: nil, nack: true, audioLevelID: nil, absSendTimeID: nil,
                    preference: LayerPreference(quality: .high))))
        mid.engine.drainPipes()
        home.engine.drainPipes()
        let wanted = home.events().compactMap { e -> [String]? in
            if case .layersWanted("cam", let rids) = e { return rids }
            return nil
        }
        #expect(wanted.last == ["q", "f"])
        #expect(!mid.events().contains { if case .layersWanted = $0 { true } else { false } })
    }

    @Test func aFullPipeRefusesAndAClosedPipeProducerDropsWhatIsStillInTheRing() throws {
        let s = try Spread()
        _ = try s.viewer(46_001)
        for _ in 0..<70 { try s.sendFrame() }
        #expect(s.home.engine.counters.pipePacketsOut == 64)
        #expect(s.home.engine.counters.dropped[DropReason.pipeFull.rawValue] == 6)
        s.far.apply(.closeProducer(id: "cam"))
        s.pump(s.far)
        #expect(s.far.engine.counters.dropped[DropReason.pipeUnknown.rawValue] == 64)
        #expect(s.link.packets.count == 0)
        // The home producer's close forgets its pipe: nothing more is pushed.
        s.home.apply(.closeProducer(id: "cam"))
        try s.sendFrame()
        #expect(s.link.packets.count == 0)
    }

    @Test func theLayersAFarViewerWantsReachThePublisherThroughTheHomeWorker() throws {
        var spec = Self.camera
        spec.ssrc = nil
        spec.encodings = [
            EncodingSpec(rid: "q", width: 320, height: 180), EncodingSpec(rid: "h", width: 640, height: 360),
            EncodingSpec(rid: "f", width: 1280, height: 720),
        ]
        spec.ridExtensionID = 2
        let home = try EmbeddedMedia(seed: 7)
        let far = try EmbeddedMedia(seed: 8)
        let link = PipeLink(from: 0, to: 1, wakeFar: nil, wakeHome: nil)
        let publisher = try EmbeddedPeer(
            port: 45_000, transport: "pub", serverFingerprint: home.engine.certificate.fingerprint)
        try publisher.connect(to: home, midExtensionID: 1)
        home.apply(.addProducer(spec))
        far.apply(.addPipeProducer(spec, router: "room", link: link, tag: 9))
        home.apply(.pipeProducer(id: "cam", link: link, tag: 9))
        let v = try EmbeddedPeer(port: 46_000, transport: "sub", serverFingerprint: far.engine.certificate.fingerprint)
        try v.connect(to: far)
        far.apply(
            .addConsumer(
                ConsumerSpec(
                    id: "c", producer: "cam", transport: "sub", ssrc: 7, rtxSSRC: nil, payloadType: 100,
                    rtxPayloadType: nil, nack: true, audioLevelID: nil, absSendTimeID: nil,
                    preference: LayerPreference(quality: .high))))
        func wanted() -> [[String]] {
            home.engine.drainPipes()
            return home.events().compactMap { e -> [String]? in
                if case .layersWanted("cam", let rids) = e { return rids }
                return nil
            }
        }
        #expect(wanted() == [["q"], ["q", "f"]])
        // The far worker reports nothing of its own: its home does.
        #expect(!far.events().contains { if case .layersWanted = $0 { true } else { false } })
        far.apply(.setPreference(consumer: "c", LayerPreference(quality: .low)))
        #expect(wanted() == [["q"]])
    }

    /// Of a simulcast producer only the streams a far viewer's preference asks for cross the pipe
    /// (the bottom one always): a low viewer there gets stream 0 piped; a high one adds stream 2, not 1.
    /// A share's top stream, cached while nobody wanted it, starts the far viewer without a request; a
    /// camera's, not cached then, is asked for.
    @Test(arguments: [false, true])
    func onlyTheStreamsFarViewersWantCrossThePipe(screenShare: Bool) throws {
        let home = try EmbeddedMedia(seed: 7)
        let far = try EmbeddedMedia(seed: 8)
        let link = PipeLink(from: 0, to: 1, wakeFar: nil, wakeHome: nil, capacity: 256)
        let publisher = try EmbeddedPeer(
            port: 40_000, transport: "pub", serverFingerprint: home.engine.certificate.fingerprint)
        try publisher.connect(to: home, midExtensionID: 1)
        var spec = SimulcastEngineTests.camera
        if screenShare { spec.source = "screen_share" }
        home.apply(.addProducer(spec))
        far.apply(.addPipeProducer(spec, router: "room", link: link, tag: 5))
        home.apply(.pipeProducer(id: "cam", link: link, tag: 5))
        let v = try EmbeddedPeer(port: 46_000, transport: "sub", serverFingerprint: far.engine.certificate.fingerprint)
        try v.connect(to: far)
        far.apply(
            .addConsumer(
                ConsumerSpec(
                    id: "c", producer: "cam", transport: "sub", ssrc: 7, rtxSSRC: nil, payloadType: 100,
                    rtxPayloadType: nil, nack: true, audioLevelID: nil, absSendTimeID: nil, preference: .low)))
        var frame = 0
        /// A frame on each stream; what crossed the pipe, by stream.
        func frames(_ count: Int) throws -> Set<UInt8> {
            for _ in 0..<count {
                for k in 0..<3 {
                    try publisher.send(
                        rtp: SimulcastEngineTests.vp8Packet(
                            stream: k, sequence: SimulcastEngineTests.sequenceBase[k] &+ UInt16(frame),
                            timestamp: SimulcastEngineTests.timestampBase[k] &+ UInt32(frame) * 3000,
                            picture: UInt16(frame), tid: 0, key: frame == 0, rid: SimulcastEngineTests.rids[k]),
                        to: home)
                }
                frame += 1
            }
            var streams: Set<UInt8> = []
            while link.packets.pop({ h, _ in streams.insert(h.stream) }) {}
            return streams
        }
        #expect(try frames(3) == [0])
        // The far viewer now prefers the top layer: the far worker says so, the home worker hands it
        // the top stream's cached picture (three frames since its key frame) without asking the
        // publisher, then pipes it too. A camera's top stream was not cached: the publisher is asked.
        let asked = home.engine.counters.plisSent
        far.apply(.setPreference(consumer: "c", LayerPreference(quality: .high)))
        home.engine.drainPipes()
        var cached: [UInt8] = []
        while link.packets.pop({ h, _ in cached.append(h.stream) }) {}
        if screenShare {
            #expect(cached == [2, 2, 2] && home.engine.counters.plisSent == asked)
        } else {
            #expect(cached.isEmpty && home.engine.counters.plisSent == asked + 1)
        }
        #expect(try frames(3) == [0, 2])
    }

    @Test func thePacketRingKeepsOrderRefusesWhenFullAndRefusesOversizedPackets() {
        let ring = PacketRing(capacity: 3, slotSize: 8)
        #expect(ring.capacity == 4)
        for n in 0..<4 {
            let pushed = [UInt8](repeating: UInt8(n), count: n + 1).withUnsafeBytes {
                ring.push($0, PipePacket(tag: UInt32(n)))
            }
            #expect(pushed)
        }
        #expect(![UInt8(9)].withUnsafeBytes { ring.push($0, PipePacket()) })
        var seen: [(UInt32, [UInt8])] = []
        while ring.pop({ h, b in seen.append((h.tag, Array(b))) }) {}
        #expect(seen.map(\.0) == [0, 1, 2, 3])
        #expect(seen.map(\.1) == [[0], [1, 1], [2, 2, 2], [3, 3, 3, 3]])
        #expect([UInt8](repeating: 0, count: 9).withUnsafeBytes { !ring.push($0, PipePacket()) })
        #expect(ring.count == 0)
    }

    @Test func thePacketRingHandsEveryPacketAcrossThreadsInOrder() async {
        let ring = PacketRing(capacity: 16, slotSize: 8)
        let total = 20_000
        let producer = Task.detached {
            var n = 0
            while n < total {
                let bytes = withUnsafeBytes(of: UInt32(n).littleEndian) { Array($0) }
                if bytes.withUnsafeBytes({ ring.push($0, PipePacket(tag: UInt32(n))) }) {
                    n += 1
                } else {
                    await Task.yield()
                }
            }
        }
        var expected = 0
        var ordered = true
        while expected < total {
            let got = ring.pop { h, b in
                let value = b.loadUnaligned(as: UInt32.self)
                if h.tag != UInt32(expected) || value != UInt32(expected) { ordered = false }
            }
            if got { expected += 1 } else { await Task.yield() }
        }
        await producer.value
        #expect(ordered && expected == total)
    }
}
