/// How one subscriber's estimated bandwidth is shared among the tracks it receives (the
/// allocation rules, as a pure decision): audio first, always; then the on-stage screen share,
/// resolution first (it loses frame rate before resolution: the temporal layers of its full-size
/// stream, then a full-size low-frame-rate stream, down to `shareFrameRateFloor`; and keeps at least
/// its lowest choice past the estimate); then
/// cameras, the active speaker before the others, each at the best layer that fits under its ceiling
/// (the viewer's quality and tile); a camera that does not fit is paused.
public enum Allocator {
    public enum Kind: Sendable, Equatable {
        case audio, screenShare, camera
    }

    /// One layer a track can be received at (a simulcast stream with its temporal layers, or an SVC
    /// spatial/temporal pair), with what it costs and shows.
    public struct Layer: Sendable, Equatable {
        public var spatial: Int
        public var temporal: Int
        /// Bits per second it needs (measured or declared).
        public var bitrate: Double
        public var width: Int
        public var height: Int
        public var framesPerSecond: Double
        /// The size of its last key frame in bits (0: not measured). Stepping up to a layer starts it
        /// on a key frame, which has to fit through the link on top of the layer's rate.
        public var keyFrameBits: Double

        public init(
            spatial: Int, temporal: Int, bitrate: Double, width: Int, height: Int, framesPerSecond: Double,
            keyFrameBits: Double = 0
        ) {
            self.keyFrameBits = keyFrameBits
            self.spatial = spatial
            self.temporal = temporal
            self.bitrate = bitrate
            self.width = width
            self.height = height
            self.framesPerSecond = framesPerSecond
        }
    }

    public struct Track: Sendable, Equatable {
        public var id: String
        public var kind: Kind
        /// Audio: its bitrate; video: ignored (see `layers`).
        public var bitrate: Double
        public var layers: [Layer]
        /// The highest spatial layer the viewer asked for (its quality, its tile).
        public var ceiling: Int
        public var activeSpeaker: Bool
        public var onStage: Bool
        /// What the last allocation gave it: going up from there (a better layer, or back from a
        /// pause) needs `upMargin` times the layer's bitrate, so a track does not flap between two
        /// choices on a noisy estimate.
        public var current: Choice?
        /// False while the track is held after a step down (the owner's back-off): it may keep or
        /// lower its choice, not raise it.
        public var mayGoUp: Bool

        public init(
            id: String, kind: Kind, bitrate: Double = 0, layers: [Layer] = [], ceiling: Int = .max,
            activeSpeaker: Bool = false, onStage: Bool = false, current: Choice? = nil, mayGoUp: Bool = true
        ) {
            self.current = current
            self.mayGoUp = mayGoUp
            self.id = id
            self.kind = kind
            self.bitrate = bitrate
            self.layers = layers
            self.ceiling = ceiling
            self.activeSpeaker = activeSpeaker
            self.onStage = onStage
        }
    }

    public enum Choice: Sendable, Equatable {
        case audio
        case layer(spatial: Int, temporal: Int)
        /// Not sent to this viewer: the estimate leaves no room for it.
        case paused
    }

    public struct Result: Sendable, Equatable {
        public var choices: [String: Choice]
        /// What the choices add up to, bits per second (may pass the estimate by a share's floor).
        public var allocated: Double
        /// What the tracks would take with no limit (each at the top layer under its ceiling): more
        /// than `allocated` means the estimate limits this viewer, which is when probing pays.
        public var wanted: Double = 0
        /// The estimate at which every video track could step up to the top layer under its ceiling
        /// (each at its step-up cost, `upCost`), with the audio: what probing aims for.
        public var needed: Double = 0
    }

    /// Going up needs this much more than the layer's bitrate (hysteresis).
    public static let upMargin = 1.2
    /// The share of a transport-wide estimate (the rate the path carried, all packets counted) that
    /// the tracks' layers may fill: probe clusters, repairs, the SRTP trailers and the layers' own
    /// swings (a measured rate is a one-second mean; a screen's content moves it by a third) go on
    /// top, and filled to the estimate they kept the pacer of a viewer at 250 kbit/s 60 kB (2 s)
    /// behind until it dropped. A REMB viewer's estimate is what it reports (see `REMBEstimate`).
    public static let transportWideShare = 0.85
    /// A step up's key frame must drain within this much (the pacer's bound on how long a packet
    /// waits) from the room left above the layer's rate.
    public static let keyFrameDrain = 0.5

    /// What a step up to `layer` needs: its rate with the hysteresis margin, and at least its rate
    /// plus its key frame drained within `keyFrameDrain`. On a link where the estimate swings around
    /// the capacity, a step up that fits the rate but not its key frame overflows the bottleneck's
    /// queue and loses packets of every track.
    public static func upCost(_ layer: Layer) -> Double {
        layer.bitrate + max((upMargin - 1) * layer.bitrate, layer.keyFrameBits / keyFrameDrain)
    }

    /// Whether `layer` would be more than the track has now (or it is paused now).
    static func isUp(_ layer: Layer, from current: Choice?) -> Bool {
        switch current {
        case .none, .audio: false
        case .paused: true
        case .layer(let s, let t): (layer.spatial, layer.temporal) > (s, t)
        }
    }

    static func cost(_ layer: Layer, _ track: Track) -> Double {
        guard isUp(layer, from: track.current) else { return layer.bitrate }
        guard track.mayGoUp else { return .infinity }
        // More temporal layers of the stream forwarded now: no key frame, the next sync point will do.
        if case .layer(let s, _) = track.current, s == layer.spatial { return upMargin * layer.bitrate }
        return upCost(layer)
    }

    /// A screen share loses frame rate before resolution, down to this many frames per second: a
    /// temporal layer below it is not offered before a lower resolution is (a stream's full rate is
    /// always offered, however low it is).
    public static let shareFrameRateFloor = 5.0

    /// The choices a track has: for a screen share every stream at its full frame rate and at each
    /// of its temporal layers down to `shareFrameRateFloor`; for a camera every stream at its full
    /// frame rate (a camera drops resolution first: a smaller tile at a fluid rate), all under its
    /// ceiling (or all of them when none is under it).
    static func candidates(_ t: Track) -> [Layer] {
        let usable = t.layers.filter { $0.spatial <= t.ceiling }
        let layers = usable.isEmpty ? t.layers : usable
        var top: [Int: Int] = [:]
        for l in layers { top[l.spatial] = max(top[l.spatial] ?? .min, l.temporal) }
        return layers.filter { l in
            if l.temporal == top[l.spatial] { return true }
            return t.kind == .screenShare && l.framesPerSecond >= shareFrameRateFloor
        }
    }

    /// `congested`: whether the viewer's link has given a congestion signal lately (a delay overuse, a
    /// loss-driven back-off, an estimate that fell). Without one, no track steps down below the choice
    /// it has (`current`, while the viewer still asks for it): demand above an estimate nothing has
    /// challenged (a publisher's layer ramping up, a share starting beside a camera) is a reason to
    /// probe (`needed`), not to step down; the pacer of an open path sends above the estimate.
    public static func allocate(estimate: Double, tracks: [Track], congested: Bool = true) -> Result {
        var result = allocateWithin(estimate: estimate, tracks: tracks)
        guard !congested else { return result }
        for t in tracks where t.kind != .audio {
            guard let current = t.current, case .layer(let s, let tl) = current, let now = result.choices[t.id],
                rank(now) < rank(current),
                let kept = candidates(t).first(where: { $0.spatial == s && $0.temporal == tl })
            else { continue }
            let given = t.layers.first {
                if case .layer(let s2, let t2) = now { $0.spatial == s2 && $0.temporal == t2 } else { false }
            }
            result.choices[t.id] = .layer(spatial: s, temporal: tl)
            result.allocated += kept.bitrate - (given?.bitrate ?? 0)
        }
        return result
    }

    /// The order of choices: paused below every layer, layers by spatial then temporal index.
    static func rank(_ c: Choice) -> Int {
        switch c {
        case .paused: -1
        case .audio: 0
        case .layer(let s, let t): s * 16 + min(t, 15)
        }
    }

    /// The allocation within the estimate alone (every track may step down).
    static func allocateWithin(estimate: Double, tracks: [Track]) -> Result {
        var left = estimate
        var choices: [String: Choice] = [:]
        var allocated = 0.0
        func take(_ id: String, _ choice: Choice, _ bitrate: Double) {
            choices[id] = choice
            left -= bitrate
            allocated += bitrate
        }
        var wanted = 0.0
        var needed = 0.0
        for t in tracks {
            if t.kind == .audio {
                wanted += t.bitrate
                needed += t.bitrate
            } else {
                let usable = t.layers.filter { $0.spatial <= t.ceiling }
                let top = (usable.isEmpty ? t.layers : usable).max { $0.bitrate < $1.bitrate }
                wanted += top?.bitrate ?? 0
                needed += top.map(upCost) ?? 0
            }
        }
        for t in tracks where t.kind == .audio { take(t.id, .audio, t.bitrate) }
        // Screen shares on stage first, then the other shares; resolution before frame rate.
        let shares = tracks.filter { $0.kind == .screenShare }.sorted { $0.onStage && !$1.onStage }
        for t in shares {
            // Full resolution first, and at each resolution the higher frame rates first: the
            // temporal layers of the full-resolution stream, and a full-size low-frame-rate stream,
            // come before any smaller stream.
            let candidates = Self.candidates(t).sorted {
                ($0.width * $0.height, $0.framesPerSecond, $0.bitrate)
                    > ($1.width * $1.height, $1.framesPerSecond, $1.bitrate)
            }
            if let fit = candidates.first(where: { cost($0, t) <= left }) {
                take(t.id, .layer(spatial: fit.spatial, temporal: fit.temporal), fit.bitrate)
            } else if t.onStage, let floor = candidates.min(by: { $0.bitrate < $1.bitrate }) {
                // The shared screen stays readable: its floor even past the estimate.
                take(t.id, .layer(spatial: floor.spatial, temporal: floor.temporal), floor.bitrate)
            } else {
                choices[t.id] = .paused
            }
        }
        // Cameras: the active speaker first, then in the given order; the best layer that fits.
        let cameras = tracks.filter { $0.kind == .camera }.sorted { $0.activeSpeaker && !$1.activeSpeaker }
        for t in cameras {
            let fit = Self.candidates(t).filter { cost($0, t) <= left }
                .max { ($0.spatial, $0.temporal) < ($1.spatial, $1.temporal) }
            if let fit {
                take(t.id, .layer(spatial: fit.spatial, temporal: fit.temporal), fit.bitrate)
            } else {
                choices[t.id] = .paused
            }
        }
        return Result(choices: choices, allocated: allocated, wanted: wanted, needed: needed)
    }
}
