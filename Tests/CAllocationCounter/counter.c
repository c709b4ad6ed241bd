// See CAllocationCounter.h. Test support only: never linked into the server.
#define _GNU_SOURCE
#include "CAllocationCounter.h"

#include <errno.h>
#include <malloc.h>
#include <execinfo.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define ATRIUM_SANITIZED 1
#endif
#endif

static __thread bool counting;
static __thread long traceEvery;
static __thread bool inTrace;
static __thread atrium_counts counts;

#ifndef ATRIUM_SANITIZED

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t alignment, size_t size);

static void counted(void) {
    if (!counting) return;
    counts.allocations++;
    if (traceEvery > 0 && !inTrace && counts.allocations % (uint64_t)traceEvery == 0) {
        // backtrace may allocate (it loads libgcc_s once): not counted, not traced.
        inTrace = true;
        void *frames[24];
        int n = backtrace(frames, 24);
        static const char line[] = "--- allocation\n";
        (void)!write(2, line, sizeof line - 1);
        backtrace_symbols_fd(frames, n, 2);
        inTrace = false;
    }
}

// The bytes a block takes (its usable size), added when the counting thread allocates it and taken
// off when it frees one: the net bytes the thread came to hold.
static void held(void *p, int sign) {
    if (counting && !inTrace && p) counts.bytes += sign * (int64_t)malloc_usable_size(p);
}

void *malloc(size_t size) {
    if (counting && !inTrace) counted();
    void *p = __libc_malloc(size);
    held(p, 1);
    return p;
}

void *calloc(size_t n, size_t size) {
    if (counting && !inTrace) counted();
    void *p = __libc_calloc(n, size);
    held(p, 1);
    return p;
}

void *realloc(void *p, size_t size) {
    if (counting && !inTrace) counted();
    held(p, -1);
    void *q = __libc_realloc(p, size);
    held(q ? q : (size ? p : NULL), 1);
    return q;
}

void free(void *p) {
    held(p, -1);
    __libc_free(p);
}

void *memalign(size_t alignment, size_t size) {
    if (counting && !inTrace) counted();
    void *p = __libc_memalign(alignment, size);
    held(p, 1);
    return p;
}

void *aligned_alloc(size_t alignment, size_t size) {
    if (counting && !inTrace) counted();
    void *p = __libc_memalign(alignment, size);
    held(p, 1);
    return p;
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    if (counting && !inTrace) counted();
    void *p = __libc_memalign(alignment, size);
    if (!p) return ENOMEM;
    held(p, 1);
    *out = p;
    return 0;
}

int atrium_count_available(void) { return 1; }

#else

int atrium_count_available(void) { return 0; }

#endif

void atrium_count_begin(void) {
    const char *trace = getenv("ATRIUM_ALLOC_TRACE");
    traceEvery = trace ? atol(trace) : 0;
    counts = (atrium_counts){0};
    counting = true;
}

atrium_counts atrium_count_end(void) {
    counting = false;
    return counts;
}
