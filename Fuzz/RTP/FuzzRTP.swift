import AtriumForwarding
import AtriumRTP
import FuzzSupport

/// The fuzz target: parses a datagram as an RTP header and its payload as each codec's descriptor.
@main struct FuzzRTP: FuzzTarget {
    static func fuzz(_ bytes: [UInt8]) {
        guard let header = try? RTPHeader(parsing: bytes) else { return }
        _ = header.ssrc
        for codec in VideoCodec.allCases { _ = KeyFrame.starts(bytes, codec: codec) }
    }
}
