internal import COpus

/// libopus's encoder (Debian's libopus) at 48 kHz: 20 ms of interleaved 16-bit samples in, one
/// packet out. Not thread-safe: one owner.
public final class OpusEncoder {
    public static let sampleRate = 48000
    /// Samples per channel in 20 ms.
    public static let frameSize = 960
    public let channels: Int
    let encoder: OpaquePointer

    public init(channels: Int = 2, bitrate: Int = 48000) throws(CodecError) {
        guard channels == 1 || channels == 2 else { throw CodecError(message: "Opus: 1 or 2 channels") }
        var err: Int32 = 0
        guard let e = opus_encoder_create(Int32(Self.sampleRate), Int32(channels), OPUS_APPLICATION_VOIP, &err),
            err == OPUS_OK
        else { throw CodecError(message: "Opus: the encoder did not start (\(err))") }
        encoder = e
        self.channels = channels
        _ = atrium_opus_set_bitrate(e, Int32(clamping: bitrate))
    }

    deinit { opus_encoder_destroy(encoder) }

    /// Encodes 20 ms (`frameSize` samples per channel, interleaved).
    public func encode(_ pcm: [Int16]) throws(CodecError) -> [UInt8] {
        guard pcm.count == Self.frameSize * channels else {
            throw CodecError(message: "Opus: \(Self.frameSize * channels) samples are expected, not \(pcm.count)")
        }
        var out = [UInt8](repeating: 0, count: 1500)
        let n = pcm.withUnsafeBufferPointer { p in
            out.withUnsafeMutableBufferPointer { o -> Int32 in
                guard let pb = p.baseAddress, let ob = o.baseAddress else { return -1 }
                return opus_encode(encoder, pb, Int32(Self.frameSize), ob, Int32(o.count))
            }
        }
        guard n > 0 else { throw CodecError(message: "Opus: encoding failed (\(n))") }
        return Array(out.prefix(Int(n)))
    }
}

/// libopus's decoder at 48 kHz: a packet in, interleaved 16-bit samples out. A packet it cannot
/// decode is a `CodecError`.
public final class OpusDecoder {
    public let channels: Int
    let decoder: OpaquePointer

    public init(channels: Int = 2) throws(CodecError) {
        guard channels == 1 || channels == 2 else { throw CodecError(message: "Opus: 1 or 2 channels") }
        var err: Int32 = 0
        guard let d = opus_decoder_create(Int32(OpusEncoder.sampleRate), Int32(channels), &err), err == OPUS_OK else {
            throw CodecError(message: "Opus: the decoder did not start (\(err))")
        }
        decoder = d
        self.channels = channels
    }

    deinit { opus_decoder_destroy(decoder) }

    public func decode(_ packet: [UInt8]) throws(CodecError) -> [Int16] {
        guard !packet.isEmpty, packet.count <= 1500 else {
            throw CodecError(message: "Opus: an empty or oversized packet")
        }
        // Up to 120 ms per packet.
        var pcm = [Int16](repeating: 0, count: 5760 * channels)
        let n = packet.withUnsafeBufferPointer { p in
            pcm.withUnsafeMutableBufferPointer { o -> Int32 in
                guard let ob = o.baseAddress else { return -1 }
                return opus_decode(decoder, p.baseAddress, Int32(p.count), ob, 5760, 0)
            }
        }
        guard n > 0 else { throw CodecError(message: "Opus: decoding failed (\(n))") }
        return Array(pcm.prefix(Int(n) * channels))
    }
}
