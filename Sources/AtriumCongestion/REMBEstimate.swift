/// A viewer's estimate from its REMBs (draft-alvestrand-rmcat-remb-03), for a subscriber that offers
/// nothing else (no transport-wide feedback: aiortc, an older client): what the allocator shares out
/// among its tracks. Pure; the media worker feeds it each REMB with its SSRCs and its clock.
///
/// Two things make a REMB more than a number to copy:
///
/// - A receiver may send one REMB per stream: aiortc runs one receive-side estimator per track, each
///   reporting what reaches that track's SSRC. Reports naming different SSRCs add up; a newer report
///   naming the same SSRCs replaces the older; one not renewed within `freshness` no longer counts.
/// - A receive-side estimator never reports much more than it receives (libwebrtc's and aiortc's AIMD
///   cap it at 1.5 times the incoming rate plus 10 kbit/s, and raise it by about 8 % a second), and
///   this server does not probe a REMB receiver, so the REMB of a viewer given a low layer is about
///   1.5 times that layer, whatever its link: allocating by it alone would keep the viewer there. Its
///   REMB going down is what says its link is full (the estimator's decrease on overuse: 0.85 times
///   what arrived). So until a report comes lower than the last one for the same streams, the viewer
///   is allocated as if it had room for every track's step up to its top (`forAllocation`, from
///   `Allocator.Result.needed`); for `decreaseMemory` after one, by its REMB. A viewer whose link
///   cannot carry its top layers steps down on its first decrease, and the allocator's hold after a
///   step down (2, 4, 8 s) spaces out the next try.
public struct REMBEstimate: Sendable, Equatable {
    struct Report: Sendable, Equatable {
        var ssrcs: [UInt32]
        var bitrate: Double
        var at: Double
    }

    var reports: [Report] = []
    /// When a report last came lower than the one before it for the same streams.
    public private(set) var decreasedAt = -Double.infinity

    /// A report not renewed for this long is dropped (receivers send one at least every second).
    public static let freshness = 2.5
    /// After a decrease, the REMB is taken as it is for this long.
    public static let decreaseMemory = 6.0
    /// A report this much below the last one for the same streams is a decrease (not noise).
    public static let decrease = 0.97
    /// At most this many distinct SSRC sets are kept (one per track of the viewer's, a few tracks).
    public static let maximumReports = 16

    public init() {}

    /// A REMB from the receiver: `bitrate` for the streams `ssrcs` (order ignored).
    public mutating func received(bitrate: Double, ssrcs: [UInt32], now: Double) {
        let key = ssrcs.sorted()
        reports.removeAll { now - $0.at > Self.freshness }
        if let i = reports.firstIndex(where: { $0.ssrcs == key }) {
            if bitrate < Self.decrease * reports[i].bitrate { decreasedAt = now }
            reports[i].bitrate = bitrate
            reports[i].at = now
            return
        }
        // A report over some of another's SSRCs replaces it (a receiver that regrouped its streams).
        reports.removeAll { r in r.ssrcs.contains(where: key.contains) }
        if reports.count >= Self.maximumReports { reports.removeFirst() }
        reports.append(Report(ssrcs: key, bitrate: bitrate, at: now))
    }

    /// The receiver's estimate: its fresh reports added up; nil when none is fresh.
    public func estimate(now: Double) -> Double? {
        let fresh = reports.filter { now - $0.at <= Self.freshness }
        guard !fresh.isEmpty else { return nil }
        return fresh.reduce(0) { $0 + $1.bitrate }
    }

    /// What the allocator is given at `now` for a REMB of `remb` when every track's step up to its
    /// top would need `needed` (nil: no allocation yet, so no limit is known: `unlimited`, every track
    /// at its top as before the first REMB): the REMB after a decrease, else at least `needed` (see
    /// above).
    public func forAllocation(remb: Double, needed: Double?, now: Double) -> Double {
        guard now - decreasedAt > Self.decreaseMemory else { return remb }
        return max(remb, needed ?? Self.unlimited)
    }

    /// No limit known (1 Tbit/s).
    public static let unlimited = 1e12
}
