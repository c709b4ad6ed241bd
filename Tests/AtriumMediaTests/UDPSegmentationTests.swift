import Foundation
import Testing

@testable import AtriumUDP

/// UDP GSO (`UDP_SEGMENT`) on the way out, on 127.0.0.1 only: batches laid out as the media engine lays
/// them out (each packet of a frame copied to every viewer in turn, audio in between) arrive at every
/// receiver whole, with their datagram boundaries and in their order, segmented or not.
@Suite struct UDPSegmentationTests {
    /// Datagram `seq` for receiver `r`: a video packet of 1100 octets, the frame's last one shorter, or
    /// an audio packet; its first octets name it.
    static func payload(receiver r: Int, seq: Int) -> [UInt8] {
        let length = seq % 8 == 7 ? 100 : (seq % 8 == 6 ? 437 : 1100)
        var out: [UInt8] = [UInt8(r), UInt8(seq >> 8), UInt8(seq & 0xff)]
        while out.count < length { out.append(UInt8(truncatingIfNeeded: r &* 7 &+ seq &* 13 &+ out.count)) }
        return out
    }

    /// Sends `perReceiver` datagrams to each receiver, interleaved across receivers, `sender.batchSize`
    /// per call (`perCall`: that many), and checks what each one gets.
    static func exchange(
        _ sender: UDPSocket, _ receivers: [UDPSocket], perReceiver: Int, perCall: Int? = nil
    ) throws {
        var batch: [Datagram] = []
        for seq in 0..<perReceiver {
            for (r, receiver) in receivers.enumerated() {
                batch.append(Datagram(address: receiver.localAddress, payload: payload(receiver: r, seq: seq)))
            }
        }
        for receiver in receivers { try receiver.setBufferSizes(receive: 4 << 20) }
        var offset = 0
        while offset < batch.count {
            let end = min(offset + (perCall ?? sender.batchSize), batch.count)
            #expect(try sender.send(batch[offset..<end]) == end - offset)
            #expect(sender.refusals.isEmpty)
            offset = end
        }
        let poller = try EpollPoller()
        for (r, receiver) in receivers.enumerated() {
            try poller.register(receiver, token: UInt64(r))
            var inbox = (0..<receiver.batchSize).map { _ in Datagram(capacity: receiver.maxDatagramSize) }
            var ready: [UInt64] = []
            var next = 0
            while next < perReceiver {
                let n = try receiver.receive(into: &inbox)
                if n == 0 {
                    _ = try poller.wait(timeout: .seconds(2), ready: &ready)
                    #expect(!ready.isEmpty, "receiver \(r) got \(next) of \(perReceiver)")
                    if ready.isEmpty { return }
                    continue
                }
                for d in inbox[0..<n] {
                    #expect(d.address == sender.localAddress)
                    #expect(d.payload == payload(receiver: r, seq: next), "receiver \(r) datagram \(next)")
                    next += 1
                }
            }
            #expect(try receiver.receive(into: &inbox) == 0)
        }
    }

    @Test func runsToOneViewerGoOutSegmentedAndArriveWhole() throws {
        let sender = try UDPSocket(bindingTo: .loopbackV4(port: 0), batchSize: 64)
        let receivers = try (0..<3).map { _ in try UDPSocket(bindingTo: .loopbackV4(port: 0)) }
        try Self.exchange(sender, receivers, perReceiver: 200)
        #expect(sender.segmentationOffload && sender.segmentationFallbacks == 0)
        // Six same-size packets (and the shorter seventh) per frame and viewer: most go segmented, in
        // far fewer messages than datagrams.
        #expect(sender.segmentedDatagrams > 300)
        #expect(sender.messagesSent < 600 / 2)
    }

    /// A round's whole output in one call, as the media worker sends it: each viewer's packets are grouped
    /// over the whole call, not within each system call's share, so with 40 viewers between two of
    /// one viewer's packets they still go out as runs.
    @Test func aWholeRoundIsGroupedAcrossSystemCalls() throws {
        let sender = try UDPSocket(
            bindingTo: .loopbackV4(port: 0), batchSize: 32, sendBatchSize: UDPSocket.maxSendBatchSize)
        let receivers = try (0..<40).map { _ in try UDPSocket(bindingTo: .loopbackV4(port: 0)) }
        try Self.exchange(sender, receivers, perReceiver: 24, perCall: 960)
        // Per viewer, 24 datagrams in three frames of six same-size packets, a shorter one and audio:
        // six messages each (and one more where a system call's share of 256 ends inside a run), where
        // ungrouped chunks of 32 would give one per datagram.
        #expect(sender.segmentationFallbacks == 0)
        #expect(sender.messagesSent <= 40 * 6 + 3)
        #expect(sender.segmentedDatagrams >= 40 * 18)
    }

    /// A refusal is reported at the datagram's index in the caller's batch, not at its place in the
    /// grouped order: here a datagram to port 0 (EINVAL) between two receivers' datagrams.
    @Test func refusalsNameTheCallersIndex() throws {
        let sender = try UDPSocket(bindingTo: .loopbackV4(port: 0), sendBatchSize: 64)
        let receivers = try (0..<2).map { _ in try UDPSocket(bindingTo: .loopbackV4(port: 0)) }
        var batch: [Datagram] = []
        for seq in 0..<6 {
            for (r, receiver) in receivers.enumerated() {
                batch.append(Datagram(address: receiver.localAddress, payload: Self.payload(receiver: r, seq: seq)))
            }
            if seq == 2 { batch.append(Datagram(address: .loopbackV4(port: 0), payload: [1, 2, 3])) }
        }
        #expect(try sender.send(batch) == batch.count)
        #expect(sender.refusals.map(\.index) == [6])
        #expect(sender.refusals.map(\.errno) == [EINVAL])
        #expect(sender.segmentationOffload)
    }

    @Test func ipv6RunsAreSegmentedToo() throws {
        let sender = try UDPSocket(bindingTo: .loopbackV6(port: 0), batchSize: 64)
        let receivers = try (0..<2).map { _ in try UDPSocket(bindingTo: .loopbackV6(port: 0)) }
        try Self.exchange(sender, receivers, perReceiver: 64)
        #expect(sender.segmentedDatagrams > 0 && sender.segmentationFallbacks == 0)
    }

    /// A kernel that refuses segmentation (here: checksums off, which makes it answer EINVAL): the batch
    /// goes out as plain datagrams, the socket stops trying, and the fallback is counted once.
    @Test func refusedSegmentationFallsBackToSendmmsg() throws {
        let sender = try UDPSocket(bindingTo: .loopbackV4(port: 0), batchSize: 64)
        try sender.refuseSegmentation()
        let receivers = try (0..<3).map { _ in try UDPSocket(bindingTo: .loopbackV4(port: 0)) }
        try Self.exchange(sender, receivers, perReceiver: 100)
        #expect(!sender.segmentationOffload && sender.segmentationFallbacks == 1)
        #expect(sender.segmentedDatagrams == 0 && sender.messagesSent == 300)
    }

    @Test func offMeansOneMessagePerDatagram() throws {
        let sender = try UDPSocket(bindingTo: .loopbackV4(port: 0), batchSize: 64, segmentationOffload: false)
        let receivers = try (0..<2).map { _ in try UDPSocket(bindingTo: .loopbackV4(port: 0)) }
        try Self.exchange(sender, receivers, perReceiver: 50)
        #expect(sender.segmentedDatagrams == 0 && sender.messagesSent == 100)
    }
}
