/// The frames of one relayed session that could not be published yet (Redis unreachable, or the
/// peer node's inbox not subscribed again yet), oldest first. While a backlog exists every later frame
/// of the session joins it, so the peer receives them in order once they are flushed. Bounded in frames,
/// bytes and age (docs/cluster.md, "Redis unreachable"): beyond a bound the session is given up.
/// A value: the relay owns one per session with frames waiting and performs the publishing.
struct RelayBacklog {
    /// At most this many frames wait per session (a client's requests, or the owner's events).
    static let maxFrames = 512
    /// At most this many bytes of frames wait per session.
    static let maxBytes = 1 << 20

    /// The node the frames go to.
    let node: String
    /// When the first frame waited (the relay's monotonic clock, seconds).
    let since: Double
    private(set) var frames: [String] = []
    private(set) var bytes = 0

    init(node: String, since: Double) {
        self.node = node
        self.since = since
    }

    var isEmpty: Bool { frames.isEmpty }

    /// Queues a frame; false (nothing queued) when a bound would be passed.
    mutating func append(_ frame: String) -> Bool {
        let size = frame.utf8.count
        guard frames.count < Self.maxFrames, size <= Self.maxBytes - bytes else { return false }
        frames.append(frame)
        bytes += size
        return true
    }

    /// Publishes the frames in order through `publish` until one fails; what failed stays queued.
    mutating func flush(_ publish: (String) -> Bool) {
        var sent = 0
        for frame in frames {
            guard publish(frame) else { break }
            sent += 1
            bytes -= frame.utf8.count
        }
        frames.removeFirst(sent)
    }

    /// Whether the frames have waited longer than `limit` seconds.
    func expired(now: Double, limit: Double) -> Bool { now - since > limit }
}
