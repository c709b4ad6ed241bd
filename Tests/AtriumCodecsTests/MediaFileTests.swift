import Foundation
import Testing

@testable import AtriumCodecs

/// IVF and Y4M: what is written reads back the same (frames, sizes, rate), and a file that is not
/// one is an error naming it.
@Suite struct MediaFileTests {
    static func path(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("atrium-\(UUID().uuidString)-\(name)").path
    }

    @Test func ivfFramesReadBackAndDecode() throws {
        let p = Self.path("a.ivf")
        defer { try? FileManager.default.removeItem(atPath: p) }
        let enc = try VP8Encoder(width: 320, height: 180, bitrate: 500)
        let w = try IVFWriter(path: p, width: 320, height: 180, timeBase: 15)
        var written: [[UInt8]] = []
        for n in 0..<6 {
            let f = I420Frame(width: 320, height: 180, y: UInt8(40 + n * 30), u: 128, v: 128)
            guard let (bytes, _) = try enc.encode(f, keyFrame: n == 0) else { continue }
            try w.append(bytes, timestamp: UInt64(n))
            written.append(bytes)
        }
        let r = try IVFReader(path: p)
        #expect(r.width == 320 && r.height == 180 && r.framesPerSecond == 15 && r.count == written.count)
        #expect((0..<r.count).map(r.frame) == written)
        #expect(r.frame(r.count) == written[0], "frames loop")
        let dec = try VP8Decoder()
        let last = try (0..<r.count).compactMap { try dec.decode(r.frame($0)) }.last
        #expect(last.map { Int($0.y[180 * 160]) }.map { abs($0 - 190) < 12 } == true, "the last picture's brightness")
    }

    @Test func y4mPicturesReadBack() throws {
        let p = Self.path("a.y4m")
        defer { try? FileManager.default.removeItem(atPath: p) }
        let w = try Y4MWriter(path: p, width: 64, height: 32, framesPerSecond: 10)
        var pictures: [I420Frame] = []
        for n in 0..<3 {
            var f = I420Frame(width: 64, height: 32, y: UInt8(n * 50), u: UInt8(100 + n), v: UInt8(150 - n))
            f.y[5] = 255
            try w.append(f)
            pictures.append(f)
        }
        #expect(throws: MediaFileError.self) { try w.append(I420Frame(width: 32, height: 32, y: 0, u: 0, v: 0)) }
        let r = try Y4MReader(path: p)
        #expect(r.width == 64 && r.height == 32 && r.framesPerSecond == 10 && r.count == 3)
        #expect((0..<3).map(r.picture) == pictures)
        #expect(r.picture(4) == pictures[1], "pictures loop")
    }

    @Test func aFileThatIsNotOneIsRefused() throws {
        let p = Self.path("junk")
        defer { try? FileManager.default.removeItem(atPath: p) }
        try Data("YUV4MPEG2 W0 H-3\nFRAME\n".utf8).write(to: URL(fileURLWithPath: p))
        #expect(throws: MediaFileError.self) { try Y4MReader(path: p) }
        #expect(throws: MediaFileError.self) { try IVFReader(path: p) }
        #expect(throws: MediaFileError.self) { try IVFReader(path: "/nonexistent/file.ivf") }
    }

    @Test func anRTPTimeBaseGivesTheRateFromTheTimestamps() throws {
        let p = Self.path("rtp.ivf")
        defer { try? FileManager.default.removeItem(atPath: p) }
        let w = try IVFWriter(path: p, width: 64, height: 64)
        for n in 0..<20 { try w.append([0x10, 1, 2, UInt8(n)], timestamp: UInt64(n) * 6000) }
        #expect(try IVFReader(path: p).framesPerSecond == 15, "6000 ticks of 90 kHz a frame")
    }

    @Test func aY4MOfWideSamplesIsRefused() throws {
        let p = Self.path("wide.y4m")
        defer { try? FileManager.default.removeItem(atPath: p) }
        try Data(("YUV4MPEG2 W64 H32 F10:1 C420p10\nFRAME\n" + String(repeating: "x", count: 6144)).utf8)
            .write(to: URL(fileURLWithPath: p))
        #expect(throws: MediaFileError.self) { try Y4MReader(path: p) }
    }
}
