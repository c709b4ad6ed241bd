/// What one load peer received: every decrypted RTP packet, and per stamped source (`PayloadStamp`)
/// the packets, bytes and the range of the publisher's sequence numbers seen, from which losses
/// follow without trusting the server's RTP sequence numbers.
public struct ReceiveCounters: Sendable {
    public struct Source: Sendable, Equatable {
        public var publisher: UInt32
        public var packets = 0
        public var bytes = 0
        /// Packets whose sequence number was not newer than the highest seen: copies (a server's
        /// retransmission or probe repeating media), or late ones. Not counted in `packets`.
        public var repeated = 0
        public var firstSequence: UInt32
        public var highestSequence: UInt32

        /// Packets the publisher sent in the range seen and this peer did not receive (duplicates
        /// count against it; never below zero).
        public var lost: Int { max(0, Int(highestSequence &- firstSequence) + 1 - packets) }
    }

    /// The stamp's source field is a byte; publishers here use a handful.
    public static let maximumSources = 8

    public var packets = 0
    public var bytes = 0
    /// RTP packets SRTP refused (authentication, replay) and decrypted ones without a stamp.
    public var undecryptable = 0
    public var unstamped = 0
    public var rtcp = 0
    public private(set) var sources = [Source?](repeating: nil, count: maximumSources)

    public init() {}

    /// A decrypted RTP packet of `n` bytes: counted, and its stamp counted (or `unstamped` without one).
    public mutating func countDecrypted(_ stamp: PayloadStamp?, bytes n: Int) {
        packets += 1
        bytes += n
        guard let stamp else {
            unstamped += 1
            return
        }
        count(stamp, bytes: n)
    }

    public mutating func count(_ stamp: PayloadStamp, bytes n: Int) {
        let i = Int(stamp.source)
        guard i < Self.maximumSources else {
            unstamped += 1
            return
        }
        if var s = sources[i] {
            // Newer in serial-number order (RFC 1982) within half the space.
            let ahead = stamp.sequence &- s.highestSequence
            if ahead != 0 && ahead < 1 << 31 {
                s.highestSequence = stamp.sequence
                s.packets += 1
                s.bytes += n
            } else {
                s.repeated += 1
            }
            sources[i] = s
        } else {
            sources[i] = Source(
                publisher: stamp.publisher, packets: 1, bytes: n, firstSequence: stamp.sequence,
                highestSequence: stamp.sequence)
        }
    }
}
