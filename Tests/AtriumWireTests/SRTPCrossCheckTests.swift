import AtriumTestSupport
import Testing

@testable import AtriumSRTP

/// The OpenSSL backend against libsrtp2, the reference: random packets of several SSRCs through both,
/// protect giving byte-identical output and unprotect the same plaintext or the same refusal, across
/// sequence-number rollovers, with losses, reordering, retransmissions, replays, forgeries and RTCP.
@Suite struct SRTPCrossCheckTests {
    private typealias Outcome = Result<[UInt8], SRTPError>

    private struct Pair {
        let openSSL: SRTPSession
        let libsrtp: SRTPSession

        init(_ profile: SRTPProfile, key: [UInt8], salt: [UInt8], direction: SRTPSession.Direction) throws {
            openSSL = try SRTPSession(
                profile: profile, masterKey: key, masterSalt: salt, direction: direction,
                allowRepeatTransmission: direction == .outbound, backend: .openSSL)
            libsrtp = try SRTPSession(
                profile: profile, masterKey: key, masterSalt: salt, direction: direction,
                allowRepeatTransmission: direction == .outbound, backend: .libsrtp)
        }
    }

    private static func run(_ packet: [UInt8], _ body: (inout [UInt8]) throws(SRTPError) -> Void) -> Outcome {
        var p = packet
        do throws(SRTPError) {
            try body(&p)
            return .success(p)
        } catch {
            return .failure(error)
        }
    }

    /// Both senders protect `packet`; their outputs must be equal.
    private static func protect(_ pair: Pair, _ packet: [UInt8], rtcp: Bool = false) -> Outcome {
        let a = run(packet) { p throws(SRTPError) in
            if rtcp { try pair.openSSL.protectRTCP(&p) } else { try pair.openSSL.protect(rtp: &p) }
        }
        let b = run(packet) { p throws(SRTPError) in
            if rtcp { try pair.libsrtp.protectRTCP(&p) } else { try pair.libsrtp.protect(rtp: &p) }
        }
        #expect(a == b)
        return a
    }

    /// Both receivers unprotect `packet`; they must agree on the plaintext or the refusal.
    private static func unprotect(_ pair: Pair, _ packet: [UInt8], rtcp: Bool = false) -> Outcome {
        let a = run(packet) { p throws(SRTPError) in
            if rtcp { try pair.openSSL.unprotectRTCP(&p) } else { try pair.openSSL.unprotect(srtp: &p) }
        }
        let b = run(packet) { p throws(SRTPError) in
            if rtcp { try pair.libsrtp.unprotectRTCP(&p) } else { try pair.libsrtp.unprotect(srtp: &p) }
        }
        #expect(a == b)
        return a
    }

    private static func rtp(ssrc: UInt32, seq: UInt16, using g: inout SeededGenerator) -> [UInt8] {
        let csrcs = Int.random(in: 0...2, using: &g)
        let withExtension = Bool.random(using: &g)
        var p: [UInt8] = [0x80 | UInt8(csrcs) | (withExtension ? 0x10 : 0), UInt8.random(in: 0...255, using: &g)]
        p += [UInt8(seq >> 8), UInt8(seq & 0xff)] + (0..<4).map { _ in UInt8.random(in: 0...255, using: &g) }
        p += (0..<4).map { UInt8(truncatingIfNeeded: ssrc >> (24 - 8 * UInt32($0))) }
        p += (0..<(4 * csrcs)).map { _ in UInt8.random(in: 0...255, using: &g) }
        if withExtension {
            let words = Int.random(in: 0...3, using: &g)
            p += [0xBE, 0xDE, 0, UInt8(words)] + (0..<(4 * words)).map { _ in UInt8.random(in: 0...255, using: &g) }
        }
        let payload = [0, 1, 16, 160, 1100].randomElement(using: &g)! + Int.random(in: 0...7, using: &g)
        return p + (0..<payload).map { _ in UInt8.random(in: 0...255, using: &g) }
    }

    private static func rtcp(ssrc: UInt32, using g: inout SeededGenerator) -> [UInt8] {
        var p: [UInt8] =
            [0x81, 0xc9, 0x00, 0x07] + (0..<4).map { UInt8(truncatingIfNeeded: ssrc >> (24 - 8 * UInt32($0))) }
        p += (0..<24).map { _ in UInt8.random(in: 0...255, using: &g) }
        return p
    }

    @Test(arguments: SRTPProfile.allCases)
    func agreesWithLibsrtpOnRandomTraffic(_ profile: SRTPProfile) throws {
        var g = SeededGenerator(seed: profile == .aeadAES128GCM ? 7714 : 3711)
        let key = (0..<profile.keyLength).map { _ in UInt8.random(in: 0...255, using: &g) }
        let salt = (0..<profile.saltLength).map { _ in UInt8.random(in: 0...255, using: &g) }
        let sender = try Pair(profile, key: key, salt: salt, direction: .outbound)
        let receiver = try Pair(profile, key: key, salt: salt, direction: .inbound)
        // One stream starts just before the wrap, one wraps several times with large gaps, one is slow.
        var streams: [(ssrc: UInt32, seq: UInt16, step: ClosedRange<Int>)] = [
            (0x1111_1111, 65_500, 1...3), (0x2222_2222, 30_000, 1...400), (0xFFFF_FFFF, 65_535, 1...1),
        ]
        var delayed: [(plain: [UInt8], protected: [UInt8])] = []
        var delivered: [[UInt8]] = []
        var stale: [UInt8]?
        var counts = (rtp: 0, replays: 0, forgeries: 0, retransmissions: 0, rtcp: 0, reordered: 0)
        for round in 0..<3000 {
            let s = Int.random(in: 0..<streams.count, using: &g)
            let plain = Self.rtp(ssrc: streams[s].ssrc, seq: streams[s].seq, using: &g)
            streams[s].seq &+= UInt16(Int.random(in: streams[s].step, using: &g))
            guard case .success(let protected) = Self.protect(sender, plain) else {
                Issue.record("protect failed in round \(round)")
                return
            }
            #expect(protected.count == plain.count + profile.rtpOverhead)
            switch Int.random(in: 0..<20, using: &g) {
            case 0:
                continue  // lost
            case 1:
                delayed.append((plain, protected))  // arrives later, out of order
                continue
            case 2 where stale == nil && round < 100:
                stale = protected  // held back until it is behind every window
                continue
            case 3:
                // A retransmission under the same sequence number: the same bytes again.
                #expect(Self.protect(sender, plain) == .success(protected))
                counts.retransmissions += 1
            default: break
            }
            #expect(Self.unprotect(receiver, protected) == .success(plain))
            counts.rtp += 1
            delivered.append(protected)
            // A recent packet again (one 2^15 indices back would be read under another rollover counter and
            // fail authentication instead).
            if Int.random(in: 0..<10, using: &g) == 0, let old = delivered.suffix(20).randomElement(using: &g) {
                #expect(Self.unprotect(receiver, old) == .failure(.replayed))
                counts.replays += 1
            }
            if Int.random(in: 0..<10, using: &g) == 0, let late = delayed.popLast() {
                // Still inside the window it is accepted; the fast stream may have left it behind.
                switch Self.unprotect(receiver, late.protected) {
                case .success(let p):
                    #expect(p == late.plain)
                    counts.reordered += 1
                case .failure(let e): #expect(e == .replayed)
                }
            }
            if Int.random(in: 0..<15, using: &g) == 0 {
                var forged = protected
                forged[Int.random(in: 0..<forged.count, using: &g)] ^= UInt8(1 << Int.random(in: 0...7, using: &g))
                let outcome = Self.unprotect(receiver, forged)
                // A flipped sequence-number bit may land on an index already seen, a flipped CSRC count or
                // extension bit make the header overrun: refused either way, the same way by both.
                #expect(
                    outcome == .failure(.authenticationFailed) || outcome == .failure(.replayed)
                        || outcome == .failure(.malformedPacket))
                counts.forgeries += 1
            }
            if round % 40 == 0 {
                let report = Self.rtcp(ssrc: streams[s].ssrc, using: &g)
                let sealed = try Self.protect(sender, report, rtcp: true).get()
                #expect(sealed.count == report.count + profile.rtcpOverhead)
                #expect(Self.unprotect(receiver, sealed, rtcp: true) == .success(report))
                #expect(Self.unprotect(receiver, sealed, rtcp: true) == .failure(.replayed))
                var forged = try Self.protect(sender, report, rtcp: true).get()
                forged[9] ^= 0x40
                #expect(Self.unprotect(receiver, forged, rtcp: true) == .failure(.authenticationFailed))
                counts.rtcp += 1
            }
        }
        // Far behind the window by now: too old for both.
        if let stale { #expect(Self.unprotect(receiver, stale) == .failure(.replayed)) }
        #expect(stale != nil && counts.rtp > 2000 && counts.replays > 50 && counts.forgeries > 50)
        #expect(counts.retransmissions > 50 && counts.rtcp > 50 && counts.reordered > 20)
        // Every stream crossed 65535 at least once.
        #expect(streams[0].seq < 65_500 && streams[2].seq < 65_535)
    }

    /// A receiver given the other backend's sender output: OpenSSL to libsrtp and libsrtp to OpenSSL.
    @Test(arguments: SRTPProfile.allCases, SRTPBackend.allCases)
    func eachBackendReadsTheOther(_ profile: SRTPProfile, _ senderBackend: SRTPBackend) throws {
        let key = [UInt8](repeating: 0x5A, count: profile.keyLength)
        let salt = [UInt8](repeating: 0xA5, count: profile.saltLength)
        let other: SRTPBackend = senderBackend == .openSSL ? .libsrtp : .openSSL
        let sender = try SRTPSession(
            profile: profile, masterKey: key, masterSalt: salt, direction: .outbound, backend: senderBackend)
        let receiver = try SRTPSession(
            profile: profile, masterKey: key, masterSalt: salt, direction: .inbound, backend: other)
        var g = SeededGenerator(seed: 42)
        var seq: UInt16 = 65_000
        for _ in 0..<1500 {
            let plain = Self.rtp(ssrc: 0xCAFE_BABE, seq: seq, using: &g)
            seq &+= 1
            var p = plain
            try sender.protect(rtp: &p)
            try receiver.unprotect(srtp: &p)
            #expect(p == plain)
        }
        let report = Self.rtcp(ssrc: 0xCAFE_BABE, using: &g)
        var r = report
        try sender.protectRTCP(&r)
        try receiver.unprotectRTCP(&r)
        #expect(r == report)
    }

    /// Random and hostile datagrams never trap: every one is refused with an error.
    @Test(arguments: SRTPProfile.allCases)
    func malformedPacketsAreErrors(_ profile: SRTPProfile) throws {
        let key = [UInt8](repeating: 1, count: profile.keyLength)
        let salt = [UInt8](repeating: 2, count: profile.saltLength)
        let receiver = try SRTPSession(
            profile: profile, masterKey: key, masterSalt: salt, direction: .inbound, backend: .openSSL)
        let sender = try SRTPSession(
            profile: profile, masterKey: key, masterSalt: salt, direction: .outbound, backend: .openSSL)
        var g = SeededGenerator(seed: 99)
        for var packet in g.byteStrings(count: 3000, maxLength: 120, prefix: [0x80]) {
            var copy = packet
            #expect(throws: SRTPError.self) { try receiver.unprotect(srtp: &packet) }
            #expect(throws: SRTPError.self) { try receiver.unprotectRTCP(&copy) }
        }
        // Headers whose CSRC count or extension length run past the packet.
        let hostile: [[UInt8]] = [
            [0x8F, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 40),
            [0x90, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xBE, 0xDE, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 40),
            [0x90, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xBE],
        ]
        for var packet in hostile {
            var copy = packet
            #expect(throws: SRTPError.malformedPacket) { try sender.protect(rtp: &packet) }
            #expect(throws: SRTPError.self) { try receiver.unprotect(srtp: &copy) }
        }
    }

    /// The OpenSSL backend keeps state for at most `maximumStreams` SSRCs; one more is refused.
    @Test func streamCountIsBounded() throws {
        let sender = try SRTPSession(
            profile: .aeadAES128GCM, masterKey: [UInt8](repeating: 3, count: 16),
            masterSalt: [UInt8](repeating: 4, count: 12), direction: .outbound, backend: .openSSL)
        var g = SeededGenerator(seed: 1)
        for ssrc in 0..<UInt32(SRTPSession.maximumStreams) {
            var p = Self.rtp(ssrc: ssrc, seq: 1, using: &g)
            try sender.protect(rtp: &p)
        }
        var extra = Self.rtp(ssrc: 0xABCD_EF01, seq: 1, using: &g)
        #expect(throws: SRTPError.tooManyStreams) { try sender.protect(rtp: &extra) }
    }
}
