public import AtriumSTUN

/// What the owner of an `ICELiteAgent` must do after feeding it a message or a tick. The agent performs
/// no I/O: sending and reporting are the owner's job.
public enum ICEAction: Equatable, Sendable {
    /// Send these bytes (a STUN response) to this address from the agent's local candidate.
    case send([UInt8], to: STUNTransportAddress)
    /// The peer nominated this remote address: media goes there from now on.
    case selected(STUNTransportAddress)
    /// No valid request on the selected pair within the consent timeout (RFC 7675 section 5.1): stop
    /// sending media, keep answering checks.
    case disconnected
    /// Consent came back on the selected pair before the failure timeout: media may flow again.
    case reconnected
    /// No consent (or no nomination) within the failure timeout: the transport is dead until an ICE
    /// restart.
    case failed
    /// The message was dropped without an answer, for this reason (the owner counts them).
    case dropped(ICEDropReason)
}

/// Why a STUN message got no answer at all. Messages that could be authenticated but failed get an error
/// response instead; these are the ones an error response would be wrong or useless for.
public enum ICEDropReason: Equatable, Sendable {
    /// A response, or a request of another method: a lite agent sends no requests, so expects no
    /// responses (RFC 8445 section 2.5).
    case notBindingRequest
    /// No FINGERPRINT: ICE requires one on every check (RFC 8445 section 7.1).
    case missingFingerprint
    /// FINGERPRINT did not match: not STUN, or damaged (RFC 8489 section 14.7).
    case badFingerprint
    /// The agent failed; only an ICE restart brings it back.
    case agentFailed
}

/// Where the agent stands, as the owner would report it (a subset of `RTCIceConnectionState`).
public enum ICEConnectionState: Equatable, Sendable {
    /// Waiting for the peer to nominate a pair.
    case new
    /// A pair is selected and its consent is fresh.
    case connected
    /// The selected pair's consent expired; checks are still answered.
    case disconnected
    /// Consent or nomination never came within the failure timeout.
    case failed
}
