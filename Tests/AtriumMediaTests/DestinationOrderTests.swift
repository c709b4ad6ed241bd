import Testing

@testable import AtriumUDP

/// The send order a segmenting socket uses: grouped by destination, destinations by first appearance,
/// each destination's datagrams in their order.
@Suite struct DestinationOrderTests {
    static let a = SocketAddress.loopbackV4(port: 5000)
    static let b = SocketAddress.loopbackV4(port: 5001)
    static let c = SocketAddress.ipv4(10, 0, 0, 1, port: 5000)
    static let v6 = SocketAddress.loopbackV6(port: 5000)
    static let v6Scoped = SocketAddress.v6(high: 0, low: 1, port: 5000, scopeID: 2)

    static func order(_ destinations: [SocketAddress], reusing order: DestinationOrder = DestinationOrder()) -> [Int] {
        let batch = destinations.map { Datagram(address: $0, payload: [0]) }
        return batch.withUnsafeBufferPointer { p in
            order.group(p)
            return (0..<p.count).map { Int(order.order[$0]) }
        }
    }

    @Test(
        arguments: [
            ([a], [0]),
            ([a, b, a, b, a, b], [0, 2, 4, 1, 3, 5]),
            ([a, b, c, c, b, a], [0, 5, 1, 4, 2, 3]),
            // Same port, other address; same address, other port; IPv6 with and without a scope.
            ([a, c, b, a, c], [0, 3, 1, 4, 2]),
            ([v6, a, v6Scoped, v6, a, v6Scoped], [0, 3, 1, 4, 2, 5]),
        ] as [([SocketAddress], [Int])])
    func groupsStably(destinations: [SocketAddress], expected: [Int]) {
        #expect(Self.order(destinations) == expected)
    }

    /// Many destinations (more than the first table holds, and ports that differ in high bits only): every
    /// index once, each destination's run in its order; a reused order grows and gives the same answer.
    @Test func manyDestinationsAndGrowth() {
        let order = DestinationOrder()
        #expect(Self.order([Self.a, Self.b, Self.a], reusing: order) == [0, 2, 1])
        let viewers = (0..<300).map { SocketAddress.loopbackV4(port: UInt16(1024 + $0 * 193)) }
        let destinations = (0..<4).flatMap { _ in viewers }
        let expected = (0..<300).flatMap { v in (0..<4).map { round in round * 300 + v } }
        #expect(Self.order(destinations, reusing: order) == expected)
        #expect(Self.order([Self.b, Self.a, Self.b], reusing: order) == [0, 2, 1])
    }
}
