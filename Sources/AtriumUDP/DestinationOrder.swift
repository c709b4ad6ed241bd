/// The order in which a send hands a batch's datagrams to the kernel: grouped by destination, the
/// destinations in the order of their first datagram, each destination's datagrams in their order. A
/// media worker's round copies each packet to every viewer in turn, so one viewer's packets lie far
/// apart in the batch; grouped, they are runs that UDP segmentation sends as one message each.
///
/// O(n) per batch through an open-addressed table of destinations; its buffers grow to the largest
/// batch seen and are kept, so a steady batch size allocates nothing. Owned by one socket, on one thread.
final class DestinationOrder {
    /// `order[k]` is the batch index of the k-th datagram to send, after `group` ran.
    private(set) var order: UnsafeMutablePointer<Int32>
    private var next: UnsafeMutablePointer<Int32>
    private var firsts: UnsafeMutablePointer<Int32>
    /// Per table slot, the first and last datagram of its destination (-1: empty slot).
    private var heads: UnsafeMutablePointer<Int32>
    private var tails: UnsafeMutablePointer<Int32>
    private var capacity = 0
    private var tableSize = 0

    init() {
        order = .allocate(capacity: 1)
        next = .allocate(capacity: 1)
        firsts = .allocate(capacity: 1)
        heads = .allocate(capacity: 1)
        tails = .allocate(capacity: 1)
    }

    deinit { release() }

    private func release() {
        order.deallocate()
        next.deallocate()
        firsts.deallocate()
        heads.deallocate()
        tails.deallocate()
    }

    /// Room for `count` datagrams (at least doubling, so growth is rare), and a table at least twice that.
    private func reserve(_ count: Int) {
        guard count > capacity else { return }
        release()
        capacity = max(count, capacity * 2, 64)
        tableSize = 1
        while tableSize < capacity * 2 { tableSize <<= 1 }
        order = .allocate(capacity: capacity)
        next = .allocate(capacity: capacity)
        firsts = .allocate(capacity: capacity)
        heads = .allocate(capacity: tableSize)
        tails = .allocate(capacity: tableSize)
    }

    /// Fills `order` for `datagrams` (at most Int32.max of them).
    func group(_ datagrams: UnsafeBufferPointer<Datagram>) {
        let count = datagrams.count
        reserve(count)
        heads.update(repeating: -1, count: tableSize)
        let mask = tableSize - 1
        var groups = 0
        var i = 0
        while i < count {
            let address = datagrams[i].address
            next[i] = -1
            var slot = Self.hash(address) & mask
            while true {
                let head = Int(heads[slot])
                if head < 0 {
                    heads[slot] = Int32(truncatingIfNeeded: i)
                    tails[slot] = Int32(truncatingIfNeeded: i)
                    firsts[groups] = Int32(truncatingIfNeeded: i)
                    groups += 1
                    break
                }
                if datagrams[head].address == address {
                    next[Int(tails[slot])] = Int32(truncatingIfNeeded: i)
                    tails[slot] = Int32(truncatingIfNeeded: i)
                    break
                }
                slot = (slot + 1) & mask
            }
            i += 1
        }
        var k = 0
        var g = 0
        while g < groups {
            var j = firsts[g]
            while j >= 0 {
                order[k] = j
                k += 1
                j = next[Int(j)]
            }
            g += 1
        }
    }

    /// A multiplicative hash of the address and port (Fibonacci hashing); the table masks its low bits.
    @inline(__always) static func hash(_ address: SocketAddress) -> Int {
        let key: UInt64
        switch address {
        case .v4(let a, let port): key = UInt64(a) << 16 | UInt64(port)
        case .v6(let high, let low, let port, let scope):
            key = high ^ (low &* 0x9E37_79B9_7F4A_7C15) ^ (UInt64(port) << 32 | UInt64(scope))
        }
        return Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 32)
    }
}
