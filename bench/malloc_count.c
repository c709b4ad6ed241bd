/* Counts heap allocations of the process it is preloaded into (LD_PRELOAD), for
 * bench/alloc_per_packet.py: SIGUSR2 writes "MALLOCS <n>" to standard error. Not for production. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static atomic_long count;
static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
/* dlsym itself calls calloc before real_calloc is known: serve that from here. */
static char bootstrap[65536];
static size_t bootstrap_used;

void *malloc(size_t size) {
    if (!real_malloc) real_malloc = dlsym(RTLD_NEXT, "malloc");
    atomic_fetch_add(&count, 1);
    return real_malloc(size);
}

void *calloc(size_t n, size_t size) {
    if (!real_calloc) {
        void *p = bootstrap + bootstrap_used;
        bootstrap_used += (n * size + 15) & ~(size_t)15;
        memset(p, 0, n * size);
        real_calloc = dlsym(RTLD_NEXT, "calloc");
        return p;
    }
    atomic_fetch_add(&count, 1);
    return real_calloc(n, size);
}

void *realloc(void *p, size_t size) {
    if (!real_realloc) real_realloc = dlsym(RTLD_NEXT, "realloc");
    atomic_fetch_add(&count, 1);
    return real_realloc(p, size);
}

void free(void *p) {
    if ((char *)p >= bootstrap && (char *)p < bootstrap + sizeof bootstrap) return;
    if (!real_free) real_free = dlsym(RTLD_NEXT, "free");
    real_free(p);
}

static void report(int sig) {
    (void)sig;
    char line[64];
    int n = snprintf(line, sizeof line, "MALLOCS %ld\n", atomic_load(&count));
    if (n > 0) write(2, line, (size_t)n);
}

__attribute__((constructor)) static void install(void) { signal(SIGUSR2, report); }
