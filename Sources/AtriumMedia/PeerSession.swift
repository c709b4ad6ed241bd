import AtriumDTLS
import AtriumICE
import AtriumSRTP
import AtriumUDP

/// A transport's session with its peer: the ICE-lite agent and the addresses it validated, the DTLS
/// association and the SRTP contexts it keys. Owned by the worker thread.
final class PeerSession {
    var ice: ICELiteAgent
    var remote: RemoteSpec?
    var dtls: DTLSEndpoint?
    /// The address whose datagrams drive the DTLS association's handshake.
    var dtlsAddress: SocketAddress?
    var srtpIn: SRTPSession? { didSet { srtpInRef = srtpIn.map(Borrowed.init) } }
    var srtpOut: SRTPSession? { didSet { srtpOutRef = srtpOut.map(Borrowed.init) } }
    /// The same sessions for the packet path, which reaches them without reference counting.
    private(set) var srtpInRef: Borrowed<SRTPSession>?
    private(set) var srtpOutRef: Borrowed<SRTPSession>?
    /// Where media goes: the nominated pair, else the first valid one.
    var peer: SocketAddress?
    var addresses: Set<SocketAddress> = []
    var connected = false
    /// Counts ICE restarts; a DTLS association records the one it began in. A peer's new ClientHello
    /// is taken as a new association only after an ICE restart (a browser's new BUNDLE transport).
    var iceGeneration = 0
    var dtlsGeneration = 0

    init(ice: ICELiteAgent, remote: RemoteSpec?) {
        self.ice = ice
        self.remote = remote
    }
}
