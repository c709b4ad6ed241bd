internal import AtriumDTLS
internal import AtriumJSON
internal import AtriumLoadPeer
internal import AtriumUDP
internal import Glibc

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
    /// How long a process of viewers lets datagrams gather between polls while they arrive.
    static let gatherNanoseconds: UInt64 = 4_000_000
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
            let woke = MonotonicClock.nanoseconds()
            var received = 0
            for token in ready { received += drain(Int(clamping: token)) }
            let now = MonotonicClock.nanoseconds()
            publish(now: now)
            // Only a peer that received, published or ran its timers can have something queued: the
            // others are not visited on every wakeup.
            if now - lastTick >= 20_000_000 {
                lastTick = now
                for case let peer? in peers {
                    peer.tick(now: now)
                    peer.flush()
                }
            } else {
                for token in ready { flush(Int(clamping: token)) }
                for token in publishing { flush(token) }
            }
            // A process of viewers only lets datagrams gather between polls, so that each recvmmsg
            // reads a batch, not one datagram (the kernel's receive timestamps keep the latencies
            // exact); a publisher polls as often as its pacing needs.
            if publishing.isEmpty && received > 0 && now - woke < Self.gatherNanoseconds {
                var pause = timespec(tv_sec: 0, tv_nsec: Int(Self.gatherNanoseconds - (now - woke)))
                _ = nanosleep(&pause, nil)
            }
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

    /// Reads everything waiting on one peer's socket (`LoadPeer.receiveWaiting`); returns how many
    /// datagrams.
    func drain(_ token: Int) -> Int {
        guard token < peers.count, let peer = peers[token] else { return 0 }
        return peer.receiveWaiting(latency: &latency)
    }

    /// Sends what a peer queued.
    func flush(_ token: Int) {
        guard token < peers.count, let peer = peers[token] else { return }
        peer.flush()
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
