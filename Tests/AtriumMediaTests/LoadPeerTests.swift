import AtriumLoadPeer
import Testing

/// The load clients' own pieces (bench/viewers_sweep.py; the live check is
/// e2e/integration/test_native_viewers.py): the payload stamp, payload bounds and loss counting.
@Suite struct LoadPeerTests {
    @Test func stampRoundTripsAtThePayloadsEnd() {
        var packet = [UInt8](repeating: 0xAA, count: 12 + 40)
        packet[0] = 0x80
        let stamp = PayloadStamp(publisher: 7, source: 2, sequence: 0xFFFF_FFFE, sentNanoseconds: 0x0102_0304_0506_0708)
        stamp.write(into: &packet, at: packet.count - PayloadStamp.size)
        let bounds = RTPPayload.bounds(packet)
        #expect(bounds?.start == 12 && bounds?.end == packet.count)
        #expect(PayloadStamp(packet, payloadStart: 12, end: packet.count) == stamp)
        // Too short, or no magic: no stamp.
        #expect(PayloadStamp(packet, payloadStart: 40, end: packet.count) == nil)
        #expect(PayloadStamp(packet, payloadStart: 12, end: packet.count - 1) == nil)
    }

    @Test func stampAndBoundsReadInPlaceAgreeWithTheArrayReads() {
        var packet = [UInt8](repeating: 0x55, count: 12 + 8 + 60)
        packet[0] = 0x90
        packet[12...15] = [0xBE, 0xDE, 0, 1]
        let stamp = PayloadStamp(publisher: 0xA1B2_C3D4, source: 1, sequence: 77, sentNanoseconds: 1 << 40 | 5)
        stamp.write(into: &packet, at: packet.count - PayloadStamp.size)
        packet.withUnsafeBytes { raw in
            let bounds = RTPPayload.bounds(raw)
            #expect(bounds?.start == 20 && bounds?.end == packet.count)
            #expect(PayloadStamp(raw, payloadStart: 20, end: packet.count) == stamp)
            #expect(PayloadStamp(raw, payloadStart: 20, end: packet.count + 1) == nil)
            #expect(PayloadStamp(raw, payloadStart: -1, end: packet.count) == nil)
        }
    }

    /// A frame's first 63,000 bytes leave at once, as libwebrtc's pacer bursts them, the rest spread
    /// over `pacedShare` of the frame interval: at 10 fps and 60 packets of 1,100 bytes a frame, 57 at
    /// the frame's start, then one every 16.7 ms, the last at 50 ms; the next frame 100 ms after. A
    /// frame's last packet carries the marker, and the stamps number the packets without a gap.
    @Test func publisherBurstsAndPacesAFramesPackets() {
        var s = PublisherStream(
            source: 0, kind: .video, ssrc: 1, payloadType: 96, framesPerSecond: 10, packetsPerFrame: 60,
            packetSize: 1_100, midExtension: (id: 1, mid: "0"))
        let t0: UInt64 = 1_000_000_000
        var sent: [[UInt8]] = []
        func at(_ ms: Double) -> Int {
            let before = sent.count
            s.frames(now: t0 + UInt64(ms * 1e6), publisher: 9, packetScale: 1) { sent.append($0) }
            return sent.count - before
        }
        #expect(at(0) == 57)
        #expect(s.due == t0 + 16_666_666)
        #expect(at(16) == 0)
        #expect(at(16.7) == 1)
        #expect(at(50) == 2)
        #expect(at(99) == 0)
        #expect(s.due == t0 + 100_000_000)
        #expect(at(100) == 57)
        #expect(sent.indices.filter { sent[$0][1] & 0x80 != 0 } == [59])
        let sequences = sent.map { p in PayloadStamp(p, payloadStart: 0, end: p.count)?.sequence }
        #expect(sequences == (0..<117).map { UInt32($0) })
        #expect(s.sentPackets == 117 && s.keyFrames == 1)
    }

    /// A frame within the burst leaves whole when it is due.
    @Test func publisherSendsASmallFrameAtOnce() {
        var s = PublisherStream(
            source: 0, kind: .video, ssrc: 1, payloadType: 96, framesPerSecond: 30, packetsPerFrame: 4,
            packetSize: 1_100,
            midExtension: nil)
        var count = 0
        s.frames(now: 5_000_000, publisher: 9, packetScale: 1) { _ in count += 1 }
        #expect(count == 4)
        #expect(s.due == 5_000_000 + 33_333_333)
    }

    /// A simulcast layer's packets carry the mid and the rid (RFC 8852) in one one-byte header
    /// extension block (RFC 8285), padded to a word; the payload starts after it.
    @Test func simulcastLayerSendsMidAndRid() {
        var s = PublisherStream(
            source: 2, kind: .video, ssrc: 5, payloadType: 96, framesPerSecond: 30, packetsPerFrame: 1,
            packetSize: 300, midExtension: (id: 1, mid: "0"), ridExtension: (id: 2, rid: "f"))
        var sent: [[UInt8]] = []
        s.frames(now: 5_000_000, publisher: 9, packetScale: 1) { sent.append($0) }
        let p = sent.first ?? []
        #expect(p.count == 300 && p[0] == 0x90)
        #expect(Array(p[12..<20]) == [0xBE, 0xDE, 0, 1, 0x10, 0x30, 0x20, 0x66])
        #expect(RTPPayload.bounds(p)?.start == 20)
        #expect(PayloadStamp(p, payloadStart: 20, end: p.count)?.source == 2)
    }

    @Test func payloadBoundsSkipExtensionAndPadding() {
        // X=1, P=1: a one-word extension after the header, two bytes of padding at the end.
        var p: [UInt8] = [0xB0, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 9, 0xBE, 0xDE, 0, 1, 0x10, 0x30, 0, 0]
        p += [1, 2, 3, 0, 2]
        #expect(RTPPayload.bounds(p)?.start == 20)
        #expect(RTPPayload.bounds(p)?.end == 23)
        #expect(RTPPayload.bounds([0x80, 96]) == nil)
        #expect(RTPPayload.bounds([0x90] + [UInt8](repeating: 0, count: 13)) == nil)
    }

    @Test(
        arguments: [
            // received sequence numbers -> (packets, repeated, lost)
            ([0, 1, 2, 3], 4, 0, 0),
            ([0, 2, 3], 3, 0, 1),
            ([5, 5, 6, 4], 2, 2, 0),
            ([0xFFFF_FFFF, 0, 1], 3, 0, 0),
        ] as [([UInt32], Int, Int, Int)])
    func lossesByThePublishersSequence(sequences: [UInt32], packets: Int, repeated: Int, lost: Int) {
        var c = ReceiveCounters()
        for s in sequences {
            c.count(PayloadStamp(publisher: 1, source: 0, sequence: s, sentNanoseconds: 0), bytes: 10)
        }
        #expect(c.sources.first?.packets == packets)
        #expect(c.sources.first?.repeated == repeated)
        #expect(c.sources.first?.lost == lost)
    }

    /// A meeting's subscriber gets the same source of several publishers: each is its own stream.
    @Test func streamsByPublisherAndSource() {
        var c = ReceiveCounters()
        for s: UInt32 in [0, 1, 2] {
            for publisher: UInt32 in [1, 2] {
                c.count(PayloadStamp(publisher: publisher, source: 3, sequence: s, sentNanoseconds: 0), bytes: 10)
            }
        }
        c.count(PayloadStamp(publisher: 2, source: 4, sequence: 9, sentNanoseconds: 0), bytes: 10)
        #expect(c.sources.map(\.publisher) == [1, 2, 2])
        #expect(c.sources.map(\.packets) == [3, 3, 1])
        #expect(c.sources.map(\.lost) == [0, 0, 0])
    }

    @Test func latencyQuantiles() {
        var h = LatencyHistogram()
        #expect(h.quantile(0.5) == nil)
        // 5, 15, ..., 995 us: one sample in each of the first 100 buckets; a quantile is its bucket's upper edge.
        for k in 1...100 { h.record(nanoseconds: UInt64(10 * k - 5) * 1000) }
        #expect(h.quantile(0.5) == 500)
        #expect(h.quantile(0.99) == 990)
        h.reset()
        #expect(h.count == 0)
    }
}
