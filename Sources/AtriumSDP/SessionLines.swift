/// `o=<username> <sess-id> <sess-version> <nettype> <addrtype> <unicast-address>` (RFC 8866 section 5.2).
/// JSEP requires sess-id to fit in 63 bits and sess-version to increase by one per new offer
/// (RFC 8829 section 5.2.1), so both are numbers here.
public struct Origin: Equatable, Sendable {
    public var username: String
    public var sessionID: UInt64
    public var sessionVersion: UInt64
    public var networkType: String
    public var addressType: String
    public var address: String

    public init(
        username: String = "-", sessionID: UInt64, sessionVersion: UInt64, networkType: String = "IN",
        addressType: String = "IP4", address: String = "127.0.0.1"
    ) {
        self.username = username
        self.sessionID = sessionID
        self.sessionVersion = sessionVersion
        self.networkType = networkType
        self.addressType = addressType
        self.address = address
    }

    init?(sdp value: Substring) {
        let f = Fields.words(value)
        guard f.count == 6, let id: UInt64 = Fields.decimal(f[1]), let version: UInt64 = Fields.decimal(f[2]) else {
            return nil
        }
        self.init(
            username: String(f[0]), sessionID: id, sessionVersion: version, networkType: String(f[3]),
            addressType: String(f[4]), address: String(f[5]))
    }

    var sdpValue: String {
        "\(username) \(sessionID) \(sessionVersion) \(networkType) \(addressType) \(address)"
    }
}

/// `c=<nettype> <addrtype> <connection-address>` (RFC 8866 section 5.7). The address keeps any
/// `/ttl` or `/count` suffix as written.
public struct ConnectionData: Equatable, Sendable {
    public var networkType: String
    public var addressType: String
    public var address: String

    public init(networkType: String = "IN", addressType: String = "IP4", address: String) {
        self.networkType = networkType
        self.addressType = addressType
        self.address = address
    }

    init?(sdp value: Substring) {
        let f = Fields.words(value)
        guard f.count == 3 else { return nil }
        self.init(networkType: String(f[0]), addressType: String(f[1]), address: String(f[2]))
    }

    var sdpValue: String { "\(networkType) \(addressType) \(address)" }
}

/// `t=<start-time> <stop-time>` (RFC 8866 section 5.9); JSEP always writes `t=0 0`.
public struct Timing: Equatable, Sendable {
    public var start: UInt64
    public var stop: UInt64

    public init(start: UInt64 = 0, stop: UInt64 = 0) {
        self.start = start
        self.stop = stop
    }

    init?(sdp value: Substring) {
        let f = Fields.words(value)
        guard f.count == 2, let start: UInt64 = Fields.decimal(f[0]), let stop: UInt64 = Fields.decimal(f[1]) else {
            return nil
        }
        self.init(start: start, stop: stop)
    }

    var sdpValue: String { "\(start) \(stop)" }
}

/// `b=<bwtype>:<bandwidth>` (RFC 8866 section 5.8), e.g. `b=AS:2000` or `b=TIAS:2000000` (RFC 3890).
public struct Bandwidth: Equatable, Sendable {
    public var type: String
    public var value: UInt64

    public init(type: String, value: UInt64) {
        self.type = type
        self.value = value
    }

    init?(sdp value: Substring) {
        let (type, number) = Fields.splitOnce(value, at: ":")
        guard !type.isEmpty, !type.contains(" "), let number, let bits: UInt64 = Fields.decimal(number) else {
            return nil
        }
        self.init(type: String(type), value: bits)
    }

    var sdpValue: String { "\(type):\(value)" }
}

/// A line this module does not model (`i=`, `u=`, `e=`, `p=`, `r=`, `z=`, `k=`), kept verbatim.
public struct SDPLine: Equatable, Sendable {
    public var type: Character
    public var value: String

    public init(type: Character, value: String) {
        self.type = type
        self.value = value
    }

    /// Where RFC 8866 section 5 places the line relative to the modelled ones: before `c=` (rank 0),
    /// between `b=` and `t=` (never), or after `t=`/`b=` (rank 1).
    var rank: Int {
        switch type {
        case "i", "u", "e", "p": return 0
        default: return 1
        }
    }
}
