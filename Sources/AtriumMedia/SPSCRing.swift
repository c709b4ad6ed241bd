import Synchronization

/// A bounded lock-free queue for exactly one producer thread and one consumer thread: the pipe that
/// will carry a publisher's packets from the worker that receives them to each other worker with
/// viewers of the same room (mediasoup's PipeTransport inside one process). One ring per
/// ordered pair of workers keeps every ring single-producer and single-consumer, so neither side
/// takes a lock or waits for the other: a full ring refuses the push (the producer counts a drop,
/// as a full socket buffer would), an empty one returns nil.
///
/// Lamport's ring: `tail` is written only by the producer and `head` only by the consumer; the
/// producer publishes a slot with a release store of `tail` after writing it, the consumer reads the
/// slot after an acquire load of `tail`, and hands it back with a release store of `head`. Both
/// counters only grow (wrapping), and a slot's index is the counter masked by the power-of-two
/// capacity, so `tail - head` is the fill level without a separate count.
public final class SPSCRing<Element: Sendable>: @unchecked Sendable {
    /// Slots, a power of two of them.
    public let capacity: Int
    private let mask: Int
    private let slots: UnsafeMutablePointer<Element?>
    /// The next slot the consumer reads (written by the consumer only).
    private let head = Atomic<Int>(0)
    /// The next slot the producer writes (written by the producer only).
    private let tail = Atomic<Int>(0)

    /// The largest ring made (a request above it is clamped).
    public static var maxCapacity: Int { 1 << 20 }

    /// A ring of at least `capacity` slots (rounded up to a power of two, at least 2, at most
    /// `maxCapacity`).
    public init(capacity: Int) {
        let wanted = min(max(capacity, 2), Self.maxCapacity)
        var c = 2
        while c < wanted { c <<= 1 }
        self.capacity = c
        mask = c - 1
        slots = UnsafeMutablePointer<Element?>.allocate(capacity: c)
        slots.initialize(repeating: nil, count: c)
    }

    deinit {
        slots.deinitialize(count: capacity)
        slots.deallocate()
    }

    /// Producer thread only: appends, or returns false when the ring is full.
    public func push(_ element: Element) -> Bool {
        let t = tail.load(ordering: .relaxed)
        let h = head.load(ordering: .acquiring)
        guard t &- h < capacity else { return false }
        slots[t & mask] = element
        tail.store(t &+ 1, ordering: .releasing)
        return true
    }

    /// Consumer thread only: the oldest element, or nil when the ring is empty.
    public func pop() -> Element? {
        let h = head.load(ordering: .relaxed)
        let t = tail.load(ordering: .acquiring)
        guard h != t else { return nil }
        let element = slots[h & mask]
        slots[h & mask] = nil
        head.store(h &+ 1, ordering: .releasing)
        return element
    }

    /// Elements waiting, as last seen (exact only on a thread that is neither side, once both stop).
    public var count: Int {
        tail.load(ordering: .acquiring) &- head.load(ordering: .acquiring)
    }
}
