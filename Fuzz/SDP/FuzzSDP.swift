import AtriumSDP
import FuzzSupport

/// The fuzz target: parses SDP; what parses must serialize and parse again.
@main struct FuzzSDP: FuzzTarget {
    static func fuzz(_ bytes: [UInt8]) {
        guard let sdp = try? SessionDescription.parse(bytes) else { return }
        _ = try? SessionDescription.parse(sdp.serialized())
    }
}
