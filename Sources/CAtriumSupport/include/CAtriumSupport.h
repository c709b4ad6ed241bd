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

#endif
