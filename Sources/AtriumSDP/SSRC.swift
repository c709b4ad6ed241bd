/// `a=ssrc:<ssrc-id> <attribute>[:<value>]` (RFC 5576 section 4.1), e.g. `cname:...` or the legacy
/// `msid:<stream> <track>` Chrome still writes. The value may contain spaces.
public struct SSRCAttribute: Equatable, Sendable {
    public var ssrc: UInt32
    public var name: String
    public var value: String?

    public init(ssrc: UInt32, name: String, value: String? = nil) {
        self.ssrc = ssrc
        self.name = name
        self.value = value
    }

    init?(sdp value: Substring) {
        let (id, rest) = Fields.splitOnce(value, at: " ")
        guard let ssrc: UInt32 = Fields.decimal(id), let rest else { return nil }
        let attribute = Fields.trimmed(rest)
        guard !attribute.isEmpty else { return nil }
        let (name, text) = Fields.splitOnce(attribute, at: ":")
        self.init(ssrc: ssrc, name: String(name), value: text.map(String.init))
    }

    var sdpValue: String { value.map { "\(ssrc) \(name):\($0)" } ?? "\(ssrc) \(name)" }
}

/// `a=ssrc-group:<semantics> <ssrc-id> ...` (RFC 5576 section 4.2), e.g. `FID` pairing a stream with
/// its RTX stream (RFC 4588 section 8.2) or `SIM` for legacy simulcast.
public struct SSRCGroup: Equatable, Sendable {
    public var semantics: String
    public var ssrcs: [UInt32]

    public init(semantics: String, ssrcs: [UInt32]) {
        self.semantics = semantics
        self.ssrcs = ssrcs
    }

    init?(sdp value: Substring) {
        let f = Fields.words(value)
        guard let first = f.first else { return nil }
        var ssrcs: [UInt32] = []
        for word in f.dropFirst() {
            guard let ssrc: UInt32 = Fields.decimal(word) else { return nil }
            ssrcs.append(ssrc)
        }
        self.init(semantics: String(first), ssrcs: ssrcs)
    }

    var sdpValue: String { ([semantics] + ssrcs.map(String.init)).joined(separator: " ") }
}

/// `a=extmap:<id>[/<direction>] <URI> [<extension attributes>]` (RFC 8285 section 8).
public struct Extmap: Equatable, Sendable {
    public var id: UInt16
    public var direction: MediaDirection?
    public var uri: String
    public var attributes: String?

    public init(id: UInt16, direction: MediaDirection? = nil, uri: String, attributes: String? = nil) {
        self.id = id
        self.direction = direction
        self.uri = uri
        self.attributes = attributes
    }

    init?(sdp value: Substring) {
        let f = Fields.words(value)
        guard f.count >= 2 else { return nil }
        let (idText, directionText) = Fields.splitOnce(f[0], at: "/")
        guard let id: UInt16 = Fields.decimal(idText) else { return nil }
        var direction: MediaDirection?
        if let directionText {
            guard let d = MediaDirection(rawValue: String(directionText)) else { return nil }
            direction = d
        }
        let rest = f.dropFirst(2).map(String.init)
        self.init(
            id: id, direction: direction, uri: String(f[1]),
            attributes: rest.isEmpty ? nil : rest.joined(separator: " "))
    }

    var sdpValue: String {
        var out = direction.map { "\(id)/\($0.rawValue) \(uri)" } ?? "\(id) \(uri)"
        if let attributes { out += " \(attributes)" }
        return out
    }
}
