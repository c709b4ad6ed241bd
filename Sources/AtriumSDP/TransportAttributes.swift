/// The media direction attributes of RFC 8866 section 6.7 (`a=sendrecv` and the others).
public enum MediaDirection: String, Equatable, Sendable, CaseIterable {
    case sendrecv, sendonly, recvonly, inactive

    /// The direction the other side must answer with (RFC 8829 section 5.3.1).
    public var reversed: MediaDirection {
        switch self {
        case .sendonly: return .recvonly
        case .recvonly: return .sendonly
        case .sendrecv, .inactive: return self
        }
    }
}

/// `a=setup` (RFC 4145 section 4, as DTLS-SRTP uses it in RFC 8842 section 5.1).
public enum Setup: String, Equatable, Sendable, CaseIterable {
    case actpass, active, passive, holdconn
}

/// `a=fingerprint:<hash-func> <fingerprint>` (RFC 8122 section 5): the certificate hash as bytes,
/// written back as upper-case hex pairs separated by colons.
public struct Fingerprint: Equatable, Sendable {
    /// The hash function token as written, e.g. `sha-256`.
    public var hashFunction: String
    public var bytes: [UInt8]

    public init(hashFunction: String, bytes: [UInt8]) {
        self.hashFunction = hashFunction
        self.bytes = bytes
    }

    init?(sdp value: Substring) {
        let f = Fields.words(value)
        guard f.count == 2 else { return nil }
        var out: [UInt8] = []
        for pair in Fields.split(f[1], on: ":") {
            guard pair.utf8.count == 2, pair.utf8.allSatisfy(Fields.isHexDigit), let byte = UInt8(pair, radix: 16)
            else {
                return nil
            }
            out.append(byte)
        }
        self.init(hashFunction: String(f[0]), bytes: out)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    var sdpValue: String {
        var hex: [UInt8] = []
        hex.reserveCapacity(bytes.count * 3)
        for (i, b) in bytes.enumerated() {
            if i > 0 { hex.append(UInt8(ascii: ":")) }
            hex.append(Self.hexDigits[Int(b >> 4)])
            hex.append(Self.hexDigits[Int(b & 0x0F)])
        }
        return "\(hashFunction) \(String(decoding: hex, as: UTF8.self))"
    }
}

/// `a=rtcp:<port> [<nettype> <addrtype> <address>]` (RFC 3605 section 2.1).
public struct RTCPAddress: Equatable, Sendable {
    public var port: UInt16
    public var connection: ConnectionData?

    public init(port: UInt16, connection: ConnectionData? = nil) {
        self.port = port
        self.connection = connection
    }

    init?(sdp value: Substring) {
        let f = Fields.words(value)
        guard let first = f.first, let port: UInt16 = Fields.decimal(first) else { return nil }
        if f.count == 1 {
            self.init(port: port)
        } else if f.count == 4 {
            self.init(
                port: port,
                connection: ConnectionData(networkType: String(f[1]), addressType: String(f[2]), address: String(f[3])))
        } else {
            return nil
        }
    }

    var sdpValue: String { connection.map { "\(port) \($0.sdpValue)" } ?? "\(port)" }
}

/// `a=group:<semantics> <mid> ...` (RFC 5888 section 5), e.g. `BUNDLE` (RFC 8843 section 7).
public struct Group: Equatable, Sendable {
    public var semantics: String
    public var mids: [String]

    public init(semantics: String, mids: [String]) {
        self.semantics = semantics
        self.mids = mids
    }

    init?(sdp value: Substring) {
        let f = Fields.words(value)
        guard let first = f.first else { return nil }
        self.init(semantics: String(first), mids: f.dropFirst().map(String.init))
    }

    var sdpValue: String { ([semantics] + mids).joined(separator: " ") }
}

/// `a=msid-semantic:<semantic> <identifier> ...`: the WebRTC stream semantic Chrome, aiortc and Janus
/// still write (`WMS`), from the msid drafts before RFC 8830. Chrome writes a space after the colon.
public struct MsidSemantic: Equatable, Sendable {
    public var semantic: String
    public var identifiers: [String]

    public init(semantic: String, identifiers: [String]) {
        self.semantic = semantic
        self.identifiers = identifiers
    }

    init?(sdp value: Substring) {
        let f = Fields.words(value)
        guard let first = f.first else { return nil }
        self.init(semantic: String(first), identifiers: f.dropFirst().map(String.init))
    }

    var sdpValue: String { ([semantic] + identifiers).joined(separator: " ") }
}

/// `a=msid:<stream id> [<track id>]` (RFC 8830 section 2); `-` as stream id means no stream.
public struct Msid: Equatable, Sendable {
    public var streamID: String
    public var trackID: String?

    public init(streamID: String, trackID: String? = nil) {
        self.streamID = streamID
        self.trackID = trackID
    }

    init?(sdp value: Substring) {
        let f = Fields.words(value)
        guard f.count == 1 || f.count == 2 else { return nil }
        self.init(streamID: String(f[0]), trackID: f.count == 2 ? String(f[1]) : nil)
    }

    var sdpValue: String { trackID.map { "\(streamID) \($0)" } ?? streamID }
}
