import Testing

@testable import AtriumSRTP

private func pair(_ profile: SRTPProfile, _ backend: SRTPBackend) throws -> (SRTPSession, SRTPSession) {
    let key = [UInt8](repeating: 0x11, count: profile.keyLength)
    let salt = [UInt8](repeating: 0x22, count: profile.saltLength)
    return (
        try SRTPSession(profile: profile, masterKey: key, masterSalt: salt, direction: .outbound, backend: backend),
        try SRTPSession(profile: profile, masterKey: key, masterSalt: salt, direction: .inbound, backend: backend)
    )
}

private func rtp(seq: UInt16, ssrc: UInt32 = 0x1234_5678, payload: Int = 160) -> [UInt8] {
    var p: [UInt8] = [0x80, 0x6f, UInt8(seq >> 8), UInt8(seq & 0xff), 0, 0, 0x10, 0]
    p += (0..<4).map { UInt8(truncatingIfNeeded: ssrc >> (24 - 8 * UInt32($0))) }
    return p + (0..<payload).map { UInt8(truncatingIfNeeded: $0 &* 7) }
}

private let rtcpReceiverReport: [UInt8] =
    [0x81, 0xc9, 0x00, 0x07, 0x12, 0x34, 0x56, 0x78] + [UInt8](repeating: 5, count: 24)

@Suite struct SRTPSessionTests {
    @Test(arguments: SRTPProfile.allCases, SRTPBackend.allCases)
    func roundTripsRTPAndRTCP(_ profile: SRTPProfile, _ backend: SRTPBackend) throws {
        let (sender, receiver) = try pair(profile, backend)
        for seq in UInt16(65530)...UInt16(65535) {
            let plain = rtp(seq: seq)
            var packet = plain
            try sender.protect(rtp: &packet)
            #expect(packet.count == plain.count + profile.rtpOverhead)
            #expect(packet.prefix(12) == plain.prefix(12) && packet != plain)
            try receiver.unprotect(srtp: &packet)
            #expect(packet == plain)
        }
        var report = rtcpReceiverReport
        try sender.protectRTCP(&report)
        #expect(report.count == rtcpReceiverReport.count + profile.rtcpOverhead)
        try receiver.unprotectRTCP(&report)
        #expect(report == rtcpReceiverReport)
    }

    /// The in-place API writes exactly the profile's overhead and nothing past it.
    @Test(arguments: SRTPProfile.allCases, SRTPBackend.allCases)
    func writesNothingPastTheTrailer(_ profile: SRTPProfile, _ backend: SRTPBackend) throws {
        let (sender, receiver) = try pair(profile, backend)
        let plain = rtp(seq: 1, payload: 1000)
        var buffer = plain + [UInt8](repeating: 0xEE, count: SRTPSession.maximumTrailerLength)
        let length = try buffer.withUnsafeMutableBytes { try sender.protect(rtp: $0, length: plain.count) }
        #expect(length == plain.count + profile.rtpOverhead)
        #expect(buffer[length...].allSatisfy { $0 == 0xEE })
        let back = try buffer.withUnsafeMutableBytes { try receiver.unprotect(srtp: $0, length: length) }
        #expect(Array(buffer.prefix(back)) == plain)
    }

    @Test(arguments: SRTPProfile.allCases, SRTPBackend.allCases)
    func tamperedPacketsFailAuthentication(_ profile: SRTPProfile, _ backend: SRTPBackend) throws {
        let (sender, receiver) = try pair(profile, backend)
        var packet = rtp(seq: 10)
        try sender.protect(rtp: &packet)
        for index in [1, 11, 12, 40, packet.count - 1] {
            var forged = packet
            forged[index] ^= 0x01
            #expect(throws: SRTPError.authenticationFailed) { try receiver.unprotect(srtp: &forged) }
            #expect(forged.count == packet.count)
        }
        var report = rtcpReceiverReport
        try sender.protectRTCP(&report)
        report[10] ^= 0x80
        #expect(throws: SRTPError.authenticationFailed) { try receiver.unprotectRTCP(&report) }
        // The untouched packet still verifies after the forgeries.
        try receiver.unprotect(srtp: &packet)
    }

    @Test(arguments: SRTPProfile.allCases, SRTPBackend.allCases)
    func replayedPacketsAreRefused(_ profile: SRTPProfile, _ backend: SRTPBackend) throws {
        let (sender, receiver) = try pair(profile, backend)
        // Protected now, delivered after the receiver's window has moved past it.
        var old = rtp(seq: 90)
        try sender.protect(rtp: &old)
        var first = rtp(seq: 100)
        try sender.protect(rtp: &first)
        var copy = first
        try receiver.unprotect(srtp: &first)
        #expect(throws: SRTPError.replayed) { try receiver.unprotect(srtp: &copy) }
        var report = rtcpReceiverReport
        try sender.protectRTCP(&report)
        let replay = report
        try receiver.unprotectRTCP(&report)
        var again = replay
        #expect(throws: SRTPError.replayed) { try receiver.unprotectRTCP(&again) }
        // Far behind the window: refused as too old.
        for seq in UInt16(101)...UInt16(1300) {
            var p = rtp(seq: seq, payload: 4)
            try sender.protect(rtp: &p)
            try receiver.unprotect(srtp: &p)
        }
        #expect(throws: SRTPError.replayed) { try receiver.unprotect(srtp: &old) }
    }

    @Test(arguments: SRTPBackend.allCases)
    func outboundRefusesRepeatedSequenceUnlessAllowed(_ backend: SRTPBackend) throws {
        let key = [UInt8](repeating: 1, count: 16)
        let salt = [UInt8](repeating: 2, count: 12)
        let strict = try SRTPSession(
            profile: .aeadAES128GCM, masterKey: key, masterSalt: salt, direction: .outbound, backend: backend)
        var a = rtp(seq: 5)
        var b = rtp(seq: 5)
        try strict.protect(rtp: &a)
        #expect(throws: SRTPError.replayed) { try strict.protect(rtp: &b) }
        let lenient = try SRTPSession(
            profile: .aeadAES128GCM, masterKey: key, masterSalt: salt, direction: .outbound,
            allowRepeatTransmission: true, backend: backend)
        var c = rtp(seq: 5)
        var d = rtp(seq: 5)
        try lenient.protect(rtp: &c)
        try lenient.protect(rtp: &d)
        #expect(c == d)
    }

    @Test(arguments: SRTPBackend.allCases)
    func badLengthsAndKeysAreTypedErrors(_ backend: SRTPBackend) throws {
        #expect(throws: SRTPError.invalidKeyLength(expected: 28, actual: 30)) {
            try SRTPSession(
                profile: .aeadAES128GCM, masterKey: [UInt8](repeating: 0, count: 16),
                masterSalt: [UInt8](repeating: 0, count: 14), direction: .outbound)
        }
        let (sender, receiver) = try pair(.aesCM128HMACSHA1_80, backend)
        var short: [UInt8] = [0x80, 0, 0, 1]
        #expect(throws: SRTPError.badLength) { try sender.protect(rtp: &short) }
        #expect(throws: SRTPError.badLength) { try receiver.unprotectRTCP(&short) }
        var empty: [UInt8] = []
        #expect(throws: SRTPError.badLength) { try receiver.unprotect(srtp: &empty) }
        // No room for the tag in a caller's buffer.
        var exact = rtp(seq: 1)
        let n = exact.count
        #expect(throws: SRTPError.badLength) {
            try exact.withUnsafeMutableBytes { try sender.protect(rtp: $0, length: n) }
        }
        // A length beyond the buffer is refused before libsrtp reads it.
        #expect(throws: SRTPError.badLength) {
            try exact.withUnsafeMutableBytes { try receiver.unprotect(srtp: $0, length: n + 1) }
        }
        // A header-only packet shorter than the tag cannot authenticate.
        var tiny = rtp(seq: 2, payload: 0)
        #expect(throws: (any Error).self) { try receiver.unprotect(srtp: &tiny) }
    }

    @Test func profilesDescribeTheirDTLSParameters() {
        #expect(SRTPProfile.aeadAES128GCM.dtlsProfileID == 0x0007)
        #expect(SRTPProfile.aesCM128HMACSHA1_80.dtlsProfileID == 0x0001)
        #expect(SRTPProfile.aeadAES128GCM.keyLength + SRTPProfile.aeadAES128GCM.saltLength == 28)
        #expect(SRTPProfile.aesCM128HMACSHA1_80.keyLength + SRTPProfile.aesCM128HMACSHA1_80.saltLength == 30)
    }
}
