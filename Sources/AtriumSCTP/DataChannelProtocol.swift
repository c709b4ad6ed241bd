/// The data channel establishment protocol (RFC 8832) and the payload protocol identifiers of
/// RFC 8831: pure parsing and encoding.
public enum DataChannelProtocol {
    public static let control: UInt32 = 50
    public static let string: UInt32 = 51
    public static let binary: UInt32 = 53
    public static let emptyString: UInt32 = 56
    public static let emptyBinary: UInt32 = 57

    /// The longest label or protocol accepted (a channel's name; values from outside).
    public static let maxLabelBytes = 256

    /// `DATA_CHANNEL_OPEN` (RFC 8832 section 5.1).
    public struct Open: Equatable, Sendable {
        public var channelType: UInt8
        public var priority: UInt16
        public var reliability: UInt32
        public var label: String
        public var protocolName: String

        public init(
            channelType: UInt8, priority: UInt16 = 0, reliability: UInt32 = 0, label: String, protocolName: String = ""
        ) {
            self.channelType = channelType
            self.priority = priority
            self.reliability = reliability
            self.label = label
            self.protocolName = protocolName
        }

        /// Ordered unless the high bit of the type says unordered.
        public var ordered: Bool { channelType & 0x80 == 0 }
        /// The retransmission limit of a partially reliable channel (type 0x01 or 0x81), else nil.
        public var maxRetransmits: Int? { channelType & 0x7F == 0x01 ? Int(reliability) : nil }
        /// The lifetime limit in milliseconds (type 0x02 or 0x82), else nil.
        public var maxLifetime: Int? { channelType & 0x7F == 0x02 ? Int(reliability) : nil }

        public var bytes: [UInt8] {
            let l = Array(label.utf8)
            let p = Array(protocolName.utf8)
            var out: [UInt8] = [0x03, channelType, UInt8(priority >> 8), UInt8(priority & 0xFF)]
            out += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: reliability >> $0) }
            out += [UInt8(truncatingIfNeeded: l.count >> 8), UInt8(truncatingIfNeeded: l.count)]
            out += [UInt8(truncatingIfNeeded: p.count >> 8), UInt8(truncatingIfNeeded: p.count)]
            return out + l + p
        }
    }

    public enum Control: Equatable, Sendable {
        case open(Open)
        case ack
    }

    /// Why a control message is refused.
    public enum ParseError: Error, Equatable, Sendable {
        case empty
        case unknownType(UInt8)
        case truncated
        case unknownChannelType(UInt8)
        case labelTooLong
        case notUTF8
    }

    /// A `DATA_CHANNEL_ACK` (type 0x02).
    public static let ack: [UInt8] = [0x02]

    public static func parse(_ b: [UInt8]) throws(ParseError) -> Control {
        guard let type = b.first else { throw .empty }
        switch type {
        case 0x02: return .ack
        case 0x03: break
        default: throw .unknownType(type)
        }
        guard b.count >= 12 else { throw .truncated }
        let channelType = b[1]
        guard [0x00, 0x01, 0x02, 0x80, 0x81, 0x82].contains(channelType) else { throw .unknownChannelType(channelType) }
        let priority = UInt16(b[2]) << 8 | UInt16(b[3])
        let reliability = UInt32(b[4]) << 24 | UInt32(b[5]) << 16 | UInt32(b[6]) << 8 | UInt32(b[7])
        let labelLength = Int(b[8]) << 8 | Int(b[9])
        let protocolLength = Int(b[10]) << 8 | Int(b[11])
        guard labelLength <= maxLabelBytes, protocolLength <= maxLabelBytes else { throw .labelTooLong }
        guard b.count >= 12 + labelLength + protocolLength else { throw .truncated }
        guard let label = String(validating: b[12..<12 + labelLength], as: UTF8.self),
            let name = String(validating: b[(12 + labelLength)..<(12 + labelLength + protocolLength)], as: UTF8.self)
        else { throw .notUTF8 }
        return .open(
            Open(
                channelType: channelType, priority: priority, reliability: reliability, label: label, protocolName: name
            ))
    }
}
