internal import CVPX

/// A picture in I420: the Y plane, then U and V at half the width and height, each without padding.
public struct I420Frame: Equatable, Sendable {
    public var width: Int
    public var height: Int
    public var y: [UInt8]
    public var u: [UInt8]
    public var v: [UInt8]

    public init(width: Int, height: Int, y: [UInt8], u: [UInt8], v: [UInt8]) {
        self.width = width
        self.height = height
        self.y = y
        self.u = u
        self.v = v
    }

    /// A plain picture of one colour (Y, U, V).
    public init(width: Int, height: Int, y: UInt8, u: UInt8, v: UInt8) {
        let cw = (width + 1) / 2
        let ch = (height + 1) / 2
        self.init(
            width: width, height: height, y: [UInt8](repeating: y, count: width * height),
            u: [UInt8](repeating: u, count: cw * ch), v: [UInt8](repeating: v, count: cw * ch))
    }
}

/// Why a codec refused.
public struct CodecError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// libvpx's VP8 encoder (Debian's libvpx), real time: one call per picture, the compressed frame(s)
/// out. Not thread-safe: one owner.
public final class VP8Encoder {
    public let width: Int
    public let height: Int
    var ctx = vpx_codec_ctx_t()
    var image = vpx_image_t()
    var buffer: [UInt8]
    var pts: Int64 = 0

    /// `bitrate` in kbit/s; a key frame at least every `keyFrameInterval` pictures.
    public init(width: Int, height: Int, bitrate: Int = 1000, keyFrameInterval: Int = 60) throws(CodecError) {
        guard width > 0, height > 0, width <= 4096, height <= 4096, width % 2 == 0, height % 2 == 0 else {
            throw CodecError(message: "VP8: an even size up to 4096x4096, not \(width)x\(height)")
        }
        self.width = width
        self.height = height
        var cfg = vpx_codec_enc_cfg_t()
        guard vpx_codec_enc_config_default(vpx_codec_vp8_cx(), &cfg, 0) == VPX_CODEC_OK else {
            throw CodecError(message: "VP8: no default encoder configuration")
        }
        cfg.g_w = UInt32(width)
        cfg.g_h = UInt32(height)
        cfg.g_timebase = vpx_rational(num: 1, den: 90000)
        cfg.rc_target_bitrate = UInt32(clamping: bitrate)
        cfg.rc_end_usage = VPX_CBR
        cfg.g_lag_in_frames = 0
        cfg.g_error_resilient = UInt32(VPX_ERROR_RESILIENT_DEFAULT)
        cfg.kf_max_dist = UInt32(clamping: keyFrameInterval)
        cfg.g_threads = 1
        guard atrium_vpx_enc_init(&ctx, &cfg) == VPX_CODEC_OK else {
            throw CodecError(message: "VP8: the encoder did not start")
        }
        _ = atrium_vpx_set_cpu_used(&ctx, 8)
        buffer = [UInt8](repeating: 0, count: width * height * 3 / 2)
    }

    deinit { vpx_codec_destroy(&ctx) }

    /// Encodes one picture (`duration` in 90 kHz ticks); `keyFrame` forces a key frame. Returns the
    /// compressed frame and whether it is a key frame (nil when the encoder dropped the picture).
    public func encode(_ f: I420Frame, duration: Int = 3000, keyFrame: Bool = false) throws(CodecError) -> (
        bytes: [UInt8], isKey: Bool
    )? {
        guard f.width == width, f.height == height, f.y.count == width * height,
            f.u.count == width * height / 4, f.v.count == width * height / 4
        else { throw CodecError(message: "VP8: a \(width)x\(height) I420 picture is expected") }
        buffer.replaceSubrange(0..<f.y.count, with: f.y)
        buffer.replaceSubrange(f.y.count..<(f.y.count + f.u.count), with: f.u)
        buffer.replaceSubrange((f.y.count + f.u.count)..<buffer.count, with: f.v)
        let status = buffer.withUnsafeMutableBufferPointer { b -> vpx_codec_err_t in
            vpx_img_wrap(&image, VPX_IMG_FMT_I420, UInt32(width), UInt32(height), 1, b.baseAddress)
            let flags = keyFrame ? vpx_enc_frame_flags_t(atrium_vpx_force_key()) : 0
            return vpx_codec_encode(&ctx, &image, pts, UInt(duration), flags, atrium_vpx_realtime())
        }
        pts += Int64(duration)
        guard status == VPX_CODEC_OK else { throw CodecError(message: "VP8: encoding failed (\(status.rawValue))") }
        var iter: vpx_codec_iter_t?
        var out: [UInt8] = []
        var isKey = false
        while let p = atrium_vpx_next_packet(&ctx, &iter) {
            guard atrium_vpx_packet_is_frame(p) != 0, let data = atrium_vpx_packet_data(p) else { continue }
            out += UnsafeRawBufferPointer(start: data, count: atrium_vpx_packet_size(p))
            isKey = isKey || atrium_vpx_packet_is_key(p) != 0
        }
        return out.isEmpty ? nil : (out, isKey)
    }
}

/// libvpx's VP8 decoder: a compressed frame in, the picture out (I420). A frame it cannot decode
/// (corrupt, or a delta without its reference) is a `CodecError`, never a crash.
public final class VP8Decoder {
    var ctx = vpx_codec_ctx_t()

    public init() throws(CodecError) {
        guard atrium_vpx_dec_init(&ctx) == VPX_CODEC_OK else {
            throw CodecError(message: "VP8: the decoder did not start")
        }
    }

    deinit { vpx_codec_destroy(&ctx) }

    public func decode(_ frame: [UInt8]) throws(CodecError) -> I420Frame? {
        guard !frame.isEmpty, frame.count < 16 << 20 else {
            throw CodecError(message: "VP8: an empty or oversized frame")
        }
        let status = frame.withUnsafeBufferPointer { vpx_codec_decode(&ctx, $0.baseAddress, UInt32($0.count), nil, 0) }
        guard status == VPX_CODEC_OK else { throw CodecError(message: "VP8: decoding failed (\(status.rawValue))") }
        var iter: vpx_codec_iter_t?
        guard let img = vpx_codec_get_frame(&ctx, &iter) else { return nil }
        let w = Int(img.pointee.d_w)
        let h = Int(img.pointee.d_h)
        let strides = [Int(img.pointee.stride.0), Int(img.pointee.stride.1), Int(img.pointee.stride.2)]
        let planes = [img.pointee.planes.0, img.pointee.planes.1, img.pointee.planes.2]
        func plane(_ i: Int, _ pw: Int, _ ph: Int) -> [UInt8] {
            guard let base = planes[i], strides[i] >= pw else { return [] }
            var out: [UInt8] = []
            out.reserveCapacity(pw * ph)
            for row in 0..<ph { out += UnsafeBufferPointer(start: base + row * strides[i], count: pw) }
            return out
        }
        let cw = (w + 1) / 2
        let ch = (h + 1) / 2
        return I420Frame(width: w, height: h, y: plane(0, w, h), u: plane(1, cw, ch), v: plane(2, cw, ch))
    }
}
