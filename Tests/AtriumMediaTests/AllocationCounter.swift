import CAllocationCounter

/// How many heap allocations the calling thread made while `body` ran (`CAllocationCounter`: the test
/// executable's own malloc, counted on this thread only, so tests running in parallel do not disturb
/// it).
struct AllocationCount: Equatable, CustomStringConvertible {
    var allocations: UInt64
    /// The bytes the thread came to hold (allocated minus freed, usable sizes).
    var bytes: Int64 = 0

    /// Whether the counter is in place (not in a sanitizer build, which owns malloc).
    static var isAvailable: Bool { atrium_count_available() != 0 }

    /// Counts what `body` does on this thread. `ATRIUM_ALLOC_TRACE=N` in the environment prints every
    /// Nth allocation's backtrace to standard error.
    static func measure(_ body: () throws -> Void) rethrows -> AllocationCount {
        atrium_count_begin()
        do {
            try body()
        } catch {
            _ = atrium_count_end()
            throw error
        }
        let c = atrium_count_end()
        return AllocationCount(allocations: c.allocations, bytes: c.bytes)
    }

    var description: String { "\(allocations) allocations" }
}
