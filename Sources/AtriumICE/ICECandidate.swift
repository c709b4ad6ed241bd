public import AtriumSTUN

/// A host candidate as SDP carries it (RFC 8839 section 5.1):
///
/// ```
/// candidate-attribute = "candidate" ":" foundation SP component-id SP transport SP priority SP
///                       connection-address SP port SP cand-type ...
/// ```
///
/// An ICE-lite agent gathers only host candidates (RFC 8445 section 2.5), so `typ host` is the only type
/// built here.
public struct ICECandidate: Hashable, Sendable {
    /// RFC 8445 section 5.1.2.2: the recommended type preference of host candidates.
    public static let hostTypePreference: UInt8 = 126
    /// RFC 8445 section 5.1.2.1: the component id of RTP (and of everything, with rtcp-mux and BUNDLE).
    public static let rtpComponent: UInt8 = 1

    public var foundation: String
    public var component: UInt8
    public var address: STUNTransportAddress
    public var priority: UInt32

    /// A UDP host candidate; the local preference orders several local addresses (65535: the only one).
    public static func host(
        address: STUNTransportAddress, foundation: String = "1", localPreference: UInt16 = 65535,
        component: UInt8 = rtpComponent
    ) -> ICECandidate {
        ICECandidate(
            foundation: foundation, component: component, address: address,
            priority: priority(
                typePreference: hostTypePreference, localPreference: localPreference,
                component: component))
    }

    public init(foundation: String, component: UInt8, address: STUNTransportAddress, priority: UInt32) {
        self.foundation = foundation
        self.component = component
        self.address = address
        self.priority = priority
    }

    /// RFC 8445 section 5.1.2.1:
    /// `priority = (2^24)*(type preference) + (2^8)*(local preference) + (2^0)*(256 - component ID)`.
    public static func priority(typePreference: UInt8, localPreference: UInt16, component: UInt8) -> UInt32 {
        UInt32(typePreference) << 24 | UInt32(localPreference) << 8 | (256 - UInt32(component))
    }

    /// RFC 6544 section 4.2: a TCP candidate's local preference is
    /// `(2^13) * direction-pref + other-pref`, with direction-pref 4 for a passive host candidate (6 for
    /// active, 2 for simultaneous-open). Below 65535 - n, so each passive TCP candidate ranks under the
    /// UDP ones of the same address (a peer uses TCP only when UDP fails).
    public static func passiveTCPLocalPreference(index: Int) -> UInt16 {
        let otherPreference = 8191 - min(max(index, 0), 8191)
        return UInt16(4 << 13 | otherPreference)
    }

    /// The attribute value, as a browser's `RTCIceCandidate.candidate` has it:
    /// `candidate:1 1 udp 2130706431 127.0.0.1 40000 typ host`. IPv6 addresses go without brackets.
    public var attributeValue: String {
        "candidate:\(foundation) \(component) udp \(priority) \(address.address) \(address.port) typ host"
    }

    /// The whole SDP line: `a=candidate:...`.
    public var sdpLine: String { "a=" + attributeValue }
}
