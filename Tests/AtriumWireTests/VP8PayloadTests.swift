import Testing

@testable import AtriumRTP

/// VP8 over RTP for a native client: a frame cut and put back together, packets out of order and lost,
/// a gap given up and the key frame it then needs.
@Suite struct VP8PayloadTests {
    static func frame(key: Bool, size: Int, fill: UInt8) -> [UInt8] {
        [key ? 0x10 : 0x11] + [UInt8](repeating: fill, count: size - 1)
    }

    /// A frame's packets as (sequence, marker, payload), from `sequence` on.
    static func packets(_ f: [UInt8], sequence: UInt16, picture: UInt16) -> [(UInt16, Bool, [UInt8])] {
        let p = VP8Payload.packetize(f, pictureID: picture, maxPayload: 100)
        return p.enumerated().map { (sequence &+ UInt16($0.offset), $0.offset == p.count - 1, $0.element) }
    }

    @Test func cutAndPutBackTogether() {
        let f = Self.frame(key: true, size: 950, fill: 7)
        let p = VP8Payload.packetize(f, pictureID: 300, maxPayload: 100)
        #expect(p.count == 10 && p.allSatisfy { $0.count <= 100 })
        #expect(VP8Payload.descriptor(p[0][...]).map { $0.length == 4 && $0.starts } == true)
        #expect(VP8Payload.descriptor(p[1][...]).map { $0.length == 4 && !$0.starts } == true)
        #expect(p[0][2] == 0x81 && p[0][3] == 0x2C, "picture ID 300 in 15 bits")
        var a = FrameAssembler()
        var out: [FrameAssembler.Frame] = []
        // Out of order, wrapping around 65535.
        for (s, m, payload) in Self.packets(f, sequence: 65530, picture: 300).reversed() {
            out += a.add(sequence: s, timestamp: 9000, marker: m, payload: payload)
        }
        #expect(out.count == 1)
        #expect(out.first?.bytes == f && out.first?.isKeyFrame == true && out.first?.firstSequence == 65530)
    }

    @Test func aLostPacketHoldsLaterFramesUntilItComesOrIsGivenUp() {
        var a = FrameAssembler()
        var seq: UInt16 = 100
        var out: [FrameAssembler.Frame] = []
        let key = Self.packets(Self.frame(key: true, size: 250, fill: 1), sequence: seq, picture: 1)
        for (s, m, p) in key { out += a.add(sequence: s, timestamp: 0, marker: m, payload: p) }
        seq &+= UInt16(key.count)
        #expect(out.count == 1)
        // A delta with a packet lost, then another delta: held; the loss is listed for a NACK.
        let d1 = Self.packets(Self.frame(key: false, size: 250, fill: 2), sequence: seq, picture: 2)
        for (s, m, p) in d1 where s != seq &+ 1 { out += a.add(sequence: s, timestamp: 3000, marker: m, payload: p) }
        seq &+= UInt16(d1.count)
        let d2 = Self.packets(Self.frame(key: false, size: 150, fill: 3), sequence: seq, picture: 3)
        for (s, m, p) in d2 { out += a.add(sequence: s, timestamp: 6000, marker: m, payload: p) }
        seq &+= UInt16(d2.count)
        #expect(out.count == 1)
        #expect(a.missing == [d1[1].0])
        // The retransmission arrives: both deltas go out, in order.
        out += a.add(sequence: d1[1].0, timestamp: 3000, marker: d1[1].1, payload: d1[1].2)
        #expect(out.map { $0.timestamp } == [0, 3000, 6000])
        // Another loss, given up: the next delta is dropped, the next key frame goes out.
        let d3 = Self.packets(Self.frame(key: false, size: 250, fill: 4), sequence: seq, picture: 4)
        for (s, m, p) in d3 where s != seq { out += a.add(sequence: s, timestamp: 9000, marker: m, payload: p) }
        seq &+= UInt16(d3.count)
        let d4 = Self.packets(Self.frame(key: false, size: 150, fill: 5), sequence: seq, picture: 5)
        for (s, m, p) in d4 { out += a.add(sequence: s, timestamp: 12000, marker: m, payload: p) }
        seq &+= UInt16(d4.count)
        #expect(a.giveUp().isEmpty)
        #expect(a.needsKeyFrame && a.framesDropped == 1)
        let k2 = Self.packets(Self.frame(key: true, size: 250, fill: 6), sequence: seq, picture: 6)
        for (s, m, p) in k2 { out += a.add(sequence: s, timestamp: 15000, marker: m, payload: p) }
        #expect(out.map { $0.timestamp } == [0, 3000, 6000, 15000])
        #expect(!a.needsKeyFrame)
    }

    @Test func truncatedDescriptorsAreRefused() {
        #expect(VP8Payload.descriptor([][...]) == nil)
        #expect(VP8Payload.descriptor([0x80][...]) == nil)
        #expect(VP8Payload.descriptor([0x80, 0x80][...]) == nil)
        #expect(VP8Payload.descriptor([0x80, 0x80, 0x81][...]) == nil)
        var a = FrameAssembler()
        #expect(a.add(sequence: 1, timestamp: 0, marker: true, payload: [0x90, 0x80]).isEmpty)
    }
}
