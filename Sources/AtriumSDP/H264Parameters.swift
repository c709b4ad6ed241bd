/// `profile-level-id` of H.264 (RFC 6184 section 8.1): three bytes, profile_idc, the constraint
/// flags (profile-iop) and level_idc, written as six hex digits, e.g. `42e01f`.
public struct H264ProfileLevelID: Equatable, Hashable, Sendable {
    public var profileIDC: UInt8
    public var profileIOP: UInt8
    public var levelIDC: UInt8

    public init(profileIDC: UInt8, profileIOP: UInt8, levelIDC: UInt8) {
        self.profileIDC = profileIDC
        self.profileIOP = profileIOP
        self.levelIDC = levelIDC
    }

    /// Parses six hex digits; nil for anything else.
    public init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count == 6, digits.allSatisfy(Fields.isHexDigit), let value = UInt32(hex, radix: 16) else {
            return nil
        }
        self.init(
            profileIDC: UInt8(truncatingIfNeeded: value >> 16), profileIOP: UInt8(truncatingIfNeeded: value >> 8),
            levelIDC: UInt8(truncatingIfNeeded: value))
    }

    /// Constrained Baseline (RFC 6184 section 8.1, Table 5: `42` with constraint_set1, `4D` with
    /// constraint_set0, or `58` with both), the H.264 profile WebRTC endpoints must support (RFC 7742
    /// section 6.2).
    public var isConstrainedBaseline: Bool {
        switch profileIDC {
        case 0x42: return profileIOP & 0x40 != 0
        case 0x4D: return profileIOP & 0x80 != 0
        case 0x58: return profileIOP & 0xC0 == 0xC0
        default: return false
        }
    }

    public var hex: String {
        let v = (UInt32(profileIDC) << 16) | (UInt32(profileIOP) << 8) | UInt32(levelIDC)
        let s = String(v, radix: 16)
        return String(repeating: "0", count: max(0, 6 - s.count)) + s
    }
}

extension Codec {
    /// For H.264, the `profile-level-id`; RFC 6184 section 8.1 defaults an absent one to `420010`.
    public var h264ProfileLevelID: H264ProfileLevelID? {
        guard isNamed("H264") else { return nil }
        guard let text = parameters.value(for: "profile-level-id") else {
            return H264ProfileLevelID(profileIDC: 0x42, profileIOP: 0x00, levelIDC: 0x10)
        }
        return H264ProfileLevelID(hex: text)
    }

    /// For H.264, `packetization-mode` (RFC 6184 section 8.1): 0 when absent; nil if not a number.
    public var h264PacketizationMode: Int? {
        guard isNamed("H264") else { return nil }
        guard let text = parameters.value(for: "packetization-mode") else { return 0 }
        return Fields.decimal(Substring(text)).map { (v: UInt8) in Int(v) }
    }

    /// For H.264, `level-asymmetry-allowed=1` (RFC 6184 section 8.1).
    public var h264LevelAsymmetryAllowed: Bool {
        isNamed("H264") && parameters.value(for: "level-asymmetry-allowed") == "1"
    }
}
