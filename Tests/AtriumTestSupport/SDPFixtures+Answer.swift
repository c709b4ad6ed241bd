public import AtriumSDP

extension SDPFixtures {
    /// The answer a receiving peer writes for an offer: recvonly, active, its own credentials.
    public static func answer(to offer: SessionDescription, rejecting: Set<String> = []) -> String {
        var a = offer
        a.attributes = a.attributes.filter { $0 != .iceLite }
        for i in a.media.indices {
            let mid = a.media[i].mid ?? ""
            a.media[i].attributes = a.media[i].attributes.compactMap { attr in
                switch attr {
                case .iceUfrag: return .iceUfrag("cliU")
                case .icePwd: return .icePwd("clientpassword0123456789")
                case .setup: return .setup(.active)
                case .direction(let d): return .direction(d == .sendonly ? .recvonly : .inactive)
                case .ssrc, .ssrcGroup, .candidate, .endOfCandidates: return nil
                default: return attr
                }
            }
            if rejecting.contains(mid) { a.media[i].port = 0 }
        }
        return a.serialized()
    }
}
