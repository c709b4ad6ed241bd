import AtriumCongestion

/// What a transport knows of the path toward its subscriber (the sender side of Google congestion
/// control): the transport-wide sequence numbers sent and the estimate built from their feedback
/// (`MediaEngine+Estimation`), or the subscriber's REMBs; the probes sent for more
/// (`MediaEngine+Probing`); the allocator's last word (`MediaEngine+Allocation`); and the pacer that
/// lets video out at the estimate's pace (`MediaEngine+Pacer`). Owned by the worker thread.
final class Downlink {
    /// Toward a subscriber that negotiated transport-wide feedback: the next transport-wide sequence
    /// number, each sent packet's record (a table of 256 to 4096), and the estimate built from the
    /// feedback (`MediaEngine+Estimation`).
    var sendSequence: UInt16 = 0
    var sent: [SentPacket] = []
    var trend = TrendlineEstimator()
    var rate = RateController()
    var estimating = false
    var ackedBytes = 0
    var lastRateUpdate: Double?
    var feedbackReceived = 0
    var feedbackLost = 0
    var lastLossUpdate: Double = 0
    /// The estimator of the probe clusters' results (each sent packet names its cluster), when to
    /// probe, and the cluster being sent (`MediaEngine+Probing`).
    var probeEstimator = ProbeBitrateEstimator()
    var probes = ProbeController()
    var probing: ProbeInProgress?
    /// Since when the pacer has held packets, as the ticks saw it (nil: empty at the last tick).
    var queuedSince: Double?
    /// The last cluster started and the bytes it was to send (judged once 95 % of them are reported,
    /// received or lost).
    var probeCluster: (cluster: Int, bytes: Int) = (-1, 0)
    var probeBytes = 0
    /// A subscriber without transport-wide feedback that sends REMB: its REMBs (`REMBEstimate`) are
    /// its estimate.
    var rembEstimate = false
    var rembs = REMBEstimate()
    /// The estimate last reported to the coordinator (`MediaEvent.estimate`).
    var reportedEstimate: Double?
    var reportedBottleneck = false
    /// The allocator's last word (`MediaCommand.allocate`): nil before the first.
    var allocated: Double?
    var wanted: Double?
    /// The estimate at which every track could step up to its top (`Allocator.Result.needed`).
    var needed: Double?
    var pausedTracks = 0
    /// The pacer: a token bucket at the rate controller's pacing rate and the packets it holds back
    /// (`MediaEngine+Pacer`), with what it did.
    var bucket: TokenBucket?
    var paced = PacerQueue()
    var pacerDelayed = 0
    var pacerDropped = 0

    /// Whether something estimates the bandwidth toward this subscriber.
    var hasEstimate: Bool { estimating || rembEstimate }
}

/// A packet sent toward a subscriber with a transport-wide sequence number: when it went, its size,
/// and the probe cluster it belonged to (-1: none).
struct SentPacket: TimedSequenceRecord {
    var tag: Int32 = -1
    var size: Int32 = 0
    var cluster: Int16 = -1
    var at: Double = 0
}
