import AtriumBytes
import AtriumUDP

/// The packets a subscriber transport's pacer holds back, encrypted and ready to send, oldest first:
/// a ring of preallocated buffers (allocated at the first packet held, then reused), so that holding
/// and releasing a packet allocates nothing. Packets wait unencrypted: each keeps where its
/// transport-wide sequence number goes (-1: none), written when it actually leaves, so the numbers
/// and send times the estimator sees are those of the wire, and then it is encrypted.
struct PacerQueue {
    static let capacity = 256
    private(set) var packets: [[UInt8]] = []
    private(set) var addresses: [SocketAddress] = []
    private(set) var offsets: [Int32] = []
    private(set) var head = 0
    private(set) var count = 0
    /// Bytes waiting.
    private(set) var bytes = 0

    var isEmpty: Bool { count == 0 }
    var isFull: Bool { count == Self.capacity }

    /// Copies a packet in at the tail; false when the queue is full.
    mutating func push(_ bytes: [UInt8], to address: SocketAddress, twccOffset: Int32) -> Bool {
        if packets.isEmpty {
            packets = (0..<Self.capacity).map { _ in
                var b: [UInt8] = []
                b.reserveCapacity(MediaEngine.slotCapacity)
                return b
            }
            addresses = [SocketAddress](repeating: address, count: Self.capacity)
            offsets = [Int32](repeating: -1, count: Self.capacity)
        }
        guard count < Self.capacity else { return false }
        let i = (head + count) % Self.capacity
        packets[i].removeAll(keepingCapacity: true)
        packets[i].append(contentsOf: bytes)
        addresses[i] = address
        offsets[i] = twccOffset
        count += 1
        self.bytes += bytes.count
        return true
    }

    /// The oldest packet's size, if any.
    var headSize: Int? { count > 0 ? packets[head].count : nil }

    /// Copies the oldest packet into `out` and removes it; returns its address and extension offset.
    mutating func pop(into out: inout [UInt8]) -> (SocketAddress, Int32)? {
        guard count > 0 else { return nil }
        out.removeAll(keepingCapacity: true)
        out.append(contentsOf: packets[head])
        let result = (addresses[head], offsets[head])
        self.bytes -= packets[head].count
        head = (head + 1) % Self.capacity
        count -= 1
        return result
    }

    /// Removes the packets of one RTP stream (its SSRC or its RTX SSRC, read from the unencrypted
    /// header), keeping the others in order; returns how many went. Buffers are swapped, not copied.
    mutating func remove(ssrc: UInt32, rtxSSRC: UInt32?) -> Int {
        var kept = 0
        for n in 0..<count {
            let i = (head + n) % Self.capacity
            if let s = packets[i].uint32(at: 8), s == ssrc || s == rtxSSRC {
                bytes -= packets[i].count
                continue
            }
            let j = (head + kept) % Self.capacity
            if j != i {
                packets.swapAt(i, j)
                addresses.swapAt(i, j)
                offsets.swapAt(i, j)
            }
            kept += 1
        }
        let removed = count - kept
        count = kept
        return removed
    }

    mutating func removeAll() {
        head = 0
        count = 0
        bytes = 0
    }
}
