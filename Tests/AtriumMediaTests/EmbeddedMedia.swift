import AtriumDTLS
import AtriumICE
import AtriumLog
import AtriumRTP
import AtriumSRTP
import AtriumSTUN
import AtriumUDP

@testable import AtriumMedia

/// A media engine driven in memory, as SwiftNIO's embedded channel drives a pipeline: datagrams go in
/// through `deliver`, come out of a `MemoryPort`, and time moves only when the test advances the
/// manual clock. Peers are real: ICE checks with message integrity, a DTLS handshake, SRTP.
final class EmbeddedMedia {
    let clock = ManualClock(now: 0)
    let port = MemoryPort(localAddress: .v4(address: 0x7F00_0001, port: 50_000))
    let engine: MediaEngine
    /// What the engine sent that no peer took yet, by destination.
    var outbox: [SocketAddress: [[UInt8]]] = [:]

    init(seed: UInt64 = 7, configure: (inout MediaConfiguration) -> Void = { _ in }) throws {
        var config = MediaConfiguration(bind: .v4(address: 0x7F00_0001, port: 0), randomSeed: seed)
        configure(&config)
        engine = try MediaEngine(config: config, logger: Logger(level: .error), clock: .manual(clock), memory: port)
    }

    /// Hands a datagram to the engine as if it arrived from `from`.
    /// While not nil: the bytes the engine's own work came to hold (`AllocationCount`), summed over
    /// `deliver`, `apply` and `advance` (the peers' work between them, and what is collected for
    /// them, is not counted).
    var engineBytes: Int64?

    private func engineWork(_ body: () -> Void) {
        guard let held = engineBytes else { return body() }
        engineBytes = held + AllocationCount.measure(body).bytes
    }

    func deliver(_ bytes: [UInt8], from: SocketAddress) {
        engineWork { engine.receive(bytes, from: from) }
        collect()
    }

    func apply(_ command: MediaCommand) {
        engineWork {
            engine.apply(command)
            engine.flush()
        }
        collect()
    }

    /// Moves time on in 20 ms ticks (the worker's timer period).
    func advance(by seconds: Double) {
        let end = clock.now + seconds
        while clock.now < end - 1e-9 {
            clock.now = min(end, clock.now + 0.02)
            engineWork {
                engine.tick(clock.now)
                engine.flush()
            }
        }
        collect()
    }

    func collect() {
        for d in port.take() { outbox[d.address, default: []].append(d.payload) }
    }

    func take(for address: SocketAddress) -> [[UInt8]] {
        defer { outbox[address] = nil }
        return outbox[address] ?? []
    }

    func events() -> [MediaEvent] {
        defer { engine.events.removeAll() }
        return engine.events
    }
}

/// A WebRTC peer in memory: its ICE credentials, DTLS client and SRTP sessions toward the engine.
final class EmbeddedPeer {
    let address: SocketAddress
    let transport: String
    let certificate: DTLSCertificate
    let dtls: DTLSEndpoint
    let ufrag: String
    let password = "peerpasswordpeerpassword"
    var srtpOut: SRTPSession?
    var srtpIn: SRTPSession?
    var keys: SRTPKeys?
    /// Decrypted RTP and RTCP from the engine, in arrival order.
    var rtp: [[UInt8]] = []
    var rtcp: [RTCPPacket] = []

    init(port: UInt16, transport: String, serverFingerprint: DTLSFingerprint) throws {
        address = .v4(address: 0x7F00_0001, port: port)
        self.transport = transport
        ufrag = "peer\(port)"
        certificate = try DTLSCertificate()
        dtls = try DTLSEndpoint(role: .client, certificate: certificate, remoteFingerprint: serverFingerprint)
    }

    /// The server's ICE credentials for this peer's transport (derived from its id, so that two
    /// peers answering the same offer share them).
    var localUfrag: String { "srv\(transport)" }
    let localPassword = "serverpasswordserverpass"

    /// What this peer's answer tells the server.
    func remote(midExtensionID: UInt8? = nil, transportWideCC: UInt8? = nil) -> RemoteSpec {
        RemoteSpec(
            ufrag: ufrag, password: password, fingerprint: certificate.fingerprint.digest, dtlsClient: false,
            midExtensionID: midExtensionID, transportWideCCExtensionID: transportWideCC)
    }

    /// Opens this peer's transport on the engine and brings it up: an ICE check nominating the pair,
    /// then the DTLS handshake (the peer is the client, as a browser answering `a=setup:active`).
    func connect(
        to media: EmbeddedMedia, router: String = "room", midExtensionID: UInt8? = nil, transportWideCC: UInt8? = nil
    ) throws {
        media.apply(
            .openTransport(
                TransportSpec(
                    id: transport, router: router, label: transport, localUfrag: localUfrag,
                    localPassword: localPassword,
                    remote: remote(midExtensionID: midExtensionID, transportWideCC: transportWideCC))))
        try check(media)
        try handshake(media)
    }

    /// A connectivity check with USE-CANDIDATE, as the controlling agent.
    func check(_ media: EmbeddedMedia) throws {
        var b = STUNMessageBuilder(type: .bindingRequest, transactionID: STUNTransactionID(high: 1, low: 2))
        try b.appendUsername("\(localUfrag):\(ufrag)")
        try b.appendPriority(ICECandidate.priority(typePreference: 126, localPreference: 65535, component: 1))
        try b.appendICEControlling(tieBreaker: 9)
        try b.appendUseCandidate()
        try b.appendMessageIntegrity(key: STUNIntegrity.shortTermKey(password: localPassword))
        try b.appendFingerprint()
        media.deliver(b.bytes, from: address)
        _ = media.take(for: address)
    }

    /// The DTLS handshake as the client, up to `flights` round trips (all of it by default).
    func handshake(_ media: EmbeddedMedia, flights: Int = 10) throws {
        var flight = dtls.state == .idle ? try dtls.start() : []
        for _ in 0..<flights where srtpOut == nil {
            for d in flight { media.deliver(d, from: address) }
            flight = []
            for d in media.take(for: address) {
                let out = try dtls.receive(d)
                flight += out.datagrams
                for case .connected(let keys) in out.events {
                    self.keys = keys
                    srtpOut = try keys.outboundSession()
                    srtpIn = try keys.inboundSession()
                }
            }
        }
        for d in flight { media.deliver(d, from: address) }
        guard srtpOut != nil || flights < 10 else { throw EmbeddedError.notConnected }
    }

    func send(rtp packet: [UInt8], to media: EmbeddedMedia) throws {
        var p = packet
        try srtpOut?.protect(rtp: &p)
        media.deliver(p, from: address)
    }

    func send(rtcp packets: [RTCPPacket], to media: EmbeddedMedia) throws {
        var p = try RTCPCompound.serialize(packets)
        try srtpOut?.protectRTCP(&p)
        media.deliver(p, from: address)
    }

    /// Forgets what was received (a new inbound SRTP session, empty replay window): as if the packets
    /// so far had been lost on the way.
    func forgetReceived() throws {
        srtpIn = try keys?.inboundSession()
        rtp.removeAll()
    }

    /// Decrypts what the engine sent this peer since the last call.
    func receive(from media: EmbeddedMedia) throws {
        for var d in media.take(for: address) {
            guard d.count > 1 else { continue }
            if PacketDemultiplexer.isRTCP(secondByte: d[1]) {
                try srtpIn?.unprotectRTCP(&d)
                rtcp += try RTCPCompound.parse(d)
            } else if PacketDemultiplexer.classify(d) == .rtp {
                try srtpIn?.unprotect(srtp: &d)
                rtp.append(d)
            }
        }
    }
}

enum EmbeddedError: Error { case notConnected }
