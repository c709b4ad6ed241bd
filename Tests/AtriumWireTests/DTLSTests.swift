import AtriumSRTP
import AtriumTestSupport
import COpenSSL
import Testing

@testable import AtriumDTLS

/// A client and a server endpoint with fresh certificates, each expecting the other's fingerprint.
private struct Pair {
    let client: DTLSEndpoint
    let server: DTLSEndpoint
    let clientCertificate: DTLSCertificate
    let serverCertificate: DTLSCertificate

    init(
        clientOptions: DTLSOptions = DTLSOptions(), serverOptions: DTLSOptions = DTLSOptions(),
        clientExpects: DTLSFingerprint? = nil
    ) throws {
        clientCertificate = try DTLSCertificate()
        serverCertificate = try DTLSCertificate()
        client = try DTLSEndpoint(
            role: .client, certificate: clientCertificate,
            remoteFingerprint: clientExpects ?? serverCertificate.fingerprint, options: clientOptions)
        server = try DTLSEndpoint(
            role: .server, certificate: serverCertificate, remoteFingerprint: clientCertificate.fingerprint,
            options: serverOptions)
    }
}

private struct Handshake {
    var clientKeys: SRTPKeys?
    var serverKeys: SRTPKeys?
    var datagrams: [[UInt8]] = []
    var firstServerFlight: [[UInt8]] = []
    var dropped = 0
    var retransmitted = 0
}

/// Shuttles datagrams until both sides report `.connected` or nothing is left to deliver.
/// `dropServerFlights` discards that many server flights; when nothing is in flight it sleeps until
/// the earliest retransmission timer and lets both endpoints retransmit.
private func run(_ pair: Pair, dropServerFlights: Int = 0) async throws -> Handshake {
    var result = Handshake()
    var toServer = try pair.client.start()
    var toClient: [[UInt8]] = []
    var dropsLeft = dropServerFlights
    for _ in 0..<100 {
        if result.clientKeys != nil, result.serverKeys != nil { break }
        if toServer.isEmpty, toClient.isEmpty {
            // Nothing in flight: wait for the earliest retransmission timer.
            let waits = [pair.client.nextTimeout, pair.server.nextTimeout].compactMap { $0 }
            guard let wait = waits.min() else { break }
            try await Task.sleep(for: wait + .milliseconds(2))
            let again = (try pair.client.timeout(), try pair.server.timeout())
            result.retransmitted += again.0.count + again.1.count
            toServer += again.0
            toClient += again.1
            continue
        }
        let forServer = toServer
        toServer = []
        result.datagrams += forServer
        for datagram in forServer {
            let output = try pair.server.receive(datagram)
            if result.firstServerFlight.isEmpty { result.firstServerFlight = output.datagrams }
            if dropsLeft > 0, !output.datagrams.isEmpty {
                dropsLeft -= 1
                result.dropped += output.datagrams.count
            } else {
                toClient += output.datagrams
            }
            for case .connected(let keys) in output.events { result.serverKeys = keys }
        }
        let forClient = toClient
        toClient = []
        result.datagrams += forClient
        for datagram in forClient {
            let output = try pair.client.receive(datagram)
            toServer += output.datagrams
            for case .connected(let keys) in output.events { result.clientKeys = keys }
        }
    }
    return result
}

private let fastTimer = DTLSOptions(initialRetransmitTimeout: .milliseconds(50))

private func rtpPacket(seq: UInt16) -> [UInt8] {
    [0x80, 0x60, UInt8(seq >> 8), UInt8(seq & 0xff), 0, 0, 0, 1, 0xde, 0xad, 0xbe, 0xef]
        + (0..<100).map { UInt8(truncatingIfNeeded: $0) }
}

@Suite struct DTLSTests {
    @Test func fingerprintIsSDPFormSHA256() throws {
        let certificate = try DTLSCertificate()
        let text = certificate.fingerprint.description
        #expect(text.hasPrefix("sha-256 "))
        let bytes = text.dropFirst("sha-256 ".count).split(separator: ":", omittingEmptySubsequences: false)
        #expect(bytes.count == 32)
        #expect(bytes.allSatisfy { $0.count == 2 && $0.allSatisfy { "0123456789ABCDEF".contains($0) } })
        #expect(try DTLSFingerprint(sdp: text) == certificate.fingerprint)
        #expect(try DTLSFingerprint(sdp: text.lowercased()) == certificate.fingerprint)
        #expect(try DTLSCertificate().fingerprint != certificate.fingerprint)
    }

    @Test(arguments: [
        "", "sha-256", "sha-256 AB:CD", "sha-256 " + Array(repeating: "ZZ", count: 32).joined(separator: ":"),
        "sha-256 " + Array(repeating: "ABC", count: 32).joined(separator: ":"), "md5 AB:CD", "sha-256  :::",
    ])
    func malformedFingerprintsAreTypedErrors(_ value: String) {
        #expect(throws: DTLSError.self) { try DTLSFingerprint(sdp: value) }
    }

    @Test func setupAttributeChoosesRole() {
        #expect(DTLSRole(setup: "active") == .client)
        #expect(DTLSRole(setup: "passive") == .server)
        #expect(DTLSRole(setup: "actpass") == nil)
    }

    @Test func handshakeDerivesCrosswiseKeysAndServerPreferredProfile() async throws {
        let pair = try Pair()
        let result = try await run(pair)
        let clientKeys = try #require(result.clientKeys)
        let serverKeys = try #require(result.serverKeys)
        #expect(pair.client.state == .connected && pair.server.state == .connected)
        #expect(clientKeys.profile == .aeadAES128GCM)
        #expect(serverKeys.profile == .aeadAES128GCM)
        #expect(clientKeys.localMasterKey == serverKeys.remoteMasterKey)
        #expect(clientKeys.localMasterSalt == serverKeys.remoteMasterSalt)
        #expect(clientKeys.remoteMasterKey == serverKeys.localMasterKey)
        #expect(clientKeys.remoteMasterSalt == serverKeys.localMasterSalt)
        #expect(clientKeys.localMasterKey != clientKeys.remoteMasterKey)
        #expect(clientKeys.localMasterKey.count == 16 && clientKeys.localMasterSalt.count == 12)
        #expect(result.datagrams.allSatisfy { $0.count <= 1200 })
    }

    /// The write BIO keeps datagram boundaries. OpenSSL packs a flight's records into datagrams up
    /// to the MTU, so with a small MTU the server's first flight (ServerHello through
    /// ServerHelloDone, its certificate fragmented) spans several datagrams, each no larger than
    /// the MTU and holding whole DTLS records (RFC 6347 section 4.1: 13-byte header, 16-bit length
    /// at offset 11).
    @Test func eachWriteIsOneDatagramOfWholeRecords() async throws {
        let result = try await run(try Pair(serverOptions: DTLSOptions(mtu: 300)))
        #expect(result.serverKeys != nil)
        #expect(result.firstServerFlight.allSatisfy { $0.count <= 300 })
        #expect(result.firstServerFlight.count > 1)
        for datagram in result.firstServerFlight {
            var offset = 0
            while offset + 13 <= datagram.count {
                #expect(datagram[offset] == 22)  // handshake content type
                offset += 13 + Int(datagram[offset + 11]) << 8 + Int(datagram[offset + 12])
            }
            #expect(offset == datagram.count)
        }
    }

    @Test func serverOrderWinsOverClientOrder() async throws {
        let pair = try Pair(clientOptions: DTLSOptions(profiles: [.aesCM128HMACSHA1_80, .aeadAES128GCM]))
        let result = try await run(pair)
        #expect(result.clientKeys?.profile == .aeadAES128GCM)
    }

    @Test func clientOfferingOnlyAESCMGetsAESCM() async throws {
        let pair = try Pair(clientOptions: DTLSOptions(profiles: [.aesCM128HMACSHA1_80]))
        let result = try await run(pair)
        let clientKeys = try #require(result.clientKeys)
        #expect(clientKeys.profile == .aesCM128HMACSHA1_80)
        #expect(clientKeys.localMasterSalt.count == 14)
        #expect(
            result.serverKeys
                == SRTPKeys(
                    profile: .aesCM128HMACSHA1_80, localMasterKey: clientKeys.remoteMasterKey,
                    localMasterSalt: clientKeys.remoteMasterSalt, remoteMasterKey: clientKeys.localMasterKey,
                    remoteMasterSalt: clientKeys.localMasterSalt))
    }

    @Test func exportedKeysCarrySRTPEndToEnd() async throws {
        for profiles in [[SRTPProfile.aeadAES128GCM], [.aesCM128HMACSHA1_80]] {
            let options = DTLSOptions(profiles: profiles)
            let result = try await run(try Pair(clientOptions: options, serverOptions: options))
            let clientKeys = try #require(result.clientKeys)
            let serverKeys = try #require(result.serverKeys)
            let clientOut = try clientKeys.outboundSession()
            let serverIn = try serverKeys.inboundSession()
            let serverOut = try serverKeys.outboundSession()
            let clientIn = try clientKeys.inboundSession()
            for seq in UInt16(1)...5 {
                let plain = rtpPacket(seq: seq)
                var packet = plain
                try clientOut.protect(rtp: &packet)
                #expect(packet != plain)
                try serverIn.unprotect(srtp: &packet)
                #expect(packet == plain)
                var back = plain
                try serverOut.protect(rtp: &back)
                try clientIn.unprotect(srtp: &back)
                #expect(back == plain)
            }
        }
    }

    @Test func wrongExpectedFingerprintFails() async throws {
        let stranger = try DTLSCertificate()
        let pair = try Pair(clientExpects: stranger.fingerprint)
        await #expect(throws: DTLSError.fingerprintMismatch) { _ = try await run(pair) }
        #expect(pair.client.state == .failed)
        #expect(pair.client.keys == nil)
    }

    @Test func serverChecksTheClientFingerprintToo() async throws {
        let clientCertificate = try DTLSCertificate()
        let serverCertificate = try DTLSCertificate()
        let client = try DTLSEndpoint(
            role: .client, certificate: clientCertificate, remoteFingerprint: serverCertificate.fingerprint)
        let server = try DTLSEndpoint(
            role: .server, certificate: serverCertificate, remoteFingerprint: serverCertificate.fingerprint)
        var toServer = try client.start()
        var serverError: DTLSError?
        for _ in 0..<10 where serverError == nil {
            var toClient: [[UInt8]] = []
            for datagram in toServer {
                do throws(DTLSError) {
                    toClient += try server.receive(datagram).datagrams
                } catch {
                    serverError = error
                }
            }
            toServer = try toClient.flatMap { try client.receive($0).datagrams }
        }
        #expect(serverError == .fingerprintMismatch)
        #expect(server.state == .failed && server.keys == nil)
    }

    @Test func droppedServerFlightIsRetransmitted() async throws {
        let pair = try Pair(clientOptions: fastTimer, serverOptions: fastTimer)
        let result = try await run(pair, dropServerFlights: 1)
        #expect(result.clientKeys != nil && result.serverKeys != nil)
        #expect(result.clientKeys?.localMasterKey == result.serverKeys?.remoteMasterKey)
        #expect(result.dropped > 0)
        #expect(result.retransmitted > 0)
    }

    @Test func timerRunsWhileAwaitingAFlight() throws {
        let pair = try Pair(clientOptions: fastTimer)
        #expect(pair.client.nextTimeout == nil)
        let hello = try pair.client.start()
        #expect(!hello.isEmpty)
        let wait = try #require(pair.client.nextTimeout)
        #expect(wait <= .milliseconds(50))
        #expect(try pair.client.timeout().isEmpty || wait == .zero)
        #expect(throws: DTLSError.self) { _ = try pair.client.start() }
    }

    @Test func garbageNeverTraps() throws {
        var generator = SeededGenerator(seed: 0xD71_5EED)
        var corpus: [[UInt8]] = [[], [0x16], [0x16, 0xFE, 0xFD], [UInt8](repeating: 0xFF, count: 1500)]
        corpus.append([0x16, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] + [UInt8](repeating: 1, count: 40))
        for _ in 0..<200 {
            let length = Int.random(in: 0..<300, using: &generator)
            var datagram = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if !datagram.isEmpty, Bool.random(using: &generator) { datagram[0] = 0x16 }
            corpus.append(datagram)
        }
        // Fed to a fresh server, an idle client, and an established pair.
        let connected = try Pair()
        let client = try DTLSEndpoint(
            role: .client, certificate: connected.clientCertificate,
            remoteFingerprint: connected.serverCertificate.fingerprint)
        #expect(throws: DTLSError.self) { _ = try client.receive([0x16]) }
        var server = try Pair().server
        for datagram in corpus {
            do {
                _ = try server.receive(datagram)
            } catch {
                server = try Pair().server
            }
        }
        #expect(throws: DTLSError.datagramTooLarge(70_000)) {
            _ = try server.receive([UInt8](repeating: 0, count: 70_000))
        }
    }

    /// Records that must not end an established association (RFC 6347 section 4.1.2.7): each content
    /// type, each epoch, another version, too short for the cipher, too long, truncated, a forged
    /// MAC, a replay, and plain junk. After each, the association is up, has let its record buffers
    /// go again (nothing is left half read), and application data still flows.
    static let junk: [(String, [UInt8])] = {
        func record(
            _ type: UInt8, epoch: UInt16, seq: UInt8, _ body: [UInt8], length: Int? = nil, version: UInt8 = 0xFD
        ) -> [UInt8] {
            let n = length ?? body.count
            return [
                type, 0xFE, version, UInt8(epoch >> 8), UInt8(epoch & 0xFF), 0, 0, 0, 0, 0, seq,
                UInt8(n >> 8), UInt8(n & 0xFF),
            ] + body
        }
        var rows: [(String, [UInt8])] = [
            ("application data too short, epoch 1", record(23, epoch: 1, seq: 9, [1, 2, 3, 4])),
            ("application data, epoch 0", record(23, epoch: 0, seq: 9, Array(repeating: 7, count: 40))),
            ("application data, epoch 2", record(23, epoch: 2, seq: 1, Array(repeating: 7, count: 40))),
            ("application data, epoch 65535", record(23, epoch: 0xFFFF, seq: 1, Array(repeating: 7, count: 40))),
            ("application data with a forged tag", record(23, epoch: 1, seq: 20, Array(repeating: 9, count: 64))),
            (
                "application data of DTLS 1.0, epoch 1",
                record(23, epoch: 1, seq: 21, Array(repeating: 9, count: 64), version: 0xFF)
            ),
            (
                "a late ClientHello, DTLS 1.0, epoch 0",
                record(
                    22, epoch: 0, seq: 22, [1] + Array(repeating: 0, count: 11) + Array(repeating: 5, count: 40),
                    version: 0xFF)
            ),
            ("plaintext fatal alert, epoch 0", record(21, epoch: 0, seq: 30, [2, 40])),
            ("forged alert, epoch 1", record(21, epoch: 1, seq: 31, Array(repeating: 3, count: 26))),
            ("change_cipher_spec, epoch 1", record(20, epoch: 1, seq: 32, [1])),
            ("handshake garbage, epoch 1", record(22, epoch: 1, seq: 33, Array(repeating: 5, count: 40))),
            ("handshake garbage, epoch 0", record(22, epoch: 0, seq: 34, Array(repeating: 5, count: 40))),
            ("unknown content type", record(24, epoch: 1, seq: 35, [1, 2, 3])),
            (
                "length beyond the record limit",
                record(23, epoch: 1, seq: 36, Array(repeating: 1, count: 20), length: 0xFFFF)
            ),
            ("length beyond the datagram", record(23, epoch: 1, seq: 37, Array(repeating: 1, count: 20), length: 200)),
            ("truncated header", [23, 0xFE, 0xFD, 0, 1]),
            ("not DTLS", [0x42, 0x42]),
        ]
        rows.append(
            (
                "a valid record followed by garbage",
                record(23, epoch: 1, seq: 38, Array(repeating: 7, count: 40)) + [0x17, 0xFE]
            ))
        return rows
    }()

    @Test(arguments: junk.map(\.0)) func invalidRecordsAreDiscardedAndTheAssociationLives(_ name: String) async throws {
        let pair = try Pair()
        _ = try await run(pair)
        let datagram = try #require(Self.junk.first { $0.0 == name }?.1)
        let output = try pair.server.receive(datagram)
        #expect(output.events.isEmpty)
        #expect(output.discarded == 1)
        #expect(pair.server.state == .connected)
        #expect(pair.server.recordBuffersReleased)
        let message: [UInt8] = Array("hello".utf8)
        var delivered: [DTLSEvent] = []
        for d in try pair.client.send(message) { delivered += try pair.server.receive(d).events }
        #expect(delivered == [.applicationData(message)])
    }

    @Test func forgedAndReplayedRecordsAreDiscarded() async throws {
        let pair = try Pair()
        _ = try await run(pair)
        let genuine = try pair.client.send(Array("one".utf8))
        #expect(try pair.server.receive(genuine[0]).events == [.applicationData(Array("one".utf8))])
        // The same record again: the replay window refuses it.
        let replay = try pair.server.receive(genuine[0])
        #expect(replay.events.isEmpty && replay.discarded == 1)
        // One bit of the next record flipped: its tag fails.
        var forged = try pair.client.send(Array("two".utf8))[0]
        forged[forged.count - 1] ^= 1
        let bad = try pair.server.receive(forged)
        #expect(bad.events.isEmpty && bad.discarded == 1 && pair.server.state == .connected)
        #expect(
            try pair.server.receive(try pair.client.send(Array("three".utf8))[0]).events
                == [.applicationData(Array("three".utf8))])
    }

    /// Records are at most 4 KiB (SCTP's packets fit a datagram): a larger write is refused with a
    /// clear error before OpenSSL sees it, and the association goes on; 4 KiB goes through.
    @Test func aWriteLargerThanARecordIsRefusedAndTheAssociationLives() async throws {
        let pair = try Pair()
        _ = try await run(pair)
        #expect(throws: DTLSError.self) { _ = try pair.client.send([UInt8](repeating: 7, count: 4097)) }
        #expect(pair.client.state == .connected)
        let largest = [UInt8](repeating: 9, count: 4096)
        var delivered: [DTLSEvent] = []
        for d in try pair.client.send(largest) { delivered += try pair.server.receive(d).events }
        #expect(delivered == [.applicationData(largest)])
    }

    /// Endpoints sharing one context (a worker's transports) each complete their own handshake with
    /// their own keys; a context made for another certificate is refused.
    @Test func endpointsSharingAContextHandshakeApart() async throws {
        let serverCertificate = try DTLSCertificate()
        let shared = try DTLSContext(certificate: serverCertificate)
        var keys: [SRTPKeys] = []
        for _ in 0..<2 {
            let clientCertificate = try DTLSCertificate()
            let client = try DTLSEndpoint(
                role: .client, certificate: clientCertificate, remoteFingerprint: serverCertificate.fingerprint)
            let server = try DTLSEndpoint(
                role: .server, certificate: serverCertificate, remoteFingerprint: clientCertificate.fingerprint,
                context: shared)
            var toServer = try client.start()
            for _ in 0..<10 where server.keys == nil || client.keys == nil {
                var toClient: [[UInt8]] = []
                for d in toServer { toClient += try server.receive(d).datagrams }
                toServer = try toClient.flatMap { try client.receive($0).datagrams }
            }
            let k = try #require(server.keys)
            #expect(client.keys?.remoteMasterKey == k.localMasterKey)
            keys.append(k)
        }
        #expect(keys[0].localMasterKey != keys[1].localMasterKey)
        #expect(throws: DTLSError.self) {
            _ = try DTLSEndpoint(
                role: .server, certificate: try DTLSCertificate(), remoteFingerprint: nil, context: shared)
        }
    }

    /// Once the handshake is done both sides let OpenSSL's record buffers go; what needs them later
    /// gets them back: a write (OpenSSL's DTLS write path would otherwise write into freed memory), a
    /// close_notify, the answer to a retransmitted final flight, a record read. Application data
    /// keeps them from then on.
    @Test func theRecordBuffersAreLetGoUntilARecordNeedsThem() async throws {
        let pair = try Pair()
        _ = try await run(pair)
        #expect(pair.client.recordBuffersReleased && pair.server.recordBuffersReleased)
        // A forged record is read (and discarded): the buffers are let go again after it.
        let forged = try #require(Self.junk.first { $0.0 == "application data with a forged tag" }?.1)
        #expect(try pair.server.receive(forged).discarded == 1)
        #expect(pair.server.recordBuffersReleased)
        // Data from the server, then from the client: each side keeps its buffers from then on.
        var delivered: [DTLSEvent] = []
        for d in try pair.server.send(Array("from the server".utf8)) { delivered += try pair.client.receive(d).events }
        #expect(delivered == [.applicationData(Array("from the server".utf8))])
        #expect(!pair.server.recordBuffersReleased && !pair.client.recordBuffersReleased)
        for d in try pair.client.send(Array("and back".utf8)) { delivered += try pair.server.receive(d).events }
        #expect(delivered.last == .applicationData(Array("and back".utf8)))
        #expect(!pair.server.recordBuffersReleased)

        // A close_notify from an endpoint whose buffers were let go reaches the peer.
        let quiet = try Pair()
        _ = try await run(quiet)
        #expect(quiet.server.recordBuffersReleased)
        var events: [DTLSEvent] = []
        for d in quiet.server.close() { events += try quiet.client.receive(d).events }
        #expect(events == [.closed] && quiet.client.state == .closed)
    }

    /// The server's final flight is lost: it has let its record buffers go by then, and the client's
    /// retransmitted flight still gets the answer that completes the client.
    @Test func aLostFinalFlightIsAnsweredAfterTheBuffersWentBack() async throws {
        let pair = try Pair(clientOptions: fastTimer, serverOptions: fastTimer)
        var toServer = try pair.client.start()
        var lost = 0
        for _ in 0..<10 where pair.client.keys == nil {
            var toClient: [[UInt8]] = []
            for d in toServer {
                let output = try pair.server.receive(d)
                // The flight that completed the server: lost.
                if output.events.contains(where: { if case .connected = $0 { true } else { false } }) {
                    lost += output.datagrams.count
                } else {
                    toClient += output.datagrams
                }
            }
            toServer = try toClient.flatMap { try pair.client.receive($0).datagrams }
            if toServer.isEmpty, toClient.isEmpty, pair.client.keys == nil {
                #expect(pair.server.recordBuffersReleased && pair.server.state == .connected)
                let wait = try #require(pair.client.nextTimeout)
                try await Task.sleep(for: wait + .milliseconds(2))
                toServer = try pair.client.timeout()
            }
        }
        #expect(lost > 0)
        #expect(
            pair.client.state == .connected && pair.client.keys?.remoteMasterKey == pair.server.keys?.localMasterKey)
        #expect(pair.server.recordBuffersReleased)
    }

    @Test func closeNotifyEndsTheAssociation() async throws {
        let pair = try Pair()
        _ = try await run(pair)
        let alert = pair.client.close()
        #expect(!alert.isEmpty && pair.client.state == .closed)
        var events: [DTLSEvent] = []
        for datagram in alert { events += try pair.server.receive(datagram).events }
        #expect(events == [.closed])
        #expect(pair.server.state == .closed)
    }

    /// A subscriber's ClientHello can come before its SDP answer: the server completes the handshake
    /// without the fingerprint and hands out keys only once the right one is supplied.
    @Test(arguments: [true, false]) func serverStartsBeforeItKnowsTheFingerprint(_ right: Bool) throws {
        let clientCertificate = try DTLSCertificate()
        let serverCertificate = try DTLSCertificate()
        let client = try DTLSEndpoint(
            role: .client, certificate: clientCertificate, remoteFingerprint: serverCertificate.fingerprint)
        let server = try DTLSEndpoint(role: .server, certificate: serverCertificate, remoteFingerprint: nil)
        var toServer = try client.start()
        var clientConnected = false
        for _ in 0..<10 where !toServer.isEmpty {
            var toClient: [[UInt8]] = []
            for d in toServer {
                let out = try server.receive(d)
                #expect(out.events.isEmpty)
                toClient += out.datagrams
            }
            toServer = []
            for d in toClient {
                let out = try client.receive(d)
                toServer += out.datagrams
                if out.events.contains(where: { if case .connected = $0 { true } else { false } }) {
                    clientConnected = true
                }
            }
        }
        #expect(clientConnected)
        #expect(server.state == .handshaking && server.keys == nil)
        if right {
            let events = try server.verify(remoteFingerprint: clientCertificate.fingerprint)
            #expect(events.count == 1 && server.state == .connected && server.keys != nil)
        } else {
            #expect(throws: DTLSError.fingerprintMismatch) {
                try server.verify(remoteFingerprint: serverCertificate.fingerprint)
            }
            #expect(server.state == .failed && server.keys == nil)
        }
    }
}

/// The generated certificate itself: self-signed ECDSA P-256, CN "atrium", a positive random
/// serial, and 30 days of validity.
@Suite struct DTLSCertificateTests {
    @Test func selfSignedP256WithThirtyDayValidity() throws {
        let certificate = try DTLSCertificate()
        let x509 = certificate.certificate.pointer
        var buffer = [CChar](repeating: 0, count: 256)
        X509_NAME_oneline(X509_get_subject_name(x509), &buffer, Int32(buffer.count))
        #expect(
            String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) == "/CN=atrium")
        #expect(X509_NAME_cmp(X509_get_subject_name(x509), X509_get_issuer_name(x509)) == 0)
        #expect(X509_verify(x509, certificate.key.pointer) == 1)
        #expect(EVP_PKEY_get_bits(certificate.key.pointer) == 256)
        #expect(EVP_PKEY_is_a(certificate.key.pointer, "EC") == 1)
        var days: Int32 = 0
        var seconds: Int32 = 0
        #expect(ASN1_TIME_diff(&days, &seconds, X509_get0_notBefore(x509), X509_get0_notAfter(x509)) == 1)
        #expect(days == 30 && seconds == 0)
        let serial = X509_get_serialNumber(x509)
        #expect(ASN1_INTEGER_cmp(serial, X509_get_serialNumber(try DTLSCertificate().certificate.pointer)) != 0)
        let number = try #require(ASN1_INTEGER_to_BN(serial, nil))
        defer { BN_free(number) }
        #expect(BN_is_negative(number) == 0 && BN_num_bits(number) > 64)
    }

    @Test func keysAreRedactedInDescriptions() {
        let keys = SRTPKeys(
            profile: .aeadAES128GCM, localMasterKey: [1], localMasterSalt: [2], remoteMasterKey: [3],
            remoteMasterSalt: [4])
        #expect(!"\(keys)".contains("[1]"))
    }
}
