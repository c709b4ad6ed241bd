/// What a probe cluster says the path can carry: libwebrtc's `ProbeBitrateEstimator`. A probe is a
/// short burst of padding sent at a target rate above the estimate; its feedback gives the rate it
/// left at (bytes over the send interval, the last packet excluded) and the rate it arrived at. The
/// path carries at most the lower of the two; when the packets arrived clearly slower than they left
/// (under 90 %), the link is saturated and the estimate is 95 % of the arrival rate. Pure value:
/// times in seconds, sizes in bytes.
///
/// Two things differ from libwebrtc, both for a bottleneck that is a token bucket (a policer, an HTB
/// class): such a link lets its burst allowance (a couple of kilobytes) through at once when it was
/// idle, which over a probe of a dozen packets reads as twice its rate. So a cluster is judged only
/// once it is complete (the bytes reported, received or lost, reach `minimumBytesRatio` of what it
/// was to send: the packets still queued at the bottleneck are the ones that tell its rate), and
/// the arrival rate is taken over the later half of its packets by arrival, after the burst.
public struct ProbeBitrateEstimator: Equatable, Sendable {
    /// Packets of a cluster that must be received before it is judged (80 % of libwebrtc's 5).
    public static let minimumPackets = 4
    /// Clusters whose send or arrival interval is longer than this are not probes any more.
    static let maximumInterval = 1.0
    /// An arrival rate more than twice the send rate is a measurement error.
    static let maximumRatio = 2.0
    static let saturatedRatio = 0.9
    static let targetUtilization = 0.95
    static let slots = 4
    /// The arrivals kept per cluster (the latest reported): enough for the later half of a cluster.
    static let kept = 64

    struct Cluster: Equatable, Sendable {
        var id = -1
        var count = 0
        /// Bytes reported, received or lost.
        var reported = 0
        var firstSend = Double.infinity
        var lastSend = -Double.infinity
        var lastSendSize = 0
        var bytes = 0
        var judged = false
        /// The latest received packets' arrival times and sizes (a ring of `kept`).
        var arrivals: [Double] = []
        var sizes: [Int] = []
    }

    private var clusters = [Cluster](repeating: Cluster(), count: slots)

    public init() {}

    /// Bytes of a cluster that must be reported (received or lost) before it is judged, as a share of
    /// what it was to send.
    static let minimumBytesRatio = 0.95

    /// One reported packet of cluster `id`, which was to send `expectedBytes`: when it arrived, or nil
    /// when the receiver reports it lost. Returns the cluster's estimate (bits per second) the first
    /// time enough of it was reported and its intervals make sense; nil otherwise.
    public mutating func packet(cluster id: Int, sent: Double, arrived: Double?, size: Int, expectedBytes: Int = 0)
        -> Double?
    {
        guard id >= 0 else { return nil }
        let slot = id % Self.slots
        if clusters[slot].id != id { clusters[slot] = Cluster(id: id) }
        var c = clusters[slot]
        defer { clusters[slot] = c }
        c.reported = min(c.reported + max(size, 0), 1 << 40)
        if let arrived {
            c.count += 1
            c.bytes = min(c.bytes + max(size, 0), 1 << 40)
            if sent >= c.lastSend {
                c.lastSend = sent
                c.lastSendSize = size
            }
            c.firstSend = min(c.firstSend, sent)
            if c.arrivals.count < Self.kept {
                c.arrivals.append(arrived)
                c.sizes.append(size)
            } else {
                c.arrivals[(c.count - 1) % Self.kept] = arrived
                c.sizes[(c.count - 1) % Self.kept] = size
            }
        }
        guard !c.judged, c.count >= Self.minimumPackets,
            Double(c.reported) >= Self.minimumBytesRatio * Double(expectedBytes)
        else { return nil }
        let sendInterval = c.lastSend - c.firstSend
        guard sendInterval > 0, sendInterval <= Self.maximumInterval,
            let arrivalRate = Self.laterHalfRate(c.arrivals, c.sizes)
        else { return nil }
        let sendRate = Double(c.bytes - c.lastSendSize) * 8 / sendInterval
        guard arrivalRate <= Self.maximumRatio * sendRate else { return nil }
        c.judged = true
        if arrivalRate < Self.saturatedRatio * sendRate { return Self.targetUtilization * arrivalRate }
        return min(sendRate, arrivalRate)
    }

    /// The arrival rate (bits per second) of the later half of the packets by arrival time: their
    /// bytes after the first of them over their arrival interval; nil when that interval is empty
    /// or too long.
    static func laterHalfRate(_ arrivals: [Double], _ sizes: [Int]) -> Double? {
        guard arrivals.count == sizes.count, arrivals.count >= 2 else { return nil }
        let order = arrivals.indices.sorted { arrivals[$0] < arrivals[$1] }
        let from = min(order.count / 2, order.count - 2)
        let first = arrivals[order[from]]
        let last = arrivals[order[order.count - 1]]
        let interval = last - first
        guard interval > 0, interval <= maximumInterval else { return nil }
        var bytes = 0
        for k in order[(from + 1)...] { bytes += sizes[k] }
        return Double(bytes) * 8 / interval
    }
}
