import AtriumUDP

/// A media worker's send side: the batch of send slots (preallocated datagrams, filled in place and
/// sent together by `flush`), the subscriber transports whose pacer holds packets, and the zeros an
/// SRTP trailer is made room with. Owned by the worker thread; `MediaEngine+Egress` fills, paces,
/// seals and flushes it, diverting ICE-TCP peers' datagrams to their connections.
final class Egress {
    /// The send slots; the first `count` are the batch.
    var tx: [Datagram]
    var count = 0
    /// Subscriber transports whose pacer holds packets (`MediaEngine+Pacer`).
    var pacing: [Transport] = []
    /// Zero bytes to append from (`appendZeros`), made once: no array slice (retained) per packet.
    let zeros: UnsafeMutableRawBufferPointer
    /// When a failed send was last logged (at most one line per 10 s).
    var lastSendFailureLog: Double = -10

    init(slots: Int, capacity: Int) {
        tx = (0..<slots).map { _ in Datagram(capacity: capacity) }
        zeros = .allocate(byteCount: 256, alignment: 16)
        zeros.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit { zeros.deallocate() }

    /// Whether every slot is taken (the batch must be flushed before the next packet).
    var isFull: Bool { count == tx.count }
}
