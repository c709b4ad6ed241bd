/* Counts heap allocations in the process it is preloaded into (LD_PRELOAD), for
 * bench/alloc_per_packet.py. Not for production.
 *
 * - malloc, calloc, realloc and the aligned allocators are counted, then handed to glibc's own
 *   (__libc_malloc and friends), in two sums: the media worker threads' (named atrium-media-*, the
 *   packet path) and every thread's.
 * - SIGUSR2 writes "MALLOCS <all> MEDIA <media>" to standard error.
 * - MALLOC_COUNT_TRACE=N writes the backtrace of every Nth media-thread allocation to standard error
 *   (mangled Swift symbols: pipe through `swift demangle`), to say where they come from.
 * A thread's name is read (prctl) on its first counted call and again every 1024 calls. */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static atomic_long all_count, media_count;
static long trace_every;
static __thread unsigned calls;
static __thread int is_media = -1;
static __thread bool in_trace;

static bool media_thread(void) {
    if (is_media < 0 || (++calls & 1023) == 0) {
        char name[17] = {0};
        prctl(PR_GET_NAME, name, 0, 0, 0);
        is_media = strncmp(name, "atrium-media", 12) == 0;
    }
    return is_media == 1;
}

static void counted(void) {
    atomic_fetch_add_explicit(&all_count, 1, memory_order_relaxed);
    if (in_trace || !media_thread()) return;
    long n = atomic_fetch_add_explicit(&media_count, 1, memory_order_relaxed) + 1;
    if (trace_every > 0 && n % trace_every == 0) {
        in_trace = true;
        void *frames[32];
        int depth = backtrace(frames, 32);
        static const char line[] = "--- media allocation\n";
        (void)!write(2, line, sizeof line - 1);
        backtrace_symbols_fd(frames, depth, 2);
        in_trace = false;
    }
}

void *malloc(size_t size) { counted(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { counted(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { counted(); return __libc_realloc(p, size); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t a, size_t size) { counted(); return __libc_memalign(a, size); }
void *aligned_alloc(size_t a, size_t size) { counted(); return __libc_memalign(a, size); }
int posix_memalign(void **out, size_t a, size_t size) {
    if (a % sizeof(void *) != 0 || (a & (a - 1)) != 0) return EINVAL;
    counted();
    void *p = __libc_memalign(a, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

static void report(int sig) {
    (void)sig;
    char line[160];
    int n = snprintf(line, sizeof line, "MALLOCS %ld MEDIA %ld\n", atomic_load(&all_count),
                     atomic_load(&media_count));
    if (n > 0) (void)!write(2, line, (size_t)n);
}

__attribute__((constructor)) static void install(void) {
    const char *every = getenv("MALLOC_COUNT_TRACE");
    trace_every = every ? atol(every) : 0;
    if (trace_every > 0) {
        void *warm[1];
        backtrace(warm, 1); /* loads libgcc_s now, not inside a counted call */
    }
    signal(SIGUSR2, report);
}
