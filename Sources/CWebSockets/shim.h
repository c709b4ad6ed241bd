#ifndef ATRIUM_CWEBSOCKETS_SHIM_H
#define ATRIUM_CWEBSOCKETS_SHIM_H
#include <libwebsockets.h>

/// LWS_PRE is a macro: the headroom lws needs before every buffer passed to lws_write.
static inline size_t atrium_lws_pre(void) { return LWS_PRE; }
static inline size_t atrium_lws_illegal_content_length(void) { return (size_t)LWS_ILLEGAL_HTTP_CONTENT_LEN; }

#endif
