import Testing

@testable import AtriumMedia

/// Producers and consumers hold their transport, and consumers their producer, strongly (the packet
/// path reads `let` references without reference counting). These cycles must end with the
/// objects: whatever closes first, and when the engine itself goes with everything still open, no
/// transport, producer or consumer outlives it.
@Suite struct PacketPathLifetimeTests {
    /// Weak references to every transport, producer and consumer of a room.
    struct Watch {
        var objects: [(String, () -> AnyObject?)] = []

        init(_ engine: MediaEngine) {
            for (id, t) in engine.transports {
                weak let w = t
                objects.append(("transport \(id)", { w }))
            }
            for (id, p) in engine.producers {
                weak let w = p
                objects.append(("producer \(id)", { w }))
            }
            for (id, c) in engine.consumers {
                weak let w = c
                objects.append(("consumer \(id)", { w }))
            }
        }

        var alive: [String] { objects.filter { $0.1() != nil }.map(\.0) }
    }

    static func forwardingRoom() throws -> (PacketPathAllocationTests.Room, Watch) {
        let room = try PacketPathAllocationTests.Room(viewers: 3)
        room.forward(try room.frames(60))
        let watch = Watch(room.media.engine)
        #expect(watch.objects.count == 4 + 2 + 6)
        return (room, watch)
    }

    @Test(arguments: [["pub", "sub1", "sub2", "sub3"], ["sub3", "sub1", "pub", "sub2"]])
    func closedTransportsLeaveNothingBehind(order: [String]) throws {
        var watch: Watch
        do {
            let (room, w) = try Self.forwardingRoom()
            watch = w
            for id in order { room.media.apply(.closeTransport(id: id)) }
            room.media.advance(by: 0.1)
            #expect(room.media.engine.transports.isEmpty)
            #expect(watch.alive == [], "still referenced by the engine's room: \(watch.alive)")
        }
        #expect(watch.alive == [])
    }

    @Test func closedProducersAndConsumersLeaveNothingBehind() throws {
        let (room, watch) = try Self.forwardingRoom()
        room.media.apply(.closeConsumer(id: "v1"))
        room.media.apply(.closeProducer(id: "mic"))
        room.media.apply(.closeProducer(id: "cam"))
        room.media.advance(by: 0.1)
        let gone = ["producer cam", "producer mic", "consumer v1", "consumer v2", "consumer v3"]
        #expect(watch.alive.filter { gone.contains($0) } == [])
        #expect(watch.alive.filter { $0.hasPrefix("transport") }.count == 4)
    }

    /// The packet path remembers the last address it found a transport at: once that transport
    /// closes, the next datagram from the address is dropped as from an unknown source, not handed
    /// to what was freed; one from a viewer's address still finds its transport.
    @Test func aClosedTransportsAddressIsNotFoundAgain() throws {
        let (room, watch) = try Self.forwardingRoom()
        let engine = room.media.engine
        let frames = try room.frames(2)
        room.forward([frames[0]])
        room.media.apply(.closeTransport(id: "pub"))
        room.media.advance(by: 0.1)
        #expect(watch.alive.contains("transport pub") == false)
        let unknown = engine.counters.dropped[DropReason.unknownSource.rawValue]
        room.forward([frames[1]])
        #expect(engine.counters.dropped[DropReason.unknownSource.rawValue] == unknown + frames[1].count)
        let viewer = room.viewers[0]
        #expect(engine.transportRef(at: viewer.address)?.refers(to: engine.transports["sub1"]!) == true)
        #expect(engine.transportRef(at: room.publisher.address) == nil)
    }

    @Test func anEngineDroppedWithEverythingOpenLeavesNothingBehind() throws {
        var watch: Watch
        do {
            let (room, w) = try Self.forwardingRoom()
            watch = w
            _ = room
        }
        #expect(watch.alive == [], "outlived the engine: \(watch.alive)")
    }
}
