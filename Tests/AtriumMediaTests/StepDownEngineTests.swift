import AtriumCongestion
import AtriumDTLS
import AtriumForwarding
import AtriumRTP
import AtriumUDP
import Testing

@testable import AtriumMedia

/// A step down behind a short-queue bottleneck, through the real engine in memory on the manual
/// clock: a simulcast camera (q/h/f at 150, 500 and 1,300 kbit/s) toward one viewer on `high` whose
/// link falls from 5 Mbit/s to 600 kbit/s with a 15 kB drop-tail queue (a 200 ms queue, a common real
/// link). Once the estimate has fallen and the pacer holds the top stream's packets, the allocator's
/// ceiling takes the viewer to q: the top stream is left at once, its packets waiting in the pacer go,
/// and q's key frame (asked of the publisher, which answers at its next frame) reaches the viewer
/// whole within a frame interval, the bottleneck's queue and its own transmission.
@Suite struct StepDownEngineTests {
    /// Packets per frame and bytes per packet of each stream (30 fps); key frames are three times larger.
    static let packets = [1, 2, 5]
    static let packetBytes = [600, 1000, 1100]
    static let queueLimit = 15_000
    static let frameInterval = 1.0 / 30

    final class Scene {
        let media: EmbeddedMedia
        let publisher: EmbeddedPeer
        let viewer: EmbeddedPeer
        /// The viewer's drop-tail bottleneck and its transport-wide feedback; what is on it, with
        /// when it arrives.
        var link = TransportWideLink(capacity: 5_000_000, queueLimit: StepDownEngineTests.queueLimit)
        var inFlight: [(arrival: Double, packet: [UInt8])] = []
        var sequences: [UInt16] = [100, 40_000, 65_500]
        var frame = 0
        var nextFrameAt = 0.0
        var keyNext: Set<Int> = [0, 1, 2]
        /// What reached the viewer: arrival time, the stream its payload names, whether it starts a
        /// key frame, its picture ID and whether it ends the frame.
        var arrived: [(at: Double, stream: Int, key: Bool, picture: UInt16, marker: Bool)] = []
        /// What the engine sent toward the viewer, with the time it left.
        var sent: [(at: Double, stream: Int, sequence: UInt16)] = []
        var n = 0

        init() throws {
            media = try EmbeddedMedia()
            let fp = media.engine.certificate.fingerprint
            publisher = try EmbeddedPeer(port: 41_000, transport: "pub", serverFingerprint: fp)
            viewer = try EmbeddedPeer(port: 41_001, transport: "sub", serverFingerprint: fp)
            try publisher.connect(to: media, midExtensionID: 1, transportWideCC: 3)
            try viewer.connect(to: media, transportWideCC: 4)
            media.apply(.addProducer(SimulcastEngineTests.camera))
            media.apply(
                .addConsumer(
                    ConsumerSpec(
                        id: "c", producer: "cam", transport: "sub", ssrc: 2000, rtxSSRC: 2001, payloadType: 100,
                        rtxPayloadType: 101, nack: true, audioLevelID: nil, absSendTimeID: nil, preference: .high)))
        }

        /// The publisher's frame on every stream (a key frame where one is due or was asked for).
        func sendFrame() throws {
            // A PLI is answered at the next frame of its stream, as an encoder does.
            try publisher.receive(from: media)
            for packet in publisher.rtcp {
                if case .pictureLossIndication(let p) = packet {
                    keyNext.insert(Int(p.sources.mediaSSRC - SimulcastEngineTests.ssrcBase))
                }
            }
            publisher.rtcp.removeAll()
            let picture = UInt16(truncatingIfNeeded: frame) & 0x7FFF
            for k in 0..<3 {
                let key = keyNext.contains(k)
                let count = StepDownEngineTests.packets[k] * (key ? 3 : 1)
                for i in 0..<count {
                    var payload: [UInt8] = [
                        i == 0 ? 0x90 : 0x80, 0x80, 0x80 | UInt8(picture >> 8), UInt8(picture & 0xFF),
                    ]
                    if i == 0 { payload += key ? [0x50, 0x01, 0x00, 0x9D, 0x01, 0x2A] : [0x51, 0x01, 0x00] }
                    payload += [UInt8](repeating: 0xA0 + UInt8(k), count: StepDownEngineTests.packetBytes[k])
                    try publisher.send(
                        rtp: RTPPacketWriter.packet(
                            payloadType: 96, sequenceNumber: sequences[k], timestamp: UInt32(frame) * 3000,
                            ssrc: SimulcastEngineTests.ssrcBase + UInt32(k), marker: i == count - 1,
                            extensions: [
                                RTPHeaderExtensionElement(id: 1, value: Array("0".utf8)),
                                RTPHeaderExtensionElement(id: 2, value: Array(SimulcastEngineTests.rids[k].utf8)),
                                RTPHeaderExtensionElement(id: 3, value: [0, 0]),
                            ], payload: payload), to: media)
                    sequences[k] &+= 1
                }
            }
            keyNext.removeAll()
            frame += 1
        }

        /// What the engine sent goes onto the link.
        func carry() throws {
            let before = viewer.rtp.count
            try viewer.receive(from: media)
            let now = media.clock.now
            for p in viewer.rtp[before...] {
                guard let h = try? RTPHeader(parsing: p), h.ssrc == 2000 || h.ssrc == 2001 else { continue }
                var number: UInt16?
                if let r = h.extensionValueRange(id: 4, in: p), r.count == 2 {
                    number = UInt16(p[r.lowerBound]) << 8 | UInt16(p[r.lowerBound + 1])
                }
                if h.ssrc == 2000, let last = p.last { sent.append((now, Int(last) - 0xA0, h.sequenceNumber)) }
                if let arrival = link.offer(bytes: p.count, sent: now, number: number) { inFlight.append((arrival, p)) }
            }
        }

        /// 10 ms: frames due, the engine's tick, the link, and feedback every 100 ms.
        func step() throws {
            if media.clock.now >= nextFrameAt - 1e-9 {
                try sendFrame()
                nextFrameAt += StepDownEngineTests.frameInterval
            }
            try carry()
            media.advance(by: 0.01)
            try carry()
            let now = media.clock.now
            link.deliver(until: now)
            let out = inFlight.filter { $0.arrival <= now }
            inFlight.removeAll { $0.arrival <= now }
            for (at, p) in out {
                guard let h = try? RTPHeader(parsing: p), h.ssrc == 2000 else { continue }
                let body = Array(p[h.payloadRange])
                guard body.count > 6, let last = body.last else { continue }
                let start = body[0] & 0x10 != 0
                arrived.append(
                    (
                        at, Int(last) - 0xA0, start && body[4] & 0x01 == 0,
                        UInt16(body[2] & 0x7F) << 8 | UInt16(body[3]), h.marker
                    ))
            }
            n += 1
            if n % 10 == 0 {
                let feedback = link.feedback(mediaSSRC: 2000)
                if !feedback.isEmpty { try viewer.send(rtcp: feedback, to: media) }
            }
        }

        func run(until t: Double) throws {
            while media.clock.now < t - 1e-9 { try step() }
        }

        var transport: Transport? { media.engine.transports["sub"] }
    }

    @Test func aStepDownBehindAShortQueueCostsAFrameAndTheQueueNotSeconds() throws {
        let s = try Scene()
        try s.run(until: 3)
        #expect(s.arrived.contains { $0.stream == 2 }, "the viewer is on the top stream")
        // The link narrows: the estimate falls and the pacer holds the top stream's packets.
        s.link.capacity = 600_000
        try s.run(until: 4.5)
        let held = s.transport?.downlink.paced.bytes ?? 0
        #expect(held > 10_000, "premise: the pacer holds packets at the step down (\(held) B)")
        let otherBefore = s.media.engine.counters.dropped[DropReason.otherLayer.rawValue]

        try s.carry()
        let sentBefore = s.sent.count
        let t0 = s.media.clock.now
        s.media.apply(
            .allocate(
                transport: "sub",
                TransportAllocation(
                    allocated: 300_000, wanted: 1_500_000,
                    entries: [.init(consumer: "c", ceiling: VideoLayer(spatial: 0, temporal: 7), paused: false)])))
        // At once: nothing of the top stream waits in the pacer any more.
        #expect((s.transport?.downlink.paced.bytes ?? 0) < held)
        let purged = s.media.engine.counters.dropped[DropReason.otherLayer.rawValue] - otherBefore
        #expect(purged > 0)
        try s.run(until: 7)

        // Nothing of a stream above q left the engine after the step down.
        let late = s.sent[sentBefore...].filter { $0.stream != 0 }
        #expect(late.isEmpty, "\(late.count) packets of higher streams sent after the step down")
        // q's key frame reached the viewer whole (every packet of its picture, no repair needed) within
        // a frame interval, the bottleneck's queue (15 kB at 600 kbit/s) and its own transmission.
        let keyStart = try #require(s.arrived.firstIndex { $0.stream == 0 && $0.key && $0.at >= t0 })
        let picture = s.arrived[keyStart].picture
        let pieces = s.arrived.filter { $0.stream == 0 && $0.picture == picture }
        #expect(pieces.count == StepDownEngineTests.packets[0] * 3, "the key frame arrived whole")
        let complete = pieces.map(\.at).max() ?? .infinity
        let queueDelay = Double(StepDownEngineTests.queueLimit * 8) / 600_000
        let keyTransmission = Double(StepDownEngineTests.packets[0] * 3 * 700 * 8) / 600_000
        let bound = StepDownEngineTests.frameInterval + queueDelay + keyTransmission + 0.05
        print(
            "step down: q's key frame complete \(complete - t0) s after it (bound \(bound) s); \(purged) paced packets dropped"
        )
        #expect(complete - t0 <= bound, "q's key frame complete \(complete - t0) s after the step down")
        // From then on q flows: a frame every interval.
        let qFrames = s.arrived.filter { $0.stream == 0 && $0.marker && $0.at > complete }.map(\.at)
        var longest = 0.0
        for (a, b) in zip(qFrames, qFrames.dropFirst()) { longest = max(longest, b - a) }
        #expect(
            qFrames.count > 40 && longest < 0.2, "q after the switch: \(qFrames.count) frames, longest gap \(longest) s"
        )
    }

    /// The pacer's ring gives up one stream's packets (SSRC or RTX SSRC) and keeps the others in order,
    /// across the ring's wrap.
    @Test func thePacerQueueDropsOneStreamAndKeepsTheRestInOrder() {
        var q = PacerQueue()
        let address = SocketAddress.v4(address: 0x7F00_0001, port: 9)
        func packet(_ ssrc: UInt32, _ n: Int) -> [UInt8] {
            [0x80, 100, 0, 0, 0, 0, 0, 0] + withUnsafeBytes(of: ssrc.bigEndian, Array.init) + [
                UInt8(n & 0xFF), UInt8(n >> 8),
            ]
        }
        var out: [UInt8] = []
        var pushed = 0
        for n in 0..<200 where q.push(packet(1, n), to: address, twccOffset: -1, now: 0) { pushed += 1 }
        for _ in 0..<180 { _ = q.pop(into: &out) }
        // 20 left; 200 more wrap the ring: ssrc 1, 2 (the stream to drop) and 3 (its RTX) in turn.
        for n in 200..<400 where q.push(packet([1, 2, 3, 1][n % 4], n), to: address, twccOffset: Int32(n), now: 0) {
            pushed += 1
        }
        #expect(pushed == 400)
        let before = q.count
        let removed = q.remove(ssrc: 2, rtxSSRC: 3)
        #expect(removed == 100 && q.count == before - 100 && q.bytes == q.count * 14)
        var order: [Int] = []
        while let (_, offset) = q.pop(into: &out) {
            #expect(out[8...11] == [0, 0, 0, 1])
            order.append(Int(out[12]) | Int(out[13]) << 8)
            if offset >= 0 { #expect(Int(offset) == order.last) }
        }
        #expect(order == Array(180..<200) + (200..<400).filter { $0 % 4 == 0 || $0 % 4 == 3 })
    }

    /// The pacer's ring is sized by need: nothing before the first packet held, 16 slots, doubling
    /// (the waiting packets kept in order) up to 256 while it fills, and nothing again once empty for
    /// two seconds.
    @Test func thePacerQueueGrowsWithWhatWaitsAndEmptiesWhenIdle() {
        var q = PacerQueue()
        let address = SocketAddress.v4(address: 0x7F00_0001, port: 9)
        let slot = MediaEngine.slotCapacity + MemoryLayout<SocketAddress>.stride + 4
        #expect(q.bytesHeld == 0)
        var out: [UInt8] = []
        for n in 0..<3 { _ = q.push([UInt8(n)], to: address, twccOffset: -1, now: 0) }
        #expect(q.bytesHeld == 16 * slot)
        _ = q.pop(into: &out)
        // 3 in, 1 out, 15 more: the ring (head at 1) doubles to 32 with the 17 waiting in order.
        for n in 3..<18 { _ = q.push([UInt8(n)], to: address, twccOffset: -1, now: 0.1) }
        #expect(q.bytesHeld == 32 * slot && q.count == 17)
        var order: [UInt8] = []
        while q.pop(into: &out) != nil { order.append(out[0]) }
        #expect(order == Array(1..<18))
        for n in 0..<300 { _ = q.push([UInt8(n & 0xFF)], to: address, twccOffset: -1, now: 0.2) }
        #expect(q.count == PacerQueue.capacity && q.bytesHeld == PacerQueue.capacity * slot)
        q.trim(now: 5)
        #expect(q.bytesHeld > 0, "not empty: kept")
        q.removeAll()
        q.trim(now: 2.1)
        #expect(q.bytesHeld > 0, "empty for under two seconds: kept")
        q.trim(now: 2.3)
        #expect(q.bytesHeld == 0)
        #expect(q.push([9], to: address, twccOffset: -1, now: 3) && q.pop(into: &out) != nil && out == [9])
    }

    /// The most bytes that waited since the last look (what a viewer's retransmission hold counts),
    /// however little waits when it is read; the count starts again from what waits then.
    @Test func thePacerQueueKeepsItsPeakUntilRead() {
        var q = PacerQueue()
        let address = SocketAddress.v4(address: 0x7F00_0001, port: 9)
        var out: [UInt8] = []
        for _ in 0..<10 { _ = q.push([UInt8](repeating: 1, count: 100), to: address, twccOffset: -1, now: 0) }
        for _ in 0..<8 { _ = q.pop(into: &out) }
        #expect(q.bytes == 200)
        #expect(q.takePeak() == 1000)
        #expect(q.takePeak() == 200)
        while q.pop(into: &out) != nil {}
        #expect(q.takePeak() == 200 && q.takePeak() == 0)
    }
}
