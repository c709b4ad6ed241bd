public import AtriumMedia
public import AtriumUDP

/// The media plane as the coordinator drives it: commands in, events out, and what the answers
/// announce (the DTLS certificate's fingerprint, the candidate addresses). `MediaWorker` is one
/// worker; `MediaWorkers` is several behind one plane, each room on one of them; the tests give the
/// coordinator a fake that records the commands.
public protocol MediaPlane: AnyObject {
    /// SHA-256 digest of the DTLS certificate every transport presents (`a=fingerprint`).
    var fingerprint: [UInt8] { get }
    /// The digest transport `transport` presents: another node's, for a viewer placed on an edge.
    func fingerprint(transport: String) -> [UInt8]
    /// The addresses written into every answer's and offer's host candidates, in order.
    var candidateAddresses: [SocketAddress] { get }
    /// The addresses of the passive ICE-TCP candidates (RFC 6544), after the UDP ones; empty without.
    var tcpCandidateAddresses: [SocketAddress] { get }
    /// The candidate addresses of the worker that owns `room` (a router id), which places the room on
    /// a worker if it has none yet; one worker answers `candidateAddresses`.
    func candidateAddresses(room: String) -> [SocketAddress]
    /// The ICE-TCP candidate addresses of the worker that owns `room`.
    func tcpCandidateAddresses(room: String) -> [SocketAddress]
    /// The candidate addresses of the worker transport `transport` of `room` opened on (a viewer of a
    /// room spread over several workers may be on another than the room's); the room's otherwise.
    func candidateAddresses(room: String, transport: String) -> [SocketAddress]
    func tcpCandidateAddresses(room: String, transport: String) -> [SocketAddress]
    /// The worker thread's wakeup, for the pipes between workers (`PipeLink`); nil for a fake.
    var pipeWakeup: Wakeup? { get }
    /// Hands a command to the plane; commands apply in the order they are submitted.
    func submit(_ command: MediaCommand)
    /// What the plane reported since the last call, oldest first.
    func events() -> [MediaEvent]
    /// Each transport's figures as last copied out of the plane (RTT, loss), for `network_quality`.
    var transportStats: [TransportStats] { get }
    /// Takes over, as transport `id` of `room`, a subscriber connection that another node made and
    /// its client kept (the room's node was lost; the client joined again): the transport whose ICE
    /// credentials these are, at one of `addresses` (this node's, or an edge's). False when no plane
    /// holds it: the coordinator opens a new connection. One that fails later is reported failed.
    func adopt(id: String, room: String, ufrag: String, password: String, addresses: [SocketAddress]) -> Bool
}

extension MediaPlane {
    /// A plane that measures nothing and has no ICE-TCP (test fakes).
    public var transportStats: [TransportStats] { [] }
    public var tcpCandidateAddresses: [SocketAddress] { [] }
    /// One worker: every room has the same candidates.
    public func candidateAddresses(room: String) -> [SocketAddress] { candidateAddresses }
    public func tcpCandidateAddresses(room: String) -> [SocketAddress] { tcpCandidateAddresses }
    public func candidateAddresses(room: String, transport: String) -> [SocketAddress] {
        candidateAddresses(room: room)
    }
    public func tcpCandidateAddresses(room: String, transport: String) -> [SocketAddress] {
        tcpCandidateAddresses(room: room)
    }
    public var pipeWakeup: Wakeup? { nil }
    public func fingerprint(transport: String) -> [UInt8] { fingerprint }
    /// One node: no connection outlives the node that made it.
    public func adopt(id: String, room: String, ufrag: String, password: String, addresses: [SocketAddress]) -> Bool {
        false
    }
}

extension MediaWorker: MediaPlane {
    public var transportStats: [TransportStats] { stats.transports }
    public var pipeWakeup: Wakeup? { wakeup }
}
