import AtriumDTLS
import AtriumICE
import AtriumUDP
import Testing

@testable import AtriumMedia

/// The bytes the engine holds for a meeting's streams, counted by the test executable's malloc on
/// this thread (`AllocationCount`: usable bytes allocated minus freed), on the manual clock: a
/// publisher's camera (6 packets of about 1 kB a frame at 30 fps, 1.5 Mbit/s) and microphone, four
/// viewers (two estimating, their packets paced). Sending grows what the streams need and no more;
/// a publisher that stops sending gets its retransmission buffer and the viewers' pacer rings back
/// once they have been idle; closing the consumers, producers and transports returns the rest.
@Suite struct MemoryHeldTests {
    /// `answers`: the camera is known to answer key-frame requests, so its cache keeps only the first
    /// 1.5 s of each picture (`ViewerStart.keep`).
    @Test(arguments: [false, true])
    func whatTheStreamsHoldSendingIdleAndAfterTheyStop(answers: Bool) throws {
        guard AllocationCount.isAvailable else { return }
        let room = try PacketPathAllocationTests.Room(viewers: 4)
        // The camera's stream exists from its first packet: the first frame, before anything is counted.
        room.forward(try room.frames(1))
        // Released before the producers close: a reference here would keep their buffers.
        var camera = room.media.engine.producers["cam"]
        // What the handshakes sent shares the send slots' buffers (the next write into one would copy
        // it): let it go, and keep nothing sent from here on.
        room.media.collect()
        room.media.outbox.removeAll()
        room.media.port.keepsSent = false
        let frames = try room.frames(300)
        let cameraBytesPerSecond = frames.prefix(30).reduce(0) { $0 + $1.dropLast().reduce(0) { $0 + $1.count } }
        let media = room.media
        // The most packets the camera's cached picture held at once.
        var mostCached = 0
        let sending = AllocationCount.measure {
            for frame in frames {
                // An encoder that answers key-frame requests (these frames were made ahead, so the
                // state says it: else a request the viewers' starts made goes unanswered).
                if answers {
                    camera?.streams[0].answers = .within(0.02)
                    camera?.streams[0].pendingRequestAt = nil
                    camera?.streams[0].ignoredRequests = false
                }
                for packet in frame { media.engine.receive(packet, from: room.publisher.address) }
                media.engine.drainPacers()
                media.engine.flush()
                media.advance(by: 0.033)
                _ = media.events()
                mostCached = max(mostCached, camera?.streams[0].cache.count ?? 0)
            }
        }
        // Read in place: a copy of the streams would keep their buffers alive.
        var held = 0
        var cached = 0
        if let camera {
            for k in camera.streams.indices {
                held += camera.streams[k].buffer?.bytesHeld ?? 0
                cached += camera.streams[k].cache.bytesHeld
            }
        }
        // A picture let go gave its buffers to the worker's spares.
        cached += room.media.engine.pictureSpares.bytesHeld
        camera = nil
        let pacers = (1...4).map { media.engine.transports["sub\($0)"]?.downlink.paced.bytesHeld ?? 0 }
        let maps = (1...4).map { media.engine.consumers["v\($0)"]?.outputs.count ?? 0 }
        let idle = AllocationCount.measure {
            media.advance(by: 6)
            _ = media.events()
        }
        let stopped = AllocationCount.measure {
            for n in 1...4 {
                media.apply(.closeConsumer(id: "v\(n)"))
                media.apply(.closeConsumer(id: "a\(n)"))
            }
            media.apply(.closeProducer(id: "cam"))
            media.apply(.closeProducer(id: "mic"))
            media.apply(.closeTransport(id: "pub"))
            for n in 1...4 { media.apply(.closeTransport(id: "sub\(n)")) }
            _ = media.events()
        }
        print(
            """
            memory held (camera \(cameraBytesPerSecond / 1000) kB/s, 4 viewers, answers \(answers)):
              sending 10 s      \(sending.bytes / 1024) KiB (retransmission buffer \(held / 1024) KiB, \
            key-frame cache \(cached / 1024) KiB, pacer rings \(pacers.map { $0 / 1024 }) KiB)
              6 s without media \(idle.bytes / 1024) KiB
              all closed        \(stopped.bytes / 1024) KiB
            """)
        // A camera that answers: the cache keeps the frames of 1.5 s of each picture (the key frame's and
        // 45 more, 6 packets each, 33 ms apart: let go at the first packet past), not the 90 of a key
        // frame interval.
        #expect(mostCached == (answers ? 46 : 90) * 6, "\(mostCached) packets cached at most")
        // The retransmission buffer holds its hold of the camera (half a second: the viewers report no
        // round trip), and at most half as much again.
        let hold = Double(cameraBytesPerSecond) * RetransmissionBuffer.unmeasuredHold
        #expect(Double(held) >= hold && Double(held) <= 1.5 * hold + 32 * 1024, "\(held) B for \(Int(hold)) B")
        // Sending holds that, the key-frame cache's buffers (the largest picture, 90 frames, and the
        // slack of their growth), and per viewer a pacer ring (for those paced), a NACK map and a sent
        // ring; nothing else grows with the streams.
        // The NACK maps keep half a second of what each viewer was sent (6 packets a frame at 30 fps:
        // 90), in 128 records each where 1024 were made at once.
        #expect(maps == [128, 128, 128, 128], "NACK map records \(maps)")
        let rings = maps.reduce(0) { $0 + $1 * MemoryLayout<OutputRecord>.stride }
        let expected = held + cached + pacers.reduce(0, +) + rings
        #expect(
            sending.bytes > Int64(held) && sending.bytes < Int64(expected) + 256 * 1024,
            "\(sending.bytes) B held sending, \(expected) B in the buffers")
        // Idle for six seconds: the retransmission buffer and the pacer rings go back.
        #expect(idle.bytes <= -Int64(held + pacers.reduce(0, +)), "\(idle.bytes) B after six idle seconds")
        // Closed: everything sending added is gone (and what the transports held before it).
        #expect(sending.bytes + idle.bytes + stopped.bytes < 0, "\(sending.bytes + idle.bytes + stopped.bytes) B left")
    }

    /// A recorder takes only a simulcast camera's bottom layer (`record`, and its line's picture), so a
    /// recorded camera caches no more than one watched on its bottom layer: its upper layers keep
    /// arriving and are cached by nobody, while the bottom one is recorded and cached.
    @Test func aRecordedCameraCachesOnlyTheLayerItsRecorderTakes() throws {
        // Its publisher is at 127.0.0.1:40000, where `RecordingSinkTests` records: this one records elsewhere.
        let room = try SimulcastEngineTests.Room()
        let engine = room.media.engine
        room.media.apply(.closeConsumer(id: "c2"))
        room.media.apply(.closeConsumer(id: "c3"))
        room.media.apply(
            .addRecorder(
                RecorderSpec(
                    id: "rec", producer: "cam", destination: .v4(address: 0x7F00_0001, port: 40_900), ssrc: 777,
                    payloadType: 98)))
        try room.start(frames: 3)
        let camera = try #require(engine.producers["cam"])
        let arrived = camera.streams.map(\.packetsIn)
        // A key frame on every layer, with the recorder there.
        try room.sendFrame(keys: [0, 1, 2])
        #expect(camera.wantedMask == 1, "the viewer wants the bottom layer only")
        #expect(engine.counters.recordingPackets >= 1, "the recorder took the bottom layer")
        #expect(camera.streams[0].cache.keyFrameAt != nil && camera.streams[0].cache.bytesHeld > 0)
        for k in 1..<3 {
            #expect(camera.streams[k].packetsIn > arrived[k], "layer \(k)'s key frame arrived")
            #expect(camera.streams[k].cache.keyFrameAt == nil && camera.streams[k].cache.bytesHeld == 0, "layer \(k)")
        }
    }

    /// What a viewer's transport holds on the server, its peer's work not counted: its `SSL` is made
    /// on the worker's one shared DTLS context, its handshake makes no application-data buffer (that
    /// waits for data), and OpenSSL's record buffers are let go once it is done. The bytes, opened and
    /// connected, are printed (a context of its own, a 16 KiB write buffer and the record buffers kept
    /// held about 60 KiB more).
    @Test func aViewersTransportSharesTheWorkersDTLSContextAndMakesNoDataBuffer() throws {
        guard AllocationCount.isAvailable else { return }
        let room = try PacketPathAllocationTests.Room(viewers: 1)
        let media = room.media
        let fp = media.engine.certificate.fingerprint
        var rows: [(opened: Int64, secure: Int64)] = []
        for n in 2...4 {
            let v = try EmbeddedPeer(port: 42_000 + UInt16(n), transport: "x\(n)", serverFingerprint: fp)
            media.engineBytes = 0
            media.apply(
                .openTransport(
                    TransportSpec(
                        id: v.transport, router: "room", label: v.transport, localUfrag: v.localUfrag,
                        localPassword: v.localPassword, remote: v.remote(midExtensionID: nil, transportWideCC: 4))))
            let opened = media.engineBytes ?? 0
            try v.check(media)
            try v.handshake(media)
            rows.append((opened, (media.engineBytes ?? 0) - opened))
            media.engineBytes = nil
            let dtls = try #require(media.engine.transports[v.transport]?.session.dtls)
            #expect(dtls.state == .connected)
            #expect(dtls.context != nil && dtls.context === media.engine.dtlsContext)
            #expect(dtls.applicationBufferBytes == 0)
            #expect(dtls.recordBuffersReleased)
        }
        print(
            "a viewer's transport on the server (bytes): "
                + rows.map { "opened \($0.opened), handshake \($0.secure)" }.joined(separator: "; "))
    }
}
