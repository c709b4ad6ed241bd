import AtriumDTLS
import AtriumForwarding
import AtriumRTP
import Testing

@testable import AtriumMedia

/// A simulcast producer (three VP8 streams, rids q/h/f) and consumers at three qualities, driven
/// through the real engine in memory with a manual clock: what each viewer gets, how a switch keeps
/// the output continuous, what happens when a stream stops, and which layers are reported wanted.
@Suite struct SimulcastEngineTests {
    static let rids = ["q", "h", "f"]
    static let ssrcBase: UInt32 = 1000
    /// Each stream's own numbering, as a browser's encoders start them.
    static let sequenceBase: [UInt16] = [100, 40_000, 65_500]
    static let timestampBase: [UInt32] = [5_000, 3_000_000_000, 4_294_000_000]
    static let pictureBase: [UInt16] = [3, 20_000, 32_760]

    /// The simulcast camera on transport "pub": VP8 in three streams, rids q, h and f (320, 640 and
    /// 1280 wide), SSRCs learned from the rid extension (id 2).
    static let camera = ProducerSpec(
        id: "cam", transport: "pub", mid: "0", source: "camera", kind: .video, videoCodec: "VP8", clockRate: 90_000,
        payloadType: 96, rtxPayloadType: 97, ssrc: nil, rtxSSRC: nil, audioLevelID: nil, absSendTimeID: nil,
        paused: false,
        encodings: [
            EncodingSpec(rid: "q", width: 320, height: 180),
            EncodingSpec(rid: "h", width: 640, height: 360),
            EncodingSpec(rid: "f", width: 1280, height: 720),
        ], ridExtensionID: 2)

    /// The publisher, three viewers (low, medium, high) and the engine, connected, with the producer
    /// and consumers in place and each stream's sender report delivered.
    final class Room {
        let media: EmbeddedMedia
        let publisher: EmbeddedPeer
        let viewers: [EmbeddedPeer]
        var frame = 0
        var sent = [0, 0, 0]

        init() throws {
            media = try EmbeddedMedia()
            let fp = media.engine.certificate.fingerprint
            publisher = try EmbeddedPeer(port: 40_000, transport: "pub", serverFingerprint: fp)
            viewers = try (1...3).map {
                try EmbeddedPeer(port: 40_000 + UInt16($0), transport: "sub\($0)", serverFingerprint: fp)
            }
            try publisher.connect(to: media, midExtensionID: 1)
            for v in viewers { try v.connect(to: media) }
            media.apply(.addProducer(SimulcastEngineTests.camera))
            for (i, quality) in [LayerPreference.low, .medium, .high].enumerated() {
                media.apply(
                    .addConsumer(
                        ConsumerSpec(
                            id: "c\(i + 1)", producer: "cam", transport: "sub\(i + 1)", ssrc: 2000 + UInt32(i),
                            rtxSSRC: nil, payloadType: 100, rtxPayloadType: nil, nack: true, audioLevelID: nil,
                            absSendTimeID: nil, preference: quality)))
            }
            // Every stream's sender report maps the same wall clock to its own timestamps.
            try publisher.send(rtcp: (0..<3).map { senderReport($0) }, to: media)
        }

        func senderReport(_ k: Int) -> RTCPPacket {
            let wall = 1_000 + media.clock.now
            let ntp = UInt64(wall) << 32 | UInt64((wall - wall.rounded(.down)) * 4_294_967_296)
            return .senderReport(
                SenderReport(
                    ssrc: SimulcastEngineTests.ssrcBase + UInt32(k), ntpTimestamp: ntp,
                    rtpTimestamp: SimulcastEngineTests.timestampBase[k] &+ UInt32(media.clock.now * 90_000),
                    packetCount: 0, octetCount: 0))
        }

        /// One frame time (1/30 s): a one-packet frame on each of `streams`, key frames on `keys`,
        /// temporal layers L1T3 (0, 2, 1, 2).
        func sendFrame(streams: [Int] = [0, 1, 2], keys: Set<Int> = []) throws {
            let tid = UInt8([0, 2, 1, 2][frame % 4])
            for k in streams {
                let key = keys.contains(k)
                try publisher.send(
                    rtp: SimulcastEngineTests.vp8Packet(
                        stream: k, sequence: SimulcastEngineTests.sequenceBase[k] &+ UInt16(sent[k]),
                        timestamp: SimulcastEngineTests.timestampBase[k] &+ UInt32(frame) * 3000,
                        picture: SimulcastEngineTests.pictureBase[k] &+ UInt16(frame), tid: key ? 0 : tid, key: key,
                        rid: SimulcastEngineTests.rids[k]),
                    to: media)
                sent[k] += 1
            }
            frame += 1
            media.advance(by: 1.0 / 30)
            for v in viewers { try v.receive(from: media) }
            try publisher.receive(from: media)
        }

        /// `count` frame times, the first with a key frame on every stream.
        func start(frames count: Int) throws {
            try sendFrame(keys: [0, 1, 2])
            for _ in 1..<count { try sendFrame() }
        }

        /// Holds one viewer (consumer `c\(k)` on transport `sub\(k)`) to `ceiling`, as the allocator does.
        func hold(viewer k: Int, to ceiling: VideoLayer) {
            media.apply(
                .allocate(
                    transport: "sub\(k)",
                    TransportAllocation(
                        allocated: 0, wanted: 0, entries: [.init(consumer: "c\(k)", ceiling: ceiling, paused: false)])))
        }

        /// The rids of each `layers_wanted` report since the last call.
        func layersWanted() -> [[String]] {
            media.events().compactMap { e -> [String]? in
                if case .layersWanted("cam", let rids) = e { return rids }
                return nil
            }
        }

        /// The PLIs the publisher got since the last call, by SSRC.
        func takePLIs() -> [UInt32] {
            defer { publisher.rtcp.removeAll() }
            return publisher.rtcp.compactMap {
                if case .pictureLossIndication(let p) = $0 { return p.sources.mediaSSRC }
                return nil
            }
        }
    }

    /// A one-packet VP8 frame: descriptor with a 15-bit picture ID, TL0PICIDX and TID; a key frame's
    /// header or an inter frame's; then 16 bytes naming the stream (0xA0 + k), which the viewer reads
    /// back to prove the source.
    static func vp8Packet(
        stream k: Int, sequence: UInt16, timestamp: UInt32, picture: UInt16, tid: UInt8, key: Bool, rid: String
    ) throws -> [UInt8] {
        var payload: [UInt8] = [
            0x90, 0xE0, 0x80 | UInt8(picture >> 8 & 0x7F), UInt8(picture & 0xFF),
            UInt8(truncatingIfNeeded: picture / 4),
            tid << 6,
        ]
        payload += key ? [0x50, 0x01, 0x00, 0x9D, 0x01, 0x2A, 0x40, 0x01, 0xB4, 0x00] : [0x51, 0x01, 0x00]
        payload += [UInt8](repeating: 0xA0 + UInt8(k), count: 16)
        return try RTPPacketWriter.packet(
            payloadType: 96, sequenceNumber: sequence, timestamp: timestamp, ssrc: ssrcBase + UInt32(k), marker: true,
            extensions: [
                RTPHeaderExtensionElement(id: 1, value: Array("0".utf8)),
                RTPHeaderExtensionElement(id: 2, value: Array(rid.utf8)),
            ], payload: payload)
    }

    /// What a viewer received: per packet, the stream its payload names, its sequence number, timestamp
    /// and picture ID.
    struct Received: Equatable {
        var stream: Int
        var sequence: UInt16
        var timestamp: UInt32
        var picture: UInt16
    }

    static func received(_ v: EmbeddedPeer) throws -> [Received] {
        try v.rtp.map { p in
            let h = try RTPHeader(parsing: p)
            let body = Array(p[h.payloadRange])
            return Received(
                stream: Int(body[body.count - 1]) - 0xA0, sequence: h.sequenceNumber, timestamp: h.timestamp,
                picture: UInt16(body[2] & 0x7F) << 8 | UInt16(body[3]))
        }
    }

    /// The output is one stream: consecutive sequence numbers and picture IDs, timestamps moving on.
    static func expectContinuous(_ r: [Received], sourceLocation: SourceLocation = #_sourceLocation) {
        for (a, b) in zip(r, r.dropFirst()) {
            #expect(
                b.sequence == a.sequence &+ 1, "sequence \(a.sequence) -> \(b.sequence)", sourceLocation: sourceLocation
            )
            #expect(
                b.picture == (a.picture &+ 1) & 0x7FFF, "picture \(a.picture) -> \(b.picture)",
                sourceLocation: sourceLocation)
            #expect(
                Int32(bitPattern: b.timestamp &- a.timestamp) > 0, "timestamp \(a.timestamp) -> \(b.timestamp)",
                sourceLocation: sourceLocation)
        }
    }

    @Test func eachQualityGetsItsLayerAsOneContinuousStream() throws {
        let room = try Room()
        try room.start(frames: 40)
        for (k, v) in room.viewers.enumerated() {
            let r = try Self.received(v)
            // A lower stream's first key frame may start a viewer just before its own stream's arrives
            // (in the same frame time); from then on it gets its stream alone.
            #expect(r.filter { $0.stream == k }.count == 40, "viewer \(k) got \(r.map(\.stream))")
            #expect(r.drop { $0.stream != k }.allSatisfy { $0.stream == k })
            #expect(r.filter { $0.stream != k }.count <= k)
            Self.expectContinuous(r)
        }
    }

    /// The allocator's temporal ceiling reaches the wire: viewer 3, held to temporal layer 1 of the top
    /// stream, gets its TID 0 and 1 frames (half of them, L1T3) as one continuous stream, picture IDs
    /// consecutive; the layers the engine reports carry each temporal layer's rate and frame rate.
    @Test func aTemporalCeilingSendsFewerFramesWithoutGaps() throws {
        let room = try Room()
        try room.start(frames: 40)
        let layers = room.media.events().compactMap { e -> [LayerStats]? in
            if case .layers("cam", let l) = e { l } else { nil }
        }.last
        let top = try #require(layers?.last)
        let fps = top.temporal.map(\.framesPerSecond)
        #expect(fps.count == 3, "\(top.temporal)")
        if fps.count == 3 {
            #expect((6...9).contains(fps[0]) && (13...17).contains(fps[1]) && (28...32).contains(fps[2]), "\(fps)")
            #expect(
                top.temporal[0].bitrate < top.temporal[1].bitrate && top.temporal[1].bitrate < top.temporal[2].bitrate)
        }
        room.viewers[2].rtp.removeAll()
        room.hold(viewer: 3, to: VideoLayer(spatial: 2, temporal: 1))
        for _ in 0..<40 { try room.sendFrame() }
        let r = try Self.received(room.viewers[2])
        #expect(r.count == 20, "\(r.count) frames")
        #expect(r.allSatisfy { $0.stream == 2 })
        Self.expectContinuous(r)
        // Back to every temporal layer: from the next base-layer frame on, all of them again.
        room.viewers[2].rtp.removeAll()
        room.hold(viewer: 3, to: VideoLayer(spatial: 2, temporal: 7))
        for _ in 0..<40 { try room.sendFrame() }
        let all = try Self.received(room.viewers[2])
        #expect(all.count >= 37, "\(all.count) frames")
        Self.expectContinuous(all)
    }

    @Test func aStreamTheAnswerDidNotAcceptIsDroppedAndCounted() throws {
        let room = try Room()
        try room.start(frames: 1)
        for v in room.viewers { v.rtp.removeAll() }
        let before = room.media.engine.counters.dropped[DropReason.unnegotiatedStream.rawValue]
        try room.publisher.send(
            rtp: Self.vp8Packet(stream: 1, sequence: 1, timestamp: 1, picture: 1, tid: 0, key: true, rid: "x")
                .withSSRC(4242), to: room.media)
        for v in room.viewers { try v.receive(from: room.media) }
        #expect(room.media.engine.counters.dropped[DropReason.unnegotiatedStream.rawValue] == before + 1)
        #expect(room.viewers.allSatisfy { $0.rtp.isEmpty })
    }

    @Test func aViewerSwitchingUpKeepsItsLayerUntilTheKeyFrameAndStaysContinuous() throws {
        let room = try Room()
        try room.start(frames: 10)
        _ = room.takePLIs()
        let low = room.viewers[0]
        low.rtp.removeAll()
        room.media.apply(.setPreference(consumer: "c1", .high))
        try room.publisher.receive(from: room.media)
        #expect(room.takePLIs() == [Self.ssrcBase + 2], "a key frame of the top stream is asked for at once")
        // No freeze: the bottom stream goes on until the top one's key frame.
        for _ in 0..<5 { try room.sendFrame() }
        // The top stream's key frame arrives first in its frame time: the bottom stream's copy of
        // that frame is not forwarded.
        try room.sendFrame(streams: [2, 0, 1], keys: [2])
        for _ in 0..<5 { try room.sendFrame() }
        let r = try Self.received(low)
        #expect(r.map(\.stream) == [Int](repeating: 0, count: 5) + [Int](repeating: 2, count: 6))
        Self.expectContinuous(r)
        // Sender reports align the two timelines (each stream has its own timestamp base): one frame
        // time apart, as captured (within a tick of the reports' rounding).
        #expect(abs(Int(Int32(bitPattern: r[5].timestamp &- r[4].timestamp)) - 3000) <= 1)
        // The metrics say it: the viewer is on the top stream after one switch up.
        let stats = try #require(room.media.engine.snapshot().consumers.first { $0.track == "cam" && $0.layer == 2 })
        #expect(stats.switchesUp == 1 && stats.switchesDown == 0)
    }

    /// A NACKed packet from before and after a switch is sent again exactly as it was sent first:
    /// its sequence number, timestamp and rewritten picture ID (here without RTX: the same SSRC and
    /// sequence number, which SRTP must allow the sender to protect twice).
    @Test func aRetransmissionAcrossASwitchRepeatsTheFirstCopy() throws {
        let room = try Room()
        try room.start(frames: 10)
        let low = room.viewers[0]
        low.rtp.removeAll()
        room.media.apply(.setPreference(consumer: "c1", .high))
        try room.sendFrame()
        try room.sendFrame(streams: [2, 0, 1], keys: [2])
        try room.sendFrame()
        let first = try Self.received(low)
        #expect(first.map(\.stream) == [0, 2, 2])
        // Those three never arrived: the viewer asks for them again.
        try low.forgetReceived()
        room.media.advance(by: 0.2)
        try low.send(
            rtcp: [.nack(GenericNACK(senderSSRC: 77, mediaSSRC: 2000, lost: first.map(\.sequence)))], to: room.media)
        try low.receive(from: room.media)
        let again = try Self.received(low)
        #expect(again == first, "\(again) vs \(first)")
    }

    /// When the new stream's key frame carries the capture time already sent from the old stream,
    /// it goes out one tick later: timestamps never repeat or go back.
    @Test func aSwitchOnAFrameAlreadySentMovesTheTimelineOn() throws {
        let room = try Room()
        try room.start(frames: 5)
        let low = room.viewers[0]
        low.rtp.removeAll()
        room.media.apply(.setPreference(consumer: "c1", .high))
        try room.sendFrame(keys: [2])
        try room.sendFrame()
        let r = try Self.received(low)
        #expect(r.map(\.stream) == [0, 2, 2])
        Self.expectContinuous(r)
        #expect(r[1].timestamp &- r[0].timestamp == 1)
        #expect(r[2].timestamp &- r[1].timestamp == 3000)
    }

    @Test func aStreamThatStopsIsReplacedByTheNextOneDown() throws {
        let room = try Room()
        try room.start(frames: 10)
        let high = room.viewers[2]
        high.rtp.removeAll()
        _ = room.takePLIs()
        // The top encoding stops (a publisher's encoder turned off, a layer cut by its bandwidth).
        var plis: [UInt32] = []
        for _ in 0..<40 {
            try room.sendFrame(streams: [0, 1])
            plis += room.takePLIs()
        }
        #expect(plis.first == Self.ssrcBase + 1, "a key frame of the middle stream is asked for")
        #expect(plis.allSatisfy { $0 == Self.ssrcBase + 1 })
        try room.sendFrame(streams: [0, 1], keys: [1])
        for _ in 0..<5 { try room.sendFrame(streams: [0, 1]) }
        let r = try Self.received(high)
        #expect(r.map(\.stream) == [Int](repeating: 1, count: 6))
        let layers = room.media.engine.snapshot().consumers.map { ($0.layer, $0.switchesUp, $0.switchesDown) }
        #expect(
            layers.contains { $0.0 == 1 && $0.2 == 1 },
            "the top viewer is on the middle stream after one switch down: \(layers)")
    }

    /// Only the packets some viewer was sent are held for retransmission: a layer nobody watches holds
    /// no buffer, and one its last viewer left gives its buffer back once idle. Of a camera's layers
    /// only the bottom one is cached, or one some viewer wants of a camera that ignored a request.
    @Test func onlyAWatchedLayerIsHeldForRetransmission() throws {
        let room = try Room()
        room.media.apply(.closeConsumer(id: "c3"))
        try room.start(frames: 40)
        func held(_ k: Int) -> Int { room.media.engine.producers["cam"]?.streams[k].buffer?.bytesHeld ?? -1 }
        func cached(_ k: Int) -> Int { room.media.engine.producers["cam"]?.streams[k].cache.count ?? -1 }
        #expect(held(0) > 0 && held(1) > 0)
        #expect(held(2) == 0)
        // Of a camera's layers only the bottom one is cached (the upper ones, wanted or not, are asked
        // for when a viewer starts on them), unless the camera left a request unanswered.
        #expect(cached(0) > 0 && cached(1) == 0 && cached(2) == 0)
        // The medium viewer steps down to the low layer: the medium one is let go 5 s later.
        room.media.apply(.setPreference(consumer: "c2", .low))
        try room.sendFrame(keys: [0])
        for _ in 0..<Int(RetransmissionBuffer.idle * 30) + 60 { try room.sendFrame() }
        #expect(held(0) > 0)
        #expect(held(1) == 0 && held(2) == 0)
        #expect(cached(1) == 0 && cached(2) == 0)
        // A camera that once ignored a request has its wanted upper layers cached too.
        room.media.apply(.setPreference(consumer: "c2", .medium))
        room.media.engine.producers["cam"]?.streams[1].ignoredRequests = true
        try room.sendFrame(keys: [1])
        #expect(cached(1) > 0 && cached(2) == 0)
        // What the low viewer was sent is still answered from the buffer.
        let low = room.viewers[0]
        let misses = room.media.engine.counters.retransmissionMisses
        let last = try #require(try Self.received(low).last)
        let input = try #require(room.media.engine.consumers["c1"]?.input(for: last.sequence))
        #expect(room.media.engine.producers["cam"]?.streams[0].buffer?.contains(input.0) == true)
        try low.forgetReceived()
        try low.send(
            rtcp: [.nack(GenericNACK(senderSSRC: 77, mediaSSRC: 2000, lost: [last.sequence]))], to: room.media)
        try low.receive(from: room.media)
        #expect(try Self.received(low) == [last])
        #expect(room.media.engine.counters.retransmissionMisses == misses)
    }

    /// Each stream holds what its viewers may still ask for: half a second until their receiver
    /// reports give round trips, then four round trips and 150 ms (at least 0.3 s) of the producer's
    /// farthest viewer, on every layer (a viewer may step to another); the NACK maps follow their own
    /// viewer's. A far viewer's NACK for a packet a second and a half old is answered.
    @Test func eachStreamHoldsWhatItsViewersMayStillAskFor() throws {
        let room = try Room()
        try room.start(frames: 40)
        let engine = room.media.engine
        func holds() -> [Double] { (0..<3).map { engine.producers["cam"]?.streams[$0].buffer?.hold ?? -1 } }
        func maps() -> [Double] { (1...3).map { engine.consumers["c\($0)"]?.nackHold ?? -1 } }
        #expect(holds() == [0.5, 0.5, 0.5] && maps() == [0.5, 0.5, 0.5])
        // Receiver reports: 5 ms away for the low and medium viewers, 400 ms for the high one.
        for (i, rtt) in [0.005, 0.005, 0.4].enumerated() {
            let middle = UInt32(truncatingIfNeeded: MediaEngine.ntpNow() >> 16)
            let block = ReceptionReport(
                ssrc: 2000 + UInt32(i), fractionLost: 0, cumulativeLost: 0, extendedHighestSequence: 0, jitter: 0,
                lastSenderReport: middle &- UInt32(rtt * 65536), delaySinceLastSenderReport: 0)
            try room.viewers[i].send(
                rtcp: [.receiverReport(ReceiverReport(ssrc: 77, reports: [block]))], to: room.media)
        }
        for _ in 0..<40 { try room.sendFrame() }
        let h = holds()
        let m = maps()
        // Each viewer's hold is the one its measured round trip gives; every layer takes the far one's.
        let rtts = (1...3).map { engine.transports["sub\($0)"]?.rtt }
        #expect(rtts.allSatisfy { $0 != nil }, "every viewer's report gave a round trip: \(rtts)")
        #expect((0..<3).map { m[$0] == RetransmissionBuffer.hold(rtt: rtts[$0], queued: 0) } == [true, true, true])
        #expect(m[2] > m[0] && m[2] > m[1], "the far viewer holds longest: \(m)")
        #expect(h == [m[2], m[2], m[2]])
        // The high viewer asks for a packet sent 1.5 s (45 frames) ago: it is answered from the buffer.
        let high = room.viewers[2]
        high.rtp.removeAll()
        for _ in 0..<45 { try room.sendFrame() }
        let old = try #require(try Self.received(high).first)
        try high.forgetReceived()
        let misses = engine.counters.retransmissionMisses
        try high.send(
            rtcp: [.nack(GenericNACK(senderSSRC: 77, mediaSSRC: 2002, lost: [old.sequence]))], to: room.media)
        try high.receive(from: room.media)
        #expect(try Self.received(high) == [old])
        #expect(engine.counters.retransmissionMisses == misses)
    }

    @Test func theLayersWantedFollowTheViewers() throws {
        let room = try Room()
        #expect(room.layersWanted() == [["q"], ["q", "h"], ["q", "h", "f"]])
        // A bandwidth ceiling on the high viewer does not turn the top layer off: it keeps arriving
        // (and is measured) for when the viewer's link has room.
        room.hold(viewer: 3, to: VideoLayer(spatial: 1, temporal: 7))
        #expect(room.layersWanted().isEmpty)
        room.media.apply(.closeConsumer(id: "c3"))
        room.media.apply(.setPreference(consumer: "c2", .low))
        #expect(room.layersWanted() == [["q", "h"], ["q"]])
    }
}

extension LayerPreference {
    static let low = LayerPreference(quality: .low)
    static let medium = LayerPreference(quality: .medium)
    static let high = LayerPreference(quality: .high)
}

extension Array where Element == UInt8 {
    /// The packet with another SSRC (bytes 8-11).
    func withSSRC(_ ssrc: UInt32) -> [UInt8] {
        var p = self
        p[8] = UInt8(ssrc >> 24)
        p[9] = UInt8(ssrc >> 16 & 0xFF)
        p[10] = UInt8(ssrc >> 8 & 0xFF)
        p[11] = UInt8(ssrc & 0xFF)
        return p
    }
}
