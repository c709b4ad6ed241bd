#ifndef ATRIUM_COPENSSL_SHIM_H
#define ATRIUM_COPENSSL_SHIM_H
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

static inline void atrium_openssl_free(void *p) { OPENSSL_free(p); }

#endif
