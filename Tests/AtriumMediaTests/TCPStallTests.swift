import Testing

@testable import AtriumMedia
@testable import AtriumUDP

#if canImport(Glibc)
    import Glibc
#endif

/// A peer that stops acknowledging is caught by the kernel (TCP_USER_TIMEOUT, RFC 5482) as well as by
/// the connection's own queue: the option is set on what the listener accepts, and the ETIMEDOUT a
/// read or write then fails with closes the connection as `stalled`, any other failure as `closed`.
/// (The whole path, with a Chromium viewer whose acknowledgements are dropped, is
/// e2e/browser/test_firewalls.py.)
@Suite struct TCPStallTests {
    static let failures: [(UDPError, TCPCloseReason)] = [
        (.receive(errno: ETIMEDOUT), .stalled),
        (.send(errno: ETIMEDOUT), .stalled),
        (.receive(errno: ECONNRESET), .closed),
        (.send(errno: EPIPE), .closed),
        (.send(errno: ECONNRESET), .closed),
        (.accept(errno: ETIMEDOUT), .closed),
    ]

    @Test(arguments: failures)
    func aFailureClosesAConnectionFor(failure: UDPError, reason: TCPCloseReason) {
        #expect(TCPCloseReason(failure: failure) == reason)
    }

    /// The option as the kernel reports it on an accepted connection, in milliseconds.
    static func userTimeout(acceptingWith seconds: Double) throws -> UInt32 {
        let listener = try TCPListener(bindingTo: .v4(address: 0x7F00_0001, port: 0))
        let client = try ICETCPEngineTests.Client(port: listener.localAddress.port)
        defer { withExtendedLifetime(client) {} }
        let stream = try #require(try listener.accept(sendBuffer: 0, unacknowledgedTimeout: seconds))
        var value: UInt32 = 0
        var length = socklen_t(MemoryLayout<UInt32>.size)
        try #require(getsockopt(stream.fileDescriptor, Int32(IPPROTO_TCP), TCP_USER_TIMEOUT, &value, &length) == 0)
        return value
    }

    @Test func theListenerSetsTheKernelsUnacknowledgedTimeout() throws {
        #expect(try Self.userTimeout(acceptingWith: 5) == 5000)
        #expect(try Self.userTimeout(acceptingWith: 0.25) == 250)
        // None asked for, or a value the option cannot hold: the kernel's default (0, none).
        #expect(try Self.userTimeout(acceptingWith: 0) == 0)
        #expect(try Self.userTimeout(acceptingWith: 1e12) == 0)
        #expect(try Self.userTimeout(acceptingWith: -3) == 0)
    }
}
