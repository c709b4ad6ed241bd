#include "CAtriumSupport.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

// lws logs from its service thread only (one thread in Atrium), so the limiter needs no lock.
static void (*log_sink)(void *, int, const char *);
static void *log_user;
static int log_burst = 10;
static int log_window_s = 10;
static time_t window_start;
static int lines_in_window;
static unsigned long suppressed_pending;
static unsigned long suppressed_total;

static time_t monotonic_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec;
}

static void deliver(int level, const char *line) {
    if (log_sink) {
        log_sink(log_user, level, line);
    } else {
        fputs(line, stderr);
    }
}

static void limited_emit(int level, const char *line) {
    time_t now = monotonic_seconds();
    if (now - window_start >= log_window_s) {
        window_start = now;
        lines_in_window = 0;
    }
    if (lines_in_window >= log_burst) {
        suppressed_pending++;
        suppressed_total++;
        return;
    }
    lines_in_window++;
    if (suppressed_pending) {
        char note[96];
        snprintf(note, sizeof note, "%lu lws log lines suppressed\n", suppressed_pending);
        suppressed_pending = 0;
        deliver(LLL_WARN, note);
    }
    deliver(level, line);
}

void atrium_lws_log_install(int level, void (*sink)(void *, int, const char *), void *user, int burst,
                            int window_s) {
    log_sink = sink;
    log_user = user;
    log_burst = burst > 0 ? burst : 1;
    log_window_s = window_s > 0 ? window_s : 1;
    window_start = monotonic_seconds();
    lines_in_window = 0;
    lws_set_log_level(level, limited_emit);
}

unsigned long atrium_lws_log_suppressed(void) { return suppressed_total; }
