import AtriumRTP
import FuzzSupport

/// The fuzz target: parses a datagram as a compound RTCP packet.
@main struct FuzzRTCP: FuzzTarget {
    static func fuzz(_ bytes: [UInt8]) {
        _ = try? RTCPCompound.parse(bytes)
    }
}
