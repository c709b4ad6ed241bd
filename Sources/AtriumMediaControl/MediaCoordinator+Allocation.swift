import AtriumCongestion
import AtriumForwarding
import AtriumMedia
import AtriumModel
import AtriumRooms
import AtriumSDP

/// What the allocator last gave one viewer: each track's choice, the command that carried it, and
/// each track's back-off after a step down.
struct ViewerAllocation {
    var choices: [TrackID: Allocator.Choice] = [:]
    var submitted: TransportAllocation?
    var holds: [TrackID: UpHold] = [:]
    /// The highest estimate of the last `UpHold.flapWindow` seconds, and when it was seen: a step
    /// down with the estimate well under it is the link narrowing (held); one with the estimate
    /// where it was is new demand (a share starting), which a probe may answer at once.
    var peak: (bitrate: Double, at: Double)?

    /// Whether `estimate` is a fall from the recent peak (and the peak updated).
    mutating func narrowed(to estimate: Double, now: Double) -> Bool {
        guard let p = peak, now - p.at < UpHold.flapWindow, p.bitrate >= estimate else {
            peak = (estimate, now)
            return false
        }
        return estimate < UpHold.narrowing * p.bitrate
    }
}

/// A track that stepped down (a lower layer, a pause) may not step up again before `until`: a step up
/// costs a key frame, which on a link that just proved too narrow is what makes it overflow again.
/// Each step down of a narrowing link soon (10 s) after a step up doubles the hold, from 2 s up to
/// 8 s, so that a viewer whose limit is lifted is back at the top within about ten seconds. A step
/// down while the estimate holds where it was (another track took the room: a share started; a
/// layer the publisher just turned on again ramped up past what it cost when chosen) is not held
/// unless it follows a step up within the flap window, and then only for `first`, without doubling:
/// the link did not prove narrow, and the probe it sets off may give the room back soon. A hold ends
/// early, and its doubling is forgotten, once the estimate is `opened` times what it was at the step
/// down: a probe found a link far wider than the one that proved too narrow (a lifted limit), which
/// a key frame no longer overflows.
struct UpHold {
    var until: Double = 0
    var hold: Double = 0
    var lastUp: Double = -.infinity
    /// The estimate when the hold began.
    var estimate: Double = .infinity

    static let first = 2.0
    static let longest = 8.0
    static let flapWindow = 10.0
    /// An estimate under this share of the recent peak is a narrowed link.
    static let narrowing = 0.95
    static let opened = 2.0

    mutating func steppedDown(now: Double, estimate: Double = .infinity, linkNarrowed: Bool = true) {
        let flap = now - lastUp < Self.flapWindow
        guard linkNarrowed || flap else { return }
        if linkNarrowed {
            hold = flap ? min(max(hold * 2, Self.first), Self.longest) : Self.first
        }
        until = now + (linkNarrowed ? hold : Self.first)
        self.estimate = estimate
    }

    /// Whether the link opened since the hold began (the hold, and its doubling, end).
    func opened(to e: Double) -> Bool { e >= Self.opened * estimate }

    /// Whether the track may step up: the hold ran out, or the link opened since it began.
    func allowsUp(now: Double, estimate e: Double) -> Bool { until <= now || opened(to: e) }

    mutating func steppedUp(now: Double) { lastUp = now }
}

/// The allocation per subscriber transport, decided here and followed by the media plane:
/// each viewer's estimate (`MediaEvent.estimate`) shared among the tracks it receives by the pure
/// `Allocator` (audio first; the on-stage screen share resolution first, down to its floor; the
/// active speaker's camera before the others; a track that does not fit paused), from the layers the
/// worker measures (`MediaEvent.layers`) under the viewer's own quality and tile. Re-run when an
/// estimate or a track's layers moved, the active speaker or the stage changed, and after every
/// reconcile (subscriptions, quality, viewport) and answer (new consumers). The choices become each
/// consumer's ceiling (`MediaCommand.allocate`); a pause and a resume are told to the viewer
/// (`track_paused` / `track_resumed`, reason `bandwidth`). The allocator's hysteresis (a step up
/// needs a fifth more than it costs) keeps a track from flapping on a noisy estimate.
extension MediaCoordinator {
    /// What the allocator counts for an audio track (Opus as browsers send it, with headers).
    static let audioBitrate = 48_000.0
    /// An allocation whose totals moved less than this share is not sent again (unless a choice
    /// changed).
    static let allocationSlack = 0.05

    /// The layers of a video track as the allocator sees them: measured rates, the last one of a
    /// stream that stopped (its publisher turned it off as unwanted), or a guess from its size.
    func allocatorLayers(_ track: TrackID) -> [Allocator.Layer] {
        guard let stats = layerStats[track], !stats.isEmpty else {
            return [
                Allocator.Layer(spatial: 0, temporal: 7, bitrate: 500_000, width: 0, height: 0, framesPerSecond: 30)
            ]
        }
        return stats.enumerated().flatMap { k, s in Self.allocatorLayers(spatial: k, s) }
    }

    /// One stream's choices: all of it (temporal layer `Consumer.allTemporalLayers`, whatever arrives),
    /// and, when it arrives in temporal layers with their rates measured, each lower temporal layer
    /// with those below it.
    static func allocatorLayers(spatial k: Int, _ s: LayerStats) -> [Allocator.Layer] {
        let fps = s.framesPerSecond > 0 ? Double(s.framesPerSecond) : 30
        let guess =
            s.width > 0 && s.height > 0
            ? Double(s.width * s.height) * fps * 0.08 : [150_000, 500_000, 1_500_000][min(k, 2)]
        let bitrate = s.arriving && s.bitrate > 0 ? s.bitrate : s.lastBitrate > 0 ? s.lastBitrate : guess
        let keyFrameBits = Double(s.keyFrameBytes) * 8
        var layers: [Allocator.Layer] = []
        if s.arriving, s.bitrate > 0, s.temporal.count > 1 {
            for (t, l) in s.temporal.dropLast().enumerated() where l.bitrate > 0 && l.framesPerSecond > 0 {
                layers.append(
                    Allocator.Layer(
                        spatial: k, temporal: t, bitrate: l.bitrate, width: s.width, height: s.height,
                        framesPerSecond: Double(l.framesPerSecond), keyFrameBits: keyFrameBits))
            }
        }
        layers.append(
            Allocator.Layer(
                spatial: k, temporal: allTemporalLayers, bitrate: bitrate, width: s.width, height: s.height,
                framesPerSecond: fps, keyFrameBits: keyFrameBits))
        return layers
    }

    /// The temporal layer that means all of a stream's (VP8 and VP9 carry at most eight).
    static let allTemporalLayers = 7

    /// Runs the allocator for every viewer of a room (all rooms: nil).
    func allocateAll(in room: RoomID? = nil) {
        for (pid, peer) in peers where room == nil || peer.room == room { allocate(pid) }
    }

    /// Runs the allocator for one viewer, once its transport has an estimate.
    func allocate(_ pid: ParticipantID) {
        guard let peer = peers[pid], let sub = peer.subscriber, let estimate = estimates[sub.transport] else { return }
        var previous = allocations[pid] ?? ViewerAllocation()
        let now = clock()
        for (track, h) in previous.holds where h.opened(to: estimate) {
            previous.holds[track] = UpHold(lastUp: h.lastUp)
        }
        let speaker = speakers[peer.room]?.first
        let onStage = stage[peer.room] ?? []
        var tracks: [Allocator.Track] = []
        var consumers: [String: String] = [:]
        for s in sub.sections where s.active {
            guard let consumer = s.consumer else { continue }
            consumers[s.track.rawValue] = consumer
            if s.kind != .video {
                tracks.append(Allocator.Track(id: s.track.rawValue, kind: .audio, bitrate: Self.audioBitrate))
                continue
            }
            let layers = allocatorLayers(s.track)
            let share = s.source == .screenShare
            let ceiling = LayerChoice.spatial(
                quality: s.preference.quality, viewport: s.preference.viewport,
                layers: layers.map { LayerChoice.Size(width: $0.width, height: $0.height) }, screenShare: share)
            tracks.append(
                Allocator.Track(
                    id: s.track.rawValue, kind: share ? .screenShare : .camera, layers: layers, ceiling: ceiling,
                    activeSpeaker: s.publisher == speaker, onStage: share && onStage.contains(s.track),
                    current: previous.choices[s.track],
                    mayGoUp: previous.holds[s.track]?.allowsUp(now: now, estimate: estimate) ?? true))
        }
        var next = ViewerAllocation()
        next.holds = previous.holds
        next.peak = previous.peak
        let narrowed = next.narrowed(to: estimate, now: now)
        // A step down needs a congestion signal: the estimate fell, or the path is known narrow.
        let congested = narrowed || bottlenecks.contains(sub.transport)
        let result = Allocator.allocate(estimate: estimate, tracks: tracks, congested: congested)
        var entries: [TransportAllocation.Entry] = []
        for (id, choice) in result.choices.sorted(by: { $0.key < $1.key }) {
            let track = TrackID(id)
            next.choices[track] = choice
            guard let consumer = consumers[id] else { continue }
            switch choice {
            case .audio: continue
            case .layer(let spatial, let temporal):
                entries.append(
                    TransportAllocation.Entry(
                        consumer: consumer, ceiling: VideoLayer(spatial: spatial, temporal: temporal), paused: false))
            case .paused:
                entries.append(TransportAllocation.Entry(consumer: consumer, ceiling: nil, paused: true))
            }
            let was = previous.choices[track]
            if let was, Self.rank(choice) < Self.rank(was) {
                next.holds[track, default: UpHold()].steppedDown(now: now, estimate: estimate, linkNarrowed: narrowed)
            } else if let was, Self.rank(choice) > Self.rank(was) {
                next.holds[track, default: UpHold()].steppedUp(now: now)
            }
            if choice == .paused && was != .paused {
                push(pid, .trackPaused(track: track, reason: "bandwidth"))
            } else if choice != .paused && was == .paused {
                push(pid, .trackResumed(track: track, reason: "bandwidth"))
            }
        }
        let allocation = TransportAllocation(
            allocated: result.allocated, wanted: result.wanted, needed: result.needed, entries: entries)
        next.submitted = previous.submitted
        if let last = previous.submitted, last.entries == entries,
            abs(last.allocated - allocation.allocated) <= Self.allocationSlack * max(last.allocated, 1),
            abs(last.wanted - allocation.wanted) <= Self.allocationSlack * max(last.wanted, 1)
        {
            allocations[pid] = next
            return
        }
        next.submitted = allocation
        allocations[pid] = next
        plane.submit(.allocate(transport: sub.transport, allocation))
    }

    /// An order on choices: paused lowest, then by layer.
    static func rank(_ c: Allocator.Choice) -> Int {
        switch c {
        case .paused: -1
        case .audio: 0
        case .layer(let s, let t): s * 16 + min(t, 15)
        }
    }

    /// Viewers with a track whose hold has run out are allocated again (each drain of the events).
    func allocateReleased() {
        let now = clock()
        for (pid, a) in allocations where a.holds.values.contains(where: { $0.until > 0 && $0.until <= now }) {
            for (track, h) in a.holds where h.until <= now { allocations[pid]?.holds[track]?.until = 0 }
            allocate(pid)
        }
    }

    /// The screen-share tracks of a room's running shares (a paused share is not on stage).
    func updateStage(_ room: RoomID, _ state: RoomState) {
        var tracks = Set<TrackID>()
        for share in state.shares where share.state == .started { tracks.insert(share.videoTrack) }
        stage[room] = tracks
    }
}
