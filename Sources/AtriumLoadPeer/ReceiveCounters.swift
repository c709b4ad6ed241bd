/// What one load peer received: every decrypted RTP packet, and per stamped stream (`PayloadStamp`:
/// a publisher's source) the packets, bytes and the range of the publisher's sequence numbers seen,
/// from which losses follow without trusting the server's RTP sequence numbers. One peer may receive
/// the streams of several publishers (a meeting's subscriber connection), told apart by the stamp's
/// publisher id and source.
public struct ReceiveCounters: Sendable {
    public struct Source: Sendable, Equatable {
        public var publisher: UInt32
        /// The stamp's source (the publisher's stream: a simulcast layer has its own).
        public var source: UInt8 = 0
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

    /// The most streams one peer counts (a meeting of 8 with a share, each camera in three layers, is
    /// under 40); a stamp of a further stream counts as `unstamped`.
    public static let maximumSources = 64

    public var packets = 0
    public var bytes = 0
    /// RTP packets SRTP refused (authentication, replay) and decrypted ones without a stamp.
    public var undecryptable = 0
    public var unstamped = 0
    public var rtcp = 0
    /// The streams seen, in the order their first packet arrived.
    public private(set) var sources: [Source] = []
    /// Where the last packet's stream lies in `sources`: most packets follow one of the same stream.
    private var last = 0

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
        guard let i = index(stamp) else {
            guard sources.count < Self.maximumSources else {
                unstamped += 1
                return
            }
            last = sources.count
            sources.append(
                Source(
                    publisher: stamp.publisher, source: stamp.source, packets: 1, bytes: n,
                    firstSequence: stamp.sequence, highestSequence: stamp.sequence))
            return
        }
        last = i
        // Newer in serial-number order (RFC 1982) within half the space.
        let ahead = stamp.sequence &- sources[i].highestSequence
        if ahead != 0 && ahead < 1 << 31 {
            sources[i].highestSequence = stamp.sequence
            sources[i].packets += 1
            sources[i].bytes += n
        } else {
            sources[i].repeated += 1
        }
    }

    /// Where the stamp's stream lies in `sources`, the last one's first.
    private func index(_ stamp: PayloadStamp) -> Int? {
        if last < sources.count && sources[last].source == stamp.source && sources[last].publisher == stamp.publisher {
            return last
        }
        return sources.firstIndex { $0.source == stamp.source && $0.publisher == stamp.publisher }
    }
}
