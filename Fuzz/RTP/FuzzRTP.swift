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
        // The SVC reads: VP9's descriptor and scalability structure, AV1's dependency descriptor (the
        // payload taken as an extension value), and what a selector decides from them.
        if let d = VP9Descriptor(payload) {
            if let at = d.scalabilityOffset { _ = payload.withUnsafeBytes { VP9Scalability.layers($0, at: at) } }
            var s = SVCSelector(target: VideoLayer(spatial: 1, temporal: 2))
            _ = s.decide(
                spatial: Int(d.spatialLayer), temporal: Int(d.temporalLayer), pictureStart: d.startsPicture,
                keyPicture: d.startsKeyPicture, switchingUp: d.switchingUp, endOfFrame: d.endOfFrame)
        }
        if let d = DependencyDescriptor(payload), let s = d.structure {
            _ = s.layer(templateID: d.templateID)
        }
    }
}
