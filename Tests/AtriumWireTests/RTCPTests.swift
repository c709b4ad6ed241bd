import Testing

@testable import AtriumRTP

@Suite struct RTCPFeedbackTests {
    /// Byte layouts checked by hand against RFC 4585 section 6.1/6.2.1/6.3.1, RFC 5104 section 4.3.1 and
    /// draft-alvestrand-rmcat-remb section 2.2.
    @Test(
        arguments: [
            (
                RTCPPacket.pictureLossIndication(
                    PictureLossIndication(senderSSRC: 0x0102_0304, mediaSSRC: 0x0506_0708)),
                "81ce0002" + "01020304" + "05060708"
            ),
            (
                .nack(GenericNACK(senderSSRC: 1, mediaSSRC: 2, lost: [100, 101, 116])),
                "81cd0003" + "00000001" + "00000002" + "00648001"
            ),
            (
                .fullIntraRequest(
                    FullIntraRequest(senderSSRC: 1, entries: [.init(ssrc: 0xAABB_CCDD, sequenceNumber: 7)])),
                "84ce0004" + "00000001" + "00000000" + "aabbccdd" + "07000000"
            ),
            (
                .receiverEstimatedMaximumBitrate(
                    ReceiverEstimatedMaximumBitrate(senderSSRC: 1, bitrate: 1_000_000, ssrcs: [0x1122_3344])),
                "8fce0005" + "00000001" + "00000000" + "52454d42" + "010bd090" + "11223344"
            ),
        ] as [(RTCPPacket, String)])
    func handCheckedBytes(packet: RTCPPacket, bytes: String) throws {
        #expect(try packet.serialized() == hex(bytes))
        #expect(try RTCPCompound.parse(hex(bytes)) == [packet])
    }

    @Test func pliIsTwelveBytes() throws {
        let bytes = try RTCPPacket.pictureLossIndication(.init(senderSSRC: 0xDEAD_BEEF, mediaSSRC: 0x1234_5678))
            .serialized()
        #expect(bytes == [0x81, 0xce, 0x00, 0x02, 0xde, 0xad, 0xbe, 0xef, 0x12, 0x34, 0x56, 0x78])
    }

    /// RFC 4585 section 6.2.1: PID, then bit i of BLP for PID + i + 1.
    @Test(
        arguments: [
            (100, 0x0000, [100]), (100, 0x0001, [100, 101]), (100, 0x8000, [100, 116]), (100, 0x0005, [100, 101, 103]),
            (65535, 0x0005, [65535, 0, 2]), (0, 0xFFFF, Array(0...16)),
        ] as [(UInt16, UInt16, [UInt16])])
    func nackExpansion(pid: UInt16, blp: UInt16, lost: [UInt16]) {
        #expect(GenericNACK.Entry(packetID: pid, lostBitmask: blp).sequenceNumbers == lost)
    }

    @Test(
        arguments: [
            ([1, 2, 3], [GenericNACK.Entry(packetID: 1, lostBitmask: 0b11)]),
            ([1, 17], [.init(packetID: 1, lostBitmask: 0x8000)]),
            ([1, 18], [.init(packetID: 1, lostBitmask: 0), .init(packetID: 18, lostBitmask: 0)]),
            ([65534, 65535, 0, 1], [.init(packetID: 65534, lostBitmask: 0b111)]),
            ([5, 5, 6], [.init(packetID: 5, lostBitmask: 0b1)]), ([], []),
        ] as [([UInt16], [GenericNACK.Entry])])
    func nackPacking(lost: [UInt16], entries: [GenericNACK.Entry]) {
        #expect(GenericNACK.entries(for: lost) == entries)
    }

    /// Exponent and mantissa: exact below 2^18, rounded down above, saturated when the exponent overflows.
    @Test(
        arguments: [
            (0, 0, 0), (262_143, 0, 262_143), (262_144, 1, 131_072), (1_000_000, 2, 250_000),
            (2_500_000_001, 14, 152_587),
        ] as [(UInt64, UInt8, UInt32)])
    func rembBitrate(bitrate: UInt64, exponent: UInt8, mantissa: UInt32) throws {
        let e = ReceiverEstimatedMaximumBitrate.encode(bitrate)
        #expect(e.exponent == exponent && e.mantissa == mantissa)
        let packet = RTCPPacket.receiverEstimatedMaximumBitrate(.init(senderSSRC: 1, bitrate: bitrate, ssrcs: []))
        guard case .receiverEstimatedMaximumBitrate(let back) = try RTCPCompound.parse(try packet.serialized()).first
        else {
            Issue.record("not REMB")
            return
        }
        #expect(back.bitrate == UInt64(mantissa) << UInt64(exponent))
    }

    @Test func rembSaturates() throws {
        let bytes = hex("8fce0004" + "00000001" + "00000000" + "52454d42" + "00ffffff")
        guard case .receiverEstimatedMaximumBitrate(let remb) = try RTCPCompound.parse(bytes).first else {
            Issue.record("not REMB")
            return
        }
        #expect(remb.bitrate == UInt64.max)
    }

    /// Application-layer feedback that is not REMB is kept as received.
    @Test func otherApplicationFeedbackIsKept() throws {
        let bytes = hex("8fce0003" + "00000001" + "00000000" + "41424344")
        let packets = try RTCPCompound.parse(bytes)
        #expect(
            packets == [
                .other(header: RTCPHeader(count: 15, packetType: 206, length: 3), body: hex("000000010000000041424344"))
            ])
        #expect(try RTCPCompound.serialize(packets) == bytes)
    }
}

@Suite struct RTCPReportTests {
    static let block = ReceptionReport(
        ssrc: 0x0A0B_0C0D, fractionLost: 0x40, cumulativeLost: -1, extendedHighestSequence: 0x0001_0005, jitter: 9,
        lastSenderReport: 0x1111_2222, delaySinceLastSenderReport: 0x0001_8000)

    @Test func receiverReportBytes() throws {
        let rr = RTCPPacket.receiverReport(ReceiverReport(ssrc: 1, reports: [Self.block]))
        let bytes = hex(
            "81c90007" + "00000001" + "0a0b0c0d" + "40ffffff" + "00010005" + "00000009" + "11112222" + "00018000")
        #expect(try rr.serialized() == bytes)
        #expect(try RTCPCompound.parse(bytes) == [rr])
    }

    @Test func senderReportRoundTrip() throws {
        let sr = RTCPPacket.senderReport(
            SenderReport(
                ssrc: 7, ntpTimestamp: 0xE000_0000_8000_0000, rtpTimestamp: 90000, packetCount: 10, octetCount: 12000,
                reports: [Self.block, Self.block]))
        let bytes = try sr.serialized()
        #expect(bytes.count == 28 + 2 * 24)
        #expect(Array(bytes.prefix(4)) == hex("82c80012"))
        #expect(try RTCPCompound.parse(bytes) == [sr])
    }

    @Test func sdesBytes() throws {
        let sdes = RTCPPacket.sourceDescription(
            SourceDescription(chunks: [.init(source: 0x0102_0304, items: [.cname("abcd")])]))
        let bytes = hex("81ca0003" + "01020304" + "0104616263640000")
        #expect(try sdes.serialized() == bytes)
        #expect(try RTCPCompound.parse(bytes) == [sdes])
    }

    @Test func goodbyeWithReason() throws {
        let bye = RTCPPacket.goodbye(Goodbye(sources: [1, 2], reason: Array("gone".utf8)))
        let bytes = hex("82cb0004" + "00000001" + "00000002" + "04676f6e" + "65000000")
        #expect(try bye.serialized() == bytes)
        #expect(try RTCPCompound.parse(bytes) == [bye])
    }

    /// A typical compound: RR, SDES, then feedback; the last packet padded (RFC 3550 section 6.4.1).
    @Test func compoundRoundTripAndPadding() throws {
        let packets: [RTCPPacket] = [
            .receiverReport(ReceiverReport(ssrc: 1, reports: [Self.block])),
            .sourceDescription(
                SourceDescription(chunks: [.init(source: 1, items: [.cname("x"), .init(type: 6, text: [])])])),
            .goodbye(Goodbye(sources: [])),
            .pictureLossIndication(PictureLossIndication(senderSSRC: 1, mediaSSRC: 2)),
        ]
        let bytes = try RTCPCompound.serialize(packets)
        #expect(try RTCPCompound.parse(bytes) == packets)
        var padded = bytes
        let last = bytes.count - 12
        padded[last] |= 0x20
        padded[last + 3] += 1
        padded += [0, 0, 0, 4]
        #expect(try RTCPCompound.parse(padded) == packets)
    }
}
