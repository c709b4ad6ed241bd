import AtriumTestSupport
import Testing

@testable import AtriumForwarding

@Suite struct SeqManagerTests {
    enum Step {
        case map(UInt16, UInt16?)
        case drop(UInt16)
        case sync(UInt16)
    }

    static func run(_ name: String, _ initial: UInt16, _ steps: [Step]) {
        var m = SeqManager(initialOutput: initial)
        for (i, step) in steps.enumerated() {
            switch step {
            case .map(let input, let expected): #expect(m.map(input) == expected, "\(name), step \(i): map \(input)")
            case .drop(let input): m.drop(input)
            case .sync(let input): m.sync(input)
            }
        }
    }

    /// (name, initial output, steps) rows: every rule of the rewriting as a table.
    @Test func table() {
        let rows: [(String, UInt16, [Step])] = [
            ("starts at the initial output", 1000, [.map(500, 1000), .map(501, 1001), .map(502, 1002)]),
            ("gap-free across drops", 1000, [.map(10, 1000), .drop(11), .drop(12), .map(13, 1001), .map(14, 1002)]),
            ("dropped retransmission is refused", 0, [.map(10, 0), .drop(11), .map(12, 1), .map(11, nil)]),
            (
                "late packet before a drop keeps its number", 0,
                [.map(10, 0), .map(12, 2), .drop(13), .map(11, 1), .map(14, 3)]
            ),
            ("input wraps around", 7, [.map(65534, 7), .map(65535, 8), .map(0, 9), .drop(1), .map(2, 10)]),
            ("output wraps around", 65535, [.map(100, 65535), .map(101, 0), .map(102, 1)]),
            ("switching source continues", 0, [.map(100, 0), .map(101, 1), .sync(9000), .map(9000, 2), .map(9001, 3)]),
            ("switch after drops", 50, [.map(1, 50), .drop(2), .map(3, 51), .sync(40000), .map(40000, 52)]),
            ("duplicate maps to the same number", 0, [.map(5, 0), .map(6, 1), .map(6, 1)]),
            ("too old is refused", 0, [.map(0, 0), .map(0x2000, 0x2000), .map(1, nil)]),
            ("first packet dropped", 20, [.drop(300), .map(301, 20), .map(302, 21)]),
        ]
        for (name, initial, steps) in rows {
            Self.run(name, initial, steps)
        }
    }

    /// The work per packet, counted in dropped entries looked at, over how many are remembered: none
    /// for a packet newer than every input (each forwarded packet), a binary search's for an older one
    /// (a retransmission), whatever the count up to the window's 4,095.
    @Test(arguments: [0, 1, 16, 256, 4095])
    func theWorkPerPacketDoesNotGrowWithTheDroppedEntries(_ n: Int) {
        var m = SeqManager(initialOutput: 0)
        #expect(m.map(0) == 0)
        for input in 1...max(n, 1) where input <= n { m.drop(UInt16(input)) }
        let next = UInt16(n + 1)
        #expect(m.map(next) == 1)
        #expect(m.probes == 0, "a forwarded packet: \(m.probes) entries looked at")
        #expect(m.map(next) == 1, "a retransmission keeps its number")
        var log2 = 0
        while (1 << log2) < n + 1 { log2 += 1 }
        #expect(m.probes <= log2 + 1, "a retransmission among \(n) dropped: \(m.probes) entries looked at")
        if n > 0 {
            #expect(m.map(UInt16(n)) == nil, "a dropped input stays refused")
            #expect(m.probes <= log2 + 1)
        }
    }

    @Test func dropsFoldIntoTheOffsetAfterTheWindow() {
        var m = SeqManager(initialOutput: 0)
        #expect(m.map(0) == 0)
        m.drop(1)
        var expected: UInt16 = 1
        for input in stride(from: 2, to: Int(SeqManager.window) * 3, by: 1) {
            #expect(m.map(UInt16(truncatingIfNeeded: input)) == expected)
            expected &+= 1
        }
    }
}

@Suite struct TimestampMapperTests {
    @Test func continuesAcrossASwitch() {
        var t = TimestampMapper(clockRate: 90_000)
        #expect(t.map(1_000, now: 0) == 1_000)
        #expect(t.map(4_000, now: 1.0 / 30) == 4_000)
        // Another source with an unrelated timeline, 100 ms later.
        t.sync(777_777, now: 1.0 / 30 + 0.1)
        let next = t.map(777_777, now: 1.0 / 30 + 0.1)
        #expect(next == 4_000 &+ 9_000)
        #expect(t.map(777_777 &+ 3_000, now: 1.0 / 30 + 0.1 + 1.0 / 30) == next &+ 3_000)
    }

    @Test func wrapsAround() {
        var t = TimestampMapper(clockRate: 48_000)
        #expect(t.map(UInt32.max - 10, now: 0) == UInt32.max - 10)
        #expect(t.map(5, now: 0.01) == 5)
        t.sync(123, now: 0.02)
        #expect(t.map(123, now: 0.02) == 5 &+ 480)
    }
}

@Suite struct KeyFrameTests {
    /// (codec, payload, starts a key frame)
    @Test func table() {
        let rows: [(VideoCodec, [UInt8], Bool)] = [
            // VP8: S=1 PID=0, no extension, frame header P bit 0 -> key frame.
            (.vp8, [0x10, 0x00, 0x00], true),
            (.vp8, [0x10, 0x01, 0x00], false),  // inter frame
            (.vp8, [0x00, 0x00], false),  // not a partition start
            (.vp8, [0x11, 0x00], false),  // PID 1
            // X=1, I=1 with a 15-bit PictureID (M=1), then the frame header.
            (.vp8, [0x90, 0x80, 0x81, 0x23, 0x9c], true),
            // X=1, I=1 (7-bit), L=1, T=1: three more bytes before the header.
            (.vp8, [0x90, 0xE0, 0x05, 0x07, 0x20, 0x01], false),
            (.vp8, [0x90, 0xE0, 0x05, 0x07, 0x20, 0x00], true),
            (.vp8, [0x90, 0x80], false),  // truncated
            (.vp8, [], false),
            // VP9: P=0, B=1 -> key; P=1 -> inter; B=0 -> not a frame start.
            (.vp9, [0x08, 0x00], true),
            (.vp9, [0x48, 0x00], false),
            (.vp9, [0x00, 0x00], false),
            // H264: IDR, SPS, a non-IDR slice, STAP-A with SPS, FU-A start of IDR, FU-A middle.
            (.h264, [0x65, 0x88], true),
            (.h264, [0x67, 0x42], true),
            (.h264, [0x41, 0x9a], false),
            (.h264, [0x78, 0x00, 0x02, 0x67, 0x42, 0x00, 0x02, 0x68, 0xce], true),
            (.h264, [0x78, 0x00, 0x02, 0x41, 0x9a], false),
            (.h264, [0x78, 0x00, 0x00], false),  // zero-size NAL
            (.h264, [0x78, 0xff, 0xff, 0x67], true),  // size past the end: the NAL header is still read
            (.h264, [0x7c, 0x85, 0x88], true),
            (.h264, [0x7c, 0x05, 0x88], false),
            (.h264, [0x7c], false),
            // AV1: N=1 and Z=0.
            (.av1, [0x18, 0x00], true),
            (.av1, [0x10, 0x00], false),
            (.av1, [0x88, 0x00], false),
        ]
        for (i, (codec, payload, expected)) in rows.enumerated() {
            #expect(KeyFrame.starts(payload, codec: codec) == expected, "row \(i): \(codec)")
        }
    }

    @Test func randomPayloadsNeverTrap() {
        var rng = SeededGenerator(seed: 7)
        for bytes in rng.byteStrings(count: 10_000, maxLength: 40) {
            for codec in VideoCodec.allCases { _ = KeyFrame.starts(bytes, codec: codec) }
        }
    }
}
