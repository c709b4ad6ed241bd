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

    /// Sends `perReceiver` datagrams to each receiver, interleaved across receivers, and checks what
    /// each one gets.
    static func exchange(_ sender: UDPSocket, _ receivers: [UDPSocket], perReceiver: Int) throws {
        var batch: [Datagram] = []
        for seq in 0..<perReceiver {
            for (r, receiver) in receivers.enumerated() {
                batch.append(Datagram(address: receiver.localAddress, payload: payload(receiver: r, seq: seq)))
            }
        }
        for receiver in receivers { try receiver.setBufferSizes(receive: 4 << 20) }
        var offset = 0
        while offset < batch.count {
            let end = min(offset + sender.batchSize, batch.count)
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
