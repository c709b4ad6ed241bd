/// The data channels of one association as a state machine (RFC 8831, 8832): the peer opens them
/// (`DATA_CHANNEL_OPEN`, acknowledged), sends on them and closes them (a stream reset, answered with
/// ours). Pure: association events in, actions out. This end never opens channels: the client opens
/// what it wants on either of its connections and the server answers on the same streams.
public struct DataChannels: Sendable {
    public struct Channel: Equatable, Sendable {
        public var stream: UInt16
        public var label: String
        public var ordered: Bool
        public var maxRetransmits: Int?
        public var maxLifetime: Int?

        /// Unordered and never retransmitted: late data is worth nothing (a pointer's position).
        public var isLossy: Bool { !ordered && (maxRetransmits == 0 || maxLifetime == 0) }
    }

    public enum Action: Equatable, Sendable {
        /// Sends on the association.
        case send(stream: UInt16, ppid: UInt32, unordered: Bool, maxRetransmits: Int?, data: [UInt8])
        case opened(Channel)
        /// A message on an open channel; `text` for a string, else binary.
        case message(Channel, text: Bool, data: [UInt8])
        case closed(Channel)
        case resetStream(UInt16)
        /// Something the peer sent that is not a valid data channel message: dropped, counted.
        case invalid(String)
    }

    /// The most channels one association may have open (values from outside never grow a table
    /// without bound).
    public static let maxChannels = 16

    public private(set) var channels: [UInt16: Channel] = [:]

    public init() {}

    public mutating func handle(_ event: SCTPAssociation.Event) -> [Action] {
        switch event {
        case .up, .writable: return []
        case .down:
            let all = channels.values.sorted { $0.stream < $1.stream }
            channels.removeAll()
            return all.map { .closed($0) }
        case .streamReset(let stream):
            guard let c = channels.removeValue(forKey: stream) else { return [] }
            return [.resetStream(stream), .closed(c)]
        case .message(let stream, let ppid, let data):
            return message(stream: stream, ppid: ppid, data: data)
        }
    }

    mutating func message(stream: UInt16, ppid: UInt32, data: [UInt8]) -> [Action] {
        switch ppid {
        case DataChannelProtocol.control:
            let control: DataChannelProtocol.Control
            do throws(DataChannelProtocol.ParseError) { control = try DataChannelProtocol.parse(data) } catch {
                return [.invalid("control message: \(error)")]
            }
            switch control {
            case .ack: return []
            case .open(let o):
                guard channels[stream] != nil || channels.count < Self.maxChannels else {
                    return [.invalid("more than \(Self.maxChannels) channels")]
                }
                let c = Channel(
                    stream: stream, label: o.label, ordered: o.ordered, maxRetransmits: o.maxRetransmits,
                    maxLifetime: o.maxLifetime)
                channels[stream] = c
                return [
                    .send(
                        stream: stream, ppid: DataChannelProtocol.control, unordered: false, maxRetransmits: nil,
                        data: DataChannelProtocol.ack),
                    .opened(c),
                ]
            }
        case DataChannelProtocol.string, DataChannelProtocol.binary, DataChannelProtocol.emptyString,
            DataChannelProtocol.emptyBinary:
            guard let c = channels[stream] else { return [.invalid("data on stream \(stream), which is not open")] }
            let empty = ppid == DataChannelProtocol.emptyString || ppid == DataChannelProtocol.emptyBinary
            let text = ppid == DataChannelProtocol.string || ppid == DataChannelProtocol.emptyString
            return [.message(c, text: text, data: empty ? [] : data)]
        default:
            return [.invalid("payload protocol identifier \(ppid)")]
        }
    }

    /// The action that sends `data` on channel `c` (an empty message as RFC 8831 section 6.6 says).
    public static func send(_ data: [UInt8], text: Bool, on c: Channel) -> Action {
        let ppid: UInt32 =
            data.isEmpty
            ? (text ? DataChannelProtocol.emptyString : DataChannelProtocol.emptyBinary)
            : (text ? DataChannelProtocol.string : DataChannelProtocol.binary)
        return .send(
            stream: c.stream, ppid: ppid, unordered: !c.ordered, maxRetransmits: c.maxRetransmits,
            data: data.isEmpty ? [0] : data)
    }
}
