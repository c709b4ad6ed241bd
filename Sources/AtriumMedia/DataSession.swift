import AtriumSCTP

/// A transport's data channels: the SCTP association over its DTLS association, the channels the peer
/// opened, and what waits to be sent when the peer does not keep up. Owned by the worker thread.
final class DataSession {
    let association: SCTPAssociation
    var channels = DataChannels()
    /// Lossy messages waiting for room in the association's buffer, oldest first; past
    /// `lossyQueueLimit` the oldest is dropped (a late pointer position is worth nothing).
    var lossyQueue: [[UInt8]] = []
    /// Reliable messages waiting for room; past `reliableQueueLimit` new ones are dropped and counted.
    var reliableQueue: [[UInt8]] = []
    var up = false

    static let lossyQueueLimit = 8
    /// The association's send buffer: what a peer that stops reading may hold up before the queues
    /// above drop (lossy) or refuse (reliable).
    static let sendBuffer: UInt32 = 64 * 1024
    static let reliableQueueLimit = 256
    /// The largest message relayed (a `send_data` envelope with a 16 KiB payload fits).
    static let maxMessageBytes = 64 * 1024

    init(association: SCTPAssociation) {
        self.association = association
    }

    /// The open channel of that kind: the lossy one, or the first reliable ordered one.
    func channel(lossy: Bool) -> DataChannels.Channel? {
        channels.channels.values.sorted { $0.stream < $1.stream }.first {
            lossy ? $0.isLossy : ($0.ordered && $0.maxRetransmits == nil && $0.maxLifetime == nil)
        }
    }
}
