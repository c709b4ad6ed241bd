/// `a=rid:<rid-id> <send|recv> [pt=<fmt>,...;<restriction>=<value>;...]` (RFC 8851 section 10).
public struct RID: Equatable, Sendable {
    public enum Direction: String, Equatable, Sendable {
        case send, recv
    }

    public var id: String
    public var direction: Direction
    /// The `pt=` list: the payload types this RTP stream may use (empty: any of the section's).
    public var payloadTypes: [UInt8]
    /// The other restrictions (`max-width`, `max-fps`, ...), in order.
    public var restrictions: [FormatParameter]

    public init(id: String, direction: Direction, payloadTypes: [UInt8] = [], restrictions: [FormatParameter] = []) {
        self.id = id
        self.direction = direction
        self.payloadTypes = payloadTypes
        self.restrictions = restrictions
    }

    init?(sdp value: Substring) {
        let f = Fields.words(value)
        guard f.count == 2 || f.count == 3, let direction = Direction(rawValue: String(f[1])) else { return nil }
        var pts: [UInt8] = []
        var restrictions: [FormatParameter] = []
        if f.count == 3 {
            for p in Fields.parameters(f[2]) {
                guard p.name == "pt" else {
                    restrictions.append(p)
                    continue
                }
                guard let list = p.value, !list.isEmpty else { return nil }
                for item in Fields.split(Substring(list), on: ",") {
                    guard let pt = Fields.payloadType(item) else { return nil }
                    pts.append(pt)
                }
            }
        }
        self.init(id: String(f[0]), direction: direction, payloadTypes: pts, restrictions: restrictions)
    }

    var sdpValue: String {
        var params = restrictions
        if !payloadTypes.isEmpty {
            params.insert(
                FormatParameter(name: "pt", value: payloadTypes.map(String.init).joined(separator: ",")), at: 0)
        }
        let base = "\(id) \(direction.rawValue)"
        return params.isEmpty ? base : "\(base) \(params.sdpValue)"
    }
}

/// `a=simulcast:<send|recv> <streams> [<send|recv> <streams>]` (RFC 8853 section 5.1). Each entry of
/// a direction's list is one simulcast stream given as alternative rids (`,`); `~` marks a paused one.
public struct Simulcast: Equatable, Sendable {
    public struct Alternative: Equatable, Sendable {
        public var rid: String
        public var paused: Bool

        public init(rid: String, paused: Bool = false) {
            self.rid = rid
            self.paused = paused
        }
    }

    public var send: [[Alternative]]
    public var receive: [[Alternative]]

    public init(send: [[Alternative]] = [], receive: [[Alternative]] = []) {
        self.send = send
        self.receive = receive
    }

    /// The first alternative's rid of each sent stream, in order: what layer selection works with.
    public var sendRIDs: [String] { send.compactMap { $0.first?.rid } }

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
                guard !rid.isEmpty else { return nil }
                alternatives.append(Alternative(rid: String(rid), paused: paused))
            }
            out.append(alternatives)
        }
        return out
    }

    private static func text(_ streams: [[Alternative]]) -> String {
        streams.map { $0.map { ($0.paused ? "~" : "") + $0.rid }.joined(separator: ",") }.joined(separator: ";")
    }

    var sdpValue: String {
        var parts: [String] = []
        if !send.isEmpty { parts.append("send \(Self.text(send))") }
        if !receive.isEmpty { parts.append("recv \(Self.text(receive))") }
        return parts.joined(separator: " ")
    }
}
