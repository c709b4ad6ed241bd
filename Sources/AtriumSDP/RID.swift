/// `a=rid` (RFC 8851): one RTP stream of a media section, named by its rid-id, with the direction it
/// flows in and the restrictions it keeps to. Simulcast (RFC 8853) lists these ids.
///
/// RFC 8851 section 10:
///
///     rid-syntax        = %s"a=rid:" rid-id SP rid-dir [ rid-pt-param-list / rid-param-list ]
///     rid-id            = 1*(alpha-numeric / "-" / "_")
///     rid-dir           = %s"send" / %s"recv"
///     rid-pt-param-list = SP rid-fmt-list *( ";" rid-param )
///     rid-param-list    = SP rid-param *( ";" rid-param )
///     rid-fmt-list      = %s"pt=" fmt *( "," fmt )
///     rid-width-param   = %s"max-width" [ "=" int-param-val ]     (also max-height, max-fps,
///                                                                   max-fs, max-br, max-pps)
///     rid-bpp-param     = %s"max-bpp" [ "=" float-param-val ]
///     rid-depend-param  = %s"depend=" rid-list
///     rid-param-other   = 1*(alpha-numeric / "-") [ "=" param-val ]
///     int-param-val     = 1*DIGIT
///     float-param-val   = 1*DIGIT "." 1*DIGIT
///
/// A known restriction whose value breaks its grammar makes the line invalid; any other restriction
/// is kept verbatim and in order, so `serialize(parse(x))` carries it through.
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

    /// RFC 8851 section 10: `rid-id = 1*(alpha-numeric / "-" / "_")`. The same rule covers the ids an
    /// `a=simulcast` line lists (RFC 8853 section 5.1).
    public static func isValidID(_ text: some StringProtocol) -> Bool {
        !text.utf8.isEmpty && text.utf8.allSatisfy { Fields.isAlphaNumeric($0) || $0 == 0x2D || $0 == 0x5F }
    }

    /// `max-width` (RFC 8851 section 5): the largest width in pixels, when written with a value.
    public var maxWidth: UInt32? { integer("max-width") }
    /// `max-height` (RFC 8851 section 5): the largest height in pixels.
    public var maxHeight: UInt32? { integer("max-height") }
    /// `max-fps` (RFC 8851 section 5): the largest frame rate, in frames per second.
    public var maxFPS: UInt32? { integer("max-fps") }
    /// `max-fs` (RFC 8851 section 5): the largest frame size, in pixels.
    public var maxFrameSize: UInt32? { integer("max-fs") }
    /// `max-br` (RFC 8851 section 5): the largest bit rate, in bits per second.
    public var maxBitrate: UInt64? { integer("max-br") }
    /// `max-pps` (RFC 8851 section 5): the largest pixel rate, in pixels per second.
    public var maxPixelRate: UInt64? { integer("max-pps") }
    /// `depend` (RFC 8851 section 5): the rids this stream needs to be decoded.
    public var depend: [String] {
        guard let list = restrictions.first(where: { $0.name == "depend" })?.value else { return [] }
        return Fields.split(Substring(list), on: ",").map(String.init)
    }

    private func integer<T: FixedWidthInteger & UnsignedInteger>(_ name: String) -> T? {
        guard let value = restrictions.first(where: { $0.name == name })?.value else { return nil }
        return Fields.decimal(Substring(value))
    }

    /// The restrictions RFC 8851 section 10 gives an `int-param-val`; names are case-sensitive (`%s`).
    static let integerRestrictions: Set<String> = ["max-width", "max-height", "max-fps", "max-fs", "max-br", "max-pps"]

    init?(sdp value: Substring) {
        let f = Fields.words(value)
        guard f.count == 2 || f.count == 3, Self.isValidID(f[0]), let direction = Direction(rawValue: String(f[1]))
        else { return nil }
        var pts: [UInt8] = []
        var restrictions: [FormatParameter] = []
        if f.count == 3 {
            for p in Fields.parameters(f[2]) {
                guard p.name == "pt" else {
                    guard Self.isValid(p) else { return nil }
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

    /// Checks one restriction against its grammar (RFC 8851 section 10).
    private static func isValid(_ p: FormatParameter) -> Bool {
        if integerRestrictions.contains(p.name) {
            // `[ "=" int-param-val ]`: a bare name is allowed; a value is digits that fit 64 bits.
            return p.value.map { Fields.decimal64(Substring($0)) != nil } ?? true
        }
        switch p.name {
        case "max-bpp":
            guard let value = p.value else { return true }
            let (whole, fraction) = Fields.splitOnce(Substring(value), at: ".")
            return Fields.isDigits(whole) && fraction.map(Fields.isDigits) == true
        case "depend":
            guard let value = p.value else { return false }
            return Fields.split(Substring(value), on: ",").allSatisfy(isValidID)
        default:
            // rid-param-other = 1*(alpha-numeric / "-") [ "=" param-val ]
            return !p.name.isEmpty && p.name.utf8.allSatisfy { Fields.isAlphaNumeric($0) || $0 == 0x2D }
        }
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
