import AtriumRTP

@testable import AtriumMedia

/// A one-way link of `capacity` bits per second toward a viewer, with the viewer's transport-wide
/// feedback: a packet leaves the link once those before it have (a queue drained at the link's rate),
/// and what has come out by a time is what the viewer reports. The in-memory bandwidth tests compute
/// a viewer's feedback with it.
struct TransportWideLink {
    var capacity: Double
    /// Bytes its queue holds at most (drop-tail, for `offer`); nil: unbounded.
    let queueLimit: Int?
    private var free = 0.0
    private var inFlight: [(number: UInt16, arrival: Double)] = []
    private var recorder = TransportWideRecorder()

    init(capacity: Double, queueLimit: Int? = nil) {
        self.capacity = capacity
        self.queueLimit = queueLimit
    }

    /// `carry` behind the queue limit: nil (dropped) when the bytes still queued at `sent` and this
    /// packet's would pass it.
    mutating func offer(bytes: Int, sent: Double, number: UInt16?) -> Double? {
        if let queueLimit, max(free - sent, 0) * capacity / 8 + Double(bytes) > Double(queueLimit) { return nil }
        return carry(bytes: bytes, sent: sent, number: number)
    }

    /// Puts a packet of `bytes` sent at `sent` (seconds) on the link and returns when it arrives;
    /// `number` is its transport-wide sequence number, when it carries one.
    mutating func carry(bytes: Int, sent: Double, number: UInt16?) -> Double {
        free = max(free, sent) + Double(bytes * 8) / capacity
        if let number { inFlight.append((number, free)) }
        return free
    }

    /// Records the numbered packets that have arrived by `now`.
    mutating func deliver(until now: Double) {
        for f in inFlight where f.arrival <= now {
            recorder.record(f.number, at: Int64(f.arrival * 1_000_000))
        }
        inFlight.removeAll { $0.arrival <= now }
    }

    /// The feedback packets for what was recorded since the last call (none when nothing was).
    mutating func feedback(mediaSSRC: UInt32) -> [RTCPPacket] {
        var packets: [RTCPPacket] = []
        while let fb = recorder.feedback(senderSSRC: 1, mediaSSRC: mediaSSRC) {
            packets.append(.transportWideFeedback(fb))
        }
        return packets
    }
}
