/// One UDP datagram and its peer: the source after a receive, the destination for a send.
///
/// `UDPSocket.receive(into:)` refills datagrams in place, keeping each payload's capacity, so a batch
/// array made once with `Datagram(capacity:)` serves every later receive without allocating.
public struct Datagram: Equatable, Sendable {
    public var address: SocketAddress
    public var payload: [UInt8]

    public init(address: SocketAddress, payload: [UInt8]) {
        self.address = address
        self.payload = payload
    }

    /// An empty datagram whose payload can take `capacity` bytes without growing.
    public init(capacity: Int) {
        address = .v4(address: 0, port: 0)
        payload = []
        payload.reserveCapacity(capacity)
    }
}
