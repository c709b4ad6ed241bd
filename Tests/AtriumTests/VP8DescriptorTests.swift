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
