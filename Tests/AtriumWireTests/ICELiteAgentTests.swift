import AtriumTestSupport
import Testing

@testable import AtriumICE
@testable import AtriumSTUN

/// Builds connectivity checks the way a full (controlling) agent sends them (RFC 8445 section 7.1).
enum ICECheck {
    static let local = ICECredentials(ufrag: "LoCa", password: "localpasswordlocalpass24")
    static let remote = ICECredentials(ufrag: "ReMo", password: "remotepasswordremotepwd1")
    static let localAddress = STUNTransportAddress(address: .v4(0x7F00_0001), port: 40000)
    static let peer = STUNTransportAddress(address: .v4(0x7F00_0001), port: 50001)
    static let otherPeer = STUNTransportAddress(address: .v4(0x7F00_0001), port: 50002)
    static let peerV6 = STUNTransportAddress(address: .v6(high: 0, low: 1), port: 50003)

    struct Options {
        var type: STUNMessageType = .bindingRequest
        var username: String? = "LoCa:ReMo"
        var password: String? = "localpasswordlocalpass24"
        var useCandidate = false
        var controlling: UInt64? = 42
        var controlled: UInt64?
        var extra: STUNAttributeType?
        var fingerprint = true
        var corruptFingerprint = false
    }

    static func make(_ o: Options = Options(), id: UInt64 = 1) throws -> STUNMessage {
        var b = STUNMessageBuilder(type: o.type, transactionID: STUNTransactionID(high: 7, low: id))
        if let u = o.username { try b.appendUsername(u) }
        try b.appendPriority(ICECandidate.priority(typePreference: 110, localPreference: 65535, component: 1))
        if let c = o.controlling { try b.appendICEControlling(tieBreaker: c) }
        if let c = o.controlled { try b.appendICEControlled(tieBreaker: c) }
        if o.useCandidate { try b.appendUseCandidate() }
        if let extra = o.extra { try b.append(extra, value: [1, 2, 3, 4]) }
        if let p = o.password { try b.appendMessageIntegrity(key: STUNIntegrity.shortTermKey(password: p)) }
        var bytes = b.bytes
        if o.fingerprint {
            try b.appendFingerprint()
            bytes = b.bytes
            if o.corruptFingerprint, let last = bytes.indices.last { bytes[last] ^= 0x01 }
        }
        return try STUNMessage(parsing: bytes)
    }

    static func agent(
        remoteUfrag: String? = "ReMo", configuration: ICELiteAgent.Configuration = .init(),
        now: ContinuousClock.Instant
    ) -> ICELiteAgent {
        ICELiteAgent(
            localAddress: localAddress, localCredentials: local, remoteUfrag: remoteUfrag,
            remotePassword: remote.password, now: now, configuration: configuration)
    }

    static func options(_ change: (inout Options) -> Void) -> Options {
        var o = Options()
        change(&o)
        return o
    }
}

@Suite struct ICELiteAgentTests {
    enum Expected: Sendable, CustomStringConvertible {
        case success
        case error(Int, signed: Bool)
        case dropped(ICEDropReason)
        case nothing

        var description: String {
            switch self {
            case .success: "success"
            case .error(let c, let s): "error \(c) signed \(s)"
            case .dropped(let r): "dropped \(r)"
            case .nothing: "nothing"
            }
        }
    }

    static let rows: [(String, ICECheck.Options, ICELiteAgent.Configuration, Expected)] = [
        ("valid check", .init(), .init(), .success),
        (
            "valid, peer claims controlled, our tie-breaker larger",
            ICECheck.options {
                $0.controlling = nil
                $0.controlled = 10
            }, .init(tieBreaker: 11), .error(487, signed: true)
        ),
        (
            "peer claims controlled, equal tie-breakers",
            ICECheck.options {
                $0.controlling = nil
                $0.controlled = 11
            }, .init(tieBreaker: 11), .error(487, signed: true)
        ),
        (
            "peer claims controlled, its tie-breaker larger",
            ICECheck.options {
                $0.controlling = nil
                $0.controlled = 12
            }, .init(tieBreaker: 11), .success
        ),
        ("no role attribute at all", ICECheck.options { $0.controlling = nil }, .init(), .success),
        ("wrong local ufrag", ICECheck.options { $0.username = "XXXX:ReMo" }, .init(), .error(401, signed: false)),
        ("wrong remote ufrag", ICECheck.options { $0.username = "LoCa:XXXX" }, .init(), .error(401, signed: false)),
        (
            "remote ufrag prefix only", ICECheck.options { $0.username = "LoCa:ReM" }, .init(),
            .error(401, signed: false)
        ),
        ("empty remote part", ICECheck.options { $0.username = "LoCa:" }, .init(), .error(401, signed: false)),
        ("no colon", ICECheck.options { $0.username = "LoCa" }, .init(), .error(401, signed: false)),
        ("reversed order", ICECheck.options { $0.username = "ReMo:LoCa" }, .init(), .error(401, signed: false)),
        (
            "wrong password", ICECheck.options { $0.password = "remotepasswordremotepwd1" }, .init(),
            .error(401, signed: false)
        ),
        ("missing MESSAGE-INTEGRITY", ICECheck.options { $0.password = nil }, .init(), .error(400, signed: false)),
        ("missing USERNAME", ICECheck.options { $0.username = nil }, .init(), .error(400, signed: false)),
        (
            "unknown comprehension-required attribute", ICECheck.options { $0.extra = .init(rawValue: 0x7ABC) },
            .init(), .error(420, signed: true)
        ),
        ("unknown optional attribute", ICECheck.options { $0.extra = .init(rawValue: 0xC0DE) }, .init(), .success),
        (
            "bad FINGERPRINT", ICECheck.options { $0.corruptFingerprint = true }, .init(),
            .dropped(.badFingerprint)
        ),
        (
            "missing FINGERPRINT", ICECheck.options { $0.fingerprint = false }, .init(),
            .dropped(.missingFingerprint)
        ),
        (
            "a success response", ICECheck.options { $0.type = .bindingSuccess }, .init(),
            .dropped(.notBindingRequest)
        ),
        ("a binding indication (keepalive)", ICECheck.options { $0.type = .bindingIndication }, .init(), .nothing),
    ]

    @Test(arguments: rows)
    func checkIsAnsweredPerRFC8445(
        name: String, options: ICECheck.Options, configuration: ICELiteAgent.Configuration, expected: Expected
    ) throws {
        let now = ContinuousClock.now
        var agent = ICECheck.agent(configuration: configuration, now: now)
        let request = try ICECheck.make(options)
        let actions = agent.receive(stun: request, from: ICECheck.peer, now: now)
        let key = STUNIntegrity.shortTermKey(password: ICECheck.local.password)
        switch expected {
        case .success:
            guard actions.count == 1, case .send(let bytes, let to) = actions[0] else {
                Issue.record("\(name): \(actions)")
                return
            }
            #expect(to == ICECheck.peer)
            let response = try STUNMessage(parsing: bytes)
            #expect(response.type == .bindingSuccess)
            #expect(response.transactionID == request.transactionID)
            try response.verifyMessageIntegrity(key: key)
            try response.verifyFingerprint()
            #expect(try response.xorMappedAddress() == ICECheck.peer)
            #expect(agent.validPairs == [ICECheck.peer], "\(name)")
        case .error(let code, let signed):
            guard actions.count == 1, case .send(let bytes, let to) = actions[0] else {
                Issue.record("\(name): \(actions)")
                return
            }
            #expect(to == ICECheck.peer)
            let response = try STUNMessage(parsing: bytes)
            #expect(response.type == .bindingError, "\(name)")
            #expect(try response.errorCode()?.code == code, "\(name)")
            try response.verifyFingerprint()
            if signed {
                try response.verifyMessageIntegrity(key: key)
            } else {
                #expect(response.attribute(.messageIntegrity) == nil, "\(name)")
            }
            #expect(agent.validPairs.isEmpty, "\(name)")
        case .dropped(let reason):
            #expect(actions == [.dropped(reason)], "\(name)")
        case .nothing:
            #expect(actions.isEmpty, "\(name)")
        }
        #expect(agent.selected == nil)
    }

    @Test func unknownRemoteUfragAcceptsAnyRemotePart() throws {
        let now = ContinuousClock.now
        var agent = ICECheck.agent(remoteUfrag: nil, now: now)
        let request = try ICECheck.make(ICECheck.options { $0.username = "LoCa:anything" })
        let actions = agent.receive(stun: request, from: ICECheck.peer, now: now)
        guard case .send(let bytes, _) = actions.first else {
            Issue.record("\(actions)")
            return
        }
        #expect(try STUNMessage(parsing: bytes).type == .bindingSuccess)
    }

    @Test func responseToIPv6SourceCarriesItInXORMappedAddress() throws {
        let now = ContinuousClock.now
        var agent = ICECheck.agent(now: now)
        let actions = agent.receive(stun: try ICECheck.make(), from: ICECheck.peerV6, now: now)
        guard case .send(let bytes, let to) = actions.first else {
            Issue.record("\(actions)")
            return
        }
        #expect(to == ICECheck.peerV6)
        let response = try STUNMessage(parsing: bytes)
        try response.verifyMessageIntegrity(key: STUNIntegrity.shortTermKey(password: ICECheck.local.password))
        #expect(try response.xorMappedAddress() == ICECheck.peerV6)
    }

    @Test func nominationSelectsAndRenominationMoves() throws {
        let t0 = ContinuousClock.now
        var agent = ICECheck.agent(now: t0)
        let nominate = ICECheck.options { $0.useCandidate = true }

        // A plain check makes the pair valid but selects nothing.
        var actions = agent.receive(stun: try ICECheck.make(id: 1), from: ICECheck.peer, now: t0)
        #expect(actions.count == 1)
        #expect(agent.selected == nil && agent.state == .new)

        actions = agent.receive(stun: try ICECheck.make(nominate, id: 2), from: ICECheck.peer, now: t0)
        #expect(actions.count == 2)
        #expect(actions.last == .selected(ICECheck.peer))
        #expect(agent.state == .connected)

        // The same nomination again changes nothing.
        actions = agent.receive(stun: try ICECheck.make(nominate, id: 3), from: ICECheck.peer, now: t0)
        #expect(actions.count == 1)

        // Renomination of another pair moves media there.
        actions = agent.receive(stun: try ICECheck.make(nominate, id: 4), from: ICECheck.otherPeer, now: t0)
        #expect(actions.last == .selected(ICECheck.otherPeer))
        #expect(agent.selected == ICECheck.otherPeer)
        #expect(agent.validPairs == [ICECheck.peer, ICECheck.otherPeer])

        // A failed check with USE-CANDIDATE nominates nothing.
        let bad = ICECheck.options {
            $0.useCandidate = true
            $0.password = "wrongpasswordwrongpasswd"
        }
        actions = agent.receive(stun: try ICECheck.make(bad, id: 5), from: ICECheck.peer, now: t0)
        #expect(agent.selected == ICECheck.otherPeer)
        #expect(!actions.contains(.selected(ICECheck.peer)))
    }

    @Test func consentExpiresThenFailsWithInjectedTime() throws {
        let t0 = ContinuousClock.now
        var agent = ICECheck.agent(now: t0)
        _ = agent.receive(
            stun: try ICECheck.make(ICECheck.options { $0.useCandidate = true }), from: ICECheck.peer, now: t0)
        #expect(agent.tick(now: t0 + .seconds(29)).isEmpty)

        // A consent check on the selected pair at 20 s moves the deadline to 50 s.
        _ = agent.receive(stun: try ICECheck.make(id: 2), from: ICECheck.peer, now: t0 + .seconds(20))
        #expect(agent.tick(now: t0 + .seconds(49)).isEmpty)
        // A check on another pair does not refresh consent on the selected one.
        _ = agent.receive(stun: try ICECheck.make(id: 3), from: ICECheck.otherPeer, now: t0 + .seconds(49))
        #expect(agent.tick(now: t0 + .seconds(50)) == [.disconnected])
        #expect(agent.state == .disconnected)
        #expect(agent.tick(now: t0 + .seconds(51)).isEmpty)

        // Consent regained before the failure timeout.
        let actions = agent.receive(stun: try ICECheck.make(id: 4), from: ICECheck.peer, now: t0 + .seconds(60))
        #expect(actions.last == .reconnected)
        #expect(agent.state == .connected)

        #expect(agent.tick(now: t0 + .seconds(90)) == [.disconnected])
        #expect(agent.tick(now: t0 + .seconds(120)) == [.failed])
        #expect(agent.state == .failed)
        #expect(agent.tick(now: t0 + .seconds(500)).isEmpty)
        #expect(
            agent.receive(stun: try ICECheck.make(id: 5), from: ICECheck.peer, now: t0 + .seconds(121))
                == [.dropped(.agentFailed)])
    }

    @Test func longSilenceFromConnectedReportsBoth() throws {
        let t0 = ContinuousClock.now
        var agent = ICECheck.agent(now: t0)
        _ = agent.receive(
            stun: try ICECheck.make(ICECheck.options { $0.useCandidate = true }), from: ICECheck.peer, now: t0)
        #expect(agent.tick(now: t0 + .seconds(61)) == [.disconnected, .failed])
    }

    @Test func noNominationFailsAfterTheFailureTimeout() {
        let t0 = ContinuousClock.now
        var agent = ICECheck.agent(now: t0)
        #expect(agent.tick(now: t0 + .seconds(59)).isEmpty)
        #expect(agent.tick(now: t0 + .seconds(60)) == [.failed])
    }

    @Test func restartKeepsTheSelectedPairUntilTheNewNomination() throws {
        let t0 = ContinuousClock.now
        var agent = ICECheck.agent(now: t0)
        let nominate = ICECheck.options { $0.useCandidate = true }
        _ = agent.receive(stun: try ICECheck.make(nominate), from: ICECheck.peer, now: t0)

        var rng = SeededGenerator(seed: 7)
        let fresh = agent.restart(remoteUfrag: "NeWr", remotePwd: "newremotepasswordnewrem1", now: t0, using: &rng)
        #expect(fresh != ICECheck.local && fresh.isValid)
        #expect(agent.localCredentials == fresh)
        #expect(agent.selected == ICECheck.peer)
        #expect(agent.state == .connected)

        // Old credentials are refused now.
        var actions = agent.receive(stun: try ICECheck.make(nominate, id: 2), from: ICECheck.peer, now: t0)
        guard case .send(let bytes, _) = actions.first else {
            Issue.record("\(actions)")
            return
        }
        #expect(try STUNMessage(parsing: bytes).errorCode()?.code == 401)
        #expect(agent.selected == ICECheck.peer)

        // New-generation check without nomination keeps the old selection and refreshes consent.
        let newCheck = ICECheck.options {
            $0.username = fresh.ufrag + ":NeWr"
            $0.password = fresh.password
        }
        actions = agent.receive(stun: try ICECheck.make(newCheck, id: 3), from: ICECheck.peer, now: t0 + .seconds(10))
        #expect(actions.count == 1)
        #expect(agent.selected == ICECheck.peer)

        // The nomination of the new generation is reported, even on the same address.
        var newNomination = newCheck
        newNomination.useCandidate = true
        actions = agent.receive(
            stun: try ICECheck.make(newNomination, id: 4), from: ICECheck.peer, now: t0 + .seconds(11))
        #expect(actions.last == .selected(ICECheck.peer))
    }

    @Test func restartRevivesAFailedAgent() throws {
        let t0 = ContinuousClock.now
        var agent = ICECheck.agent(now: t0)
        #expect(agent.tick(now: t0 + .seconds(60)) == [.failed])
        var rng = SeededGenerator(seed: 9)
        let fresh = agent.restart(
            remoteUfrag: "NeWr", remotePwd: "newremotepasswordnewrem1", now: t0 + .seconds(61), using: &rng)
        #expect(agent.state == .new)
        let check = ICECheck.options {
            $0.username = fresh.ufrag + ":NeWr"
            $0.password = fresh.password
            $0.useCandidate = true
        }
        let actions = agent.receive(stun: try ICECheck.make(check), from: ICECheck.peer, now: t0 + .seconds(62))
        #expect(actions.last == .selected(ICECheck.peer))
        #expect(agent.tick(now: t0 + .seconds(80)).isEmpty)
    }
}

@Suite struct ICECredentialsTests {
    @Test func generatedCredentialsHaveRFC8839LengthsAndIceChars() {
        var rng = SeededGenerator(seed: 1)
        for _ in 0..<200 {
            let c = ICECredentials.random(using: &rng)
            #expect(c.ufrag.utf8.count == 8)
            #expect(c.password.utf8.count == 24)
            #expect(c.isValid)
        }
    }

    @Test func generationIsDeterministicForASeed() {
        var a = SeededGenerator(seed: 42)
        var b = SeededGenerator(seed: 42)
        #expect(ICECredentials.random(using: &a) == ICECredentials.random(using: &b))
        #expect(ICECredentials.random(using: &a) != ICECredentials.random(using: &a))
    }

    @Test(arguments: [
        ("abcd", "0123456789012345678901", true), ("abc", "0123456789012345678901", false),
        ("abcd", "012345678901234567890", false), ("ab-d", "0123456789012345678901", false),
        ("a+/d", "0123456789+/3456789012", true),
    ])
    func validity(ufrag: String, password: String, valid: Bool) {
        #expect(ICECredentials(ufrag: ufrag, password: password).isValid == valid)
    }

    @Test func sdpAttributes() {
        #expect(ICECheck.local.sdpAttributes == ["a=ice-ufrag:LoCa", "a=ice-pwd:localpasswordlocalpass24"])
        #expect(ICELiteAgent.sdpLiteAttribute == "a=ice-lite")
    }
}

@Suite struct ICECandidateTests {
    @Test(arguments: [
        (UInt8(126), UInt16(65535), UInt8(1), UInt32(2_130_706_431)),
        (126, 65535, 2, 2_130_706_430),
        (126, 0, 1, 2_113_929_471),
        (110, 65535, 1, 1_862_270_975),
        (0, 0, 1, 255),
    ])
    func priorityPerRFC8445Section5121(type: UInt8, local: UInt16, component: UInt8, expected: UInt32) {
        #expect(ICECandidate.priority(typePreference: type, localPreference: local, component: component) == expected)
    }

    @Test func hostCandidateLines() {
        let v4 = ICECandidate.host(address: STUNTransportAddress(address: .v4(0x7F00_0001), port: 40000))
        #expect(v4.attributeValue == "candidate:1 1 udp 2130706431 127.0.0.1 40000 typ host")
        #expect(v4.sdpLine == "a=candidate:1 1 udp 2130706431 127.0.0.1 40000 typ host")
        let v6 = ICECandidate.host(
            address: STUNTransportAddress(address: .v6(high: 0, low: 1), port: 9), foundation: "2",
            localPreference: 65534)
        #expect(v6.sdpLine == "a=candidate:2 1 udp 2130706175 ::1 9 typ host")
        #expect(ICECheck.agent(now: .now).localCandidate == v4)
    }
}
