import AtriumICE
import AtriumJSEP
import AtriumMedia
import AtriumModel
import AtriumTestSupport
import AtriumUDP
import Testing

@testable import AtriumMediaControl
@testable import AtriumSDP

/// RFC 4571 framing as ICE-TCP carries it (RFC 6544 section 3): reassembly bounded by one slot, and an
/// output queue bounded by its capacity.
@Suite struct ICETCPFramingTests {
    /// Feeds `bytes` to the reassembler in pieces of `chunk` and collects the frames.
    static func frames(_ bytes: [UInt8], chunk: Int, maxFrame: Int = 1500) -> ([[UInt8]], FrameReassembler.Next) {
        var r = FrameReassembler(maxFrame: maxFrame, capacity: 4 * maxFrame)
        var out: [[UInt8]] = []
        var offset = 0
        var last = FrameReassembler.Next.needMore
        while offset < bytes.count {
            r.fill { space in
                let n = min(chunk, space.count, bytes.count - offset)
                for i in 0..<n { space[i] = bytes[offset + i] }
                offset += n
                return n
            }
            while true {
                last = r.next()
                guard case .frame(let range) = last else { break }
                out.append(Array(r.buffer[range]))
            }
            if case .tooLarge = last { break }
        }
        return (out, last)
    }

    static func framed(_ payloads: [[UInt8]]) -> [UInt8] {
        payloads.flatMap { [UInt8($0.count >> 8), UInt8($0.count & 0xFF)] + $0 }
    }

    @Test(arguments: [1, 2, 3, 7, 100, 6000])
    func framesComeOutWholeWhateverTheReadSizes(chunk: Int) {
        let payloads: [[UInt8]] = [
            [0x00, 0x01, 0x00, 0x00], Array(repeating: 0x80, count: 1200), [0x16, 0xFE, 0xFD], [],
            Array(repeating: 0x17, count: 1500),
        ]
        let (got, last) = Self.frames(Self.framed(payloads), chunk: chunk)
        #expect(got == payloads)
        #expect(last == .needMore)
    }

    @Test func aFrameLongerThanASlotIsRefused() {
        // "GE" of an HTTP request announces 18,245 bytes.
        let (got, last) = Self.frames(Array("GET / HTTP/1.1\r\n".utf8), chunk: 64)
        #expect(got.isEmpty)
        #expect(last == .tooLarge(0x4745))
    }

    @Test func theBufferNeverGrows() {
        var r = FrameReassembler(maxFrame: 1500, capacity: 6000)
        let stream = Self.framed((0..<100).map { Array(repeating: UInt8($0), count: 900 + $0) })
        var offset = 0
        for _ in 0..<1000 where offset < stream.count {
            r.fill { space in
                let n = min(space.count, stream.count - offset)
                for i in 0..<n { space[i] = stream[offset + i] }
                offset += n
                return n
            }
            var next = r.next()
            while case .frame = next { next = r.next() }
            #expect(r.buffer.count == 6000)
            #expect(r.heldCount <= 1502)
        }
        #expect(offset == stream.count)
        #expect(r.heldCount == 0)
    }

    /// Random streams in random pieces (the network's input): no trap, every frame within the bound
    /// and inside the buffer, the buffer's size fixed.
    @Test func randomStreamsNeverTrap() {
        var g = SeededGenerator(seed: 4571)
        for stream in g.byteStrings(count: 300, maxLength: 9000) {
            var r = FrameReassembler(maxFrame: 1564, capacity: 6256)
            var offset = 0
            var refused = false
            while offset < stream.count && !refused {
                let piece = Int.random(in: 1...3000, using: &g)
                r.fill { space in
                    let n = min(piece, space.count, stream.count - offset)
                    for i in 0..<n { space[i] = stream[offset + i] }
                    offset += n
                    return n
                }
                loop: while true {
                    switch r.next() {
                    case .frame(let range):
                        #expect(range.count <= 1564 && range.upperBound <= r.buffer.count)
                    case .needMore: break loop
                    case .tooLarge(let n):
                        #expect(n > 1564)
                        refused = true
                        break loop
                    }
                }
                #expect(r.buffer.count == 6256)
            }
        }
    }

    @Test func theQueueRefusesWhatDoesNotFitAndDrainsInOrder() {
        var q = FrameQueue(capacity: 1000)
        let a = q.push(Array(repeating: 1, count: 400))
        #expect(a)
        let b = q.push(Array(repeating: 2, count: 400))
        #expect(b)
        let c = q.push(Array(repeating: 3, count: 400))
        #expect(!c)  // a slow peer: dropped, not buffered
        #expect(q.pendingCount == 804)
        var written: [UInt8] = []
        q.drain { bytes in
            written += bytes.prefix(500)
            return 500
        }
        #expect(q.pendingCount == 304)
        // The space freed at the front is used again.
        let d = q.push(Array(repeating: 4, count: 400))
        #expect(d)
        q.drain { bytes in
            written += bytes
            return bytes.count
        }
        #expect(q.isEmpty)
        #expect(
            written
                == Self.framed([
                    Array(repeating: 1, count: 400), Array(repeating: 2, count: 400),
                    Array(repeating: 4, count: 400),
                ]))
        let huge = q.push(Array(repeating: 0, count: 70_000))
        #expect(!huge)
    }

    /// RFC 6544 section 4.2: passive host candidates rank under the UDP ones.
    @Test func passiveTCPCandidatesRankBelowUDP() {
        let udp = ICECandidate.priority(typePreference: 126, localPreference: 65535, component: 1)
        let tcp = ICECandidate.priority(
            typePreference: 126, localPreference: ICECandidate.passiveTCPLocalPreference(index: 0), component: 1)
        #expect(ICECandidate.passiveTCPLocalPreference(index: 0) == 40959)
        #expect(tcp < udp)
        #expect(ICECandidate.passiveTCPLocalPreference(index: 100_000) == 32768)
    }
}

/// A plane with a passive ICE-TCP address beside its UDP one.
final class TCPMediaPlane: MediaPlane {
    let fingerprint: [UInt8] = Array(repeating: 0xAB, count: 32)
    let candidateAddresses: [SocketAddress] = [.loopbackV4(port: 40000)]
    let tcpCandidateAddresses: [SocketAddress] = [.loopbackV4(port: 40001)]
    func submit(_ command: MediaCommand) {}
    func events() -> [MediaEvent] { [] }
}

@Suite struct ICETCPCandidateTests {
    /// The descriptions announce the TCP candidate after the UDP one, as RFC 6544 section 4.5 writes it.
    @Test func theServersDescriptionsCarryAPassiveTCPCandidate() {
        let c = MediaCoordinator(plane: TCPMediaPlane())
        let lines = c.local("ufrag", "password", room: RoomID("r"), transport: "t").candidates.map {
            "a=" + Attribute.candidate($0).sdpValue
        }
        #expect(
            lines == [
                "a=candidate:1 1 udp 2130706431 127.0.0.1 40000 typ host",
                "a=candidate:2 1 tcp 2124414975 127.0.0.1 40001 typ host tcptype passive",
            ])
    }
}
