import AtriumNative
import Testing

/// The native publisher's ring for NACKs: a packet comes back by its sequence number, across the
/// wrap, until a newer packet takes its slot.
@Suite struct RetransmitRingTests {
    @Test func keepsTheLastPacketsBySequenceNumber() {
        var r = RetransmitRing()
        for s in 0..<2000 { r.store(UInt16(truncatingIfNeeded: 65000 + s), [UInt8(s & 0xFF)]) }
        let newest = UInt16(truncatingIfNeeded: 65000 + 1999)
        #expect(r.packet(newest) == [UInt8(1999 & 0xFF)])
        #expect(r.packet(newest &- 1023) == [UInt8((1999 - 1023) & 0xFF)])
        // Older than the ring: its slot holds a newer packet, which is not given for it.
        #expect(r.packet(newest &- 1024) == nil)
        #expect(r.packet(newest &+ 1) == nil)
    }
}
