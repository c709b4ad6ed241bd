import AtriumBytes

/// One RTP header extension element (RFC 8285 section 4): a local id negotiated in SDP and its bytes.
public struct RTPHeaderExtensionElement: Equatable, Sendable {
    public var id: UInt8
    public var value: [UInt8]

    public init(id: UInt8, value: [UInt8]) {
        self.id = id
        self.value = value
    }
}

/// The RFC 8285 header extension forms.
///
/// One-byte form (section 4.2), profile 0xBEDE: each element is a byte of ID (4 bits, 1-14) and L
/// (4 bits, the length minus one), then 1-16 bytes. ID 0 is a padding byte; ID 15 stops processing.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |       0xBE    |    0xDE       |           length=3            |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  ID   | L=0   |     data      |  ID   |  L=1  |   data...
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// Two-byte form (section 4.3), profile 0x100X (the low 4 bits are application bits): each element is an
/// ID byte (1-255), a length byte (0-255), then the bytes. ID 0 is a padding byte.
///
/// ```
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |       0x10    |    0x00       |           length=3            |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |      ID       |     L=0       |     ID        |     L=1       |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public enum RTPHeaderExtension {
    public static let oneByteProfile: UInt16 = 0xBEDE
    public static let twoByteProfile: UInt16 = 0x1000
    static let twoByteProfileMask: UInt16 = 0xFFF0
    static let oneByteStopID: UInt8 = 15

    public static func isOneByte(_ profile: UInt16) -> Bool { profile == oneByteProfile }
    public static func isTwoByte(_ profile: UInt16) -> Bool { profile & twoByteProfileMask == twoByteProfile }

    /// Calls `body` with each element's id and value range until it returns false. Extensions of other
    /// profiles have no elements.
    static func forEachElement(
        in packet: [UInt8], range: Range<Int>, profile: UInt16, _ body: (UInt8, Range<Int>) -> Bool
    ) throws(RTPError) {
        let valid = packet.withUnsafeBytes { forEachElement(in: $0, range: range, profile: profile, body) }
        guard valid else { throw .malformedHeaderExtension(profile: profile) }
    }

    /// `forEachElement` on the packet's bytes in place (`RTPHeader.init(parsing:)` says why); false
    /// when the block is malformed, `body` having seen the elements before the fault. Every byte read
    /// is checked against the range, and the range against the count.
    static func forEachElement(
        in packet: UnsafeRawBufferPointer, range: Range<Int>, profile: UInt16, _ body: (UInt8, Range<Int>) -> Bool
    ) -> Bool {
        let oneByte = isOneByte(profile)
        guard oneByte || isTwoByte(profile) else { return true }
        guard range.lowerBound >= 0, range.upperBound <= packet.count else { return false }
        var i = range.lowerBound
        while i < range.upperBound {
            let first = packet[i]
            if first == 0 {  // padding in both forms
                i += 1
                continue
            }
            let id: UInt8
            let length: Int
            if oneByte {
                id = first >> 4
                if id == oneByteStopID { return true }
                length = Int(first & 0x0F) + 1
                i += 1
            } else {
                guard i + 1 < range.upperBound else { return false }
                id = first
                length = Int(packet[i + 1])
                i += 2
            }
            guard length <= range.upperBound - i else { return false }
            if !body(id, i..<i + length) { return true }
            i += length
        }
        return true
    }

    /// Rewrites an extension block in place for forwarding: each element whose id `map` returns a new id
    /// for gets that id, every other element is overwritten with zero bytes (padding in both forms,
    /// RFC 8285 section 4.2), so nothing moves and nothing is allocated. In the one-byte form a new id
    /// outside 1-14 removes the element too. Throws, changing nothing, on a malformed block.
    public static func remapInPlace(
        _ packet: inout [UInt8], range: Range<Int>, profile: UInt16, _ map: (UInt8) -> UInt8?
    ) throws(RTPError) {
        let oneByte = isOneByte(profile)
        // Validate first so that a malformed block is left untouched.
        try forEachElement(in: packet, range: range, profile: profile) { _, _ in true }
        guard oneByte || isTwoByte(profile) else { return }
        var i = range.lowerBound
        while i < range.upperBound {
            let first = packet[i]
            if first == 0 {
                i += 1
                continue
            }
            let id = oneByte ? first >> 4 : first
            if oneByte && id == oneByteStopID { return }
            let headerLength = oneByte ? 1 : 2
            let length = oneByte ? Int(first & 0x0F) + 1 : Int(packet[i + 1])
            let end = i + headerLength + length
            if let newID = map(id), newID != 0, !oneByte || newID < oneByteStopID {
                packet[i] = oneByte ? newID << 4 | (first & 0x0F) : newID
            } else {
                for k in i..<end { packet[k] = 0 }
            }
            i = end
        }
    }

    /// The elements of an extension block, in order.
    public static func elements(
        in packet: [UInt8], range: Range<Int>, profile: UInt16
    ) throws(RTPError) -> [RTPHeaderExtensionElement] {
        var out: [RTPHeaderExtensionElement] = []
        try forEachElement(in: packet, range: range, profile: profile) { id, value in
            out.append(RTPHeaderExtensionElement(id: id, value: Array(packet[value])))
            return true
        }
        return out
    }

    /// Encodes elements as an extension block: the one-byte form when every id is 1-14 and every value
    /// 1-16 bytes, the two-byte form otherwise (RFC 8285 section 4.1 lets a sender choose per packet).
    /// Returns the profile and the data padded to a multiple of 4 bytes.
    public static func encode(_ elements: [RTPHeaderExtensionElement]) throws(RTPError) -> (
        profile: UInt16, data: [UInt8]
    ) {
        let fitsOneByte = elements.allSatisfy { (1...14).contains($0.id) && (1...16).contains($0.value.count) }
        var data: [UInt8] = []
        for e in elements {
            guard e.id != 0, e.value.count <= 255 else {
                throw .invalidExtensionElement(id: e.id, length: e.value.count)
            }
            if fitsOneByte {
                data.append(e.id << 4 | UInt8(e.value.count - 1))
            } else {
                data += [e.id, UInt8(e.value.count)]
            }
            data += e.value
        }
        data.padToWord()
        guard data.count / 4 <= Int(UInt16.max) else { throw .tooManyItems(elements.count) }
        return (fitsOneByte ? oneByteProfile : twoByteProfile, data)
    }
}
