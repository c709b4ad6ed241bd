public import AtriumCodecs
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

#if canImport(Glibc)
    import Glibc
#endif

/// A decoded picture of a received track.
public struct ReceivedVideo: Sendable {
    /// The track, as the server's offer said (nil for a stream it did not name).
    public var track: TrackID?
    public var source: TrackSource?
    /// Whose track it is.
    public var publisher: ParticipantID?
    public var picture: I420Frame
    /// The VP8 frame as it came (for a file of the encoded stream).
    public var encoded: [UInt8]
    /// Its RTP timestamp (90 kHz).
    public var timestamp: UInt32
    public var isKeyFrame: Bool
}

/// What a native viewer hands its owner, on its receiving thread.
public enum ReceivedMedia: Sendable {
    case video(ReceivedVideo)
    /// 20 ms of decoded Opus: 48 kHz, two channels interleaved.
    case audio(track: TrackID?, samples: [Int16])
}

/// The receiving side of a native session on Linux: it answers the server's subscriber offers
/// (`recvonly`, VP8 with RTX and Opus; other codecs refused by port 0) and connects as the
/// controlling ICE agent and the DTLS client over Atrium's own stack. One thread receives: video
/// packets (RTX unwrapped) go through a `FrameAssembler`, missing ones are NACKed and a gap given up
/// for a PLI (`ReceiveRepair`), complete frames are decoded by libvpx; Opus by libopus. Each picture
/// and audio frame goes to `deliver`, on that thread. It runs no bandwidth estimator: a REMB every second states `estimate` (the server reads
/// it as any REMB-only receiver's).
public final class NativeSubscriber: MediaSession, @unchecked Sendable {
    /// A received stream as the offer describes it.
    struct Stream: Equatable {
        var mid: String
        var isVideo: Bool
        var ssrc: UInt32
        var rtxSSRC: UInt32?
        var track: TrackID?
        var source: TrackSource?
        var publisher: ParticipantID?
    }

    struct Shared {
        /// A new connection for the thread to take (the first offer, or one with `reset`).
        var pending: (LoadPeer, LoadPeer.Remote)?
        var streams: [Stream] = []
        var generation = 0
        var answers = 0
        /// The last offer answered (the connection's, kept through a rejoin).
        var lastOffer: String?
        /// Tracks the app asked a key frame for, until the thread sends the PLIs.
        var keyFramesWanted: Set<TrackID> = []
        /// The receiving thread, once started; joined by `close`.
        var thread: JoinableThread?
        var stopped = false
        var counts = Counts()
        /// The keys of an end-to-end encrypted room: every frame is decrypted before it is decoded.
        var e2ee: SFrameKeyring?
    }

    /// What the viewer has received and done so far.
    public struct Counts: Equatable, Sendable {
        public var frames = 0
        public var keyFrames = 0
        public var bytes = 0
        public var decodeErrors = 0
        public var nacksSent = 0
        public var keyFrameRequests = 0
        public var retransmissions = 0
        /// Retransmissions that filled a gap the viewer had (not padding or a copy it already had).
        public var repaired = 0
        public var audioFrames = 0
        public var dropped = 0
        public var framesGivenUp = 0
        public var width = 0
        public var height = 0
        public var decryptFailures = 0
    }

    let credentials: NativeCredentials
    let state = Monitor(Shared())
    let deliver: @Sendable (ReceivedMedia) -> Void
    let ssrc = UInt32.random(in: 1...UInt32.max)
    let sessionID = UInt32.random(in: 1...UInt32.max)
    /// The receive estimate the REMB states (bit/s).
    public let estimate: UInt64
    /// A diagnostic for tests and demos: drop every `n`th video packet received (0: none), as a
    /// lossy path would; NACKs bring them back.
    public let dropEvery: Int

    public init(
        estimate: UInt64 = 8_000_000, dropEvery: Int = 0, deliver: @escaping @Sendable (ReceivedMedia) -> Void
    )
        throws(AtriumError)
    {
        credentials = try NativeCredentials()
        self.estimate = estimate
        self.dropEvery = max(0, dropEvery)
        self.deliver = deliver
    }

    public var counts: Counts { state.withLock { $0.counts } }

    // MARK: - MediaSession

    public func publisherOffer(sending sources: [LocalSource]) async throws(AtriumError) -> (
        sdp: String, mids: [TrackSource: String]
    ) {
        throw AtriumError(code: "media_unsupported", message: "a native viewer only receives")
    }

    public func publisherAnswer(_ sdp: String) async throws(AtriumError) {
        throw AtriumError(code: "media_unsupported", message: "a native viewer only receives")
    }

    public func subscriberAnswer(to offer: String, tracks: [SubscriberOffer.Track], reset: Bool)
        async throws(AtriumError) -> String
    {
        let sdp = try NativeCredentials.parse(offer)
        // One session id for the viewer's life, its version up by one per answer (RFC 3264 section 5).
        let version = state.withLock { s -> Int in
            s.answers += 1
            return s.answers
        }
        let (answer, streams) = Self.answer(
            sdp, tracks: tracks, credentials: credentials, session: (sessionID, version))
        let fresh = state.withLock { $0.pending == nil && $0.thread == nil } || reset
        if fresh {
            // The server offers actpass: we take the DTLS client's part.
            let remote = try NativeCredentials.remote(sdp, dtlsRole: .client)
            let peer = try credentials.peer(seed: UInt64(ssrc))
            peer.keepsReceived = true
            do { try peer.connect(remote, now: MonotonicClock.nanoseconds()) } catch {
                throw AtriumError(code: "media_failed", message: "DTLS: \(error)")
            }
            state.withLock { $0.pending = (peer, remote) }
        }
        state.withLock { s in
            s.streams = streams
            s.lastOffer = offer
            s.generation += 1
            if s.thread == nil { s.thread = try? JoinableThread.start { [self] in run() } }
        }
        return answer
    }

    public func layersWanted(_ track: TrackID, rids: [String]) async {}

    public func keptSubscriberOffer() async -> String? {
        state.withLock { $0.thread == nil || $0.stopped ? nil : $0.lastOffer }
    }

    public func close() async {
        let thread = state.withLock { s in
            s.stopped = true
            defer { s.thread = nil }
            return s.thread
        }
        thread?.join()
    }

    public func stats() async -> MediaStats {
        let c = counts
        var s = MediaStats()
        s.framesReceived = c.frames
        s.keyFramesReceived = c.keyFrames
        s.bytesReceived = c.bytes
        s.nacksSent = c.nacksSent
        s.keyFrameRequestsSent = c.keyFrameRequests
        s.repaired = c.repaired
        s.decodeErrors = c.decodeErrors
        s.audioFramesReceived = c.audioFrames
        s.decryptFailures = c.decryptFailures
        return s
    }

    /// Decrypts every frame received from now on with `keys` (docs/e2ee.md).
    public func decrypt(with keys: SFrameKeyring) { state.withLock { $0.e2ee = keys } }

    /// Attached alone to a room: the room's keyring.
    public func encryptFrames(with keys: SFrameKeyring, sender: ParticipantID) async -> Bool {
        decrypt(with: keys)
        return true
    }

    /// Asks the sender of a received track for a key frame (a PLI from the receiving thread).
    public func requestKeyFrame(_ track: TrackID) async { state.withLock { _ = $0.keyFramesWanted.insert(track) } }

    // MARK: - The answer

    /// The answer to a subscriber offer and the streams it accepts. Each offered section keeps its
    /// mid: VP8 and Opus are received (`recvonly`, with the offer's payload types and RTX), an ended
    /// track stays `inactive` in the bundle, any other codec (or the data channel) is refused.
    static func answer(
        _ offer: SessionDescription, tracks: [SubscriberOffer.Track], credentials: NativeCredentials,
        session: (id: UInt32, version: Int) = (1, 1)
    ) -> (String, [Stream]) {
        var sections: [[String]] = []
        var bundled: [String] = []
        var streams: [Stream] = []
        for m in offer.media {
            let mid = m.mid ?? String(sections.count)
            let codecs = m.codecs
            let media = codecs.first { !$0.isRTX }
            let receivable =
                media.map { c in
                    (m.kind == .video && c.isNamed("VP8")) || (m.kind == .audio && c.isNamed("opus"))
                } ?? false
            guard m.isRTP, m.port != 0, receivable, let media else {
                let proto = m.proto
                let format = m.formats.first ?? "0"
                sections.append(["m=\(kindName(m.kind)) 0 \(proto) \(format)", "c=IN IP4 0.0.0.0", "a=mid:\(mid)"])
                continue
            }
            bundled.append(mid)
            let active = m.direction == .sendonly
            let rtx = m.kind == .video ? m.rtxPayloadType(for: media.payloadType) : nil
            let pts = [media.payloadType] + (rtx.map { [$0] } ?? [])
            let formats: String = pts.map { String($0) }.joined(separator: " ")
            var lines = ["m=\(kindName(m.kind)) 9 UDP/TLS/RTP/SAVPF \(formats)"]
            lines += credentials.transportLines(setup: "active")
            lines += ["a=mid:\(mid)", active ? "a=recvonly" : "a=inactive", "a=rtcp-rsize"]
            let channels = media.channels.map { "/\($0)" } ?? ""
            lines.append("a=rtpmap:\(media.payloadType) \(media.name)/\(media.clockRate)\(channels)")
            if m.kind == .video {
                let pt = media.payloadType
                lines += [
                    "a=rtcp-fb:\(pt) nack", "a=rtcp-fb:\(pt) nack pli", "a=rtcp-fb:\(pt) ccm fir",
                    "a=rtcp-fb:\(pt) goog-remb",
                ]
                if let rtx { lines += ["a=rtpmap:\(rtx) rtx/90000", "a=fmtp:\(rtx) apt=\(pt)"] }
            } else {
                lines.append("a=fmtp:\(media.payloadType) minptime=10;useinbandfec=1")
            }
            sections.append(lines)
            guard active else { continue }
            let fid = m.ssrcGroups.first { $0.semantics == "FID" }
            guard let primary = fid?.ssrcs.first ?? m.ssrcs.first else { continue }
            let track = tracks.first { $0.mid == mid }
            streams.append(
                Stream(
                    mid: mid, isVideo: m.kind == .video, ssrc: primary,
                    rtxSSRC: rtx != nil ? fid?.ssrcs.dropFirst().first : nil, track: track?.track,
                    source: track?.source, publisher: track?.publisher))
        }
        var head = ["v=0", "o=- \(session.id) \(session.version) IN IP4 127.0.0.1", "s=-", "t=0 0"]
        if !bundled.isEmpty { head.append("a=group:BUNDLE " + bundled.joined(separator: " ")) }
        head.append("a=msid-semantic: WMS *")
        return ((head + sections.flatMap { $0 }).joined(separator: "\r\n") + "\r\n", streams)
    }

    static func kindName(_ k: MediaKind) -> String {
        switch k {
        case .audio: "audio"
        case .video: "video"
        case .application: "application"
        case .other(let text): text
        }
    }

    // MARK: - Receiving

    /// One video stream's receiving state, owned by the thread.
    final class VideoReceiver {
        let stream: Stream
        var assembler = FrameAssembler()
        var repair = ReceiveRepair()
        let decoder: VP8Decoder?

        init(_ stream: Stream) {
            self.stream = stream
            decoder = try? VP8Decoder()
        }
    }

    /// The receiving loop: ICE, DTLS and consent timers; packets in; repair and REMB out.
    func run() {
        var peer: LoadPeer?
        var generation = -1
        var video: [UInt32: VideoReceiver] = [:]
        var rtxOf: [UInt32: UInt32] = [:]
        var audio: [UInt32: (Stream, OpusDecoder?)] = [:]
        var latency = LatencyHistogram()
        var nextREMB: UInt64 = 0
        var received = 0
        // Woken by a datagram, else every 10 ms for the timers (ICE, DTLS, NACK retries, REMB).
        let poller = try? EpollPoller()
        var ready: [UInt64] = []
        ready.reserveCapacity(EpollPoller.maxEvents)
        while true {
            let (stopped, pending, streams, gen, asked, keys) = state.withLock { s in
                defer { s.pending = nil }
                return (s.stopped, s.pending, s.streams, s.generation, s.keyFramesWanted, s.e2ee)
            }
            var askedDone: Set<TrackID> = []
            if stopped { break }
            if let pending {
                if let old = peer { try? poller?.deregister(old.socket) }
                try? poller?.register(pending.0.socket, token: 0)
                peer = pending.0
                video.removeAll()
                audio.removeAll()
                generation = -1
            }
            guard let peer else {
                usleep(5000)
                continue
            }
            if gen != generation {
                generation = gen
                var v: [UInt32: VideoReceiver] = [:]
                var a: [UInt32: (Stream, OpusDecoder?)] = [:]
                rtxOf.removeAll()
                for s in streams {
                    if s.isVideo {
                        v[s.ssrc] = video[s.ssrc].flatMap { $0.stream == s ? $0 : nil } ?? VideoReceiver(s)
                        if let r = s.rtxSSRC { rtxOf[r] = s.ssrc }
                    } else {
                        a[s.ssrc] = audio[s.ssrc] ?? (s, try? OpusDecoder(channels: 2))
                    }
                }
                (video, audio) = (v, a)
            }
            let now = MonotonicClock.nanoseconds()
            peer.tick(now: now)
            _ = peer.receiveWaiting(latency: &latency)
            peer.keyFrameRequests.removeAll()
            peer.nacked.removeAll()
            var counts = Counts()
            var out: [ReceivedMedia] = []
            for packet in peer.received {
                guard let h = try? RTPHeader(parsing: packet), h.payloadRange.upperBound <= packet.count else {
                    continue
                }
                var sequence = h.sequenceNumber
                var payload = Array(packet[h.payloadRange])
                var target = video[h.ssrc]
                if target == nil, let primary = rtxOf[h.ssrc], payload.count > 2 {
                    // RTX (RFC 4588): the original sequence number, then the original payload.
                    sequence = UInt16(payload[0]) << 8 | UInt16(payload[1])
                    payload.removeFirst(2)
                    target = video[primary]
                    counts.retransmissions += 1
                }
                if let v = target {
                    received += 1
                    if dropEvery > 0 && received % dropEvery == 0 && h.ssrc == v.stream.ssrc {
                        counts.dropped += 1
                        continue
                    }
                    if h.ssrc != v.stream.ssrc && v.assembler.missing.contains(sequence) { counts.repaired += 1 }
                    let before = v.assembler.framesDropped
                    for f in v.assembler.add(
                        sequence: sequence, timestamp: h.timestamp, marker: h.marker, payload: payload)
                    {
                        decode(f, v, &counts, &out, now: now, peer: peer, keys: keys)
                    }
                    counts.framesGivenUp += v.assembler.framesDropped - before
                } else if let (s, decoder) = audio[h.ssrc] {
                    counts.audioFrames += 1
                    guard let opus = Self.incoming(payload, .opus, from: s.publisher, keys, &counts) else { continue }
                    if let samples = try? decoder?.decode(opus) {
                        out.append(.audio(track: s.track, samples: samples))
                    }
                }
            }
            peer.received.removeAll(keepingCapacity: true)
            for v in video.values {
                let actions = v.repair.update(
                    missing: v.assembler.missing, needsKeyFrame: v.assembler.needsKeyFrame, now: now)
                if !actions.nack.isEmpty {
                    sendRTCP(.nack(GenericNACK(senderSSRC: ssrc, mediaSSRC: v.stream.ssrc, lost: actions.nack)), peer)
                    counts.nacksSent += actions.nack.count
                }
                if actions.giveUp {
                    let before = v.assembler.framesDropped
                    for f in v.assembler.giveUp() { decode(f, v, &counts, &out, now: now, peer: peer, keys: keys) }
                    counts.framesGivenUp += v.assembler.framesDropped - before
                }
                let askedFor = v.stream.track.map(asked.contains) ?? false
                if actions.keyFrameRequest
                    || ((v.assembler.needsKeyFrame || askedFor) && v.repair.keyFrameWanted(now: now))
                {
                    if let t = v.stream.track, askedFor { askedDone.insert(t) }
                    sendRTCP(
                        .pictureLossIndication(PictureLossIndication(senderSSRC: ssrc, mediaSSRC: v.stream.ssrc)), peer)
                    counts.keyFrameRequests += 1
                }
            }
            if peer.state == .connected && now >= nextREMB && !video.isEmpty {
                nextREMB = now + 1_000_000_000
                sendRTCP(
                    .receiverEstimatedMaximumBitrate(
                        ReceiverEstimatedMaximumBitrate(senderSSRC: ssrc, bitrate: estimate, ssrcs: Array(video.keys))
                    ),
                    peer)
            }
            // The app's key-frame requests: done once sent; one for a track no longer received is
            // dropped; one held back by the PLI interval waits for the next pass.
            if !asked.isEmpty {
                let known = Set(video.values.compactMap(\.stream.track))
                state.withLock { $0.keyFramesWanted.subtract(askedDone.union(asked.subtracting(known))) }
            }
            peer.flush()
            if counts != Counts() {
                state.withLock { s in
                    s.counts.frames += counts.frames
                    s.counts.keyFrames += counts.keyFrames
                    s.counts.bytes += counts.bytes
                    s.counts.decodeErrors += counts.decodeErrors
                    s.counts.nacksSent += counts.nacksSent
                    s.counts.keyFrameRequests += counts.keyFrameRequests
                    s.counts.retransmissions += counts.retransmissions
                    s.counts.repaired += counts.repaired
                    s.counts.audioFrames += counts.audioFrames
                    s.counts.dropped += counts.dropped
                    s.counts.framesGivenUp += counts.framesGivenUp
                    s.counts.decryptFailures += counts.decryptFailures
                    if counts.width > 0 { (s.counts.width, s.counts.height) = (counts.width, counts.height) }
                }
            }
            for m in out { deliver(m) }
            if let poller { _ = try? poller.wait(timeout: .milliseconds(10), ready: &ready) } else { usleep(2000) }
        }
    }

    func decode(
        _ f: FrameAssembler.Frame, _ v: VideoReceiver, _ counts: inout Counts, _ out: inout [ReceivedMedia],
        now: UInt64, peer: LoadPeer, keys: SFrameKeyring?
    ) {
        counts.bytes += f.bytes.count
        guard let bytes = Self.incoming(f.bytes, .vp8(keyFrame: f.isKeyFrame), from: v.stream.publisher, keys, &counts)
        else { return }
        let decoded: I420Frame??
        do { decoded = try v.decoder?.decode(bytes) } catch { decoded = nil }
        // A frame that is not shown (an alt-ref) decodes to no picture: not an error.
        if case .some(.none) = decoded { return }
        guard let picture = decoded ?? nil else {
            counts.decodeErrors += 1
            // A decoder that cannot go on needs a key frame.
            if v.repair.keyFrameWanted(now: now) {
                sendRTCP(
                    .pictureLossIndication(PictureLossIndication(senderSSRC: ssrc, mediaSSRC: v.stream.ssrc)), peer)
                counts.keyFrameRequests += 1
            }
            return
        }
        counts.frames += 1
        if f.isKeyFrame { counts.keyFrames += 1 }
        (counts.width, counts.height) = (picture.width, picture.height)
        out.append(
            .video(
                ReceivedVideo(
                    track: v.stream.track, source: v.stream.source, publisher: v.stream.publisher, picture: picture,
                    encoded: bytes,
                    timestamp: f.timestamp, isKeyFrame: f.isKeyFrame)))
    }

    /// A frame as received, or decrypted (end-to-end encrypted room); nil, and counted, when it does
    /// not decrypt: it is dropped, not decoded.
    static func incoming(
        _ bytes: [UInt8], _ media: SFrameMedia, from publisher: ParticipantID?, _ keys: SFrameKeyring?,
        _ counts: inout Counts
    ) -> [UInt8]? {
        guard let keys else { return bytes }
        guard let publisher, let plain = keys.decrypt(bytes, media, sender: publisher.rawValue) else {
            counts.decryptFailures += 1
            return nil
        }
        return plain
    }

    func sendRTCP(_ p: RTCPPacket, _ peer: LoadPeer) {
        guard var bytes = try? p.serialized() else { return }
        peer.send(rtcp: &bytes)
    }
}
