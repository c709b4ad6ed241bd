import AtriumDTLS
import AtriumForwarding
import AtriumRTP
import AtriumSRTP
import AtriumUDP
import Foundation
import Testing

@testable import AtriumMedia

/// The relay link between two nodes: its frames read back what was written and refuse what is not
/// one; two ends on 127.0.0.1 shake hands over DTLS with each other's fingerprint, then carry a
/// home worker's piped packets to the edge's pipe unchanged and in order, and the edge's feedback
/// back, and the same both ways at once (a publisher on the edge); a stranger's datagram, one that does not authenticate and a wrong certificate are refused
/// and counted.
@Suite(.serialized) struct RelayLinkTests {
    @Test func framesReadBackWhatWasWritten() {
        var h = PipePacket(kind: .rtp, tag: 0xDEAD_BEEF, stream: 2)
        h.recovered = true
        h.twccExtensionID = 5
        h.rtpTimestamp = 90_000
        h.ntp = 3_900_000_000.25
        var buffer = [UInt8](repeating: 0, count: 64)
        buffer.withUnsafeMutableBytes { RelayFrame.writeMedia(h, into: $0, at: 0) }
        let read = buffer.withUnsafeBytes { RelayFrame.readMedia($0) }
        #expect(read?.packet == 24..<64)
        #expect(
            read.map { ($0.header.tag, $0.header.stream, $0.header.recovered) } ?? (0, 0, false) == (
                0xDEAD_BEEF, 2, true
            ))
        #expect(read?.header.twccExtensionID == 5 && read?.header.rtpTimestamp == 90_000)
        #expect(read?.header.ntp == 3_900_000_000.25 && read?.header.kind == .rtp)
        for f in [PipeFeedback(tag: 9, kind: .keyFrame(stream: 1)), PipeFeedback(tag: 10, kind: .wanted(mask: 5))] {
            var b = [UInt8](repeating: 0, count: 8)
            b.withUnsafeMutableBytes { RelayFrame.writeFeedback(f, into: $0, at: 0) }
            let r = b.withUnsafeBytes { RelayFrame.readFeedback($0) }
            #expect(r?.tag == f.tag)
            switch (r?.kind, f.kind) {
            case (.keyFrame(let a)?, .keyFrame(let b)): #expect(a == b)
            case (.wanted(let a)?, .wanted(let b)): #expect(a == b)
            default: Issue.record("feedback kind changed: \(String(describing: r))")
            }
        }
    }

    @Test(arguments: [
        ("too short", [UInt8](repeating: 0, count: 23)),
        ("an unknown kind", [0, 9] + [UInt8](repeating: 0, count: 22)),
        ("unknown flags", [0, 0, 0, 2] + [UInt8](repeating: 0, count: 20)),
        (
            "an NTP time that is not a number",
            [0, 0, 0, 0] + [UInt8](repeating: 0, count: 12) + [0x7F, 0xF8] + [0, 0, 0, 0, 0, 0]
        ),
    ])
    func mediaThatIsNotOneIsRefused(_ name: String, _ bytes: [UInt8]) {
        #expect(bytes.withUnsafeBytes { RelayFrame.readMedia($0) } == nil, "\(name)")
    }

    @Test func feedbackThatIsNotOneIsRefused() {
        #expect([UInt8](repeating: 0, count: 7).withUnsafeBytes { RelayFrame.readFeedback($0) } == nil)
        #expect(([0, 2] + [UInt8](repeating: 0, count: 6)).withUnsafeBytes { RelayFrame.readFeedback($0) } == nil)
    }

    /// Waits (a hang guard, not a measure) until `done` holds.
    static func until(_ what: String, seconds: Double = 15, _ done: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !done() {
            guard Date() < deadline else { throw RelayTestError(what: what) }
            usleep(5000)
        }
    }

    struct RelayTestError: Error { var what: String }

    static func rtp(_ n: Int) -> [UInt8] {
        [0x80, 96, UInt8(n >> 8), UInt8(n & 0xFF), 0, 0, 0, 1, 0, 0, 0, 42]
            + [UInt8](repeating: UInt8(n & 0xFF), count: 100 + n % 900)
    }

    @Test func twoNodesCarryPipedPacketsAndFeedbackEncrypted() throws {
        let ownerCert = try DTLSCertificate()
        let edgeCert = try DTLSCertificate()
        let owner = try RelayLink(
            side: .owner, bind: .loopbackV4(port: 0), certificate: ownerCert, remoteFingerprint: edgeCert.fingerprint,
            client: true)
        let edge = try RelayLink(
            side: .edge, bind: .loopbackV4(port: 0), certificate: edgeCert, remoteFingerprint: ownerCert.fingerprint,
            client: false)
        // The owner's end stands for a far worker of the home worker (this thread); the edge's for the
        // home worker of a far worker (this thread too).
        let ownerPipe = PipeLink(from: 0, to: 1, wakeFar: owner.wakeup, wakeHome: nil)
        let edgePipe = PipeLink(from: 0, to: 1, wakeFar: nil, wakeHome: edge.wakeup)
        owner.route(tag: 42, ownerPipe)
        edge.route(tag: 42, edgePipe)
        try owner.start(remote: edge.socket.localAddress)
        try edge.start(remote: owner.socket.localAddress)
        defer {
            owner.stop()
            edge.stop()
        }
        try Self.until("both ends connected") { owner.figures.state == .connected && edge.figures.state == .connected }

        var sent: [(PipePacket, [UInt8])] = []
        for n in 0..<200 {
            var h = PipePacket(kind: n % 50 == 0 ? .senderReport : .rtp, tag: 42, stream: UInt8(n % 3))
            h.rtpTimestamp = UInt32(n * 3000)
            h.ntp = Double(n) + 0.5
            let bytes = h.kind == .rtp ? Self.rtp(n) : []
            while !bytes.withUnsafeBytes({ ownerPipe.packets.push($0, h) }) { usleep(1000) }
            ownerPipe.farPending = true
            ownerPipe.wakeFarIfPending()
            sent.append((h, bytes))
        }
        var received: [(PipePacket, [UInt8])] = []
        try Self.until("200 packets at the edge") {
            while edgePipe.packets.pop({ h, b in received.append((h, Array(b))) }) {}
            return received.count >= 200
        }
        #expect(received.count == 200)
        for (a, b) in zip(sent, received) {
            #expect(a.0.kind == b.0.kind && a.0.tag == b.0.tag && a.0.stream == b.0.stream, "header")
            #expect(a.0.rtpTimestamp == b.0.rtpTimestamp && a.0.ntp == b.0.ntp)
            #expect(a.1 == b.1, "the packet's bytes")
        }
        // Feedback from the edge's viewers goes home.
        #expect(edgePipe.feedback.push(PipeFeedback(tag: 42, kind: .keyFrame(stream: 2))))
        #expect(edgePipe.feedback.push(PipeFeedback(tag: 42, kind: .wanted(mask: 0b101))))
        edgePipe.homePending = true
        edgePipe.wakeHomeIfPending()
        var feedback: [PipeFeedback] = []
        try Self.until("feedback at the owner") {
            while let f = ownerPipe.feedback.pop() { feedback.append(f) }
            return feedback.count >= 2
        }
        #expect(feedback.count == 2 && feedback.allSatisfy { $0.tag == 42 })
        try Self.until("a ping answered") {
            owner.figures.rttMilliseconds != nil && edge.figures.rttMilliseconds != nil
        }
        // The threads publish their figures once per pass: wait for the pass after the feedback.
        try Self.until("the feedback counted") { owner.figures.feedbackIn == 2 && edge.figures.feedbackOut == 2 }
        let o = owner.figures
        let e = edge.figures
        #expect(o.packetsOut == 200 && e.packetsIn == 200)
        #expect(e.lost == 0 && e.unauthenticated == 0 && e.malformed == 0 && e.strangers == 0)

        // The other way, on the same link: a publisher on the edge piped up to the owner. The link
        // tag 42 again, in the other direction's space: the edge's home worker pushes with 77, the
        // owner's pipe producer reads 88, and its request comes back to the edge as 77.
        let upPipe = PipeLink(from: 0, to: -1, wakeFar: edge.wakeup, wakeHome: nil)
        let upOwnerPipe = PipeLink(from: -1, to: 0, wakeFar: nil, wakeHome: owner.wakeup)
        edge.route(tag: 42, upPipe, local: 77, direction: .outbound)
        owner.route(tag: 42, upOwnerPipe, local: 88, direction: .inbound)
        try Self.until("both routes in place") { owner.figures.tracks == 2 && edge.figures.tracks == 2 }
        for n in 0..<50 {
            let bytes = Self.rtp(n + 1000)
            while !bytes.withUnsafeBytes({ upPipe.packets.push($0, PipePacket(kind: .rtp, tag: 77, stream: 1)) }) {
                usleep(1000)
            }
            upPipe.farPending = true
            upPipe.wakeFarIfPending()
        }
        var up: [(PipePacket, [UInt8])] = []
        try Self.until("50 packets up at the owner") {
            while upOwnerPipe.packets.pop({ h, b in up.append((h, Array(b))) }) {}
            return up.count >= 50
        }
        #expect(up.allSatisfy { $0.0.tag == 88 && $0.0.stream == 1 })
        #expect(up.map(\.1) == (0..<50).map { Self.rtp($0 + 1000) })
        // Nothing of it reached the owner-to-edge pipe.
        #expect(!edgePipe.packets.pop({ _, _ in }))
        #expect(upOwnerPipe.feedback.push(PipeFeedback(tag: 88, kind: .keyFrame(stream: 1))))
        upOwnerPipe.homePending = true
        upOwnerPipe.wakeHomeIfPending()
        var down: [PipeFeedback] = []
        try Self.until("the owner's request at the edge's home worker") {
            while let f = upPipe.feedback.pop() { down.append(f) }
            return !down.isEmpty
        }
        #expect(down.count == 1 && down[0].tag == 77)
        #expect(ownerPipe.feedback.pop() == nil)

        // A stranger's datagram (another address), even a well-formed RTP packet, is dropped and counted.
        let stranger = try UDPSocket(bindingTo: .loopbackV4(port: 0), batchSize: 1, maxDatagramSize: 1500)
        _ = try stranger.send([
            Datagram(address: edge.socket.localAddress, payload: Self.rtp(1) + [UInt8](repeating: 0, count: 10))
        ])
        try Self.until("the stranger counted") { edge.figures.strangers == 1 }
        #expect(edge.figures.packetsIn == 200)
    }

    @Test func aDatagramThatDoesNotAuthenticateIsDropped() throws {
        let a = try DTLSCertificate()
        let b = try DTLSCertificate()
        let edge = try RelayLink(
            side: .edge, bind: .loopbackV4(port: 0), certificate: a, remoteFingerprint: b.fingerprint, client: false)
        // The expected node's address, but no handshake and a forged packet: nothing authenticates.
        let forger = try UDPSocket(bindingTo: .loopbackV4(port: 0), batchSize: 1, maxDatagramSize: 1500)
        try edge.start(remote: forger.localAddress)
        defer { edge.stop() }
        _ = try forger.send([
            Datagram(address: edge.socket.localAddress, payload: Self.rtp(5) + [UInt8](repeating: 7, count: 10))
        ])
        try Self.until("the forged packet counted") { edge.figures.unauthenticated == 1 }
        #expect(edge.figures.packetsIn == 0 && edge.figures.state == .handshaking)
    }

    @Test func aNodeWithAnotherCertificateIsRefused() throws {
        let ownerCert = try DTLSCertificate()
        let edgeCert = try DTLSCertificate()
        let impostor = try DTLSCertificate()
        let owner = try RelayLink(
            side: .owner, bind: .loopbackV4(port: 0), certificate: impostor, remoteFingerprint: edgeCert.fingerprint,
            client: true)
        let edge = try RelayLink(
            side: .edge, bind: .loopbackV4(port: 0), certificate: edgeCert, remoteFingerprint: ownerCert.fingerprint,
            client: false)
        try owner.start(remote: edge.socket.localAddress)
        try edge.start(remote: owner.socket.localAddress)
        defer {
            owner.stop()
            edge.stop()
        }
        try Self.until("the edge refuses the handshake") { edge.figures.state == .failed }
        #expect(owner.figures.state != .connected)
    }

    /// The link's packet path allocates nothing: media from the owner's pipe over SRTP and UDP into
    /// the edge's pipe, and feedback back, a few thousand packets after a warm-up, on this thread
    /// (the two ends keyed by hand, their threads not started).
    @Test func theLinksPacketPathAllocatesNothing() throws {
        guard AllocationCount.isAvailable else { return }
        let a = try DTLSCertificate()
        let b = try DTLSCertificate()
        let owner = try RelayLink(
            side: .owner, bind: .loopbackV4(port: 0), certificate: a, remoteFingerprint: b.fingerprint, client: true)
        let edge = try RelayLink(
            side: .edge, bind: .loopbackV4(port: 0), certificate: b, remoteFingerprint: a.fingerprint, client: false)
        let (k1, s1, k2, s2) = (
            [UInt8](repeating: 1, count: 16), [UInt8](repeating: 2, count: 12), [UInt8](repeating: 3, count: 16),
            [UInt8](repeating: 4, count: 12)
        )
        let ownerKeys = SRTPKeys(
            profile: .aeadAES128GCM, localMasterKey: k1, localMasterSalt: s1, remoteMasterKey: k2, remoteMasterSalt: s2)
        let edgeKeys = SRTPKeys(
            profile: .aeadAES128GCM, localMasterKey: k2, localMasterSalt: s2, remoteMasterKey: k1, remoteMasterSalt: s1)
        (owner.srtpIn, owner.srtpOut) = (try ownerKeys.inboundSession(), try ownerKeys.outboundSession())
        (edge.srtpIn, edge.srtpOut) = (try edgeKeys.inboundSession(), try edgeKeys.outboundSession())
        (owner.counters.state, edge.counters.state) = (.connected, .connected)
        (owner.remote, edge.remote) = (edge.socket.localAddress, owner.socket.localAddress)
        let ownerPipe = PipeLink(from: 0, to: -1, wakeFar: nil, wakeHome: nil)
        let edgePipe = PipeLink(from: -1, to: 0, wakeFar: nil, wakeHome: nil)
        owner.outbound.apply(tag: 7, link: ownerPipe, local: 7)
        edge.inbound.apply(tag: 7, link: edgePipe, local: 907)
        // The other way: a publisher on the edge (its home worker's tag 55) up to the owner (603).
        let upPipe = PipeLink(from: 0, to: -1, wakeFar: nil, wakeHome: nil)
        let upOwnerPipe = PipeLink(from: -1, to: 0, wakeFar: nil, wakeHome: nil)
        edge.outbound.apply(tag: 3, link: upPipe, local: 55)
        owner.inbound.apply(tag: 3, link: upOwnerPipe, local: 603)
        let packet = Self.rtp(600)
        var carried = 0
        var fedBack = 0
        var carriedUp = 0
        var fedBackDown = 0
        func round() {
            for _ in 0..<32 {
                _ = packet.withUnsafeBytes { ownerPipe.packets.push($0, PipePacket(kind: .rtp, tag: 7, stream: 0)) }
                _ = packet.withUnsafeBytes { upPipe.packets.push($0, PipePacket(kind: .rtp, tag: 55, stream: 0)) }
            }
            _ = upOwnerPipe.feedback.push(PipeFeedback(tag: 603, kind: .keyFrame(stream: 0)))
            owner.pump()
            owner.flush()
            edge.receive(now: 1)
            while edgePipe.packets.pop({ h, _ in if h.tag == 907 { carried += 1 } }) {}
            while let f = upPipe.feedback.pop() { if f.tag == 55 { fedBackDown += 1 } }
            _ = edgePipe.feedback.push(PipeFeedback(tag: 907, kind: .keyFrame(stream: 0)))
            edge.pump()
            edge.flush()
            owner.receive(now: 1)
            while let f = ownerPipe.feedback.pop() { if f.tag == 7 { fedBack += 1 } }
            while upOwnerPipe.packets.pop({ h, _ in if h.tag == 603 { carriedUp += 1 } }) {}
        }
        for _ in 0..<10 { round() }
        let count = AllocationCount.measure { for _ in 0..<100 { round() } }
        #expect(count.allocations == 0, "\(count)")
        #expect(carried == 110 * 32 && fedBack == 110)
        #expect(carriedUp == 110 * 32 && fedBackDown == 110)
        #expect(owner.counters.unauthenticated == 0 && edge.counters.unauthenticated == 0)
    }

    /// A route asked for after the link's pass took its changes, whose worker pushed at once (a track
    /// piped up starts with its cached picture): its packets go out under the route's link tag, not
    /// dropped as unrouted (the two ends keyed by hand, their threads not started).
    @Test func aRouteNotYetAppliedCarriesThePacketsPushedForIt() throws {
        let a = try DTLSCertificate()
        let b = try DTLSCertificate()
        let edge = try RelayLink(
            side: .edge, bind: .loopbackV4(port: 0), certificate: a, remoteFingerprint: b.fingerprint, client: true)
        let owner = try RelayLink(
            side: .owner, bind: .loopbackV4(port: 0), certificate: b, remoteFingerprint: a.fingerprint, client: false)
        let (k1, s1, k2, s2) = (
            [UInt8](repeating: 1, count: 16), [UInt8](repeating: 2, count: 12), [UInt8](repeating: 3, count: 16),
            [UInt8](repeating: 4, count: 12)
        )
        let edgeKeys = SRTPKeys(
            profile: .aeadAES128GCM, localMasterKey: k1, localMasterSalt: s1, remoteMasterKey: k2, remoteMasterSalt: s2)
        let ownerKeys = SRTPKeys(
            profile: .aeadAES128GCM, localMasterKey: k2, localMasterSalt: s2, remoteMasterKey: k1, remoteMasterSalt: s1)
        (edge.srtpIn, edge.srtpOut) = (try edgeKeys.inboundSession(), try edgeKeys.outboundSession())
        (owner.srtpIn, owner.srtpOut) = (try ownerKeys.inboundSession(), try ownerKeys.outboundSession())
        (edge.counters.state, owner.counters.state) = (.connected, .connected)
        (edge.remote, owner.remote) = (owner.socket.localAddress, edge.socket.localAddress)
        let upPipe = PipeLink(from: 0, to: -1, wakeFar: nil, wakeHome: nil)
        let ownerPipe = PipeLink(from: -1, to: 0, wakeFar: nil, wakeHome: nil)
        owner.inbound.apply(tag: 9, link: ownerPipe, local: 609)
        // A first track's route applied, a second's only asked for.
        edge.outbound.apply(tag: 8, link: upPipe, local: 58)
        edge.route(tag: 9, upPipe, local: 59, direction: .outbound)
        _ = Self.rtp(3).withUnsafeBytes { upPipe.packets.push($0, PipePacket(kind: .rtp, tag: 59, stream: 0)) }
        edge.pump()
        edge.flush()
        try Self.until("the packet at the owner") {
            owner.receive(now: 1)
            return ownerPipe.packets.count == 1
        }
        var got: (UInt32, [UInt8])?
        _ = ownerPipe.packets.pop { h, b in got = (h.tag, Array(b)) }
        #expect(got?.0 == 609 && got?.1 == Self.rtp(3))
        #expect(edge.counters.malformed == 0 && edge.counters.packetsOut == 1)
        // A tag with no route at all is still dropped and counted.
        _ = Self.rtp(4).withUnsafeBytes { upPipe.packets.push($0, PipePacket(kind: .rtp, tag: 77, stream: 0)) }
        edge.pump()
        #expect(edge.counters.malformed == 1)
    }

    /// A link whose other end stops (its node killed) fails once nothing was heard from it for its
    /// silence bound, which the node's plane takes for the other node lost.
    @Test func aLinkWhoseOtherEndGoesSilentFails() throws {
        let ownerCert = try DTLSCertificate()
        let edgeCert = try DTLSCertificate()
        let owner = try RelayLink(
            side: .owner, bind: .loopbackV4(port: 0), certificate: ownerCert, remoteFingerprint: edgeCert.fingerprint,
            client: true, silence: 1.5)
        let edge = try RelayLink(
            side: .edge, bind: .loopbackV4(port: 0), certificate: edgeCert, remoteFingerprint: ownerCert.fingerprint,
            client: false, silence: 1.5)
        try owner.start(remote: edge.socket.localAddress)
        try edge.start(remote: owner.socket.localAddress)
        defer { edge.stop() }
        try Self.until("the link up") { owner.figures.state == .connected && edge.figures.state == .connected }
        owner.stop()
        #expect(owner.figures.state == .closed)
        try Self.until("the edge's end failed") { edge.figures.state == .failed }
        #expect(edge.figures.failure?.hasPrefix("nothing heard") == true)
    }

    /// The media path through a relay link: a publisher on the owner node's engine, a viewer on the
    /// edge node's; between them the home worker's pipe, the two ends of the link (encrypted UDP on
    /// 127.0.0.1) and the edge engine's pipe producer. With nothing cached, the owner asks the
    /// publisher for a key frame as it starts piping (the edge asks for none before the pipe carried
    /// something); the viewer gets every frame in order; its own key-frame request then crosses the
    /// link home and reaches the publisher as a PLI.
    @Test func aViewerOnAnEdgeNodeGetsTheOwnersPublisherThroughTheLink() throws {
        let ownerCert = try DTLSCertificate()
        let edgeCert = try DTLSCertificate()
        let ownerEnd = try RelayLink(
            side: .owner, bind: .loopbackV4(port: 0), certificate: ownerCert, remoteFingerprint: edgeCert.fingerprint,
            client: true)
        let edgeEnd = try RelayLink(
            side: .edge, bind: .loopbackV4(port: 0), certificate: edgeCert, remoteFingerprint: ownerCert.fingerprint,
            client: false)
        let ownerPipe = PipeLink(from: 0, to: 1, wakeFar: ownerEnd.wakeup, wakeHome: nil)
        let edgePipe = PipeLink(from: 0, to: 1, wakeFar: nil, wakeHome: edgeEnd.wakeup)
        // The edge numbers the pipe producer 901 (its own space); the link carries the owner's 1.
        ownerEnd.route(tag: 1, ownerPipe)
        edgeEnd.route(tag: 1, edgePipe, local: 901)
        try ownerEnd.start(remote: edgeEnd.socket.localAddress)
        try edgeEnd.start(remote: ownerEnd.socket.localAddress)
        defer {
            ownerEnd.stop()
            edgeEnd.stop()
        }
        try Self.until("the link up") { ownerEnd.figures.state == .connected && edgeEnd.figures.state == .connected }

        let home = try EmbeddedMedia(seed: 7)
        let far = try EmbeddedMedia(seed: 8)
        let publisher = try EmbeddedPeer(
            port: 45_000, transport: "pub", serverFingerprint: home.engine.certificate.fingerprint)
        try publisher.connect(to: home, midExtensionID: 1)
        home.apply(.addProducer(PipeTests.camera))
        far.apply(.addPipeProducer(PipeTests.camera, router: "room", link: edgePipe, tag: 901))
        home.apply(.pipeProducer(id: "cam", link: ownerPipe, tag: 1))
        let v = try EmbeddedPeer(port: 46_000, transport: "sub", serverFingerprint: far.engine.certificate.fingerprint)
        try v.connect(to: far)
        far.apply(
            .addConsumer(
                ConsumerSpec(
                    id: "c", producer: "cam", transport: "sub", ssrc: 46_000, rtxSSRC: nil, payloadType: 100,
                    rtxPayloadType: nil, nack: true, audioLevelID: nil, absSendTimeID: nil)))
        func pump(_ m: EmbeddedMedia) {
            m.engine.drainPipes()
            m.engine.flush()
            m.collect()
        }
        func plis() throws -> Int {
            try publisher.receive(from: home)
            defer { publisher.rtcp.removeAll() }
            return publisher.rtcp.filter {
                if case .pictureLossIndication(let p) = $0 { p.sources.mediaSSRC == 4242 } else { false }
            }.count
        }
        // Nothing cached to start the pipe with: the owner asked, and nothing came over the link.
        var asked = 0
        try Self.until("the owner's key-frame request at the publisher") {
            pump(far)
            pump(home)
            asked += (try? plis()) ?? 0
            return asked >= 1
        }
        #expect(edgeEnd.figures.feedbackOut == 0)
        var sequence: UInt16 = 100
        for frame in 0..<5 {
            var payload: [UInt8] = [0x10]
            payload += frame == 0 ? [0x50, 0x01, 0x00, 0x9D, 0x01, 0x2A, 0x80, 0x07, 0x38, 0x04] : [0x51]
            payload += [UInt8](repeating: UInt8(frame), count: 50)
            try publisher.send(
                rtp: RTPPacketWriter.packet(
                    payloadType: 96, sequenceNumber: sequence, timestamp: UInt32(frame) * 3000, ssrc: 4242,
                    marker: true, payload: payload), to: home)
            sequence &+= 1
        }
        home.engine.wakePipes()
        var frames: [UInt8] = []
        try Self.until("five frames at the edge viewer") {
            pump(far)
            try? v.receive(from: far)
            frames = v.rtp.compactMap { p in (try? RTPHeader(parsing: p)).map { p[$0.payloadRange.upperBound - 1] } }
            return frames.count >= 5
        }
        #expect(frames == [0, 1, 2, 3, 4])
        // Now the pipe carried the stream: the viewer's PLI goes over the link (the edge's feedback,
        // the owner's ring) and reaches the publisher, past the owner's throttle.
        home.advance(by: 0.4)
        far.advance(by: 0.4)
        try v.send(rtcp: [.pictureLossIndication(PictureLossIndication(senderSSRC: 1, mediaSSRC: 46_000))], to: far)
        try Self.until("the edge viewer's key-frame request at the publisher") {
            far.advance(by: 0.02)
            pump(far)
            pump(home)
            asked += (try? plis()) ?? 0
            return asked >= 2
        }
        #expect(edgeEnd.figures.feedbackOut >= 1 && ownerEnd.figures.feedbackIn >= 1)
        #expect(ownerEnd.figures.packetsOut >= 5 && edgeEnd.figures.packetsIn >= 5)
        #expect(home.engine.counters.pipePacketsOut == 5 && far.engine.counters.pipePacketsIn == 5)
    }
}
