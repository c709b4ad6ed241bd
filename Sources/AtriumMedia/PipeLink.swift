public import AtriumUDP

/// The pipe from one media worker to another (mediasoup's pipe between two routers, inside
/// one process): a room too big for one worker keeps its publishers on its home worker (`from`),
/// which hands each piped producer's decrypted packets to the worker (`to`) holding more of the
/// room's viewers, once per worker, not per viewer. The far worker's pipe producer feeds its viewers
/// as a local producer would; their key-frame requests and the layers they want come back through
/// the reverse ring.
///
/// One link per ordered pair of workers keeps both rings single-producer and single-consumer: only
/// `from`'s thread pushes packets and pops feedback, only `to`'s thread pops packets and pushes
/// feedback. Each side wakes the other once per batch (an eventfd write), never per packet. Made on
/// the service thread and handed to both workers in their commands, before either touches it.
public final class PipeLink: @unchecked Sendable {
    /// The home worker's index (it receives the publishers) and the far worker's.
    public let from: Int
    public let to: Int
    let packets: PacketRing
    let feedback: SPSCRing<PipeFeedback>
    private let wakeFar: Wakeup?
    private let wakeHome: Wakeup?
    /// Set by one side's thread when it pushed since it last woke the other (each flag is touched by
    /// one thread only).
    var farPending = false
    var homePending = false

    /// Packets a ring holds (about 1.5 MiB of slots per link made).
    public static let defaultCapacity = 1024

    public init(from: Int, to: Int, wakeFar: Wakeup?, wakeHome: Wakeup?, capacity: Int = PipeLink.defaultCapacity) {
        self.from = from
        self.to = to
        self.wakeFar = wakeFar
        self.wakeHome = wakeHome
        packets = PacketRing(capacity: capacity, slotSize: MediaEngine.slotCapacity)
        feedback = SPSCRing(capacity: 256)
    }

    /// Home thread: wakes the far worker if packets were pushed since the last wake.
    func wakeFarIfPending() {
        guard farPending else { return }
        farPending = false
        wakeFar?.wake()
    }

    /// Far thread: wakes the home worker if feedback was pushed since the last wake.
    func wakeHomeIfPending() {
        guard homePending else { return }
        homePending = false
        wakeHome?.wake()
    }
}

/// What a far worker's viewers ask of a piped producer's home worker.
struct PipeFeedback: Sendable {
    enum Kind: Sendable {
        /// A key frame of stream k (a viewer's PLI or FIR, a new viewer, a layer switch).
        case keyFrame(stream: Int)
        /// The streams the far worker's viewers want (bit k: stream k), for the publisher's layers.
        case wanted(mask: UInt8)
    }

    var tag: UInt32
    var kind: Kind
}
