import AtriumICE
import AtriumLog
import AtriumSTUN
import AtriumUDP
import Testing

@testable import AtriumMedia

#if canImport(Glibc)
    import Glibc
#endif

/// The engine's ICE-TCP side live, on 127.0.0.1: a real listener on the worker's poller and real TCP
/// clients, with the engine's clock in the test's hands. A check framed per RFC 4571 is answered on its
/// connection; garbage is closed at once; a silent connection after the check timeout; others stay.
@Suite struct ICETCPEngineTests {
    /// A blocking-connect, non-blocking-read TCP client.
    final class Client {
        let fd: Int32

        init(port: UInt16) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = port.bigEndian
            a.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            let rc = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            try #require(rc == 0)
        }

        deinit { close(fd) }

        var localPort: UInt16 {
            var a = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            return UInt16(bigEndian: a.sin_port)
        }

        func send(_ bytes: [UInt8]) {
            _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        /// What is waiting now; nil once the server closed the connection.
        func receive() -> [UInt8]? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n == 0 { return nil }
            if n < 0 { return errno == ECONNRESET ? nil : [] }
            return Array(buffer[0..<n])
        }
    }

    static let ufrag = "tcpU"
    static let password = "tcppasswordtcppassword24"

    static func engine(_ clock: ManualClock) throws -> MediaEngine {
        var config = MediaConfiguration(bind: .v4(address: 0x7F00_0001, port: 0), randomSeed: 7)
        config.tcpBind = .v4(address: 0x7F00_0001, port: 0)
        let e = try MediaEngine(config: config, logger: Logger(level: .error), clock: .manual(clock))
        e.apply(
            .openTransport(
                TransportSpec(
                    id: "t", router: "room", label: "t", localUfrag: ufrag, localPassword: password,
                    remote: RemoteSpec(
                        ufrag: "peer", password: "peerpasswordpeerpassword",
                        fingerprint: [UInt8](repeating: 0, count: 32),
                        dtlsClient: false))))
        return e
    }

    static func check() throws -> [UInt8] {
        var b = STUNMessageBuilder(type: .bindingRequest, transactionID: STUNTransactionID(high: 3, low: 4))
        try b.appendUsername("\(ufrag):peer")
        try b.appendPriority(ICECandidate.priority(typePreference: 90, localPreference: 65535, component: 1))
        try b.appendICEControlling(tieBreaker: 5)
        try b.appendUseCandidate()
        try b.appendMessageIntegrity(key: STUNIntegrity.shortTermKey(password: password))
        try b.appendFingerprint()
        return b.bytes
    }

    static func framed(_ p: [UInt8]) -> [UInt8] { [UInt8(p.count >> 8), UInt8(p.count & 0xFF)] + p }

    /// Runs the engine until `done` or a bound of rounds (each waits at most 5 ms).
    static func run(_ e: MediaEngine, until done: () -> Bool) throws {
        for _ in 0..<400 {
            _ = try e.runOnce(timeout: .milliseconds(5))
            if done() { return }
        }
    }

    @Test func aFramedCheckIsAnsweredOnItsConnectionAndBadPeersAreClosed() throws {
        let clock = ManualClock(now: 1)
        let e = try Self.engine(clock)
        let port = try #require(e.tcpListener?.localAddress.port)

        let good = try Client(port: port)
        // A check in two pieces, split inside the length header.
        let check = Self.framed(try Self.check())
        good.send(Array(check[0..<1]))
        try Self.run(e) { e.tcpConnections.count == 1 }
        good.send(Array(check[1...]))
        var answer: [UInt8] = []
        try Self.run(e) {
            answer += good.receive() ?? []
            return answer.count >= 2 && answer.count >= 2 + (Int(answer[0]) << 8 | Int(answer[1]))
        }
        let length = Int(answer[0]) << 8 | Int(answer[1])
        let response = try STUNMessage(parsing: Array(answer[2..<2 + length]))
        #expect(response.type == .bindingSuccess)
        let mapped = STUNTransportAddress(address: .v4(0x7F00_0001), port: good.localPort)
        #expect(e.byAddress[MediaEngine.socketAddress(mapped)] != nil)
        #expect(e.transports["t"]?.session.peer == MediaEngine.socketAddress(mapped))

        // Garbage: an HTTP request, and a first frame that is not STUN.
        let http = try Client(port: port)
        http.send(Array("GET / HTTP/1.1\r\n\r\n".utf8))
        let rtpFirst = try Client(port: port)
        rtpFirst.send(Self.framed([0x80, 0x60, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]))
        var closed = (http: false, rtp: false)
        try Self.run(e) {
            if http.receive() == nil { closed.http = true }
            if rtpFirst.receive() == nil { closed.rtp = true }
            return closed.http && closed.rtp
        }
        #expect(closed.http && closed.rtp)
        #expect(e.counters.tcpClosed[TCPCloseReason.garbage.rawValue] == 2)

        // Silent: closed once the check timeout passes; the checked connection stays.
        let silent = try Client(port: port)
        try Self.run(e) { e.tcpConnections.count == 2 }
        clock.advance(by: 11)
        good.send(Self.framed(try Self.check()))  // consent: the good one is not idle
        var silentClosed = false
        try Self.run(e) {
            if silent.receive() == nil { silentClosed = true }
            return silentClosed
        }
        #expect(silentClosed)
        #expect(e.counters.tcpClosed[TCPCloseReason.idle.rawValue] == 1)
        #expect(e.tcpConnections.count == 1)
        #expect(good.receive() != nil)
        #expect(e.snapshot().tcpConnections == 1)

        // Its transport closes: so does the connection.
        e.apply(.closeTransport(id: "t"))
        var goodClosed = false
        try Self.run(e) {
            if good.receive() == nil { goodClosed = true }
            return goodClosed
        }
        #expect(goodClosed)
        #expect(e.counters.tcpClosed[TCPCloseReason.shutdown.rawValue] == 1)
        #expect(e.tcpConnections.isEmpty && e.tcpByAddress.isEmpty && e.byAddress.isEmpty)
    }
}
