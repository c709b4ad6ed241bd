public import AtriumSDP

/// What the server writes about its own side of one transport in every description it sends: ICE-lite
/// credentials, its host candidates, its DTLS certificate's fingerprint and its DTLS setup role.
public struct LocalTransport: Equatable, Sendable {
    public var ufrag: String
    public var password: String
    /// `a=fingerprint` value, e.g. `sha-256 AB:CD:...`.
    public var fingerprint: Fingerprint
    /// `candidate:` attribute values, in priority order.
    public var candidates: [Candidate]
    /// The address and port written in `c=` and `m=` (the first candidate's).
    public var address: String
    public var port: UInt16

    public init(ufrag: String, password: String, fingerprint: Fingerprint, candidates: [Candidate]) {
        self.ufrag = ufrag
        self.password = password
        self.fingerprint = fingerprint
        self.candidates = candidates
        address = candidates.first?.address ?? "0.0.0.0"
        port = candidates.first?.port ?? 9
    }

    /// The transport attributes of a media section: ICE, DTLS, candidates, rtcp-mux.
    func attributes(setup: Setup) -> [Attribute] {
        var out: [Attribute] = [
            .iceUfrag(ufrag), .icePwd(password), .iceOptions(["renomination"]), .fingerprint(fingerprint),
            .setup(setup),
        ]
        out += candidates.map(Attribute.candidate)
        out.append(.endOfCandidates)
        return out
    }

    var connection: ConnectionData {
        ConnectionData(addressType: address.contains(":") ? "IP6" : "IP4", address: address)
    }
}

/// What a remote description says about the peer's side of the transport.
public struct RemoteTransport: Equatable, Sendable {
    public var ufrag: String
    public var password: String
    public var fingerprint: Fingerprint
    public var setup: Setup

    /// Reads ICE credentials, fingerprint and setup from the first media section that has them (BUNDLE:
    /// they are the same in every section of the group), falling back to the session level.
    init(_ sdp: SessionDescription) throws(JSEPError) {
        let sections = sdp.media.filter { $0.port != 0 || $0.bundleOnly }
        func first<T>(_ get: (any AttributeList) -> T?) -> T? {
            for m in sections { if let v = get(m) { return v } }
            return get(sdp)
        }
        guard let ufrag = first({ $0.iceUfrag }), let pwd = first({ $0.icePwd }) else {
            throw .unsupported("no ICE credentials (a=ice-ufrag, a=ice-pwd)")
        }
        guard let fp = first({ $0.fingerprints.first(where: { $0.hashFunction.lowercased() == "sha-256" }) })
        else { throw .unsupported("no sha-256 DTLS fingerprint (a=fingerprint)") }
        self.ufrag = ufrag
        password = pwd
        fingerprint = fp
        setup = first({ $0.setup }) ?? .actpass
    }
}
