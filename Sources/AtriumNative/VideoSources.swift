public import AtriumCodecs
import AtriumSync

/// Where a native publisher's pictures come from.
public protocol VideoSource: Sendable {
    var width: Int { get }
    var height: Int { get }
    var framesPerSecond: Int { get }
    /// Picture `n` (from 0).
    func picture(_ n: Int) -> I420Frame
    /// Frame `n` already encoded (VP8), for a file of encoded frames; nil: `picture(n)` is encoded.
    func encoded(_ n: Int) -> [UInt8]?
}

extension VideoSource {
    public func encoded(_ n: Int) -> [UInt8]? { nil }
}

/// Pictures from a Y4M file (4:2:0), looping.
public struct Y4MSource: VideoSource {
    let reader: Y4MReader
    public let framesPerSecond: Int
    public var width: Int { reader.width }
    public var height: Int { reader.height }

    public init(path: String, framesPerSecond: Int? = nil) throws(MediaFileError) {
        reader = try Y4MReader(path: path)
        self.framesPerSecond = framesPerSecond ?? reader.framesPerSecond
    }

    public func picture(_ n: Int) -> I420Frame { reader.picture(n) }
}

/// Encoded VP8 frames from an IVF file, sent as they are, looping (the file should start with a key
/// frame; a PLI sends the file's last key frame again and goes on from there).
public struct IVFSource: VideoSource {
    let reader: IVFReader
    public let framesPerSecond: Int
    public var width: Int { reader.width }
    public var height: Int { reader.height }

    public init(path: String, framesPerSecond: Int? = nil) throws(MediaFileError) {
        reader = try IVFReader(path: path)
        self.framesPerSecond = framesPerSecond ?? reader.framesPerSecond
    }

    public func picture(_ n: Int) -> I420Frame { I420Frame(width: width, height: height, y: 16, u: 128, v: 128) }
    public func encoded(_ n: Int) -> [UInt8]? { reader.frame(n) }
}

/// The test pattern of the e2e clients' screen (media_peer.py): a blue screen with white stripes
/// (128-pixel period, 32 wide), 1280x720, with the frame's number stamped in its top row
/// (`FrameStamp`).
public struct StripesPattern: VideoSource {
    public let width = 1280
    public let height = 720
    public let framesPerSecond: Int
    let base: I420Frame

    public init(framesPerSecond: Int = 15) {
        self.framesPerSecond = framesPerSecond
        // BT.601 limited range: blue (41, 240, 110), white (235, 128, 128).
        var f = I420Frame(width: 1280, height: 720, y: 41, u: 240, v: 110)
        for row in 0..<720 {
            for col in 0..<1280 where col % 128 < 32 { f.y[row * 1280 + col] = 235 }
        }
        for row in 0..<360 {
            for col in 0..<640 where (col * 2) % 128 < 32 {
                f.u[row * 640 + col] = 128
                f.v[row * 640 + col] = 128
            }
        }
        base = f
    }

    public func picture(_ n: Int) -> I420Frame {
        var f = base
        FrameStamp.write(UInt32(truncatingIfNeeded: n), into: &f)
        return f
    }
}

/// A number in a picture that survives lossy coding: the top 16 rows, black, with 32 blocks of
/// 16x16 pixels left to right, white for a 1 bit (the most significant first), grey chroma. The e2e
/// clients stamp their capture clock the same way (media_peer.py), and read it back alike.
public enum FrameStamp {
    public static let bits = 32
    public static let block = 16

    public static func write(_ value: UInt32, into f: inout I420Frame) {
        guard f.width >= bits * block, f.height >= block, f.y.count >= f.width * block,
            f.u.count >= (f.width / 2) * (block / 2), f.v.count >= (f.width / 2) * (block / 2)
        else { return }
        for row in 0..<block {
            for col in 0..<f.width {
                let bit = col / block
                let one = bit < bits && (value >> UInt32(bits - 1 - bit)) & 1 == 1
                f.y[row * f.width + col] = one ? 235 : 16
            }
        }
        let cw = f.width / 2
        for row in 0..<(block / 2) {
            for col in 0..<cw {
                f.u[row * cw + col] = 128
                f.v[row * cw + col] = 128
            }
        }
    }

    /// The stamp of a decoded picture (each block read at its centre), nil when it is too small.
    public static func read(_ f: I420Frame) -> UInt32? {
        guard f.width >= bits * block, f.height >= block, f.y.count >= f.width * block else { return nil }
        var value: UInt32 = 0
        for bit in 0..<bits {
            let y = f.y[(block / 2) * f.width + bit * block + block / 2]
            value = value << 1 | (y >= 128 ? 1 : 0)
        }
        return value
    }
}

/// Pictures the app pushes (from a capture callback, a renderer, a broadcast extension's frames):
/// each frame sent is the latest pushed, black until the first.
public final class PushSource: VideoSource, Sendable {
    public let width: Int
    public let height: Int
    public let framesPerSecond: Int
    let latest: Monitor<I420Frame>

    public init(width: Int, height: Int, framesPerSecond: Int = 15) {
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
        latest = Monitor(I420Frame(width: width, height: height, y: 16, u: 128, v: 128))
    }

    /// Sets the picture to send next; one of another size (or with short planes) is refused (false).
    @discardableResult
    public func push(_ f: I420Frame) -> Bool {
        guard f.width == width, f.height == height, f.y.count == width * height,
            f.u.count == width * height / 4, f.v.count == width * height / 4
        else { return false }
        latest.withLock { $0 = f }
        return true
    }

    public func picture(_ n: Int) -> I420Frame { latest.withLock { $0 } }
}
