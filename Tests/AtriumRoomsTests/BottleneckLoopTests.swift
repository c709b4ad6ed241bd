import Testing

@testable import AtriumCongestion
@testable import AtriumMediaControl

/// A shaped viewer in memory: the whole loop toward one viewer (estimation, probing, the
/// allocator with its holds, the pacer) against a bottleneck shaped as the browser test shapes it
/// (a token bucket with a 1.6 kB burst allowance, an HTB class, and a 30-packet drop-tail queue;
/// 20 ms propagation), 500 kbit/s, then 250, then unlimited. The publisher sends audio, a screen
/// share (full size at 5 fps and at 30 fps) and a three-layer camera, each layer starting on a key
/// frame of its measured size. Feedback every 100 ms, as transport-wide feedback comes.
@Suite struct BottleneckLoopTests {
    struct Layer {
        var bitrate: Double
        var fps: Double
        var keyBytes: Int
    }

    struct Track {
        var id: String
        var kind: Allocator.Kind
        var layers: [Layer]
        /// The layer being sent (nil: paused) and whether its next frame is a key frame.
        var sending: Int?
        var keyNext = true
        var nextFrame = 0.0
    }

    struct Packet {
        var sent: Double
        var bytes: Int
        /// The track's index (-1: probe padding) and frame number.
        var track: Int
        var frame: Int
        var cluster: Int
        var arrival: Double?
    }

    struct Outcome {
        /// Per second: media packets sent and lost, the estimate, and the choices.
        var sent: [Int] = []
        var lost: [Int] = []
        var estimates: [Double] = []
        var choices: [[String: Allocator.Choice]] = []
        /// When each share frame was complete at the viewer.
        var shareFrames: [Double] = []

        func loss(_ range: Range<Int>) -> Double {
            let s = range.reduce(0) { $0 + sent[$1] }
            let l = range.reduce(0) { $0 + lost[$1] }
            return Double(l) / Double(max(s, 1))
        }

        func longestShareGap(from: Double, to: Double) -> Double {
            var last = from
            var longest = 0.0
            for t in shareFrames where t > from && t <= to {
                longest = max(longest, t - last)
                last = t
            }
            return max(longest, to - last)
        }
    }

    static let mtu = 1200
    static let burstBytes = 1600.0
    static let queueLimit = 30
    static let propagation = 0.02

    /// `phases`: the link's rate from each time on; `topRamp`: the camera's top layer's bitrate at a
    /// time (a publisher's encoder ramping up), else fixed.
    static func run(
        phases: [(Double, Double)], seconds: Int, share: Bool = true, topRamp: ((Double) -> Double)? = nil
    ) -> Outcome {
        var tracks = [
            Track(id: "mic", kind: .audio, layers: [Layer(bitrate: 48_000, fps: 50, keyBytes: 0)], sending: 0),
            Track(
                id: "share", kind: .screenShare,
                layers: [
                    Layer(bitrate: 100_000, fps: 5, keyBytes: 20_000),
                    Layer(bitrate: 2_000_000, fps: 30, keyBytes: 60_000),
                ]),
            Track(
                id: "cam", kind: .camera,
                layers: [
                    Layer(bitrate: 150_000, fps: 30, keyBytes: 6_000),
                    Layer(bitrate: 500_000, fps: 30, keyBytes: 15_000),
                    Layer(bitrate: 1_500_000, fps: 30, keyBytes: 40_000),
                ]),
        ]
        if !share { tracks.remove(at: 1) }
        let camera = tracks.count - 1
        var trend = TrendlineEstimator()
        var rate = RateController()
        var probes = ProbeController()
        var judge = ProbeBitrateEstimator()
        var bucket = TokenBucket(rate: rate.pacingRate(now: 0), now: 0)
        var pacer: [Packet] = []
        var pacerBytes = 0
        var queuedSince: Double?
        var departures: [Double] = []
        var linkFree = 0.0
        var outstanding: [Packet] = []
        var choices: [String: Allocator.Choice] = [:]
        var holds: [String: UpHold] = [:]
        var viewer = ViewerAllocation()
        var reported: Double?
        var wanted = 0.0
        var needed = 0.0
        var allocated = 0.0
        var probe: (cluster: Int, bitrate: Double, start: Double, duration: Double, sent: Int, packets: Int)?
        var probeExpected = (cluster: -1, bytes: 0)
        var ackedBytes = 0
        var lastRate = 0.0
        var received = 0
        var lostReported = 0
        var lastLoss = 0.0
        var frames: [Int: (packets: Int, arrived: Int, last: Double)] = [:]
        var frameNumber = 0
        var out = Outcome()
        var second = (sent: 0, lost: 0)
        let step = 0.001
        var now = 0.0

        func link(_ p: Packet) {
            var p = p
            let capacity = phases.last { $0.0 <= now }?.1 ?? phases[0].1
            departures.removeAll { $0 <= now }
            if departures.count < Self.queueLimit {
                linkFree = max(linkFree, now - Self.burstBytes * 8 / capacity) + Double(p.bytes * 8) / capacity
                departures.append(linkFree)
                p.arrival = max(linkFree, now) + Self.propagation
            }
            outstanding.append(p)
        }
        func lose(_ p: Packet) {
            var p = p
            p.arrival = nil
            outstanding.append(p)
        }

        while now < Double(seconds) {
            if let topRamp { tracks[camera].layers[2].bitrate = topRamp(now) }
            // The publisher's frames, packetized: audio straight out, video through the pacer.
            for k in tracks.indices {
                guard let layer = tracks[k].sending, now >= tracks[k].nextFrame else { continue }
                let l = tracks[k].layers[layer]
                tracks[k].nextFrame = now + 1 / l.fps
                let key = tracks[k].kind != .audio && tracks[k].keyNext
                tracks[k].keyNext = false
                var size = key ? l.keyBytes : Int(l.bitrate / l.fps / 8)
                frameNumber += 1
                var count = 0
                while size > 0 {
                    let bytes = min(size, Self.mtu)
                    size -= bytes
                    count += 1
                    let p = Packet(sent: now, bytes: bytes, track: k, frame: frameNumber, cluster: -1)
                    second.sent += 1
                    if tracks[k].kind == .audio {
                        bucket.force(bytes, now: now)
                        link(p)
                        continue
                    }
                    let limit = max(bucket.rate / 8 * 0.5, 64_000)
                    if Double(pacerBytes + bytes) <= limit {
                        pacer.append(p)
                        pacerBytes += bytes
                    } else {
                        lose(p)
                    }
                }
                if tracks[k].kind == .screenShare { frames[frameNumber] = (count, 0, 0) }
            }
            let pacing = max(rate.pacingRate(now: now), 200_000, allocated * 1.1)
            if bucket.rate != pacing { bucket.setRate(pacing) }
            while let head = pacer.first, bucket.take(head.bytes, now: now) {
                var p = pacer.removeFirst()
                pacerBytes -= p.bytes
                p.sent = now
                link(p)
            }
            // Probing (padding straight out, as the engine sends it, once the pacer is empty or has
            // held packets for a while).
            queuedSince = pacer.isEmpty ? nil : (queuedSince ?? now)
            if probe == nil, choices.count == tracks.count,
                let c = probes.probe(
                    estimate: rate.estimate, wanted: wanted / Allocator.transportWideShare,
                    needed: needed / Allocator.transportWideShare, takenFrom: rate.probeTakenFrom(now: now),
                    queuedSince: queuedSince, overusing: trend.signal == .overusing, now: now)
            {
                probe = (c.cluster, c.bitrate, now, c.duration, 0, 0)
                probeExpected = (c.cluster, Int(c.bitrate / 8 * c.duration))
            }
            if var p = probe {
                let elapsed = now - p.start
                let due = Int(p.bitrate / 8 * min(elapsed + 0.005, p.duration))
                while p.sent < due || (elapsed >= p.duration && p.packets < 6) {
                    link(Packet(sent: now, bytes: 260, track: -1, frame: 0, cluster: p.cluster))
                    p.sent += 260
                    p.packets += 1
                }
                probe = elapsed >= p.duration ? nil : p
            }
            // The viewer: frames completed; feedback every 100 ms on what arrived or was lost by then.
            if Int((now / step).rounded()) % 100 == 0 {
                let due = outstanding.filter { ($0.arrival ?? $0.sent + 0.05) <= now }
                outstanding.removeAll { ($0.arrival ?? $0.sent + 0.05) <= now }
                for p in due.sorted(by: { $0.sent < $1.sent }) {
                    if p.track >= 0, p.arrival == nil { second.lost += 1 }
                    if let a = p.arrival, var f = frames[p.frame] {
                        f.arrived += 1
                        f.last = max(f.last, a)
                        frames[p.frame] = f
                        if f.arrived == f.packets { out.shareFrames.append(f.last) }
                    }
                    if let a = p.arrival {
                        received += 1
                        ackedBytes += p.bytes
                        _ = trend.packet(sent: p.sent, arrived: a)
                    } else {
                        lostReported += 1
                    }
                    if p.cluster >= 0,
                        let r = judge.packet(
                            cluster: p.cluster, sent: p.sent, arrived: p.arrival, size: p.bytes,
                            expectedBytes: probeExpected.cluster == p.cluster ? probeExpected.bytes : 0)
                    {
                        rate.probed(r, now: now)
                        probes.result(cluster: p.cluster, bitrate: min(r, rate.estimate), now: now)
                    }
                }
                if now - lastRate >= 0.5 {
                    rate.update(signal: trend.signal, acknowledged: Double(ackedBytes * 8) / (now - lastRate), now: now)
                    ackedBytes = 0
                    lastRate = now
                }
                if now - lastLoss >= 1, received + lostReported > 0 {
                    rate.update(loss: Double(lostReported) / Double(received + lostReported), now: now)
                    received = 0
                    lostReported = 0
                    lastLoss = now
                }
                // The coordinator: the estimate when it moved by a tenth (its allocatable share, as the
                // engine reports it), the allocator, the holds.
                let allocatable = rate.estimate * Allocator.transportWideShare
                if reported.map({ abs(allocatable - $0) > 0.1 * $0 }) ?? true { reported = allocatable }
                var inputs: [Allocator.Track] = []
                for t in tracks {
                    var layers: [Allocator.Layer] = []
                    if t.kind != .audio {
                        for (k, l) in t.layers.enumerated() {
                            layers.append(
                                Allocator.Layer(
                                    spatial: k, temporal: 7, bitrate: l.bitrate, width: 1920, height: 1080,
                                    framesPerSecond: l.fps, keyFrameBits: Double(l.keyBytes * 8)))
                        }
                    }
                    inputs.append(
                        Allocator.Track(
                            id: t.id, kind: t.kind, bitrate: t.kind == .audio ? 48_000 : 0, layers: layers,
                            onStage: t.kind == .screenShare, current: choices[t.id],
                            mayGoUp: holds[t.id]?.allowsUp(now: now, estimate: reported ?? allocatable) ?? true))
                }
                // A congestion signal, as the coordinator reads it: the estimate fell, or the path
                // overused lately.
                let narrowed = viewer.narrowed(to: reported ?? allocatable, now: now)
                let result = Allocator.allocate(
                    estimate: reported ?? allocatable, tracks: inputs,
                    congested: narrowed || rate.bottleneckSuspected(now: now))
                wanted = result.wanted
                needed = result.needed
                allocated = result.allocated
                for k in tracks.indices {
                    guard let choice = result.choices[tracks[k].id] else { continue }
                    if let was = choices[tracks[k].id] {
                        if MediaCoordinator.rank(choice) < MediaCoordinator.rank(was) {
                            holds[tracks[k].id, default: UpHold()].steppedDown(
                                now: now, estimate: reported ?? allocatable, linkNarrowed: narrowed)
                        } else if MediaCoordinator.rank(choice) > MediaCoordinator.rank(was) {
                            holds[tracks[k].id, default: UpHold()].steppedUp(now: now)
                        }
                    }
                    choices[tracks[k].id] = choice
                    guard tracks[k].kind != .audio else { continue }
                    let layer: Int? = if case .layer(let s, _) = choice { s } else { nil }
                    if layer != tracks[k].sending {
                        tracks[k].sending = layer
                        tracks[k].keyNext = true
                        tracks[k].nextFrame = now
                    }
                }
            }
            now += step
            if Int((now / step).rounded()) % 1000 == 0 {
                out.sent.append(second.sent)
                out.lost.append(second.lost)
                out.estimates.append(rate.estimate)
                out.choices.append(choices)
                second = (0, 0)
            }
        }
        return out
    }

    static func describe(_ c: Allocator.Choice?) -> String {
        switch c {
        case .none: "-"
        case .audio: "audio"
        case .paused: "paused"
        case .layer(let s, _): "s\(s)"
        }
    }

    @Test func aViewerAt250KbitsKeepsItsShareWithoutLossAndGetsTheTopBackWithinTenSeconds() {
        let o = Self.run(phases: [(0, 500_000), (20, 250_000), (50, 50_000_000)], seconds: 62)
        var lines: [String] = []
        for s in o.estimates.indices {
            let share = Self.describe(o.choices[s]["share"])
            let cam = Self.describe(o.choices[s]["cam"])
            lines.append(
                "\(s): \(Int(o.estimates[s] / 1000))k lost \(o.lost[s])/\(o.sent[s]) share \(share) cam \(cam)")
        }
        let trace = lines.joined(separator: "\n")
        // 500 kbit/s, settled: the camera gave way.
        let cam500 = o.choices[18]["cam"]
        #expect(cam500 == .paused || cam500 == .layer(spatial: 0, temporal: 7), "\(trace)")
        // 250 kbit/s, settled (from 5 s after the drop): the share on its low layer, under 2 % loss,
        // no share frame more than 1 s after the one before.
        let loss = o.loss(25..<50)
        let gap = o.longestShareGap(from: 25, to: 50)
        print("250 kbit/s: loss \(loss * 100) %, longest share gap \(gap) s")
        #expect(loss < 0.02, "\(trace)")
        #expect(gap < 1.0, "\(trace)")
        for s in 25..<50 {
            #expect(o.choices[s]["share"] == .layer(spatial: 0, temporal: 7), "\(s)")
            #expect(o.choices[s]["cam"] == .paused, "\(s)")
            #expect(o.estimates[s] < 400_000, "\(s): \(Int(o.estimates[s]))")
        }
        // Lifted at 50 s: both back at the top within 10 s.
        let top: [String: Allocator.Choice] = [
            "mic": .audio, "share": .layer(spatial: 1, temporal: 7), "cam": .layer(spatial: 2, temporal: 7),
        ]
        let back = (50..<o.choices.count).first { o.choices[$0] == top }
        print("back at the top after \(back.map { $0 - 50 } ?? -1) s")
        #expect(back.map { $0 - 50 < 10 } ?? false, "\(trace)")
    }

    /// An open link while the publisher's top camera layer ramps from 0.6 to 2.6 Mbit/s over 10 s
    /// (Chrome's encoder after it starts): no congestion signal comes, so the camera never steps down
    /// and is on the top layer once the ramp ends, without loss. (Here probing keeps the estimate ahead
    /// of the ramp; the rule that keeps a layer when it does not is `AllocatorTests`' and
    /// `MediaAllocationTests`'.)
    @Test func aRampingTopLayerOnAnOpenLinkNeverStepsDown() {
        let o = Self.run(phases: [(0, 50_000_000)], seconds: 30, share: false) { t in
            t < 5 ? 600_000 : t < 15 ? 600_000 + (t - 5) * 200_000 : 2_600_000
        }
        let cams = o.choices.map { Self.describe($0["cam"]) }
        let trace = o.estimates.indices.map { "\($0): \(Int(o.estimates[$0] / 1000))k cam \(cams[$0])" }
            .joined(separator: "\n")
        let first = o.choices.firstIndex { $0["cam"] == .layer(spatial: 2, temporal: 7) }
        #expect(first != nil, "\(trace)")
        for s in (first ?? 0)..<o.choices.count {
            #expect(o.choices[s]["cam"] == .layer(spatial: 2, temporal: 7), "stepped down at \(s) s:\n\(trace)")
        }
        #expect(o.loss(0..<30) < 0.01, "\(trace)")
    }
}
