/// What a probe cluster says the path can carry: libwebrtc's `ProbeBitrateEstimator`. A probe is a
/// short burst of padding sent at a target rate above the estimate; its feedback gives the rate it
/// left at (bytes over the send interval, the last packet excluded) and the rate it arrived at (bytes
/// over the arrival interval, the first packet excluded). The path carries at most the lower of the
/// two; when the packets arrived clearly slower than they left (under 90 %), the link is saturated
/// and the estimate is 95 % of the arrival rate. Pure value: times in seconds, sizes in bytes.
public struct ProbeBitrateEstimator: Equatable, Sendable {
    /// Packets of a cluster that must be reported before it is judged (80 % of libwebrtc's 5).
    public static let minimumPackets = 4
    /// Clusters whose send or arrival interval is longer than this are not probes any more.
    static let maximumInterval = 1.0
    /// An arrival rate more than twice the send rate is a measurement error.
    static let maximumRatio = 2.0
    static let saturatedRatio = 0.9
    static let targetUtilization = 0.95
    static let slots = 4

    struct Cluster: Equatable, Sendable {
        var id = -1
        var count = 0
        var firstSend = Double.infinity
        var lastSend = -Double.infinity
        var firstArrival = Double.infinity
        var lastArrival = -Double.infinity
        var lastSendSize = 0
        var firstArrivalSize = 0
        var bytes = 0
        var judged = false
    }

    private var clusters = [Cluster](repeating: Cluster(), count: slots)

    public init() {}

    /// Bytes of a cluster that must be reported before it is judged, as a share of what it was to send.
    static let minimumBytesRatio = 0.8

    /// One reported packet of cluster `id`, which was to send `expectedBytes`. Returns the cluster's
    /// estimate (bits per second) the first time enough of it was reported (packets and bytes) and its
    /// intervals make sense; nil otherwise.
    public mutating func packet(cluster id: Int, sent: Double, arrived: Double, size: Int, expectedBytes: Int = 0)
        -> Double?
    {
        guard id >= 0 else { return nil }
        let slot = id % Self.slots
        if clusters[slot].id != id { clusters[slot] = Cluster(id: id) }
        var c = clusters[slot]
        c.count += 1
        c.bytes += size
        if sent >= c.lastSend {
            c.lastSend = sent
            c.lastSendSize = size
        }
        c.firstSend = min(c.firstSend, sent)
        if arrived < c.firstArrival {
            c.firstArrival = arrived
            c.firstArrivalSize = size
        }
        c.lastArrival = max(c.lastArrival, arrived)
        defer { clusters[slot] = c }
        guard !c.judged, c.count >= Self.minimumPackets,
            Double(c.bytes) >= Self.minimumBytesRatio * Double(expectedBytes)
        else { return nil }
        let sendInterval = c.lastSend - c.firstSend
        let arrivalInterval = c.lastArrival - c.firstArrival
        guard sendInterval > 0, sendInterval <= Self.maximumInterval, arrivalInterval > 0,
            arrivalInterval <= Self.maximumInterval
        else { return nil }
        let sendRate = Double(c.bytes - c.lastSendSize) * 8 / sendInterval
        let arrivalRate = Double(c.bytes - c.firstArrivalSize) * 8 / arrivalInterval
        guard arrivalRate <= Self.maximumRatio * sendRate else { return nil }
        c.judged = true
        if arrivalRate < Self.saturatedRatio * sendRate { return Self.targetUtilization * arrivalRate }
        return min(sendRate, arrivalRate)
    }
}
