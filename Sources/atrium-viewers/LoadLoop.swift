internal import AtriumDTLS
internal import AtriumJSON
internal import AtriumLoadPeer
internal import AtriumUDP

/// The process's one loop: polls every peer's socket, decrypts and counts what arrives, runs the
/// timers, paces the publisher's streams, and answers the control requests read from stdin.
final class LoadLoop {
    var poller: EpollPoller
    var peers: [LoadPeer?] = []
    var names: [String: Int] = [:]
    var streams: [Int: [PublisherStream]] = [:]
    /// The tokens with streams, in order: what `publish` walks (walking `streams.keys` while writing
    /// `streams` would copy the dictionary on every pass).
    var publishing: [Int] = []
    var publisherIDs: [Int: UInt32] = [:]
    var packetScale = 1.0
    var latency = LatencyHistogram()
    var lastTick: UInt64 = 0
    var lastInput: UInt64 = 0
    let certificate: DTLSCertificate
    var seed: UInt64 = 1

    init() throws {
        poller = try EpollPoller()
        certificate = try DTLSCertificate()
    }

    static func run() -> Int32 {
        do {
            let loop = try LoadLoop()
            return try loop.serve()
        } catch {
            writeLine(JSONValue.object(["error": .string("\(error)")]).serialized())
            return 1
        }
    }

    func serve() throws -> Int32 {
        var input = LineReader()
        var ready: [UInt64] = []
        ready.reserveCapacity(EpollPoller.maxEvents)
        while true {
            let timeout: Duration = streams.isEmpty ? .milliseconds(10) : .milliseconds(1)
            _ = try poller.wait(timeout: timeout, ready: &ready)
            for token in ready { drain(Int(token)) }
            let now = MonotonicClock.nanoseconds()
            publish(now: now)
            if now - lastTick >= 20_000_000 {
                lastTick = now
                for case let peer? in peers { peer.tick(now: now) }
            }
            for case let peer? in peers { peer.flush() }
            // The control requests: a read of stdin at most once a millisecond, not on every wakeup.
            guard now - lastInput >= 1_000_000 else { continue }
            lastInput = now
            for line in input.lines() where !line.isEmpty {
                let (reply, quit) = handle(line)
                writeLine(reply.serialized())
                if quit { return 0 }
            }
            if input.closed { return 0 }
        }
    }

    /// Reads everything waiting on one peer's socket, each datagram decrypted and counted where the
    /// kernel put it (`UDPSocket.receiveInPlace`), `batchSize` per system call.
    func drain(_ token: Int) {
        guard token < peers.count, let peer = peers[token] else { return }
        let socket = peer.socket
        while true {
            var now: UInt64 = 0
            let received = try? socket.receiveInPlace { index, bytes in
                if index == 0 { now = MonotonicClock.nanoseconds() }
                peer.receive(inPlace: bytes, source: { socket.receivedSource(index) }, now: now, latency: &latency)
            }
            guard let n = received, n == socket.batchSize else { return }
        }
    }

    /// Sends every stream's packets due by `now`, each stream mutated where it lies in `streams`.
    func publish(now: UInt64) {
        for token in publishing {
            guard let peer = peers[token], peer.state == .connected, let count = streams[token]?.count else { continue }
            for ssrc in peer.keyFrameRequests {
                for i in 0..<count where streams[token, default: []][i].ssrc == ssrc {
                    streams[token, default: []][i].requestKeyFrame()
                }
            }
            peer.keyFrameRequests.removeAll(keepingCapacity: true)
            let id = publisherIDs[token] ?? 0
            for i in 0..<count where streams[token, default: []][i].due <= now {
                streams[token, default: []][i].frames(now: now, publisher: id, packetScale: packetScale) {
                    peer.send(rtp: &$0)
                }
            }
        }
    }
}
