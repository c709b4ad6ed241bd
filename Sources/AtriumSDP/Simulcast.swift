/// `a=simulcast` (RFC 8853 section 5.1): the simulcast streams a media section sends and receives.
/// Each entry of a direction's list is one simulcast stream, given as alternative rids (`,`), in the
/// sender's order of preference; `~` marks an alternative that starts paused.
///
///     sc-value     = ( sc-send [SP sc-recv] ) / ( sc-recv [SP sc-send] )
///     sc-send      = %s"send" SP sc-str-list
///     sc-recv      = %s"recv" SP sc-str-list
///     sc-str-list  = sc-alt-list *( ";" sc-alt-list )
///     sc-alt-list  = sc-id *( "," sc-id )
///     sc-id-paused = "~"
///     sc-id        = [sc-id-paused] rid-id
///
/// Every rid-id must also have an `a=rid` line of the same direction (RFC 8853 section 5.1); that is
/// a negotiation rule, checked by the answerer, not a parse error.
public struct Simulcast: Equatable, Sendable {
    public struct Alternative: Equatable, Sendable {
        public var rid: String
        public var paused: Bool

        public init(rid: String, paused: Bool = false) {
            self.rid = rid
            self.paused = paused
        }
    }

    /// The streams sent, in order; each a non-empty list of alternatives.
    public var send: [[Alternative]]
    /// The streams received, in order.
    public var receive: [[Alternative]]

    public init(send: [[Alternative]] = [], receive: [[Alternative]] = []) {
        self.send = send
        self.receive = receive
    }

    /// The first alternative's rid of each sent stream, in order: what layer selection works with.
    public var sendRIDs: [String] { send.compactMap { $0.first?.rid } }

    /// The first alternative's rid of each received stream, in order.
    public var receiveRIDs: [String] { receive.compactMap { $0.first?.rid } }

    init?(sdp value: Substring) {
        let f = Fields.words(value)
        guard f.count == 2 || f.count == 4 else { return nil }
        var send: [[Alternative]]?
        var receive: [[Alternative]]?
        for i in stride(from: 0, to: f.count, by: 2) {
            guard let list = Self.streams(f[i + 1]) else { return nil }
            switch f[i] {
            case "send" where send == nil: send = list
            case "recv" where receive == nil: receive = list
            default: return nil
            }
        }
        self.init(send: send ?? [], receive: receive ?? [])
    }

    private static func streams(_ text: Substring) -> [[Alternative]]? {
        var out: [[Alternative]] = []
        for stream in Fields.split(text, on: ";") {
            var alternatives: [Alternative] = []
            for alt in Fields.split(stream, on: ",") {
                let paused = alt.hasPrefix("~")
                let rid = paused ? alt.dropFirst() : alt
                guard RID.isValidID(rid) else { return nil }
                alternatives.append(Alternative(rid: String(rid), paused: paused))
            }
            out.append(alternatives)
        }
        return out
    }

    private static func text(_ streams: [[Alternative]]) -> String {
        streams.map { $0.map { ($0.paused ? "~" : "") + $0.rid }.joined(separator: ",") }.joined(separator: ";")
    }

    /// `send` first, then `recv` (either order parses); a direction without streams is left out.
    var sdpValue: String {
        var parts: [String] = []
        if !send.isEmpty { parts.append("send \(Self.text(send))") }
        if !receive.isEmpty { parts.append("recv \(Self.text(receive))") }
        return parts.joined(separator: " ")
    }
}
