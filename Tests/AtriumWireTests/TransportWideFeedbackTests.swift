import AtriumTestSupport
import Testing

@testable import AtriumRTP

@Suite struct TransportWideFeedbackTests {
    typealias S = TransportWideStatus

    /// The chunk examples of draft-holmer-rmcat-transport-wide-cc-extensions-01 sections 3.1.3 and 3.1.4.
    @Test(arguments: [
        // |0|0 0|0 0 0 0 0 1 1 0 1 1 1 0 1|: a run of 221 "not received".
        (0x00DD as UInt16, TransportWideChunk.runLength(.notReceived, length: 221)),
        // |0|1 1|0 0 0 0 0 0 0 0 1 1 0 0 0|: a run of 24 of symbol 11.
        (0x6018, .runLength(.reserved, length: 24)),
        // |1|0|0 1 1 1 1 1 0 0 0 1 1 1 0 0|: 1 not received, 5 received, 3 not, 3 received, 2 not.
        (
            0x9F1C,
            .oneBitVector(
                [S.notReceived] + Array(repeating: S.receivedSmallDelta, count: 5)
                    + Array(repeating: S.notReceived, count: 3) + Array(repeating: S.receivedSmallDelta, count: 3) + [
                        S.notReceived, S.notReceived,
                    ])
        ),
        // |1|1|0 0 1 1 0 1 0 1 0 1 0 0 0 0|: 1 not received, 1 symbol 11, 3 received, 2 not received.
        (
            0xCD50,
            .twoBitVector([
                .notReceived, .reserved, .receivedSmallDelta, .receivedSmallDelta, .receivedSmallDelta, .notReceived,
                .notReceived,
            ])
        ),
        (0x2001, .runLength(.receivedSmallDelta, length: 1)),
        (0x5FFF, .runLength(.receivedLargeDelta, length: 8191)),
    ])
    func draftChunkExamples(raw: UInt16, chunk: TransportWideChunk) {
        #expect(TransportWideChunk(rawValue: raw) == chunk)
        #expect(chunk.rawValue == raw)
    }

    /// Statuses [small, not received, large] with deltas [4, -8]: one two-bit vector chunk, a one-byte and a
    /// two-byte delta, then padding to a word (hand-assembled).
    @Test func handAssembledPacket() throws {
        let feedback = TransportWideFeedback(
            senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 10, referenceTime: 1, feedbackPacketCount: 5,
            statuses: [.receivedSmallDelta, .notReceived, .receivedLargeDelta], receiveDeltas: [4, -8])
        let bytes = hex(
            "8fcd0006" + "00000001" + "00000002" + "000a0003" + "00000105" + "d200" + "04" + "fff8" + "000000")
        let packet = RTCPPacket.transportWideFeedback(feedback)
        #expect(try packet.serialized() == bytes)
        #expect(try RTCPCompound.parse(bytes) == [packet])
        #expect(feedback.packets.map(\.sequenceNumber) == [10, 11, 12])
        #expect(feedback.packets.map(\.delta) == [4, nil, -8])
    }

    /// Negative reference times are sign-extended from 24 bits; base sequence numbers wrap.
    @Test func negativeReferenceTimeAndWrap() throws {
        let feedback = TransportWideFeedback(
            senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 65534, referenceTime: -2, feedbackPacketCount: 255,
            statuses: Array(repeating: .receivedSmallDelta, count: 3), receiveDeltas: [0, 255, 1])
        guard
            case .transportWideFeedback(let back) = try RTCPCompound.parse(
                try RTCPPacket.transportWideFeedback(feedback).serialized()
            ).first
        else {
            Issue.record("not transport-wide feedback")
            return
        }
        #expect(back == feedback)
        #expect(back.packets.map(\.sequenceNumber) == [65534, 65535, 0])
    }

    /// Seeded random status lists (with long runs) survive encode and decode, whichever chunks are chosen.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func randomRoundTrip(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        var statuses: [S] = []
        while statuses.count < 600 {
            let s =
                [S.notReceived, .receivedSmallDelta, .receivedLargeDelta].randomElement(using: &rng) ?? .notReceived
            statuses += repeatElement(s, count: Bool.random(using: &rng) ? 1 : Int.random(in: 1...40, using: &rng))
        }
        let deltas: [Int16] = statuses.compactMap { s in
            switch s {
            case .receivedSmallDelta: Int16.random(in: 0...255, using: &rng)
            case .receivedLargeDelta: Int16.random(in: Int16.min...Int16.max, using: &rng)
            default: nil
            }
        }
        let feedback = TransportWideFeedback(
            senderSSRC: 9, mediaSSRC: 0, baseSequenceNumber: UInt16.random(in: 0...65535, using: &rng),
            referenceTime: 0x7F_FFFF, feedbackPacketCount: 1, statuses: statuses, receiveDeltas: deltas)
        let bytes = try RTCPPacket.transportWideFeedback(feedback).serialized()
        #expect(try RTCPCompound.parse(bytes) == [.transportWideFeedback(feedback)])
    }

    @Test func writerRefusesInconsistentDeltas() {
        func write(_ statuses: [S], _ deltas: [Int16]) throws {
            let f = TransportWideFeedback(
                senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 0, referenceTime: 0, feedbackPacketCount: 0,
                statuses: statuses, receiveDeltas: deltas)
            _ = try RTCPPacket.transportWideFeedback(f).serialized()
        }
        #expect(throws: RTPError.valueOutOfRange) { try write([.receivedSmallDelta], []) }
        #expect(throws: RTPError.valueOutOfRange) { try write([.receivedSmallDelta], [256]) }
        #expect(throws: RTPError.valueOutOfRange) { try write([.receivedSmallDelta], [-1]) }
        #expect(throws: RTPError.valueOutOfRange) { try write([.notReceived], [1]) }
    }
}
