import AtriumCongestion
import AtriumDTLS
import AtriumRTP
import AtriumTestSupport
import Testing

@testable import AtriumMedia

#if canImport(Glibc)
    import Glibc
#endif

/// `make bench` (figures, not pass/fail; skipped unless ATRIUM_BENCH is set; on the release build): what estimation and
/// allocation cost per forwarded packet with 20 viewers, in memory (the engine's own work: numbering,
/// feedback, trendline, probes, pacer, plus an allocation per estimate event), with and without; and
/// how long a viewer takes to settle on layers that fit after its link drops from 3 Mbit/s to
/// 300 kbit/s, and to be back on the top layers when it comes back (the estimator, probing and the
/// allocator in a closed loop with a simulated bottleneck).
@Suite struct BandwidthBench {
    static let enabled = getenv("ATRIUM_BENCH") != nil

    /// Which build the figures come from (`make bench` runs the release one, like the other benches).
    #if DEBUG
        static let build = "debug"
    #else
        static let build = "release"
    #endif

    static func fixed(_ v: Double) -> String { "\(Double(Int((v * 100).rounded())) / 100)" }

    static func cpu() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Microseconds of engine CPU per forwarded packet: one camera (1200-byte packets, 150 per second)
    /// to `viewers`, each with transport-wide feedback every 100 ms when `estimating`.
    static func forwarding(viewers: Int, estimating: Bool, seconds: Int) throws -> Double {
        let media = try EmbeddedMedia()
        let fp = media.engine.certificate.fingerprint
        let publisher = try EmbeddedPeer(port: 46_000, transport: "pub", serverFingerprint: fp)
        try publisher.connect(to: media, midExtensionID: 1, transportWideCC: 3)
        media.apply(
            .addProducer(
                ProducerSpec(
                    id: "cam", transport: "pub", mid: "0", source: "camera", kind: .video, videoCodec: "VP8",
                    clockRate: 90_000, payloadType: 96, rtxPayloadType: 97, ssrc: 7000, rtxSSRC: 7001,
                    audioLevelID: nil, absSendTimeID: nil, paused: false)))
        var peers: [EmbeddedPeer] = []
        var recorders: [TransportWideRecorder] = []
        for v in 0..<viewers {
            let p = try EmbeddedPeer(port: UInt16(46_100 + v), transport: "sub\(v)", serverFingerprint: fp)
            try p.connect(to: media, transportWideCC: estimating ? 4 : nil)
            media.apply(
                .addConsumer(
                    ConsumerSpec(
                        id: "c\(v)", producer: "cam", transport: "sub\(v)", ssrc: UInt32(8000 + v),
                        rtxSSRC: UInt32(9000 + v), payloadType: 96, rtxPayloadType: 97, nack: true, audioLevelID: nil,
                        absSendTimeID: nil)))
            peers.append(p)
            recorders.append(TransportWideRecorder())
        }
        var engineTime = 0.0
        let start = media.engine.counters.packetsOut
        let tracks = [
            Allocator.Track(id: "mic", kind: .audio, bitrate: 48_000),
            Allocator.Track(
                id: "cam", kind: .camera,
                layers: [150_000, 500_000, 1_500_000].enumerated().map {
                    Allocator.Layer(
                        spatial: $0, temporal: 7, bitrate: $1, width: 320 << $0, height: 180 << $0, framesPerSecond: 30)
                }),
        ]
        for n in 0..<(seconds * 150) {
            let payload: [UInt8] =
                (n == 0 ? [0x10, 0x50, 0x01, 0x00, 0x9D, 0x01, 0x2A] : [0x10, 0x51])
                + [UInt8](repeating: 0, count: 1200)
            let packet = try RTPPacketWriter.packet(
                payloadType: 96, sequenceNumber: UInt16(truncatingIfNeeded: n), timestamp: UInt32(n) * 600,
                ssrc: 7000, marker: true,
                extensions: [
                    RTPHeaderExtensionElement(id: 1, value: Array("0".utf8)),
                    RTPHeaderExtensionElement(id: 3, value: [0, 0]),
                ], payload: payload)
            var t0 = cpu()
            try publisher.send(rtp: packet, to: media)
            media.advance(by: 1.0 / 150)
            engineTime += cpu() - t0
            let now = media.clock.now
            for v in 0..<viewers {
                try peers[v].receive(from: media)
                if estimating {
                    for p in peers[v].rtp {
                        guard let h = try? RTPHeader(parsing: p), let r = h.extensionValueRange(id: 4, in: p),
                            r.count == 2
                        else { continue }
                        recorders[v].record(
                            UInt16(p[r.lowerBound]) << 8 | UInt16(p[r.lowerBound + 1]), at: Int64(now * 1_000_000))
                    }
                }
                peers[v].rtp.removeAll()
                peers[v].rtcp.removeAll()
            }
            guard estimating, n % 15 == 14 else { continue }
            for v in 0..<viewers {
                var feedback: [RTCPPacket] = []
                while let fb = recorders[v].feedback(senderSSRC: 1, mediaSSRC: UInt32(8000 + v)) {
                    feedback.append(.transportWideFeedback(fb))
                }
                t0 = cpu()
                if !feedback.isEmpty { try peers[v].send(rtcp: feedback, to: media) }
                engineTime += cpu() - t0
            }
            // The coordinator's side: an allocation for each estimate the engine reported.
            t0 = cpu()
            for case .estimate(_, let bitrate) in media.events() {
                _ = Allocator.allocate(estimate: bitrate, tracks: tracks)
            }
            engineTime += cpu() - t0
        }
        let forwarded = media.engine.counters.packetsOut - start
        return engineTime * 1e6 / Double(max(forwarded, 1))
    }

    @Test(.enabled(if: enabled)) func cpuPerForwardedPacketWithTwentyViewers() throws {
        _ = try Self.forwarding(viewers: 20, estimating: false, seconds: 1)  // warm up
        let without = try Self.forwarding(viewers: 20, estimating: false, seconds: 10)
        let with = try Self.forwarding(viewers: 20, estimating: true, seconds: 10)
        print(
            "bandwidth bench: 20 viewers, engine CPU per forwarded packet (\(Self.build) build, in memory, SRTP included): "
                + "without estimation \(Self.fixed(without)) us, with estimation and allocation "
                + "\(Self.fixed(with)) us (+\(Self.fixed(with - without)) us)")
    }

    @Test(.enabled(if: enabled)) func settleTimeAfterALinkDrop() {
        // The closed loop of the probing tests with the allocator on top: 3 Mbit/s, then 300 kbit/s at 10 s,
        // then 3 Mbit/s again at 30 s. Layers: 150k, 500k, 1.5M; audio 48k.
        let layers = [150_000.0, 500_000, 1_500_000]
        let e = ClosedLoop.run(
            phases: [(0, 3_000_000), (10, 300_000), (30, 3_000_000)], seconds: 45, demand: 1_550_000, initial: 1_000_000
        )
        // The allocator fills a transport-wide estimate's `Allocator.transportWideShare`.
        func top(_ estimate: Double) -> Int {
            layers.lastIndex { $0 + 48_000 <= Allocator.transportWideShare * estimate } ?? -1
        }
        // e[k] is the estimate at the end of second k + 1.
        let dropSettled = (9..<29).first { s in (s..<29).allSatisfy { top(e[$0]) <= 0 } }.map { $0 + 1 - 10 }
        let backSettled = (29..<45).first { top(e[$0]) == 2 }.map { $0 + 1 - 30 }
        print(
            "bandwidth bench: a link drop from 3 Mbit/s to 300 kbit/s settles on the bottom layer (or a pause) within "
                + "\(dropSettled.map { "\($0) s" } ?? "never"); back on the top layer within \(backSettled.map { "\($0) s" } ?? "never") "
                + "after the link opens again (simulated bottleneck, estimates each second: "
                + "\(e.map { Int($0 / 1000) }))")
        print(
            "bandwidth bench: Janus: not applicable. Janus 1.1.2's videoroom estimates nothing toward a subscriber: "
                + "a subscriber's substream and temporal layer are what it asks for (`configure`), changed by the "
                + "server only when a substream stops arriving; Janus's subscriber bandwidth estimation is an "
                + "unmerged work in progress (meetecho/janus-gateway pull request 3278)")
    }
}
