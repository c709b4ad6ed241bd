import AtriumBytes

/// An IP address as STUN carries it: 4 or 16 bytes held in integers, so it is hashable without allocating.
public enum STUNIPAddress: Hashable, Sendable, CustomStringConvertible {
    case v4(UInt32)
    case v6(high: UInt64, low: UInt64)

    /// Reads 4 bytes as IPv4 or 16 as IPv6; nil for any other count.
    public init?<C: Collection>(bytes: C) where C.Element == UInt8 {
        let a = Array(bytes)
        switch a.count {
        case 4:
            guard let v = a.uint32(at: 0) else { return nil }
            self = .v4(v)
        case 16:
            guard let h = a.uint64(at: 0), let l = a.uint64(at: 8) else { return nil }
            self = .v6(high: h, low: l)
        default:
            return nil
        }
    }

    public var bytes: [UInt8] {
        var out: [UInt8] = []
        switch self {
        case .v4(let v): out.appendBigEndian(v)
        case .v6(let h, let l):
            out.appendBigEndian(h)
            out.appendBigEndian(l)
        }
        return out
    }

    /// Dotted quad for IPv4; RFC 5952 text for IPv6 (lower case, the longest run of two or more zero
    /// groups shortened to `::`).
    public var description: String {
        switch self {
        case .v4(let v):
            return [24, 16, 8, 0].map { String((v >> UInt32($0)) & 0xFF) }.joined(separator: ".")
        case .v6(let h, let l):
            return formatIPv6(high: h, low: l)
        }
    }
}

/// An IP address and port: what XOR-MAPPED-ADDRESS reports (RFC 8489 section 14.2).
public struct STUNTransportAddress: Hashable, Sendable, CustomStringConvertible {
    public var address: STUNIPAddress
    public var port: UInt16

    public init(address: STUNIPAddress, port: UInt16) {
        self.address = address
        self.port = port
    }

    public var description: String {
        switch address {
        case .v4: "\(address):\(port)"
        case .v6: "[\(address)]:\(port)"
        }
    }
}

/// XOR-MAPPED-ADDRESS (RFC 8489 section 14.2): the address XOR-ed with the magic cookie (and, for IPv6,
/// the transaction id) so that NATs rewriting addresses in payloads leave it alone.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |0 0 0 0 0 0 0 0|    Family     |         X-Port                |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                X-Address (Variable)
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
enum XORMappedAddress {
    static let familyIPv4: UInt8 = 0x01
    static let familyIPv6: UInt8 = 0x02
    static let familyOffset = 1
    static let portOffset = 2
    static let addressOffset = 4

    static func decode(_ value: [UInt8], transactionID: STUNTransactionID) throws(STUNError) -> STUNTransportAddress {
        let malformed = STUNError.malformedAttribute(type: STUNAttributeType.xorMappedAddress.rawValue)
        guard value.count >= addressOffset, let xport = value.uint16(at: portOffset) else { throw malformed }
        let port = xport ^ UInt16(truncatingIfNeeded: STUNMessage.magicCookie >> 16)
        switch value[familyOffset] {
        case familyIPv4:
            guard value.count == addressOffset + 4, let x = value.uint32(at: addressOffset) else { throw malformed }
            return STUNTransportAddress(address: .v4(x ^ STUNMessage.magicCookie), port: port)
        case familyIPv6:
            guard value.count == addressOffset + 16, let xh = value.uint64(at: addressOffset),
                let xl = value.uint64(at: addressOffset + 8)
            else { throw malformed }
            let mask = maskIPv6(transactionID)
            return STUNTransportAddress(address: .v6(high: xh ^ mask.high, low: xl ^ mask.low), port: port)
        default:
            throw malformed
        }
    }

    static func encode(_ a: STUNTransportAddress, transactionID: STUNTransactionID) -> [UInt8] {
        let xport = a.port ^ UInt16(truncatingIfNeeded: STUNMessage.magicCookie >> 16)
        var out: [UInt8] = []
        switch a.address {
        case .v4(let v):
            out += [0, familyIPv4]
            out.appendBigEndian(xport)
            out.appendBigEndian(v ^ STUNMessage.magicCookie)
        case .v6(let h, let l):
            let mask = maskIPv6(transactionID)
            out += [0, familyIPv6]
            out.appendBigEndian(xport)
            out.appendBigEndian(h ^ mask.high)
            out.appendBigEndian(l ^ mask.low)
        }
        return out
    }

    /// The 128-bit mask for IPv6: the magic cookie followed by the transaction id.
    private static func maskIPv6(_ id: STUNTransactionID) -> (high: UInt64, low: UInt64) {
        let high = UInt64(STUNMessage.magicCookie) << 32 | UInt64(id.high)
        return (high, id.low)
    }
}
