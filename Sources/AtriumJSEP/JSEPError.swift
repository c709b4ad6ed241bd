public import AtriumSDP

/// Why a remote description cannot be used at all. Per-section problems are not errors: the section is
/// rejected in the answer instead (`SectionRejection`).
public enum JSEPError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text is not SDP.
    case invalidSDP(SDPError)
    /// SDP, but not something this server negotiates: the message says what is missing.
    case unsupported(String)

    public var code: String {
        switch self {
        case .invalidSDP: "invalid_sdp"
        case .unsupported: "sdp_unsupported"
        }
    }

    public var description: String {
        switch self {
        case .invalidSDP(let e): "the SDP does not parse: \(e)"
        case .unsupported(let why): why
        }
    }
}

/// Why one media section of an offer is rejected (port 0 in the answer).
public struct SectionRejection: Equatable, Sendable {
    public var code: String
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}
