/// Conveniences over `[UInt8]` for tests and control-plane use. They grow or shrink the array in
/// place; with enough reserved capacity that costs no allocation.
extension SRTPSession {
    public func protect(rtp packet: inout [UInt8]) throws(SRTPError) {
        try grow(&packet, by: profile.rtpOverhead) { buffer, length throws(SRTPError) in
            try protect(rtp: buffer, length: length)
        }
    }

    public func unprotect(srtp packet: inout [UInt8]) throws(SRTPError) {
        try grow(&packet, by: 0) { buffer, length throws(SRTPError) in try unprotect(srtp: buffer, length: length) }
    }

    public func protectRTCP(_ packet: inout [UInt8]) throws(SRTPError) {
        try grow(&packet, by: profile.rtcpOverhead) { buffer, length throws(SRTPError) in
            try protectRTCP(buffer, length: length)
        }
    }

    public func unprotectRTCP(_ packet: inout [UInt8]) throws(SRTPError) {
        try grow(&packet, by: 0) { buffer, length throws(SRTPError) in try unprotectRTCP(buffer, length: length) }
    }

    /// Appends `room` zero bytes, runs the in-place transform, and trims the array to its result;
    /// on failure the array is left as it was given.
    private func grow(
        _ packet: inout [UInt8], by room: Int,
        _ body: (UnsafeMutableRawBufferPointer, Int) throws(SRTPError) -> Int
    ) throws(SRTPError) {
        let length = packet.count
        packet.append(contentsOf: repeatElement(0, count: room))
        let result: Result<Int, SRTPError> = packet.withUnsafeMutableBytes { buffer in
            do throws(SRTPError) {
                return .success(try body(buffer, length))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let newLength): packet.removeLast(packet.count - min(newLength, packet.count))
        case .failure(let error):
            packet.removeLast(room)
            throw error
        }
    }
}
