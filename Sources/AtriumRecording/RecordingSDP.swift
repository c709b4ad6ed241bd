/// One RTP stream of a recording as ffmpeg receives it.
public struct RecordedStream: Equatable, Sendable {
    public enum Kind: String, Sendable { case audio, video }

    public var kind: Kind
    /// The encoding name as SDP writes it: `VP8`, `VP9`, `H264`, `AV1`, `opus`.
    public var codec: String
    public var clockRate: UInt32
    public var channels: Int?
    public var payloadType: UInt8
    /// The UDP port on 127.0.0.1 ffmpeg listens on (RTCP on the next one).
    public var port: Int

    public init(kind: Kind, codec: String, clockRate: UInt32, channels: Int?, payloadType: UInt8, port: Int) {
        self.kind = kind
        self.codec = codec
        self.clockRate = clockRate
        self.channels = channels
        self.payloadType = payloadType
        self.port = port
    }
}

/// The session description ffmpeg reads to receive a recording's streams (RFC 8866): one `m=` line per
/// stream on 127.0.0.1, plain RTP/AVP, the payload type the worker rewrites packets to. Pure.
public enum RecordingSDP {
    public static func write(_ streams: [RecordedStream], name: String) -> String {
        var lines = [
            "v=0", "o=- 0 0 IN IP4 127.0.0.1", "s=\(name)", "c=IN IP4 127.0.0.1", "t=0 0",
        ]
        for s in streams {
            lines.append("m=\(s.kind.rawValue) \(s.port) RTP/AVP \(s.payloadType)")
            let channels = s.channels.map { "/\($0)" } ?? ""
            lines.append("a=rtpmap:\(s.payloadType) \(s.codec)/\(s.clockRate)\(channels)")
            if s.codec.uppercased() == "H264" { lines.append("a=fmtp:\(s.payloadType) packetization-mode=1") }
            lines.append("a=recvonly")
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

/// The ffmpeg command line of a recording: read the SDP (only file, UDP and RTP allowed), copy every
/// stream into the container, no re-encoding; end the input `listenTimeout` seconds after the last
/// datagram. Pure.
public enum FFmpegCommand {
    /// Seconds without a datagram after which ffmpeg ends its input and finishes the file: the server
    /// sends keepalives more often than this while a recording runs.
    public static let listenTimeout = 3

    public static func arguments(ffmpeg: String, sdp: String, output: String, container: RecordingContainer)
        -> [String]
    {
        let format =
            switch container {
            case .webm: "webm"
            case .mkv: "matroska"
            case .mp4: "mp4"
            }
        return [
            ffmpeg, "-hide_banner", "-nostdin", "-nostats", "-loglevel", "info",
            "-protocol_whitelist", "file,udp,rtp", "-reorder_queue_size", "256",
            "-analyzeduration", "10000000", "-probesize", "10000000", "-fflags", "+genpts",
            "-listen_timeout", String(listenTimeout),
            "-i", sdp, "-map", "0", "-c", "copy", "-f", format, "-y", output,
        ]
    }
}
