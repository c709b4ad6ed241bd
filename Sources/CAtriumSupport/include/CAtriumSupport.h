#ifndef ATRIUM_SUPPORT_H
#define ATRIUM_SUPPORT_H
#include <libwebsockets.h>

/// Installs SIGINT/SIGTERM handlers that set a flag and wake the lws service loop.
/// The handler only stores to a sig_atomic_t and calls lws_cancel_service (a pipe write),
/// both async-signal-safe; it never exits the process.
void atrium_install_stop_signals(struct lws_context *context);
/// Removes the context from the handler before the context is destroyed.
void atrium_clear_stop_context(void);
/// Nonzero once SIGINT or SIGTERM was received, or atrium_request_stop was called.
int atrium_stop_requested(void);
/// Requests a stop from the program itself (tests, fatal errors).
void atrium_request_stop(void);
/// The signal number that requested the stop, or 0.
int atrium_stop_signal(void);

/// Calls `fn(user)` on the lws service thread every `period_us` microseconds until the context is
/// destroyed (one ticker per process: the server's housekeeping clock).
void atrium_tick_start(struct lws_context *context, lws_usec_t period_us, void (*fn)(void *), void *user);

/// Routes libwebsockets' own log lines (at `level`, an LLL_* mask) to `sink(user, level, line)`, at most
/// `burst` lines per `window_s` seconds; the lines dropped in between are counted and reported with the
/// next one let through ("N lws log lines suppressed"). lws logs some conditions on every poll round
/// (`accept: errno 24` at the descriptor limit): without a limit one condition floods the log.
/// `sink` NULL sends the lines to stderr. Call from the service thread.
void atrium_lws_log_install(int level, void (*sink)(void *user, int level, const char *line), void *user,
                            int burst, int window_s);
/// Lines suppressed so far (for tests and metrics).
unsigned long atrium_lws_log_suppressed(void);

/// Blocks of 64 KiB and more (a stream's retransmission ring, a cached picture's buffers) come from
/// their own mappings and go back to the system when freed. glibc's default raises that threshold to
/// the largest block freed so far, after which such blocks come from the heap, whose freed middle it
/// keeps: a server whose streams come and go (and whose rings shrink) then held on to its peak. Set
/// explicitly, the threshold stays. Returns 1 when set, 0 when the environment's
/// MALLOC_MMAP_THRESHOLD_ decides instead.
int atrium_keep_large_blocks_returnable(void);

/// The CPUs this process may run on (sched_getaffinity), at least 1.
int atrium_usable_cpus(void);

#endif
