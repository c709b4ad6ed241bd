/// One source of the load publisher: RTP packets at a set frame rate and packets per frame, VP8-looking
/// for video (RFC 7741 payload descriptor with a 15-bit picture id; a key frame header on the first
/// packet of a key frame, so servers that wait for a key frame start forwarding) or Opus-sized for
/// audio, each carrying a `PayloadStamp` at its end. Nothing is encoded: the payload is filler.
public struct PublisherStream: Sendable {
    public enum Kind: String, Sendable { case video, audio }

    public var source: UInt8
    public var kind: Kind
    public var ssrc: UInt32
    public var payloadType: UInt8
    public var framesPerSecond: Double
    public var packetsPerFrame: Int
    public var packetSize: Int
    /// The `sdes:mid` header extension's id (RFC 8843 section 15) and this stream's mid, when negotiated.
    public let midExtension: (id: UInt8, mid: String)?
    /// The `sdes:rtp-stream-id` header extension's id (RFC 8852 section 3.1) and this stream's rid: a
    /// simulcast layer's, sent on every packet beside the mid as Chromium sends them (the server
    /// learns the layer's SSRC from it).
    public let ridExtension: (id: UInt8, rid: String)?

    public private(set) var sentPackets = 0
    public private(set) var keyFrames = 0
    private var sequenceNumber: UInt16
    private var stampSequence: UInt32 = 0
    private var timestamp: UInt32
    private var pictureID: UInt16 = 0
    private var keyFramePending = true
    private var nextFrame: UInt64 = 0
    private var lastKeyFrame: UInt64 = 0
    /// The frame being sent: its packets, how many went out, when it started, over how long it is
    /// paced, and whether it is a key frame.
    private var frameCount = 0
    private var frameSent = 0
    private var frameStart: UInt64 = 0
    private var frameSpread: UInt64 = 0
    private var frameIsKey = false
    /// The `sdes:mid` header extension as sent (RFC 8285 section 4.2), made once.
    private let extensionBytes: [UInt8]

    /// A key frame at least this often, for a viewer whose request was lost.
    static let keyFrameInterval: UInt64 = 3_000_000_000
    /// The most bytes SRTP adds to an RTP packet (a GCM tag, 16).
    static let srtpRoom = 16

    public init(
        source: UInt8, kind: Kind, ssrc: UInt32, payloadType: UInt8, framesPerSecond: Double, packetsPerFrame: Int,
        packetSize: Int, midExtension: (id: UInt8, mid: String)?, ridExtension: (id: UInt8, rid: String)? = nil
    ) {
        self.source = source
        self.kind = kind
        self.ssrc = ssrc
        self.payloadType = payloadType
        self.framesPerSecond = max(1, framesPerSecond)
        self.packetsPerFrame = max(1, packetsPerFrame)
        self.packetSize = min(1200, max(80, packetSize))
        self.midExtension = midExtension
        self.ridExtension = ridExtension
        sequenceNumber = UInt16(truncatingIfNeeded: ssrc)
        timestamp = ssrc &* 7
        extensionBytes = Self.oneByteExtensions(
            [midExtension.map { (id: $0.id, value: $0.mid) }, ridExtension.map { (id: $0.id, value: $0.rid) }]
                .compactMap { $0 })
    }

    /// A one-byte header extension block (RFC 8285 section 4.2): 0xBEDE, its length in words, then
    /// each element (id, length - 1, value of 1 to 16 bytes), padded to a word. Empty without elements.
    static func oneByteExtensions(_ elements: [(id: UInt8, value: String)]) -> [UInt8] {
        var body: [UInt8] = []
        for (id, value) in elements {
            let bytes = Array(value.utf8.prefix(16))
            guard !bytes.isEmpty, (1...14).contains(id) else { continue }
            body += [id << 4 | UInt8(bytes.count - 1)] + bytes
        }
        guard !body.isEmpty else { return [] }
        while body.count % 4 != 0 { body.append(0) }
        return [0xBE, 0xDE, 0, UInt8(body.count / 4)] + body
    }

    public mutating func requestKeyFrame() { keyFramePending = true }

    /// When the next packet is due (CLOCK_MONOTONIC nanoseconds): the next of the frame being sent, or
    /// the next frame's first.
    public var due: UInt64 { frameSent < frameCount ? packetDue(frameSent) : nextFrame }

    /// A frame's first `burstBytes` leave at once, as libwebrtc's pacer sends them (it may run up to
    /// 40 ms ahead of its budget, in bursts of at most 63,000 bytes: `PacingController`'s
    /// `kDefaultBurstInterval` and `kMaxBurstSize`); what is left of a bigger frame is spread evenly
    /// over `pacedShare` of the frame interval, so that at high packet rates a frame is not one burst
    /// that overflows the server's socket buffer and counts as the server's loss.
    public static let burstBytes = 63_000
    public static let pacedShare = 0.5

    /// The packets due by `now`, handed to `send` one by one: a frame's burst when the frame is due,
    /// the others paced over `pacedShare` of the frame interval. Frames late by more than two
    /// intervals are skipped (the process did not get a CPU): the publisher does not burst to catch
    /// up, which would overflow the server's socket and count as the server's loss; it sends less
    /// than asked instead, which the benchmark reports as a client limit.
    public mutating func frames(now: UInt64, publisher: UInt32, packetScale: Double, send: (inout [UInt8]) -> Void) {
        let interval = UInt64(1e9 / framesPerSecond)
        if nextFrame == 0 || now > nextFrame + 2 * interval { nextFrame = now }
        while true {
            if frameSent < frameCount {
                guard packetDue(frameSent) <= now else { return }
                var p = packet(
                    first: frameSent == 0, last: frameSent == frameCount - 1, key: frameIsKey, publisher: publisher)
                send(&p)
                sentPackets += 1
                frameSent += 1
                if frameSent == frameCount {
                    timestamp &+= UInt32(kind == .video ? 90_000 / framesPerSecond : 48_000 / framesPerSecond)
                    pictureID = (pictureID &+ 1) & 0x7FFF
                }
                continue
            }
            guard nextFrame <= now else { return }
            frameIsKey = kind == .video && (keyFramePending || now - lastKeyFrame >= Self.keyFrameInterval)
            if frameIsKey {
                keyFramePending = false
                lastKeyFrame = now
                keyFrames += 1
            }
            frameCount = kind == .video ? max(1, Int((Double(packetsPerFrame) * packetScale).rounded())) : 1
            frameSent = 0
            frameStart = nextFrame
            frameSpread = UInt64(Double(interval) * Self.pacedShare)
            nextFrame += interval
        }
    }

    /// When packet `index` of the current frame is due: at the frame's start within the burst, then
    /// evenly over the spread, the frame's last packet at its end.
    private func packetDue(_ index: Int) -> UInt64 {
        let burst = max(1, Self.burstBytes / max(1, packetSize))
        guard index >= burst else { return frameStart }
        return frameStart + frameSpread * UInt64(index - burst + 1) / UInt64(frameCount - burst)
    }

    private mutating func packet(first: Bool, last: Bool, key: Bool, publisher: UInt32) -> [UInt8] {
        // Room for the SRTP tag, so protecting in place does not grow the array a second time.
        var p = [UInt8]()
        p.reserveCapacity(packetSize + Self.srtpRoom)
        p.append(contentsOf: repeatElement(0, count: packetSize))
        p[0] = 0x80 | (extensionBytes.isEmpty ? 0 : 0x10)
        p[1] = payloadType | (last && kind == .video ? 0x80 : 0)
        p[2] = UInt8(sequenceNumber >> 8)
        p[3] = UInt8(truncatingIfNeeded: sequenceNumber)
        PayloadStamp.put(timestamp, into: &p, at: 4)
        PayloadStamp.put(ssrc, into: &p, at: 8)
        sequenceNumber &+= 1
        var offset = 12
        for (i, b) in extensionBytes.enumerated() { p[offset + i] = b }
        offset += extensionBytes.count
        if kind == .video {
            // X=1, S on a frame's first packet, PID 0; I=1; a 15-bit picture id (M=1).
            p[offset] = first ? 0x90 : 0x80
            p[offset + 1] = 0x80
            p[offset + 2] = 0x80 | UInt8(pictureID >> 8)
            p[offset + 3] = UInt8(truncatingIfNeeded: pictureID)
            offset += 4
            if first {
                // The frame tag (RFC 6386 section 9.1): bit 0 is 0 on a key frame; show_frame set;
                // then a key frame's start code and 640x360 (sizes the forwarding never reads).
                p[offset] = key ? 0x10 : 0x11
                p[offset + 1] = 0x02
                p[offset + 2] = 0x00
                if key {
                    for (i, b) in [0x9D, 0x01, 0x2A, 0x80, 0x02, 0x68, 0x01].enumerated() {
                        p[offset + 3 + i] = UInt8(b)
                    }
                }
            }
        }
        let stamp = PayloadStamp(
            publisher: publisher, source: source, sequence: stampSequence, sentNanoseconds: MonotonicClock.nanoseconds()
        )
        stampSequence &+= 1
        stamp.write(into: &p, at: p.count - PayloadStamp.size)
        return p
    }
}
