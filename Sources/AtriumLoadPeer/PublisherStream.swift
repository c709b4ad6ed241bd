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
    public var midExtension: (id: UInt8, mid: String)?

    public private(set) var sentPackets = 0
    public private(set) var keyFrames = 0
    private var sequenceNumber: UInt16
    private var stampSequence: UInt32 = 0
    private var timestamp: UInt32
    private var pictureID: UInt16 = 0
    private var keyFramePending = true
    private var nextFrame: UInt64 = 0
    private var lastKeyFrame: UInt64 = 0

    /// A key frame at least this often, for a viewer whose request was lost.
    static let keyFrameInterval: UInt64 = 3_000_000_000

    public init(
        source: UInt8, kind: Kind, ssrc: UInt32, payloadType: UInt8, framesPerSecond: Double, packetsPerFrame: Int,
        packetSize: Int, midExtension: (id: UInt8, mid: String)?
    ) {
        self.source = source
        self.kind = kind
        self.ssrc = ssrc
        self.payloadType = payloadType
        self.framesPerSecond = max(1, framesPerSecond)
        self.packetsPerFrame = max(1, packetsPerFrame)
        self.packetSize = min(1200, max(80, packetSize))
        self.midExtension = midExtension
        sequenceNumber = UInt16(truncatingIfNeeded: ssrc)
        timestamp = ssrc &* 7
    }

    public mutating func requestKeyFrame() { keyFramePending = true }

    /// When the next frame is due (CLOCK_MONOTONIC nanoseconds).
    public var due: UInt64 { nextFrame }

    /// The packets of every frame due by `now`, handed to `send` one by one. A frame late by more
    /// than a second is skipped (the loop was stalled), so the publisher never bursts to catch up.
    public mutating func frames(now: UInt64, publisher: UInt32, packetScale: Double, send: (inout [UInt8]) -> Void) {
        let interval = UInt64(1e9 / framesPerSecond)
        if nextFrame == 0 || now > nextFrame + 1_000_000_000 { nextFrame = now }
        while nextFrame <= now {
            let key = kind == .video && (keyFramePending || now - lastKeyFrame >= Self.keyFrameInterval)
            if key {
                keyFramePending = false
                lastKeyFrame = now
                keyFrames += 1
            }
            let count = kind == .video ? max(1, Int((Double(packetsPerFrame) * packetScale).rounded())) : 1
            for i in 0..<count {
                var p = packet(first: i == 0, last: i == count - 1, key: key, publisher: publisher)
                send(&p)
                sentPackets += 1
            }
            timestamp &+= UInt32(kind == .video ? 90_000 / framesPerSecond : 48_000 / framesPerSecond)
            pictureID = (pictureID &+ 1) & 0x7FFF
            nextFrame += interval
        }
    }

    private mutating func packet(first: Bool, last: Bool, key: Bool, publisher: UInt32) -> [UInt8] {
        var p = [UInt8](repeating: 0, count: packetSize)
        var extensionBytes: [UInt8] = []
        if let ext = midExtension {
            // One-byte header extension (RFC 8285 section 4.2): 0xBEDE, length in words, elements.
            let mid = Array(ext.mid.utf8.prefix(16))
            var element = [ext.id << 4 | UInt8(mid.count - 1)] + mid
            while element.count % 4 != 0 { element.append(0) }
            extensionBytes = [0xBE, 0xDE, 0, UInt8(element.count / 4)] + element
        }
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
