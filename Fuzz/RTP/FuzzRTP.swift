import AtriumForwarding
import AtriumRTP
import FuzzSupport

/// The fuzz target: parses a datagram as an RTP header and its payload as each codec's descriptor.
@main struct FuzzRTP: FuzzTarget {
    static func fuzz(_ bytes: [UInt8]) {
        guard let header = try? RTPHeader(parsing: bytes) else { return }
        _ = header.ssrc
        for codec in VideoCodec.allCases { _ = KeyFrame.starts(bytes, codec: codec) }
        // The VP8 descriptor read and rewritten in place, as a simulcast consumer does.
        var payload = Array(bytes[header.payloadRange])
        if let d = VP8Descriptor(payload) {
            var rewriter = VP8Rewriter()
            payload.withUnsafeMutableBytes { rewriter.rewrite($0, d) }
            if VP8Descriptor(payload) != nil && VP8Descriptor(payload)?.length != d.length {
                fatalError("the rewrite changed the descriptor's length")
            }
        }
    }
}
