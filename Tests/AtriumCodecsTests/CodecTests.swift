import Testing

@testable import AtriumCodecs

#if canImport(Glibc)
    import Glibc
#endif

/// libvpx's VP8 and libopus round trips: what comes out of the decoder is what went into the
/// encoder (a picture's colours and its split, a tone's pitch); bad input is an error, not a crash.
@Suite struct CodecTests {
    /// A 320x180 picture: the left half dark, the right half bright; U and V a colour.
    static func picture(left: UInt8, right: UInt8) -> I420Frame {
        var f = I420Frame(width: 320, height: 180, y: 0, u: 90, v: 200)
        for row in 0..<180 {
            for col in 0..<320 { f.y[row * 320 + col] = col < 160 ? left : right }
        }
        return f
    }

    static func mean(_ b: ArraySlice<UInt8>) -> Double { Double(b.reduce(0) { $0 + Int($1) }) / Double(b.count) }

    @Test func vp8RoundTripKeepsThePicture() throws {
        let enc = try VP8Encoder(width: 320, height: 180, bitrate: 800)
        let dec = try VP8Decoder()
        var keys = 0
        var decoded: [I420Frame] = []
        for n in 0..<10 {
            let bright: UInt8 = n < 5 ? 220 : 120
            guard let (bytes, isKey) = try enc.encode(Self.picture(left: 30, right: bright), keyFrame: n == 7) else {
                continue
            }
            if isKey { keys += 1 }
            if n == 0 || n == 7 { #expect(isKey, "frame \(n) is a key frame") }
            if let f = try dec.decode(bytes) { decoded.append(f) }
        }
        #expect(keys >= 2)
        #expect(decoded.count >= 8)
        let last = try #require(decoded.last)
        #expect(last.width == 320 && last.height == 180)
        // Left dark, right as the last pictures sent, within the codec's loss.
        let row = 90 * 320
        #expect(abs(Self.mean(last.y[(row + 10)..<(row + 150)]) - 30) < 12)
        #expect(abs(Self.mean(last.y[(row + 170)..<(row + 310)]) - 120) < 12)
        #expect(abs(Self.mean(last.u[...]) - 90) < 8 && abs(Self.mean(last.v[...]) - 200) < 8)
    }

    @Test func vp8RefusesWhatItCannotTake() throws {
        #expect(throws: CodecError.self) { try VP8Encoder(width: 321, height: 180) }
        #expect(throws: CodecError.self) { try VP8Encoder(width: 0, height: 0) }
        let enc = try VP8Encoder(width: 64, height: 64)
        #expect(throws: CodecError.self) { try enc.encode(I420Frame(width: 32, height: 32, y: 0, u: 0, v: 0)) }
        let dec = try VP8Decoder()
        #expect(throws: CodecError.self) { try dec.decode([]) }
        #expect(throws: CodecError.self) { try dec.decode([0x00, 0x01, 0x02, 0x9d, 0x01, 0x2a, 0xff, 0xff]) }
    }

    @Test func opusRoundTripKeepsThePitch() throws {
        let enc = try OpusEncoder(channels: 1, bitrate: 32000)
        let dec = try OpusDecoder(channels: 1)
        var out: [Int16] = []
        for n in 0..<50 {
            let pcm = (0..<OpusEncoder.frameSize).map { i -> Int16 in
                let t = Double(n * OpusEncoder.frameSize + i) / Double(OpusEncoder.sampleRate)
                return Int16(8000 * sin(2 * Double.pi * 440 * t))
            }
            out += try dec.decode(try enc.encode(pcm))
        }
        #expect(out.count == 50 * OpusEncoder.frameSize)
        // The second half (past the codec's start-up): zero crossings give the pitch.
        let half = Array(out[(out.count / 2)...])
        let crossings = zip(half, half.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
        let hz = Double(crossings) / 2 / (Double(half.count) / Double(OpusEncoder.sampleRate))
        #expect(abs(hz - 440) < 10, "\(hz) Hz")
        #expect(throws: CodecError.self) { try enc.encode([0, 1, 2]) }
        #expect(throws: CodecError.self) { try dec.decode([]) }
    }
}
