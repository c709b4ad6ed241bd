import Foundation
import Testing

@testable import AtriumMedia

/// The single-producer single-consumer ring between two media workers.
@Suite struct SPSCRingTests {
    @Test(arguments: [(0, 2), (1, 2), (2, 2), (3, 4), (64, 64), (65, 128), (Int.max, 1 << 20)])
    func capacityIsAPowerOfTwo(requested: Int, capacity: Int) {
        #expect(SPSCRing<Int>(capacity: requested).capacity == capacity)
    }

    @Test func fillsRefusesWhenFullAndDrainsInOrderAcrossTheWrap() {
        let ring = SPSCRing<Int>(capacity: 4)
        #expect(ring.pop() == nil)
        for round in 0..<5 {
            for i in 0..<4 { #expect(ring.push(round * 10 + i)) }
            #expect(!ring.push(99))
            #expect(ring.count == 4)
            #expect(ring.pop() == round * 10)
            #expect(ring.push(round * 10 + 4))
            for i in 1...4 { #expect(ring.pop() == round * 10 + i) }
            #expect(ring.pop() == nil)
            #expect(ring.count == 0)
        }
    }

    @Test func releasesWhatItStillHolds() {
        final class Token: Sendable {}
        weak var watched: Token?
        do {
            let ring = SPSCRing<Token>(capacity: 2)
            let t = Token()
            watched = t
            #expect(ring.push(t))
        }
        #expect(watched == nil)
    }

    /// One producer thread and one consumer thread: every element arrives once and in order (what is
    /// checked is order and completeness, never speed).
    @Test func oneProducerAndOneConsumerThreadKeepOrder() {
        let ring = SPSCRing<Int>(capacity: 64)
        let total = 200_000
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var next = 0
            while next < total {
                if ring.push(next) { next += 1 } else { sched_yield() }
            }
            done.signal()
        }
        var expected = 0
        var inOrder = true
        while expected < total {
            if let v = ring.pop() {
                if v != expected { inOrder = false }
                expected += 1
            } else {
                sched_yield()
            }
        }
        done.wait()
        #expect(inOrder)
        #expect(ring.pop() == nil)
    }
}
