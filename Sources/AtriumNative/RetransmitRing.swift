/// A sender's last packets by sequence number, to answer NACKs (RFC 4585 section 6.2.1): a ring of
/// `capacity` slots indexed by the sequence number's low bits, each tagged with its full number so a
/// slot reused by a newer packet is not mistaken for the one asked for. Pure value.
public struct RetransmitRing: Sendable {
    public static let capacity = 1024
    var packets: [[UInt8]]
    var tags: [Int32]

    public init() {
        packets = [[UInt8]](repeating: [], count: Self.capacity)
        tags = [Int32](repeating: -1, count: Self.capacity)
    }

    /// Keeps a packet as sent (before encryption).
    public mutating func store(_ sequence: UInt16, _ packet: [UInt8]) {
        let slot = Int(sequence) & (Self.capacity - 1)
        packets[slot] = packet
        tags[slot] = Int32(sequence)
    }

    /// The packet with this sequence number, if it is still kept.
    public func packet(_ sequence: UInt16) -> [UInt8]? {
        let slot = Int(sequence) & (Self.capacity - 1)
        return tags[slot] == Int32(sequence) ? packets[slot] : nil
    }
}
