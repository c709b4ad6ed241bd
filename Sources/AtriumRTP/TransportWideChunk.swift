/// A packet status symbol (draft-holmer-rmcat-transport-wide-cc-extensions-01 section 3.1.1).
public enum TransportWideStatus: UInt8, Sendable, CaseIterable {
    case notReceived = 0
    /// Received; an 8-bit unsigned delta follows (0 to 63.75 ms).
    case receivedSmallDelta = 1
    /// Received; a 16-bit signed delta follows (-8192 to 8191.75 ms).
    case receivedLargeDelta = 2
    /// Reserved. The draft's own examples use it for "received, without a receive delta"; no delta
    /// follows it, and this module never writes it.
    case reserved = 3

    public var hasDelta: Bool { self == .receivedSmallDelta || self == .receivedLargeDelta }
}

/// A 16-bit packet status chunk (draft section 3.1.2-3.1.4).
///
/// Run length chunk: T=0, a 2-bit symbol, a 13-bit run length.
/// ```
/// |0| S |       Run Length        |
/// ```
/// Status vector chunk: T=1, then S=0 for fourteen 1-bit symbols (0 not received, 1 received with a
/// small delta; the draft's prose has these the other way round, its example and every implementation
/// this way) or S=1 for seven 2-bit symbols.
/// ```
/// |1|S|       symbol list         |
/// ```
public enum TransportWideChunk: Equatable, Sendable {
    case runLength(TransportWideStatus, length: UInt16)
    case oneBitVector([TransportWideStatus])
    case twoBitVector([TransportWideStatus])

    static let maxRunLength: UInt16 = 0x1FFF
    static let oneBitSymbols = 14
    static let twoBitSymbols = 7

    public init(rawValue: UInt16) {
        if rawValue & 0x8000 == 0 {
            let symbol = TransportWideStatus(rawValue: UInt8(truncatingIfNeeded: (rawValue >> 13) & 0x3)) ?? .reserved
            self = .runLength(symbol, length: rawValue & Self.maxRunLength)
        } else if rawValue & 0x4000 == 0 {
            self = .oneBitVector(
                (0..<Self.oneBitSymbols).map { i in
                    rawValue & (1 << (13 - i)) != 0 ? .receivedSmallDelta : .notReceived
                })
        } else {
            self = .twoBitVector(
                (0..<Self.twoBitSymbols).map { i in
                    TransportWideStatus(rawValue: UInt8(truncatingIfNeeded: (rawValue >> (12 - 2 * i)) & 0x3))
                        ?? .reserved
                })
        }
    }

    public var rawValue: UInt16 {
        switch self {
        case .runLength(let s, let length):
            return UInt16(s.rawValue) << 13 | min(length, Self.maxRunLength)
        case .oneBitVector(let symbols):
            var v: UInt16 = 0x8000
            for (i, s) in symbols.prefix(Self.oneBitSymbols).enumerated() where s != .notReceived {
                v |= 1 << (13 - i)
            }
            return v
        case .twoBitVector(let symbols):
            var v: UInt16 = 0xC000
            for (i, s) in symbols.prefix(Self.twoBitSymbols).enumerated() {
                v |= UInt16(s.rawValue) << (12 - 2 * i)
            }
            return v
        }
    }

    /// How many statuses the chunk describes.
    public var count: Int {
        switch self {
        case .runLength(_, let length): Int(length)
        case .oneBitVector: Self.oneBitSymbols
        case .twoBitVector: Self.twoBitSymbols
        }
    }

    func appendStatuses(to out: inout [TransportWideStatus], limit: Int) {
        let room = max(limit - out.count, 0)
        switch self {
        case .runLength(let s, let length): out += repeatElement(s, count: min(Int(length), room))
        case .oneBitVector(let symbols), .twoBitVector(let symbols): out += symbols.prefix(room)
        }
    }

    /// Encodes statuses as chunks: a run length chunk for a run of 7 or more equal statuses (or the
    /// last ones), otherwise a one-bit vector when the next 14 are only "not received" and "small delta",
    /// otherwise a two-bit vector of 7. Vectors past the last status are filled with "not received".
    static func encode(_ statuses: [TransportWideStatus]) -> [TransportWideChunk] {
        var chunks: [TransportWideChunk] = []
        var i = 0
        while i < statuses.count {
            let s = statuses[i]
            var run = 1
            while i + run < statuses.count && statuses[i + run] == s && run < Int(maxRunLength) { run += 1 }
            if run >= twoBitSymbols || i + run == statuses.count {
                chunks.append(.runLength(s, length: UInt16(run)))
                i += run
                continue
            }
            let next14 = statuses[i..<min(i + oneBitSymbols, statuses.count)]
            if next14.count == oneBitSymbols && next14.allSatisfy({ $0 == .notReceived || $0 == .receivedSmallDelta }) {
                chunks.append(.oneBitVector(Array(next14)))
                i += oneBitSymbols
            } else {
                let next7 = Array(statuses[i..<min(i + twoBitSymbols, statuses.count)])
                chunks.append(.twoBitVector(next7 + repeatElement(.notReceived, count: twoBitSymbols - next7.count)))
                i += next7.count
            }
        }
        return chunks
    }
}
