#ifndef ATRIUM_CHIREDIS_SHIM_H
#define ATRIUM_CHIREDIS_SHIM_H
// hiredis 0.14 (Debian libhiredis-dev): RESP2 over TCP or a Unix socket, no TLS. Its .pc file adds a
// flag SwiftPM refuses, so the module links `hiredis` directly. `redisCommand` is variadic and cannot be called
// from Swift: commands go through `redisCommandArgv`. The wrappers below give Swift what it cannot
// reach itself (fields behind a char array, timeouts built from a struct timeval).
#include <hiredis/hiredis.h>
#include <sys/socket.h>
#include <sys/time.h>

static inline struct timeval atrium_redis_timeval(long millis) {
    struct timeval tv = {millis / 1000, (millis % 1000) * 1000};
    return tv;
}

/// Connects with a connect timeout in milliseconds; NULL only when hiredis could not allocate.
static inline redisContext *atrium_redis_connect(const char *host, int port, long millis) {
    return redisConnectWithTimeout(host, port, atrium_redis_timeval(millis));
}

/// The same on a Unix socket (a TLS tunnel's local end).
static inline redisContext *atrium_redis_connect_unix(const char *path, long millis) {
    return redisConnectUnixWithTimeout(path, atrium_redis_timeval(millis));
}

/// Sets the read/write timeout of every later command, in milliseconds.
static inline int atrium_redis_set_timeout(redisContext *c, long millis) {
    return redisSetTimeout(c, atrium_redis_timeval(millis));
}

static inline int atrium_redis_err(const redisContext *c) { return c->err; }
static inline const char *atrium_redis_errstr(const redisContext *c) { return c->errstr; }

/// Wakes a thread blocked reading this connection (a subscriber being stopped): its read fails at once.
static inline void atrium_redis_shutdown(redisContext *c) {
    if (c->fd >= 0) shutdown(c->fd, SHUT_RDWR);
}

/// One command from argument vectors (binary safe); the reply is freed with `freeReplyObject`.
static inline redisReply *atrium_redis_command(redisContext *c, int argc, const char **argv, const size_t *lens) {
    return (redisReply *)redisCommandArgv(c, argc, argv, lens);
}

/// The next reply on the connection (pub/sub messages); NULL on an I/O error.
static inline redisReply *atrium_redis_next_reply(redisContext *c) {
    void *reply = NULL;
    if (redisGetReply(c, &reply) != REDIS_OK) return NULL;
    return (redisReply *)reply;
}

static inline void atrium_redis_free_reply(redisReply *r) { freeReplyObject(r); }

#endif
