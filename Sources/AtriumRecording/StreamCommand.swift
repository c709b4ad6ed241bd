/// The ffmpeg command line of a live stream: read the SDP (only file, UDP and RTP allowed), H.264 kept
/// as it comes, VP8, VP9 and AV1 transcoded to H.264 (x264, veryfast, zero latency, a key frame every
/// two seconds, 30 frames a second: a paused share's once-a-second picture is repeated), Opus to AAC;
/// out as FLV to an RTMP(S) URL, or as HLS (two-second segments, the last six listed). Pure.
public enum StreamCommand {
    public static let videoBitrate = "3000k"
    public static let audioBitrate = "128k"
    public static let hlsPlaylist = "index.m3u8"

    public static func arguments(
        ffmpeg: String, sdp: String, videoCodec: String, output: StreamOutput, hlsDirectory: String
    )
        -> [String]
    {
        var args = [
            ffmpeg, "-hide_banner", "-nostdin", "-nostats", "-loglevel", "warning",
            "-protocol_whitelist", "file,udp,rtp", "-reorder_queue_size", "256",
            "-analyzeduration", "10000000", "-probesize", "10000000", "-fflags", "+genpts",
            "-i", sdp, "-map", "0:v:0", "-map", "0:a:0",
        ]
        if videoCodec.uppercased() == "H264" {
            args += ["-c:v", "copy"]
        } else {
            args += [
                "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-pix_fmt", "yuv420p",
                "-r", "30", "-fps_mode", "cfr", "-g", "60", "-keyint_min", "60", "-sc_threshold", "0",
                "-b:v", videoBitrate, "-maxrate", videoBitrate, "-bufsize", "6000k",
            ]
        }
        args += ["-c:a", "aac", "-b:a", audioBitrate, "-ar", "48000", "-ac", "2"]
        switch output {
        case .rtmp(let url):
            args += ["-f", "flv", "-flvflags", "no_duration_filesize", url]
        case .hls:
            args += [
                "-f", "hls", "-hls_time", "2", "-hls_list_size", "6",
                "-hls_flags", "delete_segments+independent_segments",
                "-hls_segment_filename", hlsDirectory + "/seg_%06d.ts", hlsDirectory + "/" + hlsPlaylist,
            ]
        }
        return args
    }
}
