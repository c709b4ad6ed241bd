public import AtriumUDP

/// The engine's time: the system's monotonic clock, or a manual one that a test advances (as
/// SwiftNIO's embedded event loop is advanced), so timers and layer switches run in memory.
public enum MediaClock: Sendable {
    case system
    case manual(ManualClock)
}

/// Seconds that move only when told to. Touched by one thread (the test's).
public final class ManualClock: @unchecked Sendable {
    public var now: Double

    public init(now: Double = 0) { self.now = now }

    public func advance(by seconds: Double) { now += seconds }
}

/// Where the engine's datagrams go and come from: a UDP socket, or memory that a test reads and
/// fills.
enum MediaIO {
    case udp(UDPSocket)
    case memory(MemoryPort)

    var localAddress: SocketAddress {
        switch self {
        case .udp(let s): s.localAddress
        case .memory(let m): m.localAddress
        }
    }
}

/// Datagrams in memory: what the engine sent, kept in order until taken.
public final class MemoryPort: @unchecked Sendable {
    public let localAddress: SocketAddress
    public var sent: [Datagram] = []
    /// When false, what the engine sends is only counted (`discarded`), not kept: a test measuring the
    /// packet path's allocations then leaves the engine's send slots to the engine (a kept copy would
    /// share their buffers, and the next write into a slot would allocate a new one).
    public var keepsSent = true
    public internal(set) var discarded = 0

    public init(localAddress: SocketAddress) { self.localAddress = localAddress }

    /// The engine's batch: kept, or counted.
    func record(_ batch: ArraySlice<Datagram>) {
        if keepsSent {
            sent += batch
        } else {
            discarded += batch.count
        }
    }

    /// What the engine sent since the last call.
    public func take() -> [Datagram] {
        defer { sent.removeAll() }
        return sent
    }
}

/// The engine's randomness (SSRCs, first sequence numbers): xorshift64* from a seed, so a test's run
/// repeats; seeded from the system when the configuration gives none.
struct MediaRandom {
    private var state: UInt64

    init(seed: UInt64?) {
        var system = SystemRandomNumberGenerator()
        state = seed ?? system.next()
        if state == 0 { state = 0x9E37_79B9_7F4A_7C15 }
    }

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }

    /// A nonzero 32-bit value (an SSRC).
    mutating func nonzero32() -> UInt32 {
        while true {
            let v = UInt32(truncatingIfNeeded: next() >> 32)
            if v != 0 { return v }
        }
    }
}
