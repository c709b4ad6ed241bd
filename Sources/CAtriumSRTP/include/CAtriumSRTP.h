#ifndef ATRIUM_SRTP_CRYPTO_H
#define ATRIUM_SRTP_CRYPTO_H
// The three primitives SRTP needs (RFC 3711 section 4, RFC 7714 section 9), each over an OpenSSL
// context made once per session key and reused for every packet: AES-128 in counter mode, AES-128-GCM
// and HMAC-SHA1. Nothing here allocates after `_new`; AtriumSRTP holds each object in one final class
// that frees it in deinit. A real C target (not a shim header) because HMAC-SHA1 keeps its two
// precomputed SHA-1 states as plain structs, through the SHA1_* calls OpenSSL 3.0 marks deprecated:
// its EVP_MAC and HMAC_CTX re-init duplicate a provider context, a heap allocation per packet.
#include <stddef.h>
#include <stdint.h>

typedef struct atrium_aes_ctr atrium_aes_ctr;
typedef struct atrium_aes_gcm atrium_aes_gcm;
typedef struct atrium_hmac_sha1 atrium_hmac_sha1;

/// AES-128-CTR under a 16-byte key; NULL when OpenSSL fails.
atrium_aes_ctr *atrium_aes_ctr_new(const uint8_t *key16);
void atrium_aes_ctr_free(atrium_aes_ctr *ctr);
/// XORs `length` bytes at `data` in place with the keystream that starts at the 16-byte counter block
/// `iv16` (incremented as a 128-bit big-endian integer). Returns 1, or 0 when OpenSSL fails.
int atrium_aes_ctr_xor(atrium_aes_ctr *ctr, const uint8_t *iv16, uint8_t *data, size_t length);

/// AES-128-GCM with a 12-byte IV and a 16-byte tag, for sealing (`encrypt` 1) or opening (0).
atrium_aes_gcm *atrium_aes_gcm_new(const uint8_t *key16, int encrypt);
void atrium_aes_gcm_free(atrium_aes_gcm *gcm);
/// Encrypts `data[0..<length]` in place, authenticating the associated data `aad` then `aad2` (either
/// may be empty: SRTCP's is its header and, apart from it, its index) too, and writes the tag to
/// `tag16`. Returns 1, or 0 when OpenSSL fails.
int atrium_aes_gcm_seal(atrium_aes_gcm *gcm, const uint8_t *iv12, const uint8_t *aad, size_t aad_length,
                        const uint8_t *aad2, size_t aad2_length, uint8_t *data, size_t length, uint8_t *tag16);
/// Decrypts `data[0..<length]` in place and checks `tag16` over it and the associated data. Returns 1
/// when the tag verifies, 0 when it does not (the data is then garbage), -1 when OpenSSL fails.
int atrium_aes_gcm_open(atrium_aes_gcm *gcm, const uint8_t *iv12, const uint8_t *aad, size_t aad_length,
                        const uint8_t *aad2, size_t aad2_length, uint8_t *data, size_t length,
                        const uint8_t *tag16);

/// HMAC-SHA1 (RFC 2104) under `key`, its inner and outer states computed once.
atrium_hmac_sha1 *atrium_hmac_sha1_new(const uint8_t *key, size_t key_length);
void atrium_hmac_sha1_free(atrium_hmac_sha1 *hmac);
/// The 20-byte HMAC of `first` followed by `second` (either may be empty), into `out20`.
void atrium_hmac_sha1_mac(const atrium_hmac_sha1 *hmac, const uint8_t *first, size_t first_length,
                          const uint8_t *second, size_t second_length, uint8_t *out20);

/// 1 when the `length` bytes at `a` and `b` are equal, in time independent of their contents.
int atrium_constant_time_equal(const uint8_t *a, const uint8_t *b, size_t length);
/// Overwrites `length` bytes with zeros in a way the compiler does not remove.
void atrium_cleanse(void *p, size_t length);

#endif
