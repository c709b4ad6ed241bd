import AtriumSync
internal import CAtriumSCTP

/// One SCTP association over a DTLS association (RFC 8261), run by usrsctp. The owner (a media
/// worker) feeds it the peer's packets (`receive`), sends messages, and takes what usrsctp produced:
/// packets to encrypt and send, and events. usrsctp may produce both on its own timer thread
/// (retransmissions, heartbeats), so they wait here under a lock and `wake` tells the owner.
/// The data path only: the RTP path never takes this lock.
public final class SCTPAssociation: @unchecked Sendable {
    /// What happened, in order.
    public enum Event: Equatable, Sendable {
        /// A whole message on a stream, with its payload protocol identifier.
        case message(stream: UInt16, ppid: UInt32, data: [UInt8])
        case up
        case down
        /// The peer reset its outgoing stream (it closed a data channel).
        case streamReset(UInt16)
        /// The send buffer has room again.
        case writable
    }

    /// What `send` did with a message.
    public enum SendResult: Equatable, Sendable {
        case queued
        /// The send buffer is full: try again on `writable`.
        case full
        case failed(errno: Int32)
    }

    /// The largest message reassembled from parts (the SDP's `max-message-size`).
    public static let maxMessageSize = 256 * 1024

    struct Shared {
        var outbound: [[UInt8]] = []
        var events: [Event] = []
        var partial: [UInt16: [UInt8]] = [:]
    }

    public let id: UInt
    /// A pthread lock (`Monitor`), not Synchronization's `Mutex`: ThreadSanitizer sees the hand-off
    /// between the owner and usrsctp's timer thread.
    let shared = Monitor(Shared())
    let wake: @Sendable () -> Void
    private var socket: UnsafeMutableRawPointer?

    /// Opens the association and starts its handshake (both ends connect). Nil when usrsctp refuses.
    public init?(port: UInt16 = 5000, sendBuffer: UInt32 = 256 * 1024, wake: @escaping @Sendable () -> Void) {
        SCTPRegistry.start()
        id = SCTPRegistry.nextID()
        self.wake = wake
        SCTPRegistry.add(self)
        guard let s = atrium_sctp_open(uintptr_t(id), port, sendBuffer) else {
            SCTPRegistry.remove(id)
            return nil
        }
        socket = s
    }

    deinit { close() }

    /// An SCTP packet from the peer (the plaintext of a DTLS record).
    public func receive(_ packet: [UInt8]) {
        guard socket != nil else { return }
        packet.withUnsafeBytes { atrium_sctp_input(uintptr_t(id), $0.baseAddress, $0.count) }
    }

    /// Sends a message on `stream`; `maxRetransmits` 0 never retransmits (partial reliability).
    public func send(stream: UInt16, ppid: UInt32, unordered: Bool, maxRetransmits: Int?, data: [UInt8]) -> SendResult {
        guard let socket else { return .failed(errno: 107) }
        let retransmits = Int32(clamping: maxRetransmits ?? -1)
        let n = data.withUnsafeBytes {
            atrium_sctp_send(socket, stream, ppid, unordered ? 1 : 0, retransmits, $0.baseAddress, $0.count)
        }
        if n >= 0 { return .queued }
        let e = Int32(truncatingIfNeeded: -n)
        return e == 11 ? .full : .failed(errno: e)
    }

    /// Resets our outgoing `stream` (closing a channel after the peer reset its side).
    public func resetStream(_ stream: UInt16) {
        guard let socket else { return }
        _ = atrium_sctp_reset_stream(socket, stream)
    }

    /// The packets to send to the peer, in order.
    public func takeOutbound() -> [[UInt8]] {
        shared.withLock { s in
            defer { s.outbound.removeAll() }
            return s.outbound
        }
    }

    public func takeEvents() -> [Event] {
        shared.withLock { s in
            defer { s.events.removeAll() }
            return s.events
        }
    }

    /// Whether packets or events wait (checked by the owner each round).
    public var hasPending: Bool { shared.withLock { !$0.outbound.isEmpty || !$0.events.isEmpty } }

    /// Closes the association (an ABORT to the peer); no callback comes after.
    public func close() {
        guard let s = socket else { return }
        socket = nil
        atrium_sctp_close(s, uintptr_t(id))
        SCTPRegistry.remove(id)
    }

    /// usrsctp's count of packets it refused (bad checksum, no association, too short, wrong tag),
    /// for every association of the process.
    public static var rejectedPackets: UInt64 { atrium_sctp_rejected_packets() }

    // MARK: - From usrsctp's callbacks (any thread)

    func output(_ bytes: [UInt8]) {
        shared.withLock { $0.outbound.append(bytes) }
        wake()
    }

    func event(_ kind: Int32, stream: UInt16, ppid: UInt32, endOfRecord: Bool, data: [UInt8]) {
        let e: Event?
        switch kind {
        case 0:
            e = shared.withLock { s -> Event? in
                var whole = s.partial.removeValue(forKey: stream) ?? []
                // A message whose parts grow past the largest announced is dropped whole.
                guard whole.count + data.count <= Self.maxMessageSize else { return nil }
                whole += data
                guard endOfRecord else {
                    s.partial[stream] = whole
                    return nil
                }
                return .message(stream: stream, ppid: ppid, data: whole)
            }
        case 1: e = .up
        case 2: e = .down
        case 3: e = .streamReset(stream)
        default: e = .writable
        }
        guard let e else { return }
        shared.withLock { $0.events.append(e) }
        wake()
    }
}

/// The live associations by id, so that usrsctp's callbacks find theirs, or nothing once it closed.
enum SCTPRegistry {
    static let table = Monitor<(next: UInt, live: [UInt: SCTPAssociation])>((1, [:]))

    static func nextID() -> UInt {
        table.withLock { t in
            defer { t.next += 1 }
            return t.next
        }
    }

    static func add(_ a: SCTPAssociation) { table.withLock { $0.live[a.id] = a } }
    static func remove(_ id: UInt) { _ = table.withLock { $0.live.removeValue(forKey: id) } }
    static func find(_ id: UInt) -> SCTPAssociation? { table.withLock { $0.live[id] } }

    static func start() {
        atrium_sctp_init(
            { id, packet, length in
                guard let packet, let a = SCTPRegistry.find(UInt(id)) else { return }
                a.output(Array(UnsafeRawBufferPointer(start: packet, count: length)))
            },
            { id, kind, stream, ppid, eor, data, length in
                guard let a = SCTPRegistry.find(UInt(id)) else { return }
                let bytes = data.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
                a.event(kind, stream: stream, ppid: ppid, endOfRecord: eor != 0, data: bytes)
            })
    }
}
