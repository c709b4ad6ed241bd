import Testing

@testable import AtriumForwarding

/// RFC 7741 section 4.2 payload descriptors as tables, and the rewrite that keeps picture IDs and
/// TL0PICIDX continuous across a switch between simulcast streams.
@Suite struct VP8DescriptorTests {
    @Test(
        arguments: [
            // bytes, picture ID, long, TL0, TID, Y, length, starts a frame
            ([0x10, 0xAA], nil, false, nil, nil, false, 1, true),
            ([0x90, 0x80, 0x05, 0xAA], 5, false, nil, nil, false, 3, true),
            ([0x90, 0x80, 0x81, 0x02, 0xAA], 0x0102, true, nil, nil, false, 4, true),
            ([0x90, 0xE0, 0x81, 0x02, 0x07, 0x60, 0xAA], 0x0102, true, 7, 1, true, 6, true),
            ([0x80, 0x60, 0x09, 0x80, 0xAA], nil, false, 9, 2, false, 4, false),
            ([0x11, 0xAA], nil, false, nil, nil, false, 1, false),
            ([0x90, 0x10, 0x1F, 0xAA], nil, false, nil, nil, false, 3, true),  // K only: KEYIDX, no TID
        ] as [([UInt8], UInt16?, Bool, UInt8?, UInt8?, Bool, Int, Bool)])
    func parses(
        _ bytes: [UInt8], _ picture: UInt16?, _ long: Bool, _ tl0: UInt8?, _ tid: UInt8?, _ sync: Bool,
        _ length: Int, _ startsFrame: Bool
    ) throws {
        let d = try #require(VP8Descriptor(bytes))
        #expect(d.pictureID == picture && d.longPictureID == long && d.tl0PictureIndex == tl0)
        #expect(d.temporalLayer == tid && d.layerSync == sync && d.length == length && d.startsFrame == startsFrame)
    }

    @Test(arguments: [[], [0x80], [0x90, 0x80], [0x90, 0x80, 0x81], [0x90, 0x40], [0x90, 0x20]] as [[UInt8]])
    func truncatedIsNil(_ bytes: [UInt8]) {
        #expect(VP8Descriptor(bytes) == nil)
    }

    /// Sends `packets` (picture ID, TL0, TID) through the rewriter; a nil entry marks a switch.
    static func run(_ packets: [(UInt16, UInt8, UInt8)?], long: Bool = true) -> [(UInt16, UInt8)] {
        var r = VP8Rewriter()
        var out: [(UInt16, UInt8)] = []
        for entry in packets {
            guard let (pic, tl0, tid) = entry else {
                r.sync()
                continue
            }
            var bytes: [UInt8] =
                long
                ? [0x90, 0xE0, 0x80 | UInt8(pic >> 8), UInt8(pic & 0xFF), tl0, tid << 6, 0]
                : [0x90, 0xE0, UInt8(pic & 0x7F), tl0, tid << 6, 0]
            let d = VP8Descriptor(bytes)!
            bytes.withUnsafeMutableBytes { r.rewrite($0, d) }
            let back = VP8Descriptor(bytes)!
            out.append((back.pictureID!, back.tl0PictureIndex!))
        }
        return out
    }

    @Test func switchesKeepPictureIDsAndTL0Continuous() {
        // Stream A at picture 100, TL0 20; then stream B, counted on its own from 7000 / 3.
        let out = Self.run([(100, 20, 0), (101, 20, 1), (102, 21, 0), nil, (7000, 3, 0), (7001, 3, 1), (7002, 4, 0)])
        #expect(out.map(\.0) == [100, 101, 102, 103, 104, 105])
        #expect(out.map(\.1) == [20, 20, 21, 22, 22, 23])
    }

    @Test func wrapsWithinTheFieldsWidth() {
        let long = Self.run([(0x7FFE, 255, 0), (0x7FFF, 0, 0), nil, (5, 9, 0)])
        #expect(long.map(\.0) == [0x7FFE, 0x7FFF, 0])
        #expect(long.map(\.1) == [255, 0, 1])
        let short = Self.run([(126, 1, 0), (127, 2, 0), nil, (40, 9, 0)], long: false)
        #expect(short.map(\.0) == [126, 127, 0])
    }

    @Test func aSwitchOntoAHigherTemporalLayerReusesTheLastTL0() {
        let out = Self.run([(10, 5, 0), nil, (900, 70, 2), (901, 71, 0)])
        #expect(out.map(\.1) == [5, 5, 6])
    }
}

/// The rewriter against a small model of Chromium's VP8 reference finder (libwebrtc
/// rtp_vp8_ref_finder.cc): per unwrapped TL0PICIDX the last picture of each temporal layer, copied
/// forward by each base-layer frame; a frame of layer t > 0 refers to the last picture of layers
/// 0...t at its TL0PICIDX (a layer-sync one to the base layer only) and is dropped when one of them is
/// not older than itself; the decoder also never goes back to a picture ID at or before one decoded.
/// The input is Chromium's L1T3 simulcast as the SFU received it around a switch up: the low stream
/// with the publisher's RTX padding (old packets sent again) in between, then the high stream's key
/// frame and its L1T3 pattern.
@Suite struct VP8RewriterRefFinderTests {
    /// One packet: stream, picture ID, TL0PICIDX, TID, Y, key frame; `again` marks an old packet sent
    /// again (the viewer's packet buffer has it: it reaches the reference finder once).
    struct Packet {
        var stream: Int
        var picture: UInt16
        var tl0: UInt8
        var tid: UInt8
        var sync: Bool
        var key: Bool
        var again = false
    }

    /// Chromium's L1T3 pattern (TID 0 2 1 2, Y on the first TL1/TL2 after a key frame or every other
    /// cycle) from picture `p`, TL0PICIDX `t`, `n` frames, starting with a key frame when `key`.
    static func l1t3(stream: Int, picture p: UInt16, tl0 t: UInt8, frames n: Int, key: Bool) -> [Packet] {
        var out: [Packet] = []
        var tl0 = t
        for i in 0..<n {
            let tid: UInt8 = [0, 2, 1, 2][i % 4]
            if tid == 0 && i > 0 { tl0 &+= 1 }
            let sync = (i % 8 == 1 || i % 8 == 2)
            out.append(
                Packet(
                    stream: stream, picture: (p &+ UInt16(i)) & 0x7FFF, tl0: tl0, tid: tid,
                    sync: sync || (key && i == 0),
                    key: key && i == 0))
        }
        return out
    }

    /// The observed sequence: the low stream runs (its picture IDs and TL0PICIDX its own), the
    /// publisher's padding sends an old key frame and old deltas of it again, then the switch lands on
    /// the high stream's key frame.
    static var observed: [Packet] {
        var low = l1t3(stream: 0, picture: 25600, tl0: 140, frames: 160, key: true)
        // RTX padding: copies of packets 134 and 150 pictures back, right before the switch and in
        // between (Chromium resends its latest packets and, when idle, older ones).
        var again = low[20]
        again.again = true
        var again2 = low[3]
        again2.again = true
        low.insert(again2, at: 120)
        low.append(again)
        let high = l1t3(stream: 2, picture: 10968, tl0: 111, frames: 40, key: true)
        return low + high
    }

    /// Forwards `packets` through one consumer's rewriter (switching at the first packet of another
    /// stream) and the reference-finder model; returns the pictures the model refused.
    static func refused(_ packets: [Packet]) -> [UInt16] {
        var r = VP8Rewriter()
        var stream: Int?
        var layerInfo: [Int: [Int]] = [:]
        var tl0Unwrapped: Int?
        var pictureUnwrapped: Int?
        var lastDecoded: Int?
        var refused: [UInt16] = []
        func unwrap(_ v: Int, _ last: Int?, _ range: Int) -> Int {
            guard let last else { return v }
            var d = (v - last) % range
            if d < 0 { d += range }
            if d >= range / 2 { d -= range }
            return last + d
        }
        for pk in packets {
            if stream != pk.stream {
                stream = pk.stream
                r.sync()
            }
            var bytes: [UInt8] = [
                0x90, 0xE0, 0x80 | UInt8(pk.picture >> 8), UInt8(pk.picture & 0xFF), pk.tl0,
                pk.tid << 6 | (pk.sync ? 0x20 : 0), pk.key ? 0x00 : 0x01,
            ]
            let d = VP8Descriptor(bytes)!
            bytes.withUnsafeMutableBytes { r.rewrite($0, d) }
            if pk.again { continue }
            let out = VP8Descriptor(bytes)!
            let id = unwrap(Int(out.pictureID!), pictureUnwrapped, 1 << 15)
            pictureUnwrapped = id
            let tl0 = unwrap(Int(out.tl0PictureIndex!), tl0Unwrapped, 256)
            tl0Unwrapped = tl0
            let tid = Int(pk.tid)
            var ok = true
            if pk.key {
                layerInfo[tl0] = [id, -1, -1, -1]
            } else if tid == 0 {
                if let before = layerInfo[tl0 - 1], before[0] < id {
                    var info = before
                    info[0] = id
                    layerInfo[tl0] = info
                } else {
                    ok = false
                }
            } else if var info = layerInfo[tl0] {
                let refs = pk.sync ? [0] : Array(0...tid)
                ok = refs.allSatisfy { info[$0] != -1 && info[$0] < id } && (info[tid] == -1 || info[tid] < id)
                if ok {
                    info[tid] = id
                    layerInfo[tl0] = info
                }
            } else {
                ok = false
            }
            if let last = lastDecoded, id <= last { ok = false }
            if ok {
                lastDecoded = id
            } else {
                refused.append(out.pictureID!)
            }
        }
        return refused
    }

    @Test func aSwitchAfterOldPacketsSentAgainContinuesTheCount() {
        #expect(Self.refused(Self.observed).isEmpty)
    }

    @Test(arguments: [1, 2, 5, 20, 100])
    func oldPacketsNeverMoveTheCountBack(_ back: Int) {
        // Any old packet of the current stream just before a switch, whether a key frame or a delta.
        var low = Self.l1t3(stream: 0, picture: 32700, tl0: 250, frames: 120, key: true)
        var again = low[low.count - 1 - back]
        again.again = true
        low.append(again)
        let high = Self.l1t3(stream: 2, picture: 3, tl0: 7, frames: 24, key: true)
        #expect(Self.refused(low + high).isEmpty)
        // And a switch straight back down, onto the low stream's next key frame.
        let down = Self.l1t3(stream: 0, picture: 32700 &+ 200, tl0: 40, frames: 16, key: true)
        var highAgain = high[high.count - 1 - min(back, high.count - 1)]
        highAgain.again = true
        #expect(Self.refused(low + high + [highAgain] + down).isEmpty)
    }

    /// A viewer given fewer temporal layers: the dropped pictures' IDs are taken out, so the pictures
    /// it gets count on one by one (across the 15-bit wrap), TL0PICIDX as it was, and every one of
    /// them is decodable by the reference-finder model (each packet twice: a picture of two packets).
    @Test(arguments: [0, 1] as [UInt8])
    func droppedTemporalLayersLeaveNoGapInThePictureIDs(_ ceiling: UInt8) {
        var r = VP8Rewriter()
        let packets = Self.l1t3(stream: 0, picture: 32_760, tl0: 254, frames: 64, key: true)
        var out: [Packet] = []
        for pk in packets {
            for _ in 0..<2 {
                var bytes: [UInt8] = [
                    0x90, 0xE0, 0x80 | UInt8(pk.picture >> 8), UInt8(pk.picture & 0xFF), pk.tl0,
                    pk.tid << 6 | (pk.sync ? 0x20 : 0), pk.key ? 0x00 : 0x01,
                ]
                let d = VP8Descriptor(bytes)!
                guard pk.tid <= ceiling else {
                    r.drop(d)
                    continue
                }
                bytes.withUnsafeMutableBytes { r.rewrite($0, d) }
                let o = VP8Descriptor(bytes)!
                var forwarded = pk
                forwarded.picture = o.pictureID!
                #expect(o.tl0PictureIndex == pk.tl0)
                if out.last?.picture != forwarded.picture { out.append(forwarded) }
            }
        }
        #expect(out.count == (ceiling == 0 ? 16 : 32))
        for (a, b) in zip(out, out.dropFirst()) { #expect(b.picture == (a.picture &+ 1) & 0x7FFF) }
        // Forwarded pictures as the viewer sees them, checked again by the same model (it must refuse none).
        #expect(Self.refused(out).isEmpty)
    }

    @Test func theNewestCountWrapsInTheFieldsWidth() {
        var r = VP8Rewriter()
        for (pic, tl0) in [(0x7FFE, 254), (0x7FFF, 255), (0x0000, 0), (0x7FF0, 250), (0x0001, 1)] as [(UInt16, UInt8)] {
            var bytes: [UInt8] = [0x90, 0xE0, 0x80 | UInt8(pic >> 8), UInt8(pic & 0xFF), tl0, 0, 0]
            let d = VP8Descriptor(bytes)!
            bytes.withUnsafeMutableBytes { r.rewrite($0, d) }
        }
        #expect(r.lastPicture == 1 && r.lastTL0 == 1)
    }
}
