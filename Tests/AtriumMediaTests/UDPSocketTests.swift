import Foundation
import Testing

@testable import AtriumUDP

/// Live sockets on 127.0.0.1 only: every test binds loopback and sends only to sockets it opened itself.
@Suite struct UDPSocketTests {
    /// A payload that names its sequence number and has a length and content derived from it, so a
    /// reordered, cut or corrupted datagram is caught.
    static func payload(_ seq: Int) -> [UInt8] {
        let length = 8 + (seq * 37) % 1200
        var out = withUnsafeBytes(of: UInt32(seq).bigEndian) { Array($0) }
        while out.count < length { out.append(UInt8(truncatingIfNeeded: seq &* 31 &+ out.count)) }
        return out
    }

    /// Sends `count` datagrams from `sender` to `receiver` in batches, receiving between batches, and
    /// checks they arrive intact, in order, and from the sender's address.
    static func transfer(from sender: UDPSocket, to receiver: UDPSocket, count: Int) throws {
        let poller = try EpollPoller()
        try poller.register(receiver, token: 7)
        var inbox = (0..<receiver.batchSize).map { _ in Datagram(capacity: receiver.maxDatagramSize) }
        var ready: [UInt64] = []
        ready.reserveCapacity(EpollPoller.maxEvents)
        var nextToSend = 0
        var nextExpected = 0
        let batch = 25
        while nextExpected < count {
            if nextToSend < count && nextToSend - nextExpected < 4 * batch {
                let end = min(nextToSend + batch, count)
                let out = (nextToSend..<end).map { Datagram(address: receiver.localAddress, payload: payload($0)) }
                nextToSend += try sender.send(out)
            }
            _ = try poller.wait(timeout: .seconds(2), ready: &ready)
            #expect(ready == [7], "no datagram within 2 s after \(nextExpected)")
            guard ready == [7] else { return }
            while true {
                let n = try receiver.receive(into: &inbox)
                if n == 0 { break }
                for d in inbox[0..<n] {
                    #expect(d.address == sender.localAddress)
                    #expect(d.payload == payload(nextExpected), "datagram \(nextExpected)")
                    nextExpected += 1
                }
            }
        }
        #expect(nextExpected == count)
        #expect(receiver.truncatedCount == 0)
        try poller.deregister(receiver)
    }

    @Test func thousandDatagramsEachWayArriveIntactInOrder() throws {
        let a = try UDPSocket(bindingTo: .loopbackV4(port: 0))
        let b = try UDPSocket(bindingTo: .loopbackV4(port: 0), batchSize: 16)
        try Self.transfer(from: a, to: b, count: 1000)
        try Self.transfer(from: b, to: a, count: 1000)
    }

    @Test func portZeroBindsAnEphemeralLoopbackPort() throws {
        let s = try UDPSocket(bindingTo: .loopbackV4(port: 0))
        #expect(s.localAddress.port != 0)
        #expect(s.localAddress.withPort(0) == .loopbackV4(port: 0))
        #expect(s.localAddress.description == "127.0.0.1:\(s.localAddress.port)")
    }

    @Test func bindingATakenPortFails() throws {
        let s = try UDPSocket(bindingTo: .loopbackV4(port: 0))
        #expect(throws: UDPError.open(errno: EADDRINUSE)) { try UDPSocket(bindingTo: s.localAddress) }
    }

    static func openIPv6Loopback() -> UDPSocket? {
        try? UDPSocket(bindingTo: .loopbackV6(port: 0))
    }

    @Test func ipv6LoopbackExchangesDatagrams() throws {
        // No IPv6 on this host's loopback: nothing to check.
        guard let a = Self.openIPv6Loopback() else { return }
        let b = try UDPSocket(bindingTo: .loopbackV6(port: 0))
        #expect(a.localAddress.isIPv6 && a.localAddress.port != 0)
        #expect(a.localAddress.description == "[::1]:\(a.localAddress.port)")
        try Self.transfer(from: a, to: b, count: 100)
    }

    @Test func receiveWithNothingWaitingReturnsZero() throws {
        let s = try UDPSocket(bindingTo: .loopbackV4(port: 0))
        var inbox = [Datagram(capacity: 64)]
        #expect(try s.receive(into: &inbox) == 0)
        var none: [Datagram] = []
        #expect(try s.receive(into: &none) == 0)
    }

    @Test func oversizedDatagramIsRefusedBeforeSending() throws {
        let s = try UDPSocket(bindingTo: .loopbackV4(port: 0), maxDatagramSize: 100)
        let big = Datagram(address: s.localAddress, payload: [UInt8](repeating: 1, count: 101))
        #expect(throws: UDPError.datagramTooLarge(size: 101, limit: 100)) { try s.send([big]) }
    }

    @Test func longerIncomingDatagramIsCutAndCounted() throws {
        let small = try UDPSocket(bindingTo: .loopbackV4(port: 0), maxDatagramSize: 10)
        let sender = try UDPSocket(bindingTo: .loopbackV4(port: 0))
        #expect(try sender.send([Datagram(address: small.localAddress, payload: Array(0..<20))]) == 1)
        let poller = try EpollPoller()
        try poller.register(small, token: 1)
        var ready: [UInt64] = []
        _ = try poller.wait(timeout: .seconds(2), ready: &ready)
        var inbox = [Datagram(capacity: 10)]
        #expect(try small.receive(into: &inbox) == 1)
        #expect(inbox[0].payload == Array(0..<10))
        #expect(small.truncatedCount == 1)
    }

    @Test func receiveInPlaceHandsEachDatagramWhereItLies() throws {
        let receiver = try UDPSocket(bindingTo: .loopbackV4(port: 0), batchSize: 8)
        let sender = try UDPSocket(bindingTo: .loopbackV4(port: 0))
        let out = (0..<20).map { Datagram(address: receiver.localAddress, payload: Self.payload($0)) }
        #expect(try sender.send(out) == 20)
        let poller = try EpollPoller()
        try poller.register(receiver, token: 1)
        var ready: [UInt64] = []
        var got: [[UInt8]] = []
        var sources: [SocketAddress?] = []
        while got.count < 20 {
            _ = try poller.wait(timeout: .seconds(2), ready: &ready)
            guard ready == [1] else { break }
            var indices: [Int] = []
            let n = try receiver.receiveInPlace { index, bytes in
                indices.append(index)
                got.append(Array(bytes))
                sources.append(receiver.receivedSource(index))
            }
            // At most one batch per call, each datagram handed once, in order.
            #expect(n <= 8 && indices == Array(0..<n))
        }
        #expect(got == (0..<20).map(Self.payload))
        #expect(sources.allSatisfy { $0 == sender.localAddress })
        #expect(receiver.receivedSource(8) == nil)
        #expect(try receiver.receiveInPlace { _, _ in Issue.record("nothing was waiting") } == 0)
    }

    @Test func receiveTimestampsComeWithEachDatagramOnceEnabled() throws {
        let receiver = try UDPSocket(bindingTo: .loopbackV4(port: 0))
        let sender = try UDPSocket(bindingTo: .loopbackV4(port: 0))
        let poller = try EpollPoller()
        try poller.register(receiver, token: 1)
        var ready: [UInt64] = []
        var stamps: [UInt64?] = []
        for enabled in [false, true] {
            if enabled { try receiver.enableReceiveTimestamps() }
            #expect(try sender.send([Datagram(address: receiver.localAddress, payload: [1, 2, 3])]) == 1)
            _ = try poller.wait(timeout: .seconds(2), ready: &ready)
            #expect(try receiver.receiveInPlace { index, _ in stamps.append(receiver.receivedTimestamp(index)) } == 1)
        }
        // None before, the kernel's (CLOCK_REALTIME, nonzero) after; none outside the batch.
        #expect(stamps.count == 2 && stamps[0] == nil && (stamps[1] ?? 0) > 0)
        #expect(receiver.receivedTimestamp(receiver.batchSize) == nil)
    }

    @Test func bufferSizesAreSet() throws {
        let s = try UDPSocket(bindingTo: .loopbackV4(port: 0))
        try s.setBufferSizes(receive: 256 * 1024, send: 128 * 1024)
        let sizes = try s.bufferSizes()
        // Linux caps the request at net.core.rmem_max / wmem_max and doubles it (its bookkeeping share).
        let rmax = try #require(Self.sysctl("net/core/rmem_max"))
        let wmax = try #require(Self.sysctl("net/core/wmem_max"))
        #expect(sizes.receive == 2 * min(256 * 1024, rmax))
        #expect(sizes.send == 2 * min(128 * 1024, wmax))
    }

    static func sysctl(_ name: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/sys/" + name, encoding: .utf8) else { return nil }
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

@Suite struct EpollPollerTests {
    @Test func wakeupFromAnotherThreadInterruptsABlockingWait() throws {
        let poller = try EpollPoller()
        let wakeup = poller.wakeup
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.05)
            wakeup.wake()
        }
        var ready: [UInt64] = []
        let start = ContinuousClock.now
        let woken = try poller.wait(timeout: .seconds(20), ready: &ready)
        let elapsed = ContinuousClock.now - start
        #expect(woken)
        #expect(ready.isEmpty)
        #expect(elapsed < .seconds(10))
        // The wakeup was drained: the next wait times out.
        #expect(try poller.wait(timeout: .milliseconds(10), ready: &ready) == false)
    }

    @Test func wakeupsBeforeTheWaitCoalesce() throws {
        let poller = try EpollPoller()
        poller.wakeup.wake()
        poller.wakeup.wake()
        var ready: [UInt64] = []
        #expect(try poller.wait(timeout: .seconds(1), ready: &ready))
        #expect(try poller.wait(timeout: .zero, ready: &ready) == false)
    }

    @Test func readableSocketReportsItsToken() throws {
        let poller = try EpollPoller()
        let a = try UDPSocket(bindingTo: .loopbackV4(port: 0))
        let b = try UDPSocket(bindingTo: .loopbackV4(port: 0))
        try poller.register(a, token: 1)
        try poller.register(b, token: 2)
        var ready: [UInt64] = []
        #expect(try poller.wait(timeout: .milliseconds(5), ready: &ready) == false)
        #expect(ready.isEmpty)
        #expect(try a.send([Datagram(address: b.localAddress, payload: [1, 2, 3])]) == 1)
        #expect(try poller.wait(timeout: .seconds(2), ready: &ready) == false)
        #expect(ready == [2])
    }

    @Test func wakeupTokenIsReserved() throws {
        let poller = try EpollPoller()
        let s = try UDPSocket(bindingTo: .loopbackV4(port: 0))
        #expect(throws: UDPError.reservedToken) { try poller.register(s, token: EpollPoller.wakeupToken) }
    }

    @Test(arguments: [
        (Duration.milliseconds(1), Int32(1)), (.microseconds(1), 1), (.zero, 0), (.seconds(2), 2000),
        (.milliseconds(-5), 0),
    ])
    func timeoutRoundsUpToMilliseconds(timeout: Duration, expected: Int32) {
        #expect(EpollPoller.milliseconds(timeout) == expected)
    }
}

@Suite struct SocketAddressTextTests {
    @Test(arguments: [
        ("127.0.0.1:1234", SocketAddress.ipv4(127, 0, 0, 1, port: 1234)),
        ("0.0.0.0:0", .ipv4(0, 0, 0, 0, port: 0)),
        ("255.255.255.255:65535", .ipv4(255, 255, 255, 255, port: 65535)),
        ("10.1.20.200:80", .ipv4(10, 1, 20, 200, port: 80)),
        ("[::1]:5000", .loopbackV6(port: 5000)),
        ("[2001:db8::1]:443", .v6(high: 0x2001_0db8_0000_0000, low: 1, port: 443, scopeID: 0)),
    ])
    func parsesAndFormatsBackTheSame(text: String, address: SocketAddress) throws {
        #expect(try SocketAddress(parsing: text) == address)
        #expect(address.description == text)
    }

    @Test(arguments: [
        "", "127.0.0.1", "127.0.0.1:", ":80", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:08",
        "127.0.0.256:1", "127.0.0:1", "127.0.0.1.1:1", "127.1:1", "010.0.0.1:1", "a.b.c.d:1", "127.0.0.1:1x",
        " 127.0.0.1:1", "::1:80", "[::1]80", "[::1:80", "[zz::1]:80", "[127.0.0.1]:80", "127.0.0.1:123456",
    ])
    func refusesMalformedText(text: String) {
        #expect(throws: UDPError.invalidAddress(text)) { try SocketAddress(parsing: text) }
    }

    @Test func ipv6IsFormattedPerRFC5952() throws {
        let a = try SocketAddress(parsing: "[2001:DB8:0:0:1:0:0:1]:9")
        #expect(a.description == "[2001:db8::1:0:0:1]:9")
        #expect(a.hostText == "2001:db8::1:0:0:1")
        #expect(SocketAddress.ipv4(192, 0, 2, 1, port: 7).hostText == "192.0.2.1")
    }
}
