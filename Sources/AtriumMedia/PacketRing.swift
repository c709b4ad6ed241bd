import Synchronization

/// The packet half of a pipe between two media workers: a bounded single-producer
/// single-consumer ring whose slots hold the packets themselves, so that handing a publisher's
/// packet to another worker copies it once into memory allocated when the ring was made, and
/// allocates, retains and locks nothing.
///
/// Lamport's ring, as `SPSCRing`: `tail` is written only by the producer and `head` only by the
/// consumer. The producer fills slot `tail & mask` (bytes and header) and publishes it with a
/// release store of `tail`; the consumer reads slot `head & mask` after an acquire load of `tail`
/// and hands it back with a release store of `head`. A full ring refuses the packet (the sender
/// counts `pipe_full`), an empty one has nothing to read.
final class PacketRing: @unchecked Sendable {
    /// Slots, a power of two of them.
    let capacity: Int
    /// The largest packet a slot holds (a longer one is refused: it cannot have come off the socket).
    let slotSize: Int
    private let mask: Int
    private let bytes: UnsafeMutableRawPointer
    private let headers: UnsafeMutablePointer<PipePacket>
    private let head = Atomic<Int>(0)
    private let tail = Atomic<Int>(0)

    init(capacity: Int, slotSize: Int) {
        let wanted = min(max(capacity, 2), 1 << 16)
        var c = 2
        while c < wanted { c <<= 1 }
        self.capacity = c
        self.slotSize = max(slotSize, 1)
        mask = c - 1
        bytes = UnsafeMutableRawPointer.allocate(byteCount: c * self.slotSize, alignment: 16)
        headers = UnsafeMutablePointer<PipePacket>.allocate(capacity: c)
        headers.initialize(repeating: PipePacket(), count: c)
    }

    deinit {
        bytes.deallocate()
        headers.deinitialize(count: capacity)
        headers.deallocate()
    }

    /// Producer thread only: copies the packet in, or returns false when the ring is full or the
    /// packet longer than a slot.
    func push(_ packet: UnsafeRawBufferPointer, _ header: PipePacket) -> Bool {
        guard packet.count <= slotSize else { return false }
        let t = tail.load(ordering: .relaxed)
        let h = head.load(ordering: .acquiring)
        guard t &- h < capacity else { return false }
        let slot = t & mask
        if let base = packet.baseAddress, packet.count > 0 {
            (bytes + slot * slotSize).copyMemory(from: base, byteCount: packet.count)
        }
        var stored = header
        stored.length = UInt16(truncatingIfNeeded: packet.count)
        headers[slot] = stored
        tail.store(t &+ 1, ordering: .releasing)
        return true
    }

    /// Consumer thread only: hands the oldest packet to `body` (its bytes are valid only inside) and
    /// frees its slot; false when the ring is empty.
    func pop(_ body: (PipePacket, UnsafeRawBufferPointer) -> Void) -> Bool {
        let h = head.load(ordering: .relaxed)
        let t = tail.load(ordering: .acquiring)
        guard h != t else { return false }
        let slot = h & mask
        let header = headers[slot]
        body(header, UnsafeRawBufferPointer(start: bytes + slot * slotSize, count: Int(header.length)))
        head.store(h &+ 1, ordering: .releasing)
        return true
    }

    /// Packets waiting, as last seen.
    var count: Int { tail.load(ordering: .acquiring) &- head.load(ordering: .acquiring) }
}

/// What travels with a piped packet: the pipe producer it feeds (`tag`), the receive stream, and
/// what the home worker already knew of it.
struct PipePacket: Sendable {
    enum Kind: UInt8, Sendable {
        /// A decrypted RTP packet (an RTX repair already restored to its primary form).
        case rtp
        /// A sender report of stream `stream`: `ntp` and `rtpTimestamp` map its timeline to the wall clock.
        case senderReport
    }

    var kind: Kind = .rtp
    var tag: UInt32 = 0
    var stream: UInt8 = 0
    /// A retransmission the home worker restored (its media range ends two bytes early).
    var recovered = false
    /// The publisher transport's transport-wide sequence number extension id (0: none), renumbered
    /// for each viewer as the home worker does.
    var twccExtensionID: UInt8 = 0
    var length: UInt16 = 0
    var ntp: Double = 0
    var rtpTimestamp: UInt32 = 0

    init(kind: Kind = .rtp, tag: UInt32 = 0, stream: UInt8 = 0) {
        self.kind = kind
        self.tag = tag
        self.stream = stream
    }
}
