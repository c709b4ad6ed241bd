public import AtriumSTUN

/// An ICE-lite agent (RFC 8445 sections 2.5 and 6.1.1) as a value: it answers the peer's connectivity
/// checks, learns valid pairs from them, follows the peer's nomination and watches consent (RFC 7675).
///
/// A lite agent gathers only host candidates, sends no checks of its own and is always controlled: the
/// full agent on the other side does the checking and nominating. So everything here is a reaction to
/// a received Binding request or to the passing of time, both injected; each `mutating func` returns the
/// `ICEAction`s for its owner (the transport's worker thread) to perform.
///
/// Pairs are identified by the remote address: the agent serves one local host candidate (UDP), so the
/// local half of every 5-tuple is `localAddress`.
public struct ICELiteAgent: Sendable {
    /// The timeouts (RFC 7675 section 5.1) and limits of one agent.
    public struct Configuration: Equatable, Sendable {
        /// Consent expires when no valid request arrived on the selected pair for this long (RFC 7675:
        /// 30 s).
        public var consentTimeout: Duration
        /// After this long without consent on the selected pair, or without any nomination since the
        /// agent started or restarted, the agent fails.
        public var failureTimeout: Duration
        /// Our ICE tie-breaker (RFC 8445 section 7.1.3). The default, the largest value, makes every role
        /// conflict end with a 487 that turns the peer controlling, which is the only role a lite agent
        /// leaves it (RFC 8445 section 6.1.1).
        public var tieBreaker: UInt64
        /// How many valid pairs are remembered; the oldest unselected one makes room.
        public var maxValidPairs: Int

        public init(
            consentTimeout: Duration = .seconds(30), failureTimeout: Duration = .seconds(60),
            tieBreaker: UInt64 = .max, maxValidPairs: Int = 8
        ) {
            self.consentTimeout = consentTimeout
            self.failureTimeout = failureTimeout
            self.tieBreaker = tieBreaker
            self.maxValidPairs = max(maxValidPairs, 1)
        }
    }

    /// The SDP session attribute a lite agent announces (RFC 8839 section 5.3).
    public static let sdpLiteAttribute = "a=ice-lite"

    public let configuration: Configuration
    /// The host candidate checks arrive at.
    public let localAddress: STUNTransportAddress
    public internal(set) var localCredentials: ICECredentials
    /// The peer's ufrag from its SDP; until it is known, any non-empty remote part of USERNAME is taken.
    public internal(set) var remoteUfrag: String?
    /// Kept for symmetry with the SDP; a lite agent sends no checks, so never signs with it.
    public internal(set) var remotePassword: String?
    public internal(set) var state: ICEConnectionState = .new
    /// The nominated remote address media goes to.
    public internal(set) var selected: STUNTransportAddress?
    /// Remote addresses whose checks succeeded in this ICE generation, oldest first.
    public internal(set) var validPairs: [STUNTransportAddress] = []

    /// The last valid request on the selected pair, or when the agent (re)started waiting for one.
    var lastConsent: ContinuousClock.Instant
    /// After a restart the selected pair is kept, but the next nomination is reported even if it picks
    /// the same address: it completes the restart.
    var awaitingRenomination = false

    public init(
        localAddress: STUNTransportAddress, localCredentials: ICECredentials, remoteUfrag: String? = nil,
        remotePassword: String? = nil, now: ContinuousClock.Instant, configuration: Configuration = Configuration()
    ) {
        self.localAddress = localAddress
        self.localCredentials = localCredentials
        self.remoteUfrag = remoteUfrag
        self.remotePassword = remotePassword
        self.configuration = configuration
        lastConsent = now
    }

    /// Sets the peer's credentials once its SDP arrives.
    public mutating func setRemoteCredentials(ufrag: String, password: String) {
        remoteUfrag = ufrag
        remotePassword = password
    }

    /// The host candidate for this agent's local address.
    public var localCandidate: ICECandidate { .host(address: localAddress) }

    /// Handles one STUN message received from `source` on the local candidate.
    ///
    /// Checks, in the order RFC 8489 section 6.3 and RFC 8445 section 7.3 give them: a Binding request
    /// (else dropped; indications are keepalives and get nothing), FINGERPRINT (else dropped),
    /// USERNAME and MESSAGE-INTEGRITY present (else 400), USERNAME `localUfrag:remoteUfrag` (else 401),
    /// MESSAGE-INTEGRITY with the local password (else 401), no unknown comprehension-required attributes
    /// (else 420), the role (487 when the tie-breakers say so). A request that passes gets a success
    /// response with the source as XOR-MAPPED-ADDRESS, makes its pair valid, refreshes consent when it
    /// is on the selected pair, and with USE-CANDIDATE nominates its pair.
    public mutating func receive(
        stun message: STUNMessage, from source: STUNTransportAddress, now: ContinuousClock.Instant
    )
        -> [ICEAction]
    {
        if message.type == .bindingIndication { return [] }
        guard message.type == .bindingRequest else { return [.dropped(.notBindingRequest)] }
        guard state != .failed else { return [.dropped(.agentFailed)] }
        do {
            try message.verifyFingerprint()
        } catch .missingFingerprint {
            return [.dropped(.missingFingerprint)]
        } catch {
            return [.dropped(.badFingerprint)]
        }
        let id = message.transactionID
        func reject(_ code: STUNErrorCode, signed: Bool) -> [ICEAction] {
            let key = signed ? STUNIntegrity.shortTermKey(password: localCredentials.password) : nil
            return [
                .send(
                    STUNMessageBuilder.errorResponse(method: .binding, transactionID: id, error: code, key: key),
                    to: source)
            ]
        }
        guard let username = message.usernameBytes, message.attribute(.messageIntegrity) != nil else {
            return reject(.badRequest, signed: false)
        }
        guard usernameMatches(username) else { return reject(.unauthenticated, signed: false) }
        let key = STUNIntegrity.shortTermKey(password: localCredentials.password)
        do {
            try message.verifyMessageIntegrity(key: key)
        } catch {
            return reject(.unauthenticated, signed: false)
        }
        let unknown = message.unknownComprehensionRequired
        if !unknown.isEmpty {
            return [.send(Self.unknownAttributesResponse(id, unknown, key: key), to: source)]
        }
        let peerControlled: UInt64?
        do {
            peerControlled = try message.iceControlled()
            _ = try message.iceControlling()
            _ = try message.priority()
        } catch {
            return reject(.badRequest, signed: true)
        }
        // RFC 8445 section 7.3.1.1: both sides think they are controlled. With our tie-breaker at least as
        // large, we keep our role and answer 487, so the peer switches to controlling. With a smaller one
        // the rule would switch us to controlling, which a lite agent cannot be (section 6.1.1): we stay
        // controlled and answer the check, and the peer's own conflict handling must resolve it.
        if let theirs = peerControlled, configuration.tieBreaker >= theirs {
            return reject(.roleConflict, signed: true)
        }
        var actions: [ICEAction] = [
            .send(STUNMessageBuilder.bindingSuccess(transactionID: id, mappedAddress: source, key: key), to: source)
        ]
        recordValid(source)
        if message.useCandidate {
            nominate(source, now: now, into: &actions)
        } else if source == selected {
            refreshConsent(now: now, into: &actions)
        }
        return actions
    }

    /// USERNAME of a check sent to us is `localUfrag:remoteUfrag` (RFC 8445 section 7.2.2), compared byte
    /// for byte.
    func usernameMatches(_ username: [UInt8]) -> Bool {
        let prefix = Array((localCredentials.ufrag + ":").utf8)
        guard username.count > prefix.count, username.starts(with: prefix) else { return false }
        guard let remote = remoteUfrag else { return true }
        return username.count == prefix.count + remote.utf8.count
            && username.dropFirst(prefix.count).elementsEqual(remote.utf8)
    }

    mutating func recordValid(_ address: STUNTransportAddress) {
        guard !validPairs.contains(address) else { return }
        if validPairs.count >= configuration.maxValidPairs,
            let oldest = validPairs.firstIndex(where: { $0 != selected })
        {
            validPairs.remove(at: oldest)
        }
        validPairs.append(address)
    }

    /// RFC 8445 section 7.3.1.5 with the later nomination winning, as browsers renominate after network
    /// changes: a USE-CANDIDATE on another pair moves media there.
    mutating func nominate(
        _ address: STUNTransportAddress, now: ContinuousClock.Instant, into actions: inout [ICEAction]
    ) {
        let changed = address != selected || awaitingRenomination
        let wasDisconnected = state == .disconnected
        selected = address
        awaitingRenomination = false
        lastConsent = now
        state = .connected
        if changed {
            actions.append(.selected(address))
        } else if wasDisconnected {
            actions.append(.reconnected)
        }
    }

    mutating func refreshConsent(now: ContinuousClock.Instant, into actions: inout [ICEAction]) {
        lastConsent = now
        if state == .disconnected {
            state = .connected
            actions.append(.reconnected)
        }
    }

    static func unknownAttributesResponse(_ id: STUNTransactionID, _ unknown: [STUNAttributeType], key: [UInt8])
        -> [UInt8]
    {
        var b = STUNMessageBuilder(type: .bindingError, transactionID: id)
        var list: [UInt8] = []
        for type in unknown.prefix(32) {
            list.append(UInt8(truncatingIfNeeded: type.rawValue >> 8))
            list.append(UInt8(truncatingIfNeeded: type.rawValue))
        }
        // Fixed, small attributes: these appends cannot exceed the length limits.
        try? b.appendErrorCode(.unknownAttribute)
        try? b.append(.unknownAttributes, value: list)
        try? b.appendMessageIntegrity(key: key)
        try? b.appendFingerprint()
        return b.bytes
    }
}
