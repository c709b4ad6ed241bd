import AtriumCodecs
import AtriumDTLS
public import AtriumKit
import AtriumLoadPeer
public import AtriumModel
public import AtriumProtocol
import AtriumRTP
import AtriumSDP
public import AtriumSFrame
import AtriumSync
import AtriumUDP
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A native publisher on Linux (a `MediaSession` that only sends): Atrium's own ICE (the controlling
/// agent), DTLS and SRTP (`AtriumLoadPeer`), libvpx's VP8 and libopus (`AtriumCodecs`), RTP
/// packetization (`VP8Payload`). A key frame answers every PLI or FIR, and the last 1024 video
/// packets answer NACKs (`RetransmitRing`). Pictures come from a
/// `VideoSource`; audio is a tone or silence. One thread sends at the source's frame rate.
/// It receives nothing: join with `autoSubscribe: false` (a subscriber offer is refused).
public final class NativePublisher: MediaSession, @unchecked Sendable {
    public let video: any VideoSource
    let peer: LoadPeer
    let credentials: NativeCredentials
    let videoSSRC: UInt32
    let audioSSRC: UInt32
    let state = Mutex(Shared())
    let toneHz: Double

    struct Shared {
        /// The sending thread, once started; joined by `close`.
        var thread: JoinableThread?
        var stopped = false
        var framesSent = 0
        var keyFrames = 0
        var retransmitted = 0
        var failure: String?
        /// The keys of an end-to-end encrypted room and this participant's id: every frame is
        /// encrypted after it is encoded; none leaves in clear.
        var e2ee: (keys: SFrameKeyring, sender: String)?
    }

    /// A diagnostic for tests and demos: drop every `n`th video packet before it is sent (0: none),
    /// as a lossy path would; the receiver's NACKs bring them back.
    public var dropEvery = 0

    /// `tone`: the pitch of the audio section (Hz), 0 for silence.
    /// A source of pictures must be encodable (libvpx: even sizes, 16 to 4096); a file of encoded
    /// frames is sent as it is.
    public init(video: any VideoSource, tone: Double = 0) throws(AtriumError) {
        guard
            video.encoded(0) != nil
                || ((16...4096).contains(video.width) && (16...4096).contains(video.height) && video.width % 2 == 0
                    && video.height % 2 == 0)
        else {
            throw AtriumError(
                code: "media_unsupported",
                message: "a \(video.width)x\(video.height) picture: VP8 here takes even sizes from 16 to 4096")
        }
        self.video = video
        toneHz = tone
        let credentials = try NativeCredentials()
        self.credentials = credentials
        var rng = SystemRandomNumberGenerator()
        videoSSRC = UInt32.random(in: 1...UInt32.max, using: &rng)
        audioSSRC = UInt32.random(in: 1...UInt32.max, using: &rng)
        peer = try credentials.peer(seed: UInt64(videoSSRC))
    }

    /// Pictures and key frames sent so far.
    public var counts: (frames: Int, keyFrames: Int, retransmitted: Int) {
        state.withLock { ($0.framesSent, $0.keyFrames, $0.retransmitted) }
    }

    // MARK: - MediaSession

    public func publisherOffer(sending sources: [LocalSource]) async throws(AtriumError) -> (
        sdp: String, mids: [TrackSource: String]
    ) {
        var mids: [TrackSource: String] = [:]
        var lines = [
            "v=0", "o=- \(videoSSRC) 1 IN IP4 127.0.0.1", "s=-", "t=0 0",
        ]
        var sections: [String] = []
        for s in sources {
            let mid = String(mids.count)
            let isVideo = s.source == .camera || s.source == .screenShare
            mids[s.source] = mid
            let common = credentials.transportLines(setup: "actpass") + ["a=mid:\(mid)", "a=sendonly"]
            if isVideo {
                sections +=
                    ["m=video 9 UDP/TLS/RTP/SAVPF 96"] + common + [
                        "a=rtpmap:96 VP8/90000", "a=rtcp-fb:96 nack", "a=rtcp-fb:96 nack pli", "a=rtcp-fb:96 ccm fir",
                        "a=ssrc:\(videoSSRC) cname:atrium-native",
                    ]
            } else {
                sections +=
                    ["m=audio 9 UDP/TLS/RTP/SAVPF 111"] + common + [
                        "a=rtpmap:111 opus/48000/2", "a=fmtp:111 minptime=10;useinbandfec=1",
                        "a=ssrc:\(audioSSRC) cname:atrium-native",
                    ]
            }
        }
        lines.append("a=group:BUNDLE " + (0..<mids.count).map(String.init).joined(separator: " "))
        lines.append("a=msid-semantic: WMS *")
        return ((lines + sections).joined(separator: "\r\n") + "\r\n", mids)
    }

    public func publisherAnswer(_ sdp: String) async throws(AtriumError) {
        // Its thread owns the peer once it runs: a second connection is a new publisher's.
        guard state.withLock({ $0.thread == nil }) else {
            throw AtriumError(code: "media_unsupported", message: "a native publisher connects once: make another")
        }
        let answer = try NativeCredentials.parse(sdp)
        // The server answers passive (a DTLS server) unless we offered passive.
        let setup = answer.media.first(where: { $0.port != 0 })?.setup ?? .passive
        let remote = try NativeCredentials.remote(answer, dtlsRole: setup == .active ? .server : .client)
        do {
            try peer.connect(remote, now: MonotonicClock.nanoseconds())
        } catch {
            throw AtriumError(code: "media_failed", message: "DTLS: \(error)")
        }
        start()
    }

    public func subscriberAnswer(to offer: String, tracks: [SubscriberOffer.Track], reset: Bool)
        async throws(AtriumError) -> String
    {
        throw AtriumError(
            code: "media_unsupported", message: "a native publisher only sends: join with autoSubscribe false")
    }

    public func layersWanted(_ track: TrackID, rids: [String]) async {}

    public func close() async {
        let thread = state.withLock { s in
            s.stopped = true
            defer { s.thread = nil }
            return s.thread
        }
        thread?.join()
    }

    public func stats() async -> MediaStats {
        var s = MediaStats()
        (s.framesSent, s.keyFramesSent, s.retransmitted) = counts
        return s
    }

    /// Encrypts every frame sent from now on with `keys`, as participant `sender` (docs/e2ee.md).
    public func encrypt(with keys: SFrameKeyring, sender: ParticipantID) {
        state.withLock { $0.e2ee = (keys, sender.rawValue) }
    }

    /// Attached alone to a room: the room's keyring.
    public func encryptFrames(with keys: SFrameKeyring, sender: ParticipantID) async -> Bool {
        encrypt(with: keys, sender: sender)
        return true
    }

    /// A frame as it leaves: as encoded, or end-to-end encrypted; nil when it does not encrypt (it is
    /// then not sent: never in clear).
    static func outgoing(_ bytes: [UInt8], _ media: SFrameMedia, _ e2ee: (keys: SFrameKeyring, sender: String)?)
        -> [UInt8]?
    {
        guard let e2ee else { return bytes }
        return e2ee.keys.encrypt(bytes, media, sender: e2ee.sender)
    }

    /// Why the sending thread stopped on its own, if it did.
    public var failure: String? { state.withLock { $0.failure } }

    // MARK: - Sending

    func start() {
        state.withLock { s in
            if s.thread == nil { s.thread = try? JoinableThread.start { [self] in run() } }
        }
    }

    /// The sending loop: ICE, DTLS and consent timers every 5 ms; a picture every frame interval
    /// (a key frame when asked); 20 ms of Opus on time.
    func run() {
        // A file of encoded frames needs no encoder.
        let encoder =
            video.encoded(0) == nil ? try? VP8Encoder(width: video.width, height: video.height, bitrate: 1500) : nil
        guard video.encoded(0) != nil || encoder != nil, let opus = try? OpusEncoder(channels: 2, bitrate: 32000) else {
            state.withLock { $0.failure = "the encoders could not start" }
            return
        }
        var latency = LatencyHistogram()
        let frameInterval = 1_000_000_000 / UInt64(max(1, video.framesPerSecond))
        var nextFrame: UInt64 = 0
        var nextAudio: UInt64 = 0
        var seq = UInt16.random(in: 0...0x7FFF)
        var audioSeq = UInt16.random(in: 0...0x7FFF)
        var picture: UInt16 = UInt16.random(in: 0...0x7FFF)
        // Frames sent (the RTP clock) and the source's frame to send next.
        var frame = 0
        var index = 0
        var samples = 0
        var forceKey = true
        var ring = RetransmitRing()
        var sentVideo = 0
        let drop = dropEvery
        while true {
            let (stopped, e2ee) = state.withLock { ($0.stopped, $0.e2ee) }
            if stopped { break }
            let now = MonotonicClock.nanoseconds()
            peer.tick(now: now)
            _ = peer.receiveWaiting(latency: &latency)
            if !peer.keyFrameRequests.isEmpty {
                peer.keyFrameRequests.removeAll()
                forceKey = true
            }
            if !peer.nacked.isEmpty {
                var again = 0
                for (ssrc, s) in peer.nacked where ssrc == videoSSRC {
                    guard var packet = ring.packet(s) else { continue }
                    peer.send(rtp: &packet)
                    again += 1
                }
                peer.nacked.removeAll()
                if again > 0 { state.withLock { $0.retransmitted += again } }
            }
            if peer.state == .connected {
                if nextFrame == 0 { (nextFrame, nextAudio) = (now, now) }
                if now >= nextFrame {
                    nextFrame += frameInterval
                    let ts = UInt32(truncatingIfNeeded: UInt64(frame) * 90000 / UInt64(max(1, video.framesPerSecond)))
                    if forceKey, video.encoded(0) != nil {
                        // A file of encoded frames cannot make a key frame: it goes back to its last one.
                        while index > 0, let f = video.encoded(index), !VP8Payload.isKeyFrame(f) { index -= 1 }
                    }
                    let coded = video.encoded(index).map { (bytes: $0, isKey: VP8Payload.isKeyFrame($0)) }
                    if let out = coded
                        ?? (try? encoder?.encode(
                            video.picture(index), duration: 90000 / max(1, video.framesPerSecond), keyFrame: forceKey))
                    {
                        forceKey = false
                        let payloads =
                            Self.outgoing(out.bytes, .vp8(keyFrame: out.isKey), e2ee).map {
                                VP8Payload.packetize($0, pictureID: picture & 0x7FFF, maxPayload: 1100)
                            } ?? []
                        picture &+= 1
                        for (i, p) in payloads.enumerated() {
                            if var packet = try? RTPPacketWriter.packet(
                                payloadType: 96, sequenceNumber: seq, timestamp: ts, ssrc: videoSSRC,
                                marker: i == payloads.count - 1, payload: p)
                            {
                                ring.store(seq, packet)
                                sentVideo += 1
                                if drop == 0 || sentVideo % drop != 0 { peer.send(rtp: &packet) }
                            }
                            seq &+= 1
                        }
                        state.withLock {
                            $0.framesSent += 1
                            if out.isKey { $0.keyFrames += 1 }
                        }
                    }
                    frame += 1
                    index += 1
                }
                while now >= nextAudio {
                    nextAudio += 20_000_000
                    let pcm = (0..<OpusEncoder.frameSize).flatMap { i -> [Int16] in
                        let t = Double(samples + i) / Double(OpusEncoder.sampleRate)
                        let v = toneHz > 0 ? Int16(6000 * sin(2 * Double.pi * toneHz * t)) : 0
                        return [v, v]
                    }
                    if let encoded = try? opus.encode(pcm),
                        let bytes = Self.outgoing(encoded, .opus, e2ee),
                        var packet = try? RTPPacketWriter.packet(
                            payloadType: 111, sequenceNumber: audioSeq, timestamp: UInt32(truncatingIfNeeded: samples),
                            ssrc: audioSSRC, payload: bytes)
                    {
                        peer.send(rtp: &packet)
                    }
                    audioSeq &+= 1
                    samples += OpusEncoder.frameSize
                }
            }
            peer.flush()
            usleep(5000)
        }
    }
}
