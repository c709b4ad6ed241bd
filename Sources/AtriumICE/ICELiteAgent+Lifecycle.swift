extension ICELiteAgent {
    /// Advances time: consent expiry (RFC 7675 section 5.1) and failure.
    ///
    /// Connected with no valid request on the selected pair for `consentTimeout`: `.disconnected`.
    /// Without one for `failureTimeout` (or, before any nomination, without a nomination since the start
    /// or the last restart): `.failed`, after which checks are dropped until `restart`.
    public mutating func tick(now: ContinuousClock.Instant) -> [ICEAction] {
        let idle = now - lastConsent
        switch state {
        case .failed:
            return []
        case .new, .connected, .disconnected:
            if idle >= configuration.failureTimeout {
                let actions: [ICEAction] = state == .connected ? [.disconnected, .failed] : [.failed]
                state = .failed
                return actions
            }
            if state == .connected && idle >= configuration.consentTimeout {
                state = .disconnected
                return [.disconnected]
            }
            return []
        }
    }

    /// An ICE restart (RFC 8445 section 9): new local credentials from `generator`, the peer's new ones,
    /// and a fresh set of valid pairs. The selected pair stays in use, and its consent clock keeps
    /// running, until the peer nominates in the new generation; that nomination is reported with
    /// `.selected` even when it picks the same address. A failed agent starts over as `.new`.
    ///
    /// Returns the new local credentials for the SDP answer.
    public mutating func restart<R: RandomNumberGenerator>(
        remoteUfrag: String, remotePwd: String, now: ContinuousClock.Instant, using generator: inout R
    ) -> ICECredentials {
        let old = localCredentials
        var fresh = ICECredentials.random(using: &generator)
        // RFC 8445 section 9: both values must change. A few draws settle it for any working generator.
        var tries = 0
        while (fresh.ufrag == old.ufrag || fresh.password == old.password) && tries < 4 {
            fresh = ICECredentials.random(using: &generator)
            tries += 1
        }
        restart(localCredentials: fresh, remoteUfrag: remoteUfrag, remotePwd: remotePwd, now: now)
        return fresh
    }

    /// An ICE restart with local credentials chosen by the caller (who wrote them into the SDP answer
    /// already); otherwise as `restart(remoteUfrag:remotePwd:now:using:)`.
    public mutating func restart(
        localCredentials fresh: ICECredentials, remoteUfrag: String, remotePwd: String, now: ContinuousClock.Instant
    ) {
        localCredentials = fresh
        self.remoteUfrag = remoteUfrag
        remotePassword = remotePwd
        validPairs = selected.map { [$0] } ?? []
        awaitingRenomination = selected != nil
        if state == .failed {
            state = .new
            selected = nil
            validPairs = []
            awaitingRenomination = false
            lastConsent = now
        } else if selected == nil {
            lastConsent = now
        }
    }
}
