#ifndef ATRIUM_COPENSSL_SHIM_H
#define ATRIUM_COPENSSL_SHIM_H
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <openssl/srtp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

static inline void atrium_openssl_free(void *p) { OPENSSL_free(p); }

/* DTLS (AtriumDTLS): wrappers for the macros Swift cannot import. */
static inline EVP_PKEY *atrium_evp_ec_gen(const char *curve) { return EVP_EC_gen(curve); }
static inline int atrium_mbstring_asc(void) { return MBSTRING_ASC; }
static inline int atrium_ssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}
static inline int atrium_dtls1_2_version(void) { return DTLS1_2_VERSION; }
static inline void atrium_ssl_set_no_query_mtu(SSL *ssl) { SSL_set_options(ssl, SSL_OP_NO_QUERY_MTU); }
static inline long atrium_ssl_set_mtu(SSL *ssl, long mtu) { return SSL_set_mtu(ssl, mtu); }
static inline uint64_t atrium_ssl_op_no_ticket(void) { return SSL_OP_NO_TICKET; }
static inline long atrium_ssl_ctx_set_session_cache_off(SSL_CTX *ctx) { return SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF); }
static inline long atrium_ssl_set_max_send_fragment(SSL *ssl, long m) { return SSL_set_max_send_fragment(ssl, m); }
static inline long atrium_dtls_set_link_mtu(SSL *ssl, long mtu) { return DTLS_set_link_mtu(ssl, mtu); }
static inline long atrium_bio_set_mem_eof_return(BIO *bio, int value) { return BIO_set_mem_eof_return(bio, value); }
static inline long atrium_bio_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }
static inline long atrium_dtls_handle_timeout(SSL *ssl) { return DTLSv1_handle_timeout(ssl); }
static inline uint64_t atrium_ssl_op_no_renegotiation(void) { return SSL_OP_NO_RENEGOTIATION; }
/* Microseconds until the DTLS retransmission timer fires, or -1 when no timer runs. */
static inline long long atrium_dtls_get_timeout_us(SSL *ssl) {
    struct timeval tv;
    if (DTLSv1_get_timeout(ssl, &tv) != 1) return -1;
    return (long long)tv.tv_sec * 1000000LL + (long long)tv.tv_usec;
}

/* TLS client (AtriumWebhook): SNI is a macro. */
static inline long atrium_ssl_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}

#endif
