#if canImport(Glibc)
    import Glibc
#endif

/// The two file formats a native client reads and writes: IVF (encoded VP8 frames, libvpx's own
/// container) and Y4M (raw I420 pictures, as ffmpeg and Chromium's fake camera read them). Writers
/// append as frames come; readers read frame `n` on demand (`pread`), so a long file is never held
/// in memory and one reader serves any thread.
public struct MediaFileError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
    init(_ message: String) { self.message = message }
}

/// A file descriptor closed with its owner.
final class FileDescriptor: @unchecked Sendable {
    let fd: Int32

    init(path: String, writing: Bool) throws(MediaFileError) {
        fd = writing ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw MediaFileError("\(path): \(String(cString: strerror(errno)))") }
    }

    deinit { close(fd) }

    func write(_ bytes: [UInt8], at offset: Int? = nil) throws(MediaFileError) {
        let n = bytes.withUnsafeBytes { b in
            offset.map { pwrite(fd, b.baseAddress, b.count, off_t($0)) } ?? Glibc.write(fd, b.baseAddress, b.count)
        }
        guard n == bytes.count else { throw MediaFileError("write: \(String(cString: strerror(errno)))") }
    }

    func read(_ count: Int, at offset: Int) -> [UInt8]? {
        guard count >= 0, offset >= 0 else { return nil }
        var out = [UInt8](repeating: 0, count: count)
        let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
        return n == count ? out : nil
    }

    var size: Int {
        var st = stat()
        return fstat(fd, &st) == 0 ? Int(st.st_size) : 0
    }
}

func littleEndian(_ v: UInt64, _ bytes: Int) -> [UInt8] { (0..<bytes).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

func readLittleEndian(_ b: ArraySlice<UInt8>) -> UInt64 {
    b.reversed().reduce(0) { $0 << 8 | UInt64($1) }
}

/// IVF: a 32-byte header ("DKIF", the codec, size, time base), then each frame behind a 12-byte
/// header (its size and timestamp).
public final class IVFWriter {
    let file: FileDescriptor
    public private(set) var frames = 0

    /// `timeBase`: ticks per second of the timestamps given (90000 for RTP video).
    public init(path: String, width: Int, height: Int, timeBase: Int = 90000) throws(MediaFileError) {
        file = try FileDescriptor(path: path, writing: true)
        let header =
            Array("DKIF".utf8) + littleEndian(0, 2) + littleEndian(32, 2) + Array("VP80".utf8)
            + littleEndian(UInt64(clamping: width), 2) + littleEndian(UInt64(clamping: height), 2)
            + littleEndian(UInt64(clamping: timeBase), 4) + littleEndian(1, 4) + littleEndian(0, 4) + littleEndian(0, 4)
        try file.write(header)
    }

    public func append(_ frame: [UInt8], timestamp: UInt64) throws(MediaFileError) {
        try file.write(littleEndian(UInt64(frame.count), 4) + littleEndian(timestamp, 8) + frame)
        frames += 1
        // The header's frame count, kept true as the file grows.
        try file.write(littleEndian(UInt64(frames), 4), at: 24)
    }
}

/// An IVF file's frames, indexed once when it is opened.
public final class IVFReader: Sendable {
    public let width: Int
    public let height: Int
    public let framesPerSecond: Int
    let file: FileDescriptor
    /// Each frame's offset and size.
    let index: [(offset: Int, size: Int)]

    public init(path: String) throws(MediaFileError) {
        file = try FileDescriptor(path: path, writing: false)
        guard let h = file.read(32, at: 0), h[0..<4] == Array("DKIF".utf8)[...] else {
            throw MediaFileError("\(path): not an IVF file")
        }
        guard h[8..<12] == Array("VP80".utf8)[...] else { throw MediaFileError("\(path): not VP8") }
        width = Int(readLittleEndian(h[12..<14]))
        height = Int(readLittleEndian(h[14..<16]))
        let rate = readLittleEndian(h[16..<20])
        let scale = readLittleEndian(h[20..<24])
        let headerSize = max(32, Int(readLittleEndian(h[6..<8])))
        var list: [(Int, Int)] = []
        var at = headerSize
        let end = file.size
        while at + 12 <= end, let fh = file.read(12, at: at) {
            let size = Int(readLittleEndian(fh[0..<4]))
            guard size > 0, at + 12 + size <= end else { break }
            list.append((at + 12, size))
            at += 12 + size
        }
        guard !list.isEmpty, width > 0, height > 0 else { throw MediaFileError("\(path): no frames") }
        index = list
        // The header's rate and scale are a frame rate (libvpx's writer) or a time base (90000/1 for
        // RTP timestamps): then the first frames' timestamps say the rate.
        if scale > 0, rate / scale > 0, rate / scale <= 120 {
            framesPerSecond = Int(rate / scale)
        } else if scale > 0, list.count > 1, let a = file.read(8, at: list[0].0 - 8),
            let b = file.read(8, at: list[min(list.count, 16) - 1].0 - 8)
        {
            let ticks = readLittleEndian(b[...]) &- readLittleEndian(a[...])
            let frames = UInt64(min(list.count, 16) - 1)
            let fps = ticks > 0 ? (Double(frames) * Double(rate) / (Double(scale) * Double(ticks))).rounded() : 0
            framesPerSecond = fps >= 1 && fps <= 120 ? Int(fps) : 30
        } else {
            framesPerSecond = 30
        }
    }

    public var count: Int { index.count }

    /// Frame `n` (from 0) of the file.
    public func frame(_ n: Int) -> [UInt8] {
        let e = index[((n % index.count) + index.count) % index.count]
        return file.read(e.size, at: e.offset) ?? []
    }
}

/// Y4M: a header line ("YUV4MPEG2 W.. H.. F..:1 ..."), then "FRAME\n" and the I420 planes per picture.
public final class Y4MWriter {
    let file: FileDescriptor
    public let width: Int
    public let height: Int
    public private(set) var frames = 0

    public init(path: String, width: Int, height: Int, framesPerSecond: Int) throws(MediaFileError) {
        file = try FileDescriptor(path: path, writing: true)
        self.width = width
        self.height = height
        try file.write(Array("YUV4MPEG2 W\(width) H\(height) F\(framesPerSecond):1 Ip A1:1 C420\n".utf8))
    }

    /// Appends a picture of the file's size; one of another size is refused.
    public func append(_ f: I420Frame) throws(MediaFileError) {
        guard f.width == width, f.height == height else {
            throw MediaFileError("a \(f.width)x\(f.height) picture in a \(width)x\(height) file")
        }
        try file.write(Array("FRAME\n".utf8) + f.y + f.u + f.v)
        frames += 1
    }
}

/// A Y4M file's pictures (4:2:0 only), read on demand.
public final class Y4MReader: Sendable {
    public let width: Int
    public let height: Int
    public let framesPerSecond: Int
    public let count: Int
    let file: FileDescriptor
    let first: Int

    public init(path: String) throws(MediaFileError) {
        file = try FileDescriptor(path: path, writing: false)
        guard let head = file.read(min(1024, file.size), at: 0), let eol = head.firstIndex(of: 10),
            head.starts(with: Array("YUV4MPEG2 ".utf8))
        else { throw MediaFileError("\(path): not a Y4M file") }
        var w = 0
        var h = 0
        var fps = 30
        for field in String(decoding: head[..<eol], as: UTF8.self).split(separator: " ").dropFirst() {
            let value = field.dropFirst()
            switch field.first {
            case "W": w = Int(value) ?? 0
            case "H": h = Int(value) ?? 0
            case "F":
                let p = value.split(separator: ":").compactMap { Int($0) }
                if p.count == 2, p[1] > 0, p[0] / p[1] > 0, p[0] / p[1] <= 120 { fps = p[0] / p[1] }
            case "C":
                // 8-bit 4:2:0 only (not C420p10 and the like: two bytes a sample).
                guard ["420", "420jpeg", "420paldv", "420mpeg2"].contains(value) else {
                    throw MediaFileError("\(path): only 8-bit 4:2:0 is read (C\(value))")
                }
            default: break
            }
        }
        guard (2...8192).contains(w), (2...8192).contains(h), w % 2 == 0, h % 2 == 0 else {
            throw MediaFileError("\(path): a size of \(w)x\(h)")
        }
        (width, height, framesPerSecond) = (w, h, fps)
        first = eol + 1
        let frameBytes = 6 + w * h * 3 / 2
        count = (file.size - first) / frameBytes
        guard count > 0 else { throw MediaFileError("\(path): no frames") }
    }

    /// Picture `n` (from 0), the file looping.
    public func picture(_ n: Int) -> I420Frame {
        let planes = width * height
        let frameBytes = 6 + planes * 3 / 2
        let at = first + (((n % count) + count) % count) * frameBytes + 6
        let bytes = file.read(planes * 3 / 2, at: at) ?? [UInt8](repeating: 16, count: planes * 3 / 2)
        return I420Frame(
            width: width, height: height, y: Array(bytes[0..<planes]), u: Array(bytes[planes..<(planes * 5 / 4)]),
            v: Array(bytes[(planes * 5 / 4)...]))
    }
}
