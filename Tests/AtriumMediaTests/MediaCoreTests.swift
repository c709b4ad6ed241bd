import AtriumICE
import AtriumSTUN
import Testing

@testable import AtriumMedia
@testable import AtriumRTP

/// The forwarding core's pieces as tables: header extensions remapped in place, the retransmission
/// buffer, the NACK list, reception statistics, and a consumer's start, pause and NACK mapping.
@Suite struct MediaCoreTests {
    // MARK: - Header extensions

    /// An RTP packet with a one-byte extension block: id 1 (audio level, 1 byte), id 3 (abs-send-time,
    /// 3 bytes), id 5 (mid "0").
    static func packetWithExtensions() throws -> [UInt8] {
        try RTPPacketWriter.packet(
            payloadType: 111, sequenceNumber: 1, timestamp: 2, ssrc: 3,
            extensions: [
                RTPHeaderExtensionElement(id: 1, value: [0x85]),
                RTPHeaderExtensionElement(id: 3, value: [1, 2, 3]),
                RTPHeaderExtensionElement(id: 5, value: Array("0".utf8)),
            ], payload: [9, 9, 9])
    }

    @Test func extensionsAreRenumberedOrBlankedInPlace() throws {
        var packet = try Self.packetWithExtensions()
        let header = try RTPHeader(parsing: packet)
        let before = packet.count
        try RTPHeaderExtension.remapInPlace(
            &packet, range: header.extensionRange, profile: try #require(header.extensionProfile)
        ) { id in
            [1: 7, 3: 2][id]
        }
        #expect(packet.count == before)
        let after = try RTPHeader(parsing: packet)
        let elements = try after.extensionElements(in: packet)
        #expect(
            elements == [
                RTPHeaderExtensionElement(id: 7, value: [0x85]), RTPHeaderExtensionElement(id: 2, value: [1, 2, 3]),
            ])
        #expect(Array(packet[after.payloadRange]) == [9, 9, 9])
    }

    @Test func anIDOutsideTheOneByteRangeRemovesTheElement() throws {
        var packet = try Self.packetWithExtensions()
        let header = try RTPHeader(parsing: packet)
        try RTPHeaderExtension.remapInPlace(
            &packet, range: header.extensionRange, profile: try #require(header.extensionProfile)
        ) { _ in 15 }
        #expect(try RTPHeader(parsing: packet).extensionElements(in: packet).isEmpty)
    }

    @Test func aMalformedBlockIsLeftUntouched() throws {
        var packet = try Self.packetWithExtensions()
        let header = try RTPHeader(parsing: packet)
        // Element 5 claims 16 bytes: past the end of the block.
        let i = try #require(packet.firstIndex(of: 5 << 4 | 0))
        packet[i] = 5 << 4 | 15
        let copy = packet
        #expect(throws: RTPError.self) {
            try RTPHeaderExtension.remapInPlace(
                &packet, range: header.extensionRange, profile: header.extensionProfile ?? 0
            ) { $0 }
        }
        #expect(packet == copy)
    }

    // MARK: - Buffers and statistics

    @Test func theRetransmissionBufferKeepsPacketsBySequenceNumberAcrossTheWrap() {
        var b = RetransmissionBuffer()
        #expect(b.bytesHeld == 0, "nothing before the first packet")
        var now = 0.0
        for s: UInt16 in 65534...65535 { [UInt8(s & 0xFF)].withUnsafeBytes { b.store($0, sequence: s, now: now) } }
        for s: UInt16 in 0...2 {
            now += 0.01
            [UInt8(s)].withUnsafeBytes { b.store($0, sequence: s, now: now) }
        }
        #expect(b.withPacket(2) { Array($0) } == [2])
        #expect(b.withPacket(65535) { Array($0) } == [0xFF])
        #expect(b.withPacket(7) { Array($0) } == nil)
        // 64 entries: 66 shares 2's and, a hold later, takes it.
        now += b.hold + 0.1
        [UInt8(66)].withUnsafeBytes { b.store($0, sequence: 66, now: now) }
        #expect(b.withPacket(2) { Array($0) } == nil && b.withPacket(66) { Array($0) } == [66])
    }

    /// Rate (packets a second), size and hold -> what the buffer holds after twenty seconds: a ring
    /// that lasts `hold` at that rate and at most half as much again (it grows by half), entries for
    /// every packet of `hold` and at most twice that (they double), each within its caps; and every
    /// packet of the last `hold` is there.
    @Test(arguments: [
        (rate: 50, size: 120, hold: 2.0),  // a microphone-sized stream
        (rate: 20, size: 1000, hold: 2.0),  // a simulcast camera's low layer, 160 kbit/s
        (rate: 60, size: 1100, hold: 2.0),  // its middle layer, 530 kbit/s
        (rate: 250, size: 1100, hold: 2.0),  // its top layer, 2.2 Mbit/s
        (rate: 1000, size: 1200, hold: 2.0),  // 9.6 Mbit/s: over the caps, held at them
        (rate: 20, size: 1000, hold: 0.3),  // the low layer for viewers nearby
        (rate: 250, size: 1100, hold: 0.3),  // the top layer for viewers nearby
        (rate: 250, size: 1100, hold: 0.5),  // ... before their round trips are measured
    ])
    func theRetransmissionBufferIsSizedByItsStreamsRate(rate: Int, size: Int, hold: Double) {
        typealias B = RetransmissionBuffer
        var b = B()
        b.hold = hold
        let packet = [UInt8](repeating: 7, count: size)
        var sequence: UInt16 = 100
        for i in 0..<(rate * 20) {
            packet.withUnsafeBytes { b.store($0, sequence: sequence, now: Double(i) / Double(rate)) }
            sequence &+= 1
        }
        let need = Double(rate * size) * b.hold
        let ringOK =
            b.ringBytes == B.maximumBytes
            || (Double(b.ringBytes) >= need && Double(b.ringBytes) <= max(Double(B.minimumBytes), 1.5 * need + 2048))
        #expect(ringOK, "\(b.ringBytes) bytes for \(Int(need)) a hold")
        let perHold = Double(rate) * b.hold
        let entriesOK =
            b.entryCount == B.maximumEntries
            || (Double(b.entryCount) >= perHold && Double(b.entryCount) <= max(Double(B.minimumEntries), 2 * perHold))
        #expect(entriesOK, "\(b.entryCount) entries for \(Int(perHold)) a hold")
        print("retransmission buffer at \(rate) packets/s of \(size) B, \(hold) s: \(b.bytesHeld / 1024) KiB")
        let held = min(Int(perHold), b.entryCount, b.ringBytes / size - 1)
        for back in 1...held {
            #expect(b.contains(sequence &- UInt16(back)), "packet \(back) back")
        }
    }

    /// A stream whose rate fell gets a smaller ring (a wrap slower than four holds halves it), and one
    /// that stopped gives everything back after five seconds without a packet, and starts again small.
    @Test func theRetransmissionBufferShrinksWhenTheRateFallsAndEmptiesWhenTheStreamStops() {
        var f = SteadyFeed(size: 1100)
        f.send(rate: 250, seconds: 5)
        let top = f.buffer.bytesHeld
        f.send(rate: 10, seconds: 600)
        // 11 kB/s: the ring halves while a wrap takes over four holds.
        #expect(f.buffer.ringBytes < 4 * 11_000 * 2 && f.buffer.bytesHeld < top / 4, "\(f.buffer.bytesHeld) of \(top)")
        #expect(f.buffer.contains(f.sequence &- 1) && f.buffer.contains(f.sequence &- 10))
        f.buffer.trim(now: f.now + 4)
        #expect(f.buffer.bytesHeld > 0, "four seconds idle: kept")
        f.buffer.trim(now: f.now + 6)
        #expect(f.buffer.bytesHeld == 0 && !f.buffer.contains(f.sequence &- 1), "six seconds idle: given back")
        f.now += 6
        f.send(rate: 10, seconds: 1)
        #expect(f.buffer.bytesHeld == RetransmissionBuffer.minimumBytes + RetransmissionBuffer.minimumEntries * 24)
        #expect(f.buffer.contains(f.sequence &- 1))
    }

    /// A viewer's round trip and pacer queue (seconds) -> how long what it was sent is held: four round
    /// trips and 150 ms, plus the queue, within 0.3 and 2 s; 0.5 s until a round trip is measured.
    @Test(
        arguments: [
            (rtt: nil, queued: 0, hold: 0.5),
            (rtt: 0.001, queued: 0, hold: 0.3),
            (rtt: 0.05, queued: 0, hold: 0.35),
            (rtt: 0.1, queued: 0.2, hold: 0.75),
            (rtt: 0.45, queued: 0, hold: 1.95),
            (rtt: 3, queued: 0, hold: 2),
            (rtt: -1, queued: -1, hold: 0.3),
            (rtt: .nan, queued: 0, hold: 0.5),
            (rtt: 0.1, queued: .infinity, hold: 0.5),
        ] as [(Double?, Double, Double)])
    func theHoldFollowsTheViewersRoundTrip(rtt: Double?, queued: Double, hold: Double) {
        #expect(abs(RetransmissionBuffer.hold(rtt: rtt, queued: queued) - hold) < 1e-9)
    }

    /// Viewers nearer than they were (the hold falls from 2 s to 0.3 s): the ring is refit to a fifth
    /// more than the hold over the next wraps (a quarter at a time), and grows again when the hold
    /// rises; the last hold is always there.
    @Test func theRetransmissionBufferFollowsItsHold() {
        var f = SteadyFeed(size: 1100)
        f.buffer.hold = 2
        // 198 kB/s.
        f.send(rate: 180, seconds: 10)
        let far = f.buffer.ringBytes
        #expect(far >= 2 * 198_000 && far <= 3 * 198_000 + 2048, "\(far) B for 2 s")
        f.buffer.hold = 0.3
        f.send(rate: 180, seconds: 10)
        let near = f.buffer.ringBytes
        #expect(near >= 198_000 * 3 / 10 && near <= 198_000 * 3 / 10 * 3 / 2 + 2048, "\(near) B for 0.3 s")
        for back in 1...Int(0.3 * 180) { #expect(f.buffer.contains(f.sequence &- UInt16(back))) }
        f.buffer.hold = 1
        f.send(rate: 180, seconds: 10)
        #expect(f.buffer.ringBytes >= 198_000 && f.buffer.ringBytes <= 3 * 198_000, "\(f.buffer.ringBytes) B for 1 s")
        for back in 1...180 { #expect(f.buffer.contains(f.sequence &- UInt16(back))) }
    }

    /// A viewer's first receiver report (the hold falls from the 0.5 s assumed to 0.3 s): the ring that
    /// grew for 0.5 s is refit to 0.3 s at a later wrap, and still holds the last 0.3 s. The rates: a
    /// camera of 30 frames of 4 packets a second, twice that, and a 2.2 Mbit/s layer.
    @Test(arguments: [(rate: 120, size: 1130), (rate: 240, size: 1130), (rate: 250, size: 1100)])
    func theRingIsRefitOnceTheRoundTripIsMeasured(rate: Int, size: Int) {
        var f = SteadyFeed(size: size)
        f.send(rate: rate, seconds: 5)
        let assumed = f.buffer.ringBytes
        let bytesPerSecond = Double(rate * size)
        #expect(Double(assumed) >= 0.5 * bytesPerSecond, "\(assumed) B for 0.5 s")
        f.buffer.hold = 0.3
        f.send(rate: rate, seconds: 5)
        let ring = f.buffer.ringBytes
        let need = 0.3 * bytesPerSecond
        #expect(Double(ring) >= need && Double(ring) <= 1.5 * need + 2048, "\(ring) B for 0.3 s")
        #expect(ring < assumed)
        for back in 1...Int(0.3 * Double(rate)) { #expect(f.buffer.contains(f.sequence &- UInt16(back))) }
        print("retransmission ring at \(rate) packets/s of \(size) B, KiB:", assumed / 1024, "then", ring / 1024)
    }

    /// At a steady hold, the rate's swings (key frames) and the round trip's jitter (a hold a few
    /// milliseconds up and down) grow the ring to the highest rate and never refit it back and forth.
    @Test func theRateSwingsAndTheHoldsJitterDoNotRefitTheRing() {
        var f = SteadyFeed(size: 1100)
        var sizes: [Int] = []
        for half in 0..<40 {
            // Half a second at 120 packets/s, then half a second at 240; the hold 0.32 s while the ring
            // grows, then 0.30 s in every slower half.
            let rate = half % 2 == 0 ? 120 : 240
            f.buffer.hold = half >= 8 && half % 2 == 0 ? 0.3 : 0.32
            f.send(rate: rate, seconds: 0.5)
            if half >= 4 { sizes.append(f.buffer.ringBytes) }
        }
        #expect(sizes == sizes.sorted(), "the ring shrank and grew again: \(sizes.map { $0 / 1024 }) KiB")
        #expect(Double(sizes.last ?? 0) >= 0.32 * 240 * 1100)
    }

    /// A burst stored at one instant (a batch read at once, a cache replay) gives no rate: the ring
    /// grows by half at each wrap, to what the burst needs, not to the 2 MiB cap.
    @Test func aBurstAtOneInstantGrowsTheRingByHalves() {
        var b = RetransmissionBuffer()
        let packet = [UInt8](repeating: 3, count: 1100)
        for s: UInt16 in 0..<100 { packet.withUnsafeBytes { b.store($0, sequence: s, now: 1) } }
        #expect(b.ringBytes >= 100 * 1100 / 2 && b.ringBytes <= 2 * 100 * 1100, "\(b.ringBytes) B for 110 kB")
        #expect(b.contains(99) && b.contains(60))
    }

    @Test func theNackListAsksAgainAfterTheIntervalAndGivesUp() {
        var n = NackList()
        n.missed(from: 10, to: 12, now: 0)
        #expect(n.due(now: 0, interval: 0.02) == [10, 11, 12])
        #expect(n.due(now: 0.01, interval: 0.02) == [])
        n.arrived(11)
        #expect(n.due(now: 0.03, interval: 0.02) == [10, 12])
        #expect(n.awaits(10) && !n.awaits(11))
        #expect(n.due(now: 1.5, interval: 0.02) == [], "older than a second: given up")
        #expect(n.awaits(10) && n.awaits(12), "a repair of the last request may still come")
        #expect(n.due(now: 2.1, interval: 0.02) == [])
        #expect(!n.awaits(10) && !n.awaits(12), "past keepAge: forgotten")
        n.missed(from: 65535, to: 1, now: 3)
        var asked = 0
        var t = 3.0
        while !n.due(now: t, interval: 0.02).isEmpty {
            asked += 1
            t += 0.05
        }
        #expect(asked == NackList.maxTries)
        #expect(n.awaits(0), "asked for the last time, still awaited")
    }

    @Test func receptionStatisticsFindGapsAcrossTheWrap() {
        var s = ReceiveStatistics()
        #expect(s.update(sequence: 65533, timestamp: 0, clockRate: 90000, now: 0) == nil)
        #expect(s.update(sequence: 65534, timestamp: 3000, clockRate: 90000, now: 0.033) == nil)
        let gap = s.update(sequence: 2, timestamp: 6000, clockRate: 90000, now: 0.066)
        #expect(gap?.0 == 65535 && gap?.1 == 1)
        #expect(s.extendedMax == 0x1_0002)
        // A late packet fills the gap without moving the maximum.
        #expect(s.update(sequence: 0, timestamp: 6000, clockRate: 90000, now: 0.07) == nil)
        // Expected 65533 through 65538 (2 after the wrap): six; received four; 65535 and 1 are lost.
        let r = s.report(ssrc: 1, now: 1)
        #expect(r.lost == 2)
        #expect(r.fraction == UInt8((2 << 8) / 6))
    }

    // MARK: - Consumer

    /// A consumer with the producer and transports it refers to (unowned: the caller keeps them).
    static func consumer(kind: MediaTrackKind) -> (Consumer, Producer, [Transport], Router) {
        let ice = ICELiteAgent(
            localAddress: STUNTransportAddress(address: .v4(0x7F00_0001), port: 1),
            localCredentials: ICECredentials(ufrag: "abcd", password: "0123456789012345678901"),
            now: ContinuousClock.now)
        let router = Router(id: "r")
        let pubT = Transport(
            spec: TransportSpec(id: "p", router: "r", label: "p", localUfrag: "abcd", localPassword: "x", remote: nil),
            router: router, ice: ice,
            rtcpSSRC: 1)
        let subT = Transport(
            spec: TransportSpec(id: "s", router: "r", label: "s", localUfrag: "efgh", localPassword: "x", remote: nil),
            router: router, ice: ice,
            rtcpSSRC: 2)
        let producer = Producer(
            spec: ProducerSpec(
                id: "tr", transport: "p", mid: "0", source: "camera", kind: kind,
                videoCodec: kind == .video ? "VP8" : nil,
                clockRate: 90000, payloadType: 96, rtxPayloadType: 97, ssrc: 1, rtxSSRC: 2, audioLevelID: nil,
                absSendTimeID: nil, paused: false),
            transport: pubT)
        var random = MediaRandom(seed: 1)
        let c = Consumer(
            spec: ConsumerSpec(
                id: "c", producer: "tr", transport: "s", ssrc: 10, rtxSSRC: 11, payloadType: 100, rtxPayloadType: 101,
                nack: true, audioLevelID: nil, absSendTimeID: nil),
            producer: producer, transport: subT, random: &random)
        return (c, producer, [pubT, subT], router)
    }

    @Test func aVideoConsumerStartsOnAKeyFrameAndMapsNacksBack() throws {
        let (c, producer, transports, router) = Self.consumer(kind: .video)
        defer { withExtendedLifetime((producer, transports, router)) {} }
        #expect(c.admit(sequence: 100, timestamp: 0, keyFrame: false, now: 0).output == nil)
        let first = try #require(c.admit(sequence: 101, timestamp: 3000, keyFrame: true, now: 0.03).output)
        // Older than the key frame: part of a frame the subscriber never started.
        #expect(c.admit(sequence: 100, timestamp: 0, keyFrame: false, now: 0.04).output == nil)
        let second = try #require(c.admit(sequence: 102, timestamp: 3000, keyFrame: false, now: 0.05).output)
        #expect(second.0 == first.0 &+ 1)
        #expect(second.1 == first.1)
        #expect(c.input(for: second.0)?.0 == 102)
        #expect(c.input(for: second.0 &+ 1) == nil)
        // Paused and resumed: no gap in the output, and it waits for the next key frame again.
        c.restart()
        #expect(c.admit(sequence: 500, timestamp: 90000, keyFrame: false, now: 1).output == nil)
        let resumed = try #require(c.admit(sequence: 501, timestamp: 93000, keyFrame: true, now: 1.03).output)
        #expect(resumed.0 == second.0 &+ 1)
        #expect(Int32(bitPattern: resumed.1 &- second.1) > 0, "the timeline moves forward")
    }

    @Test func aContinuousConsumerGoesOnWhereTheSSRCsLastOneStopped() throws {
        let (old, producer, transports, router) = Self.consumer(kind: .video)
        let (next, p2, t2, r2) = Self.consumer(kind: .video)
        defer { withExtendedLifetime((producer, transports, router, p2, t2, r2)) {} }
        _ = old.admit(sequence: 40, timestamp: 9000, keyFrame: true, now: 0)
        let last = try #require(old.admit(sequence: 41, timestamp: 12000, keyFrame: false, now: 0.03).output)
        next.continueOutput(old.continuation)
        // Another publisher's numbers, far from the first one's: the output runs on without a gap, and
        // its timeline moves on by the time between the two.
        #expect(next.admit(sequence: 30000, timestamp: 7_000_000, keyFrame: false, now: 1).output == nil)
        let first = try #require(next.admit(sequence: 30001, timestamp: 7_003_000, keyFrame: true, now: 1.03).output)
        #expect(first.0 == last.0 &+ 1)
        #expect(Int32(bitPattern: first.1 &- last.1) > 0, "the timeline moves on, never back")
        #expect(next.rtxSequence == old.rtxSequence)
    }

    @Test func anAudioConsumerStartsAtOnceAndResyncsAfterAPause() throws {
        let (c, producer, transports, router) = Self.consumer(kind: .audio)
        defer { withExtendedLifetime((producer, transports, router)) {} }
        let a = try #require(c.admit(sequence: 7, timestamp: 960, keyFrame: false, now: 0).output)
        let b = try #require(c.admit(sequence: 8, timestamp: 1920, keyFrame: false, now: 0.02).output)
        #expect(b.0 == a.0 &+ 1)
        c.restart()
        let d = try #require(c.admit(sequence: 900, timestamp: 500_000, keyFrame: false, now: 5).output)
        #expect(d.0 == b.0 &+ 1)
    }

    /// An audio consumer syncs on its first packet wherever the publisher's sequence numbers stand, and
    /// any consumer keeps forwarding past half the sequence range: before, an audio consumer in the
    /// upper half was held back as "older than its start" (sequence 0), and every consumer stopped
    /// 32768 packets after its start (about two minutes of camera), until the numbers came round.
    @Test(
        arguments: [
            (MediaTrackKind.audio, 0), (.audio, 7), (.audio, 32767), (.audio, 32768), (.audio, 40000),
            (.audio, 65535), (.video, 7), (.video, 50000),
        ] as [(MediaTrackKind, UInt16)])
    func aConsumerStartsWhereverTheSequenceStandsAndRunsPastHalfTheRange(_ kind: MediaTrackKind, _ first: UInt16)
        throws
    {
        let (c, producer, transports, router) = Self.consumer(kind: kind)
        defer { withExtendedLifetime((producer, transports, router)) {} }
        var last = try #require(c.admit(sequence: first, timestamp: 0, keyFrame: true, now: 0).output)
        for i in 1...40_000 {
            let s = first &+ UInt16(truncatingIfNeeded: i)
            let out = try #require(c.admit(sequence: s, timestamp: UInt32(i) * 960, keyFrame: false, now: 0).output)
            #expect(out.0 == last.0 &+ 1)
            last = out
        }
    }

    // MARK: - Transport-wide feedback

    @Test func transportWideFeedbackReportsArrivalsAndLosses() throws {
        var r = TransportWideRecorder()
        // 65534, 65535, (0 lost), 1 with 1 ms, 2 ms and 100 ms spacing; 3 arrives long after.
        r.record(65534, at: 1_000_000)
        r.record(65535, at: 1_001_000)
        r.record(1, at: 1_003_000)
        r.record(2, at: 1_103_000)
        let first = r.feedback(senderSSRC: 1, mediaSSRC: 2)
        let fb = try #require(first)
        #expect(fb.baseSequenceNumber == 65534)
        #expect(
            fb.statuses == [
                .receivedSmallDelta, .receivedSmallDelta, .notReceived, .receivedSmallDelta, .receivedLargeDelta,
            ])
        // The reference is 1 s / 64 ms = 15 units (960 ms); the first delta counts from there.
        #expect(fb.referenceTime == 15)
        #expect(fb.receiveDeltas == [160, 4, 8, 400])
        // It survives the wire, and nothing is reported twice.
        let parsed = try RTCPCompound.parse(try RTCPCompound.serialize([.transportWideFeedback(fb)]))
        #expect(parsed == [.transportWideFeedback(fb)])
        #expect(r.feedback(senderSSRC: 1, mediaSSRC: 2) == nil)
        r.record(2, at: 1_200_000)
        #expect(r.feedback(senderSSRC: 1, mediaSSRC: 2) == nil, "already reported")
        r.record(3, at: 1_200_000)
        let second = r.feedback(senderSSRC: 1, mediaSSRC: 2)
        let next = try #require(second)
        #expect(next.baseSequenceNumber == 3 && next.feedbackPacketCount == 1)
    }
}

/// Packets of one size stored into a retransmission buffer at a steady rate, on a clock of their own.
private struct SteadyFeed {
    var buffer = RetransmissionBuffer()
    var sequence: UInt16 = 0
    var now = 0.0
    let packet: [UInt8]

    init(size: Int) { packet = [UInt8](repeating: 1, count: size) }

    /// `rate` packets a second for `seconds`.
    mutating func send(rate: Int, seconds: Double) {
        for _ in 0..<Int(seconds * Double(rate)) {
            packet.withUnsafeBytes { buffer.store($0, sequence: sequence, now: now) }
            sequence &+= 1
            now += 1 / Double(rate)
        }
    }
}
