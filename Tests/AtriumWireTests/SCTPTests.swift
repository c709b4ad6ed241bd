import Synchronization
import Testing

@testable import AtriumSCTP

/// usrsctp through its wrapper: two associations in this process, each one's packets handed to the
/// other (what DTLS does between a browser and the server), and the data channel protocol on top.
enum SCTPTestError: Error { case noAssociation }

@Suite(.serialized) struct SCTPTests {
    /// Two associations whose packets the test carries by hand; `pump` runs until both are quiet.
    final class Pair {
        let a: SCTPAssociation
        let b: SCTPAssociation
        var eventsA: [SCTPAssociation.Event] = []
        var eventsB: [SCTPAssociation.Event] = []
        /// Packets from a to b that `pump` drops instead of delivering while set.
        var dropToB = false

        init() throws {
            guard let a = SCTPAssociation(wake: {}), let b = SCTPAssociation(wake: {}) else {
                throw SCTPTestError.noAssociation
            }
            self.a = a
            self.b = b
        }

        /// Carries packets both ways until nothing moves (usrsctp answers within the call, so a few
        /// rounds suffice; its timers are not needed for a lossless exchange). The round limit is a hang
        /// guard.
        func pump(rounds: Int = 200) {
            for _ in 0..<rounds {
                let fromA = a.takeOutbound()
                let fromB = b.takeOutbound()
                eventsA += a.takeEvents()
                eventsB += b.takeEvents()
                if fromA.isEmpty && fromB.isEmpty { return }
                if !dropToB { for p in fromA { b.receive(p) } }
                for p in fromB { a.receive(p) }
            }
        }

        func close() {
            a.close()
            b.close()
        }
    }

    @Test func twoAssociationsComeUpAndCarryMessagesBothWays() throws {
        let p = try Pair()
        defer { p.close() }
        p.pump()
        #expect(p.eventsA.contains(.up) && p.eventsB.contains(.up))
        #expect(
            p.a.send(stream: 0, ppid: 51, unordered: false, maxRetransmits: nil, data: Array("hello".utf8)) == .queued)
        let big = (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }
        #expect(p.b.send(stream: 1, ppid: 53, unordered: false, maxRetransmits: nil, data: big) == .queued)
        p.pump()
        #expect(p.eventsB.contains(.message(stream: 0, ppid: 51, data: Array("hello".utf8))))
        #expect(p.eventsA.contains(.message(stream: 1, ppid: 53, data: big)), "a 100 kB message arrives whole")
    }

    /// The browser's side opens a channel, the server's acknowledges and answers on it; a reset closes it.
    @Test func aChannelOpensCarriesTextAndClosesByAStreamReset() throws {
        let p = try Pair()
        defer { p.close() }
        p.pump()
        var server = DataChannels()
        let open = DataChannelProtocol.Open(channelType: 0x81, reliability: 0, label: "atrium-lossy")
        _ = p.a.send(stream: 2, ppid: 50, unordered: false, maxRetransmits: nil, data: open.bytes)
        _ = p.a.send(stream: 2, ppid: 51, unordered: true, maxRetransmits: 0, data: Array("{\"x\":0.5}".utf8))
        p.pump()
        var actions: [DataChannels.Action] = []
        for e in p.eventsB { actions += server.handle(e) }
        p.eventsB.removeAll()
        let channel = try #require(server.channels[2])
        #expect(channel.label == "atrium-lossy" && channel.isLossy)
        #expect(actions.contains(.opened(channel)))
        #expect(actions.contains(.message(channel, text: true, data: Array("{\"x\":0.5}".utf8))))
        // The acknowledgement goes back on the same stream.
        for case .send(let s, let ppid, let u, let r, let d) in actions {
            #expect(p.b.send(stream: s, ppid: ppid, unordered: u, maxRetransmits: r, data: d) == .queued)
        }
        if case .send(let s, let ppid, let u, let r, let d) = DataChannels.send(
            Array("pong".utf8), text: true, on: channel)
        {
            #expect(p.b.send(stream: s, ppid: ppid, unordered: u, maxRetransmits: r, data: d) == .queued)
        }
        p.pump()
        #expect(p.eventsA.contains(.message(stream: 2, ppid: 50, data: DataChannelProtocol.ack)))
        #expect(p.eventsA.contains(.message(stream: 2, ppid: 51, data: Array("pong".utf8))))
        // The client closes the channel: a reset of its outgoing stream reaches the server.
        p.a.resetStream(2)
        p.pump()
        actions = []
        for e in p.eventsB { actions += server.handle(e) }
        #expect(actions == [.resetStream(2), .closed(channel)])
        #expect(server.channels.isEmpty)
    }

    /// Garbage where an SCTP packet should be is refused by usrsctp and counted; the association stays.
    @Test func garbagePacketsAreRefusedAndTheAssociationStays() throws {
        let p = try Pair()
        defer { p.close() }
        p.pump()
        let before = SCTPAssociation.rejectedPackets
        var rng = SystemRandomNumberGenerator()
        for n in [0, 3, 12, 64, 1200] {
            p.b.receive((0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) })
        }
        // An SCTP common header with the right ports and a wrong checksum.
        p.b.receive([0x13, 0x88, 0x13, 0x88, 0, 0, 0, 1, 0xDE, 0xAD, 0xBE, 0xEF, 0, 0, 0, 4])
        #expect(SCTPAssociation.rejectedPackets > before)
        #expect(
            p.a.send(stream: 0, ppid: 51, unordered: false, maxRetransmits: nil, data: Array("still".utf8)) == .queued)
        p.pump()
        #expect(p.eventsB.contains(.message(stream: 0, ppid: 51, data: Array("still".utf8))))
        #expect(!p.eventsB.contains(.down))
    }

    /// A peer that stops taking packets: its send buffer fills and `send` says `full`, never blocks.
    @Test func aFullSendBufferRefusesWithoutBlocking() throws {
        let p = try Pair()
        defer { p.close() }
        p.pump()
        p.dropToB = true
        var results: [SCTPAssociation.SendResult] = []
        for _ in 0..<400 {
            results.append(
                p.a.send(
                    stream: 0, ppid: 53, unordered: false, maxRetransmits: nil, data: [UInt8](repeating: 7, count: 4096)
                ))
            p.pump(rounds: 1)
        }
        #expect(results.contains(.full))
        #expect(results.allSatisfy { $0 == .queued || $0 == .full })
    }

    @Test(
        arguments: [
            ([], DataChannelProtocol.ParseError.empty),
            ([0x07], .unknownType(7)),
            ([0x03, 0x00, 0, 0, 0, 0, 0, 0, 0, 5, 0], .truncated),
            ([0x03, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], .unknownChannelType(5)),
            ([0x03, 0x00, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0], .labelTooLong),
            ([0x03, 0x00, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0xFF, 0xFE], .notUTF8),
        ] as [([UInt8], DataChannelProtocol.ParseError)])
    func malformedControlMessagesAreRefused(_ bytes: [UInt8], _ error: DataChannelProtocol.ParseError) {
        #expect(throws: error) { try DataChannelProtocol.parse(bytes) }
    }

    @Test func openRoundTripsAndChannelKindsAreRead() throws {
        let rows: [(UInt8, UInt32, Bool, Int?, Bool)] = [
            (0x00, 0, true, nil, false), (0x80, 0, false, nil, false), (0x81, 0, false, 0, true),
            (0x01, 3, true, 3, false), (0x82, 0, false, nil, true), (0x02, 500, true, nil, false),
        ]
        for (type, reliability, ordered, retransmits, lossy) in rows {
            let o = DataChannelProtocol.Open(channelType: type, reliability: reliability, label: "l", protocolName: "p")
            #expect(try DataChannelProtocol.parse(o.bytes) == .open(o))
            #expect(o.ordered == ordered && o.maxRetransmits == retransmits)
            var dc = DataChannels()
            let actions = dc.handle(.message(stream: 4, ppid: 50, data: o.bytes))
            #expect(dc.channels[4]?.isLossy == lossy && actions.count == 2)
        }
    }

    @Test func channelsAreBoundedAndStrangersAreInvalid() {
        var dc = DataChannels()
        for s in 0..<UInt16(DataChannels.maxChannels) {
            _ = dc.handle(
                .message(stream: s * 2, ppid: 50, data: DataChannelProtocol.Open(channelType: 0, label: "c").bytes))
        }
        let over = dc.handle(
            .message(stream: 999, ppid: 50, data: DataChannelProtocol.Open(channelType: 0, label: "c").bytes))
        #expect(over == [.invalid("more than 16 channels")])
        #expect(
            dc.handle(.message(stream: 998, ppid: 51, data: [1])) == [.invalid("data on stream 998, which is not open")]
        )
        #expect(dc.handle(.message(stream: 0, ppid: 99, data: [1])) == [.invalid("payload protocol identifier 99")])
        #expect(
            dc.handle(.message(stream: 0, ppid: 56, data: [0])) == [.message(dc.channels[0]!, text: true, data: [])])
        #expect(dc.handle(.down).count == DataChannels.maxChannels && dc.channels.isEmpty)
    }
}
