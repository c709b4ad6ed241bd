import AtriumBytes
import AtriumUDP

/// The packets a subscriber transport's pacer holds back, encrypted and ready to send, oldest first:
/// a ring of buffers sized by need (none until the first packet held, then doubling from 16 up to
/// `capacity` when it fills, and all returned once it has been empty for `idle`), reused meanwhile,
/// so that holding and releasing a packet allocates nothing once the ring has its size. A viewer
/// whose link keeps up holds a few slots, not 256 (400 KiB). Packets wait unencrypted: each keeps
/// where its transport-wide sequence number goes (-1: none), written when it actually leaves, so the
/// numbers and send times the estimator sees are those of the wire, and then it is encrypted.
struct PacerQueue {
    static let capacity = 256
    static let firstSize = 16
    static let idle = 2.0
    private(set) var packets: [[UInt8]] = []
    private(set) var addresses: [SocketAddress] = []
    private(set) var offsets: [Int32] = []
    private(set) var head = 0
    private(set) var count = 0
    /// Bytes waiting, and the most that waited since `takePeak` last read it.
    private(set) var bytes = 0
    private var peak = 0
    /// When a packet last joined.
    private var lastPush: Double = -.infinity

    var isEmpty: Bool { count == 0 }
    var isFull: Bool { count == Self.capacity }
    /// The slots' buffers (their capacity) and the tables beside them.
    var bytesHeld: Int {
        packets.count * (MediaEngine.slotCapacity + MemoryLayout<SocketAddress>.stride + 4)
    }

    /// Copies a packet in at the tail; false when the queue is full.
    mutating func push(_ bytes: [UInt8], to address: SocketAddress, twccOffset: Int32, now: Double) -> Bool {
        guard count < Self.capacity else { return false }
        if count == packets.count { grow(address) }
        lastPush = now
        let i = (head + count) % packets.count
        packets[i].removeAll(keepingCapacity: true)
        packets[i].append(contentsOf: bytes)
        addresses[i] = address
        offsets[i] = twccOffset
        count += 1
        self.bytes += bytes.count
        peak = max(peak, self.bytes)
        return true
    }

    /// The most bytes that waited since the last call (or now), and starts counting again.
    mutating func takePeak() -> Int {
        defer { peak = bytes }
        return max(peak, bytes)
    }

    /// Returns the buffers of a queue that has been empty since `idle` ago.
    mutating func trim(now: Double) {
        guard count == 0, !packets.isEmpty, now - lastPush > Self.idle else { return }
        packets = []
        addresses = []
        offsets = []
        head = 0
    }

    /// Twice the slots (the first 16), the waiting packets moved to the front in order.
    private mutating func grow(_ address: SocketAddress) {
        let size = min(Self.capacity, max(Self.firstSize, packets.count * 2))
        if head != 0 {
            packets = Array(packets[head...] + packets[..<head])
            addresses = Array(addresses[head...] + addresses[..<head])
            offsets = Array(offsets[head...] + offsets[..<head])
            head = 0
        }
        while packets.count < size {
            var b: [UInt8] = []
            b.reserveCapacity(MediaEngine.slotCapacity)
            packets.append(b)
            addresses.append(address)
            offsets.append(-1)
        }
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
        head = (head + 1) % packets.count
        count -= 1
        return result
    }

    /// Removes the packets of one RTP stream (its SSRC or its RTX SSRC, read from the unencrypted
    /// header), keeping the others in order; returns how many went. Buffers are swapped, not copied.
    mutating func remove(ssrc: UInt32, rtxSSRC: UInt32?) -> Int {
        var kept = 0
        for n in 0..<count {
            let i = (head + n) % packets.count
            if let s = packets[i].uint32(at: 8), s == ssrc || s == rtxSSRC {
                bytes -= packets[i].count
                continue
            }
            let j = (head + kept) % packets.count
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
