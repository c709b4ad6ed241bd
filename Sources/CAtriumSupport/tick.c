#include "CAtriumSupport.h"
#include <string.h>

static struct {
    lws_sorted_usec_list_t sul;
    struct lws_context *ctx;
    lws_usec_t period;
    void (*fn)(void *);
    void *user;
} ticker;

static void on_tick(lws_sorted_usec_list_t *sul) {
    (void)sul;
    if (ticker.fn) ticker.fn(ticker.user);
    lws_sul_schedule(ticker.ctx, 0, &ticker.sul, on_tick, ticker.period);
}

void atrium_tick_start(struct lws_context *context, lws_usec_t period_us, void (*fn)(void *), void *user) {
    memset(&ticker, 0, sizeof ticker);
    ticker.ctx = context;
    ticker.period = period_us;
    ticker.fn = fn;
    ticker.user = user;
    lws_sul_schedule(context, 0, &ticker.sul, on_tick, period_us);
}
