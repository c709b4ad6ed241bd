#include "CAtriumSupport.h"
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>

static volatile sig_atomic_t stop_flag = 0;
static volatile sig_atomic_t stop_signal = 0;
static struct lws_context *volatile stop_context = NULL;

static void on_stop_signal(int sig) {
    stop_flag = 1;
    stop_signal = sig;
    struct lws_context *ctx = stop_context;
    if (ctx != NULL) lws_cancel_service(ctx);
}

void atrium_install_stop_signals(struct lws_context *context) {
    stop_context = context;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    // A parent may start us with these blocked (the mask survives exec: some supervisors and test
    // harnesses spawn from threads that block them): the signals would wait forever.
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_UNBLOCK, &stop, NULL);
}

void atrium_clear_stop_context(void) { stop_context = NULL; }
int atrium_stop_requested(void) { return stop_flag != 0; }
int atrium_stop_signal(void) { return (int)stop_signal; }

void atrium_request_stop(void) {
    stop_flag = 1;
    struct lws_context *ctx = stop_context;
    if (ctx != NULL) lws_cancel_service(ctx);
}
