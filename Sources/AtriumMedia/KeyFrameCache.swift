import AtriumRTP

/// The current picture of one video receive stream: its packets from the last key frame on (the key
/// frame and the deltas that follow it, so a decoder started from them shows the picture as it is
/// now, not as it was at the key frame), bounded in bytes, packets and age, replaced at the next key
/// frame, and let go earlier where nobody would replay it (`ViewerStart.keep`). A new viewer is
/// started from it instead of asking the publisher for a key frame. Packets are kept back to back in
/// one buffer that grows to the largest picture and is then reused: storing allocates nothing once
/// the buffer has grown; it is returned when the picture is forgotten, and handed to the worker's
/// spares (`PictureSpares`) when it is let go.
struct KeyFrameCache {
    struct Limits: Equatable, Sendable {
        var bytes: Int
        var packets: Int
        /// Seconds since its key frame after which the cache is not served.
        var age: Double

        static let disabled = Limits(bytes: 0, packets: 0, age: 0)
    }

    let limits: Limits
    private var bytes: [UInt8] = []
    private var ends: [Int] = []
    /// Where the current picture starts; nil while there is none to serve (before the first key
    /// frame, or after the bound was passed until the next one).
    private(set) var keyFrameAt: Double?
    private(set) var keySequence: UInt16 = 0
    /// Bumped at every new key frame: a replay in progress knows its packets were replaced.
    private(set) var generation = 0
    /// The size of the last picture let go: the spare the next one takes is the one that fits it best.
    private var lastPictureBytes = 0

    init(limits: Limits) { self.limits = limits }

    var count: Int { ends.count }
    var byteCount: Int { bytes.count }
    /// What its buffers take: the largest picture since it was last forgotten, and the slack of the
    /// growth to it.
    var bytesHeld: Int { bytes.capacity + ends.capacity * MemoryLayout<Int>.stride }
    var isEnabled: Bool { limits.bytes > 0 && limits.packets > 0 }

    /// Whether a viewer can be started from it now.
    func isServable(now: Double) -> Bool {
        guard let at = keyFrameAt, !ends.isEmpty else { return false }
        return now - at <= limits.age
    }

    /// Stores a packet of the stream (after RTX unwrapping). A key frame's first packet starts a new
    /// picture; packets older than it (late retransmissions) are not kept; past a bound the cache
    /// is emptied until the next key frame, and the call returns true (the owner asks for one, so the
    /// cache fills again before the next viewer needs it).
    /// `keepFor`: seconds after its key frame the picture is kept; past that it is let go
    /// (`ViewerStart.keep`) without asking for another.
    /// `spares`: the worker's buffers let go by other pictures, which a new picture takes when it has
    /// none of its own, and where a picture let go puts its own.
    @discardableResult
    mutating func store(
        _ packet: UnsafeRawBufferPointer, sequence: UInt16, startsKeyFrame: Bool, now: Double,
        keepFor: Double = .infinity, spares: inout PictureSpares
    ) -> Bool {
        guard isEnabled else { return false }
        if !startsKeyFrame, let at = keyFrameAt, now - at > keepFor {
            lapse(spares: &spares)
            return false
        }
        if startsKeyFrame {
            if bytes.capacity == 0 { spares.take(fitting: lastPictureBytes, &bytes, &ends) }
            bytes.removeAll(keepingCapacity: true)
            ends.removeAll(keepingCapacity: true)
            keyFrameAt = now
            keySequence = sequence
            generation &+= 1
        } else if keyFrameAt == nil || SequenceNumber.isNewer(keySequence, than: sequence) {
            return false
        }
        guard bytes.count + packet.count <= limits.bytes, ends.count < limits.packets else {
            invalidate()
            return true
        }
        bytes.append(contentsOf: packet)
        ends.append(bytes.count)
        return false
    }

    /// The cached packet with this sequence number, for answering a NACK the stream's retransmission
    /// buffer no longer can (a replay reaches further back than it).
    func withPacket<R>(sequence: UInt16, _ body: (ArraySlice<UInt8>) -> R) -> R? {
        let guess = Int(sequence &- keySequence)
        func matches(_ i: Int) -> Bool {
            let start = i == 0 ? 0 : ends[i - 1]
            return ends[i] - start >= 4 && UInt16(bytes[start + 2]) << 8 | UInt16(bytes[start + 3]) == sequence
        }
        if guess < ends.count, matches(guess) { return withPacket(guess, body) }
        guard let i = ends.indices.first(where: matches) else { return nil }
        return withPacket(i, body)
    }

    /// Forgets the picture (a codec change, a paused or ended stream, a picture over the bound) and
    /// returns its buffers: the next picture grows them again.
    mutating func invalidate() {
        // A paused stream's packets each land here: only the first gives the buffers back.
        if bytes.capacity > 0 { bytes = [] }
        if ends.capacity > 0 { ends = [] }
        keyFrameAt = nil
        generation &+= 1
    }

    /// Lets the picture go until the next key frame, asking for none. Its buffers go to the worker's
    /// spares, for the next picture of this stream or another (storing it allocates nothing).
    mutating func lapse(spares: inout PictureSpares) {
        guard keyFrameAt != nil else { return }
        lastPictureBytes = bytes.count
        spares.give(&bytes, &ends)
        keyFrameAt = nil
        generation &+= 1
    }

    /// Calls `body` with packet `i` (0: the key frame's first).
    func withPacket<R>(_ i: Int, _ body: (ArraySlice<UInt8>) -> R) -> R? {
        guard i >= 0, i < ends.count else { return nil }
        let start = i == 0 ? 0 : ends[i - 1]
        return body(bytes[start..<ends[i]])
    }

    /// The size of packet `i`.
    func size(_ i: Int) -> Int {
        guard i >= 0, i < ends.count else { return 0 }
        return ends[i] - (i == 0 ? 0 : ends[i - 1])
    }
}

extension MediaConfiguration {
    var keyFrameCache: KeyFrameCache.Limits {
        guard keyFrameCacheBytes > 0, keyFrameCachePackets > 0, keyFrameCacheSeconds > 0 else { return .disabled }
        return KeyFrameCache.Limits(bytes: keyFrameCacheBytes, packets: keyFrameCachePackets, age: keyFrameCacheSeconds)
    }
}

/// The buffers of the pictures one worker's caches let go (`KeyFrameCache.lapse`), for the next key
/// frame of any of its streams. A browser's camera sends a key frame only when asked, so most cameras
/// hold no picture most of the time, and a few spare buffers serve them all instead of one each.
/// Giving and taking allocate nothing (up to `capacity` spares); `trim` returns those no picture took
/// since its last call.
struct PictureSpares {
    static let capacity = 64
    /// How often `trim` runs (engine seconds): longer than a camera's key-frame interval.
    static let trimInterval = 5.0
    private var bytes: [[UInt8]] = []
    private var ends: [[Int]] = []
    /// The fewest spares on hand since the last trim: that many were not needed.
    private var fewest = 0

    init() {
        bytes.reserveCapacity(Self.capacity)
        ends.reserveCapacity(Self.capacity)
    }

    var count: Int { bytes.count }
    var bytesHeld: Int {
        var n = 0
        var i = 0
        while i < bytes.count {
            n += bytes[i].capacity + ends[i].capacity * MemoryLayout<Int>.stride
            i += 1
        }
        return n
    }

    /// Takes `b` and `e` (emptied, their capacity kept) as spares; past `capacity` they are freed.
    mutating func give(_ b: inout [UInt8], _ e: inout [Int]) {
        guard b.capacity > 0 || e.capacity > 0 else { return }
        guard bytes.count < Self.capacity else {
            b = []
            e = []
            return
        }
        b.removeAll(keepingCapacity: true)
        e.removeAll(keepingCapacity: true)
        bytes.append([])
        ends.append([])
        swap(&bytes[bytes.count - 1], &b)
        swap(&ends[ends.count - 1], &e)
    }

    /// Hands over the spare that fits `need` bytes most tightly (the largest when none does), into
    /// `b` and `e`, which hold nothing.
    mutating func take(fitting need: Int, _ b: inout [UInt8], _ e: inout [Int]) {
        guard !bytes.isEmpty else { return }
        var best = 0
        var i = 1
        while i < bytes.count {
            let c = bytes[i].capacity
            let bestCapacity = bytes[best].capacity
            let fits = c >= need
            let bestFits = bestCapacity >= need
            if (fits && (!bestFits || c < bestCapacity)) || (!fits && !bestFits && c > bestCapacity) { best = i }
            i += 1
        }
        swap(&bytes[best], &b)
        swap(&ends[best], &e)
        bytes.swapAt(best, bytes.count - 1)
        ends.swapAt(best, ends.count - 1)
        bytes.removeLast()
        ends.removeLast()
        fewest = min(fewest, bytes.count)
    }

    /// Frees the spares no picture needed since the last call.
    mutating func trim() {
        let unused = min(fewest, bytes.count)
        if unused > 0 {
            bytes.removeLast(unused)
            ends.removeLast(unused)
        }
        fewest = bytes.count
    }
}
