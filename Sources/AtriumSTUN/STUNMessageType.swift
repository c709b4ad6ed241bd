import AtriumBytes

/// The class of a STUN message (RFC 8489 section 5): two bits spread over the message type.
public enum STUNClass: UInt16, Sendable, CaseIterable {
    case request = 0b00
    case indication = 0b01
    case successResponse = 0b10
    case errorResponse = 0b11
}

/// A STUN method (RFC 8489 section 18.2): 12 bits. Binding is the only one ICE needs.
public struct STUNMethod: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue & 0x0FFF }

    public static let binding = STUNMethod(rawValue: 0x001)
}

/// The 14-bit STUN message type: a method and a class interleaved (RFC 8489 section 5, figure 3).
///
/// ```
///   0                 1
///   2  3  4 5 6 7 8 9 0 1 2 3 4 5
///  +--+--+-+-+-+-+-+-+-+-+-+-+-+-+
///  |M |M |M|M|M|C|M|M|M|C|M|M|M|M|
///  |11|10|9|8|7|1|6|5|4|0|3|2|1|0|
///  +--+--+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public struct STUNMessageType: Hashable, Sendable {
    public var method: STUNMethod
    public var messageClass: STUNClass

    public init(method: STUNMethod, messageClass: STUNClass) {
        self.method = method
        self.messageClass = messageClass
    }

    /// Splits a 16-bit type field; the two top bits (always zero in STUN) are ignored here and checked by
    /// the parser.
    public init(rawValue: UInt16) {
        let m = (rawValue & 0x000F) | ((rawValue & 0x00E0) >> 1) | ((rawValue & 0x3E00) >> 2)
        let c = ((rawValue & 0x0010) >> 4) | ((rawValue & 0x0100) >> 7)
        method = STUNMethod(rawValue: m)
        // Two bits always name one of the four cases.
        messageClass = STUNClass(rawValue: c) ?? .request
    }

    public var rawValue: UInt16 {
        let m = method.rawValue
        let c = messageClass.rawValue
        return (m & 0x000F) | ((m & 0x0070) << 1) | ((m & 0x0F80) << 2) | ((c & 0b01) << 4) | ((c & 0b10) << 7)
    }

    public static let bindingRequest = STUNMessageType(method: .binding, messageClass: .request)
    public static let bindingIndication = STUNMessageType(method: .binding, messageClass: .indication)
    public static let bindingSuccess = STUNMessageType(method: .binding, messageClass: .successResponse)
    public static let bindingError = STUNMessageType(method: .binding, messageClass: .errorResponse)
}

/// The 96-bit transaction id (RFC 8489 section 5), held as two integers so it is hashable without
/// allocating.
public struct STUNTransactionID: Hashable, Sendable, CustomStringConvertible {
    public static let size = 12

    public var high: UInt32
    public var low: UInt64

    public init(high: UInt32, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Reads 12 bytes; nil for any other count.
    public init?<C: Collection>(bytes: C) where C.Element == UInt8 {
        guard bytes.count == Self.size else { return nil }
        var h: UInt32 = 0
        var l: UInt64 = 0
        for (i, b) in bytes.enumerated() {
            if i < 4 { h = (h << 8) | UInt32(b) } else { l = (l << 8) | UInt64(b) }
        }
        high = h
        low = l
    }

    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Self.size)
        out.appendBigEndian(high)
        out.appendBigEndian(low)
        return out
    }

    public var description: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
