#ifndef ATRIUM_CSRTP_SHIM_H
#define ATRIUM_CSRTP_SHIM_H
#include <srtp2/srtp.h>
#include <srtp2/crypto_types.h>

/// srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80 is a function-like macro for the RTP default.
static inline void atrium_srtp_policy_aes_cm_128_hmac_sha1_80(srtp_crypto_policy_t *p) {
    srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(p);
}

/// AEAD_AES_128_GCM with the 16-octet tag of RFC 7714 section 12 (needs a crypto-backed libsrtp).
static inline void atrium_srtp_policy_aead_aes_128_gcm(srtp_crypto_policy_t *p) {
    srtp_crypto_policy_set_aes_gcm_128_16_auth(p);
}

/// SRTP_MAX_TRAILER_LEN is an expression macro Swift does not import.
static inline int atrium_srtp_max_trailer_len(void) { return SRTP_MAX_TRAILER_LEN; }

#endif
