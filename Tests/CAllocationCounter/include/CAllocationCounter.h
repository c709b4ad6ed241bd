#ifndef ATRIUM_ALLOCATION_COUNTER_H
#define ATRIUM_ALLOCATION_COUNTER_H
// How many heap allocations the calling thread made between atrium_count_begin and atrium_count_end,
// for the tests that hold the packet path to none (PacketPathAllocationTests), and the bytes it came to
// hold (MemoryHeldTests).
//
// The test executable defines malloc, calloc, realloc, free and the aligned allocators itself (glibc
// supports replacing them: "Replacing malloc" in its manual), counts on the calling thread only, and
// hands every call to glibc's own allocator (__libc_malloc and friends). This counts every allocation
// of the thread: Swift's (swift_slowAlloc calls malloc), OpenSSL's and glibc's. Other threads are not
// counted, so tests running in parallel do not disturb a count. (Retains and releases are not counted
// here: the Swift runtime's swizzling hooks mask tagged values into bad pointers on Linux; the
// benchmark counts them with perf's uprobes, bench/alloc_per_packet.py.)
#include <stdint.h>

typedef struct {
    /// malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign calls.
    uint64_t allocations;
    /// The usable bytes of what the thread allocated minus those of what it freed (a block freed
    /// that was allocated before counting began counts too): what it came to hold, net.
    int64_t bytes;
} atrium_counts;

/// Starts counting on the calling thread (from zero). When the environment has ATRIUM_ALLOC_TRACE=N,
/// every Nth allocation counted also writes its backtrace to standard error (symbols mangled: pipe them
/// through `swift demangle`).
void atrium_count_begin(void);
/// Stops counting on the calling thread and returns what was counted since atrium_count_begin.
atrium_counts atrium_count_end(void);
/// Whether the counting hooks are in place (false in a sanitizer build, which owns malloc itself).
int atrium_count_available(void);

#endif
