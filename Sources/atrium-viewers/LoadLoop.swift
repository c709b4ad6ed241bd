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
    var publisherIDs: [Int: UInt32] = [:]
    var packetScale = 1.0
    var latency = LatencyHistogram()
    var lastTick: UInt64 = 0
    let certificate: DTLSCertificate
    var seed: UInt64 = 1
    var batch = [Datagram](repeating: Datagram(capacity: 1500), count: 32)

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
            for line in input.lines() where !line.isEmpty {
                let (reply, quit) = handle(line)
                writeLine(reply.serialized())
                if quit { return 0 }
            }
            if input.closed { return 0 }
        }
    }

    /// Reads everything waiting on one peer's socket.
    func drain(_ token: Int) {
        guard token < peers.count, let peer = peers[token] else { return }
        while true {
            guard let n = try? peer.socket.receive(into: &batch), n > 0 else { return }
            let now = MonotonicClock.nanoseconds()
            for i in 0..<n {
                let from = batch[i].address
                peer.receive(&batch[i].payload, from: from, now: now, latency: &latency)
            }
            if n < batch.count { return }
        }
    }

    func publish(now: UInt64) {
        for (token, var list) in streams {
            guard let peer = peers[token], peer.state == .connected else { continue }
            for ssrc in peer.keyFrameRequests {
                for i in list.indices where list[i].ssrc == ssrc { list[i].requestKeyFrame() }
            }
            peer.keyFrameRequests.removeAll()
            let id = publisherIDs[token] ?? 0
            for i in list.indices where list[i].due <= now {
                list[i].frames(now: now, publisher: id, packetScale: packetScale) { peer.send(rtp: &$0) }
            }
            streams[token] = list
        }
    }
}
