/// An ICE candidate (RFC 8839 section 5.1):
///
///     candidate:<foundation> <component-id> <transport> <priority> <address> <port> typ <cand-type>
///               [raddr <rel-addr>] [rport <rel-port>] *(<extension-att-name> <extension-att-value>)
///
/// `tcptype` (RFC 6544 section 4.5) and `generation` are modelled; every other extension pair
/// (`network-id`, `network-cost`, `ufrag`, ...) is kept in order in `extensions`.
public struct Candidate: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case host, serverReflexive, peerReflexive, relay
        case other(String)

        init(_ text: String) {
            switch text {
            case "host": self = .host
            case "srflx": self = .serverReflexive
            case "prflx": self = .peerReflexive
            case "relay": self = .relay
            default: self = .other(text)
            }
        }

        var sdpValue: String {
            switch self {
            case .host: return "host"
            case .serverReflexive: return "srflx"
            case .peerReflexive: return "prflx"
            case .relay: return "relay"
            case .other(let text): return text
            }
        }
    }

    public var foundation: String
    public var component: UInt16
    /// The transport as written (`udp`, `UDP`, `tcp`); compare case-insensitively.
    public var transport: String
    public var priority: UInt32
    public var address: String
    public var port: UInt16
    public var kind: Kind
    public var relatedAddress: String?
    public var relatedPort: UInt16?
    public var tcpType: String?
    public var generation: UInt32?
    public var extensions: [FormatParameter]

    public init(
        foundation: String, component: UInt16, transport: String, priority: UInt32, address: String, port: UInt16,
        kind: Kind, relatedAddress: String? = nil, relatedPort: UInt16? = nil, tcpType: String? = nil,
        generation: UInt32? = nil, extensions: [FormatParameter] = []
    ) {
        self.foundation = foundation
        self.component = component
        self.transport = transport
        self.priority = priority
        self.address = address
        self.port = port
        self.kind = kind
        self.relatedAddress = relatedAddress
        self.relatedPort = relatedPort
        self.tcpType = tcpType
        self.generation = generation
        self.extensions = extensions
    }

    /// Parses the value of `a=candidate`, or a trickled candidate string with or without its
    /// `candidate:` prefix (RFC 8840 section 4.1), as signaling carries it.
    public init?(parsing text: String) {
        var value = Substring(text)
        if value.hasPrefix("a=") { value = value.dropFirst(2) }
        if value.hasPrefix("candidate:") { value = value.dropFirst("candidate:".count) }
        self.init(sdp: value)
    }

    init?(sdp value: Substring) {
        let f = Fields.words(value)
        guard f.count >= 8, f.count % 2 == 0, f[6] == "typ", let component: UInt16 = Fields.decimal(f[1]),
            let priority: UInt32 = Fields.decimal(f[3]), let port: UInt16 = Fields.decimal(f[5])
        else { return nil }
        self.init(
            foundation: String(f[0]), component: component, transport: String(f[2]), priority: priority,
            address: String(f[4]), port: port, kind: Kind(String(f[7])))
        for i in stride(from: 8, to: f.count, by: 2) {
            let name = f[i]
            let text = f[i + 1]
            switch name {
            case "raddr" where relatedAddress == nil: relatedAddress = String(text)
            case "rport" where relatedPort == nil:
                guard let p: UInt16 = Fields.decimal(text) else { return nil }
                relatedPort = p
            case "tcptype" where tcpType == nil: tcpType = String(text)
            case "generation" where generation == nil:
                guard let g: UInt32 = Fields.decimal(text) else { return nil }
                generation = g
            default: extensions.append(FormatParameter(name: String(name), value: String(text)))
            }
        }
    }

    /// The value after `a=candidate:`, in RFC 8839 order (Chrome's order for the extensions).
    public var sdpValue: String {
        var out = "\(foundation) \(component) \(transport) \(priority) \(address) \(port) typ \(kind.sdpValue)"
        if let relatedAddress { out += " raddr \(relatedAddress)" }
        if let relatedPort { out += " rport \(relatedPort)" }
        if let tcpType { out += " tcptype \(tcpType)" }
        if let generation { out += " generation \(generation)" }
        for e in extensions { out += " \(e.name) \(e.value ?? "")" }
        return out
    }
}
