import AtriumDTLS
import AtriumRTP
import AtriumSRTP
import AtriumUDP
import Testing

@testable import AtriumMedia

/// The packet path allocates nothing per forwarded packet: a publisher's camera (VP8, with
/// RTX, mid and transport-wide sequence numbers) and microphone (Opus, audio level) forwarded to
/// several viewers, some with transport-wide feedback (their packets renumbered and paced), all
/// through the real engine in memory. After a warm-up (DTLS, the first key frame, the buffers that
/// grow to their size once), a few thousand packets are received, decrypted, parsed, selected,
/// rewritten, encrypted and batched while `AllocationCount` counts the heap allocations of this
/// thread: none are allowed. Time is the engine's manual clock, so nothing depends on speed or load.
@Suite struct PacketPathAllocationTests {
    static let camera = ProducerSpec(
        id: "cam", transport: "pub", mid: "0", source: "camera", kind: .video, videoCodec: "VP8", clockRate: 90_000,
        payloadType: 96, rtxPayloadType: 97, ssrc: 7000, rtxSSRC: 7001, audioLevelID: nil, absSendTimeID: nil,
        paused: false)
    static let microphone = ProducerSpec(
        id: "mic", transport: "pub", mid: "1", source: "microphone", kind: .audio, videoCodec: nil, clockRate: 48_000,
        payloadType: 111, rtxPayloadType: nil, ssrc: 7100, rtxSSRC: nil, audioLevelID: 2, absSendTimeID: nil,
        paused: false)

    /// The engine, the publisher and the viewers, connected, with every consumer in place.
    final class Room {
        let media: EmbeddedMedia
        let publisher: EmbeddedPeer
        let viewers: [EmbeddedPeer]
        var videoSequence: UInt16 = 1000
        var audioSequence: UInt16 = 5000
        var frame = 0

        init(viewers count: Int, keyFrameCache: Bool = true) throws {
            media = try EmbeddedMedia { config in
                if !keyFrameCache { config.keyFrameCacheBytes = 0 }
            }
            let fp = media.engine.certificate.fingerprint
            publisher = try EmbeddedPeer(port: 41_000, transport: "pub", serverFingerprint: fp)
            viewers = try (1...count).map {
                try EmbeddedPeer(port: 41_000 + UInt16($0), transport: "sub\($0)", serverFingerprint: fp)
            }
            try publisher.connect(to: media, midExtensionID: 1, transportWideCC: 3)
            for (n, v) in viewers.enumerated() {
                // Every other viewer has transport-wide feedback: its packets are renumbered and paced.
                try v.connect(to: media, transportWideCC: n % 2 == 0 ? 4 : nil)
            }
            media.apply(.addProducer(PacketPathAllocationTests.camera))
            media.apply(.addProducer(PacketPathAllocationTests.microphone))
            for n in 1...count {
                media.apply(
                    .addConsumer(
                        ConsumerSpec(
                            id: "v\(n)", producer: "cam", transport: "sub\(n)", ssrc: 8000 + UInt32(n),
                            rtxSSRC: 8100 + UInt32(n), payloadType: 96, rtxPayloadType: 97, nack: true,
                            audioLevelID: nil, absSendTimeID: nil)))
                media.apply(
                    .addConsumer(
                        ConsumerSpec(
                            id: "a\(n)", producer: "mic", transport: "sub\(n)", ssrc: 9000 + UInt32(n),
                            rtxSSRC: nil, payloadType: 111, rtxPayloadType: nil, nack: false, audioLevelID: 5,
                            absSendTimeID: nil)))
            }
        }

        /// The next frame time's packets, encrypted as the publisher sends them: a VP8 frame of six
        /// packets (a key frame every 90 frames) and an Opus packet.
        func nextFrame() throws -> [[UInt8]] {
            var out: [[UInt8]] = []
            let key = frame % 90 == 0
            for n in 0..<6 {
                var payload: [UInt8] = [n == 0 ? 0x10 : 0x00]
                if n == 0 { payload += key ? [0x50, 0x01, 0x00, 0x9D, 0x01, 0x2A, 0x80, 0x02, 0xE0, 0x01] : [0x51] }
                payload += [UInt8](repeating: UInt8(truncatingIfNeeded: frame), count: 1000)
                var p = try RTPPacketWriter.packet(
                    payloadType: 96, sequenceNumber: videoSequence, timestamp: UInt32(frame) * 3000, ssrc: 7000,
                    marker: n == 5,
                    extensions: [
                        RTPHeaderExtensionElement(id: 1, value: Array("0".utf8)),
                        RTPHeaderExtensionElement(id: 3, value: [0, 0]),
                    ], payload: payload)
                videoSequence &+= 1
                try publisher.srtpOut?.protect(rtp: &p)
                out.append(p)
            }
            if frame % 3 != 2 {
                var p = try RTPPacketWriter.packet(
                    payloadType: 111, sequenceNumber: audioSequence, timestamp: UInt32(audioSequence) * 960,
                    ssrc: 7100, marker: false,
                    extensions: [
                        RTPHeaderExtensionElement(id: 1, value: Array("1".utf8)),
                        RTPHeaderExtensionElement(id: 2, value: [0x80 | 30]),
                        RTPHeaderExtensionElement(id: 3, value: [0, 0]),
                    ], payload: [UInt8](repeating: 1, count: 120))
                audioSequence &+= 1
                try publisher.srtpOut?.protect(rtp: &p)
                out.append(p)
            }
            frame += 1
            return out
        }

        /// Frames prepared ahead, so that encrypting them is not counted.
        func frames(_ n: Int) throws -> [[[UInt8]]] { try (0..<n).map { _ in try nextFrame() } }

        /// What the worker does with them: each datagram handled to the end, pacers drained and the
        /// batch sent after each receive round (a frame's packets arrive together), 33 ms apart.
        func forward(_ frames: [[[UInt8]]]) {
            PacketPathAllocationTests.forward(frames, to: media, from: publisher.address, every: 0.033)
        }
    }

    /// What the worker does with prepared frames: each datagram handled to the end, pacers drained
    /// and the batch sent after each receive round (a frame's packets arrive together), `interval`
    /// seconds apart, then drained and sent again.
    static func forward(_ frames: [[[UInt8]]], to media: EmbeddedMedia, from: SocketAddress, every interval: Double) {
        let engine = media.engine
        // By index: a `for ... in` goes through the generic iterator, which allocates in a debug build.
        var f = 0
        while f < frames.count {
            let frame = frames[f]
            f += 1
            var n = 0
            while n < frame.count {
                engine.receive(frame[n], from: from)
                n += 1
            }
            engine.drainPacers()
            engine.flush()
            media.clock.now += interval
            engine.drainPacers()
            engine.flush()
        }
    }

    /// With the key-frame cache, without it, and with it for a camera known to answer key-frame
    /// requests (its picture let go 1.5 s after each key frame, and the buffers reused at the next).
    @Test(arguments: [(true, false), (false, false), (true, true)])
    func forwardingToSeveralViewersAllocatesNothing(keyFrameCache: Bool, answers: Bool) throws {
        guard AllocationCount.isAvailable else { return }
        let room = try Room(viewers: 4, keyFrameCache: keyFrameCache)
        // Warm-up: every viewer started, buffers grown to their size, the pacers' rings made.
        room.forward(try room.frames(1))
        if answers, let camera = room.media.engine.producers["cam"] {
            for k in camera.streams.indices { camera.streams[k].answers = .within(0.02) }
        }
        room.forward(try room.frames(199))
        room.media.collect()
        // What the viewers were sent shares the send slots' buffers: let it go.
        room.media.outbox.removeAll()
        room.media.port.keepsSent = false
        let frames = try room.frames(600)
        let before = room.media.engine.counters.packetsOut
        if answers, let camera = room.media.engine.producers["cam"] {
            // The encoder answers (these frames were made ahead, so the state says it).
            for k in camera.streams.indices {
                camera.streams[k].answers = .within(0.02)
                camera.streams[k].pendingRequestAt = nil
                camera.streams[k].ignoredRequests = false
            }
        }
        let count = AllocationCount.measure { room.forward(frames) }
        let forwarded = room.media.engine.counters.packetsOut - before
        if answers, let camera = room.media.engine.producers["cam"] {
            // Still known to answer: each picture was let go 1.5 s after its key frame (the last key
            // frame was 80 frames, 2.6 s, before the end).
            #expect(camera.streams.allSatisfy { if case .within = $0.answers { true } else { false } })
            #expect(camera.streams[0].cache.count == 0)
        }
        #expect(forwarded > 600 * 6 * 2, "\(forwarded) packets forwarded")
        #expect(count.allocations == 0, "\(count) for \(forwarded) forwarded packets")
        print(
            "packet path: \(count) for \(forwarded) forwarded packets (key-frame cache \(keyFrameCache), answers \(answers))"
        )
        // What went out still decrypts at the viewers.
        room.media.port.keepsSent = true
        room.forward(try room.frames(3))
        room.media.collect()
        for v in room.viewers {
            try v.receive(from: room.media)
            #expect(!v.rtp.isEmpty)
        }
    }

    /// The same for a simulcast VP8 camera in three streams to three viewers (low, medium, high):
    /// each packet goes through the consumer's simulcast layer decision and the VP8 picture-ID rewrite.
    @Test func simulcastForwardingAllocatesNothing() throws {
        guard AllocationCount.isAvailable else { return }
        let room = try SimulcastEngineTests.Room()
        // Warm-up: each viewer on its stream, buffers grown to their size (a key frame on every stream
        // every 90 frames, as the camera test's).
        for _ in 0..<200 { try room.sendFrame(keys: room.frame % 90 == 0 ? [0, 1, 2] : []) }
        room.media.collect()
        room.media.outbox.removeAll()
        room.media.port.keepsSent = false
        // Frames prepared and encrypted ahead, so that only the server's side is counted.
        var frames: [[[UInt8]]] = []
        for _ in 0..<300 {
            let key = room.frame % 90 == 0
            let tid = UInt8([0, 2, 1, 2][room.frame % 4])
            var frame: [[UInt8]] = []
            for k in 0..<3 {
                var p = try SimulcastEngineTests.vp8Packet(
                    stream: k, sequence: SimulcastEngineTests.sequenceBase[k] &+ UInt16(room.sent[k]),
                    timestamp: SimulcastEngineTests.timestampBase[k] &+ UInt32(room.frame) * 3000,
                    picture: SimulcastEngineTests.pictureBase[k] &+ UInt16(room.frame), tid: key ? 0 : tid, key: key,
                    rid: SimulcastEngineTests.rids[k])
                try room.publisher.srtpOut?.protect(rtp: &p)
                frame.append(p)
                room.sent[k] += 1
            }
            room.frame += 1
            frames.append(frame)
        }
        let engine = room.media.engine
        let before = engine.counters.packetsOut
        let count = AllocationCount.measure {
            Self.forward(frames, to: room.media, from: room.publisher.address, every: 1.0 / 30)
        }
        let forwarded = engine.counters.packetsOut - before
        #expect(forwarded >= 300 * 3, "\(forwarded) packets forwarded")
        #expect(count.allocations == 0, "\(count) for \(forwarded) forwarded packets")
    }
}
