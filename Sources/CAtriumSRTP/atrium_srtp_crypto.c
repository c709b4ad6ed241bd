// SHA1_Init/Update/Final are deprecated in OpenSSL 3.0 but kept, and are the only allocation-free way to
// restart an HMAC from precomputed states (see the header).
#define OPENSSL_SUPPRESS_DEPRECATED
#include "CAtriumSRTP.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

struct atrium_aes_ctr {
    EVP_CIPHER_CTX *ctx;
};

// OpenSSL 3.0 resets the context's cached IV length at every EVP_CipherInit_ex and asks the provider
// for it again (a get_ctx_params that compares eight parameter names) whenever an IV is passed, so a
// packet does not re-init: it hands the provider its IV through OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED
// with the size (size_t)-1, which the GCM provider takes as "the whole IV" (what
// EVP_CTRL_GCM_SET_IV_FIXED with length -1 does), and the same set_params call carries the expected
// tag when opening. The parameter arrays are built once here; a packet only points them at its IV and
// tag. Measured in docs/benchmarks.md.
struct atrium_aes_gcm {
    EVP_CIPHER_CTX *ctx;
    int encrypt;
    // Sealing: {IV}, then {tag} to read it back. Opening: {tag, IV}.
    OSSL_PARAM start[3];
    OSSL_PARAM tag[2];
};

struct atrium_hmac_sha1 {
    SHA_CTX inner;
    SHA_CTX outer;
};

atrium_aes_ctr *atrium_aes_ctr_new(const uint8_t *key16) {
    atrium_aes_ctr *ctr = calloc(1, sizeof *ctr);
    if (ctr == NULL) return NULL;
    ctr->ctx = EVP_CIPHER_CTX_new();
    if (ctr->ctx == NULL || EVP_EncryptInit_ex(ctr->ctx, EVP_aes_128_ctr(), NULL, key16, NULL) != 1) {
        atrium_aes_ctr_free(ctr);
        return NULL;
    }
    return ctr;
}

void atrium_aes_ctr_free(atrium_aes_ctr *ctr) {
    if (ctr == NULL) return;
    EVP_CIPHER_CTX_free(ctr->ctx);
    free(ctr);
}

int atrium_aes_ctr_xor(atrium_aes_ctr *ctr, const uint8_t *iv16, uint8_t *data, size_t length) {
    // Only the IV changes: the key schedule and the fetched cipher stay in the context. The re-init costs
    // OpenSSL 3.0 an IV-length query by name (seven names compared), but its CTR provider takes a new IV
    // only through an init; EVP_CipherInit_ex2 and an explicitly fetched cipher take the same path.
    if (EVP_EncryptInit_ex(ctr->ctx, NULL, NULL, NULL, iv16) != 1) return 0;
    while (length > 0) {
        int chunk = length > (1u << 30) ? (1 << 30) : (int)length;
        int out = 0;
        if (EVP_EncryptUpdate(ctr->ctx, data, &out, data, chunk) != 1 || out != chunk) return 0;
        data += chunk;
        length -= (size_t)chunk;
    }
    return 1;
}

atrium_aes_gcm *atrium_aes_gcm_new(const uint8_t *key16, int encrypt) {
    atrium_aes_gcm *gcm = calloc(1, sizeof *gcm);
    if (gcm == NULL) return NULL;
    gcm->encrypt = encrypt ? 1 : 0;
    gcm->ctx = EVP_CIPHER_CTX_new();
    // The IV length is set once, before the key: 12 octets (RFC 7714 section 8.1).
    if (gcm->ctx == NULL || EVP_CipherInit_ex(gcm->ctx, EVP_aes_128_gcm(), NULL, NULL, NULL, gcm->encrypt) != 1 ||
        EVP_CIPHER_CTX_ctrl(gcm->ctx, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) != 1 ||
        EVP_CipherInit_ex(gcm->ctx, NULL, NULL, key16, NULL, gcm->encrypt) != 1) {
        atrium_aes_gcm_free(gcm);
        return NULL;
    }
    OSSL_PARAM iv = OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, NULL, (size_t)-1);
    OSSL_PARAM tag = OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 16);
    OSSL_PARAM end = OSSL_PARAM_construct_end();
    if (gcm->encrypt) {
        gcm->start[0] = iv;
        gcm->start[1] = end;
    } else {
        gcm->start[0] = tag;
        gcm->start[1] = iv;
    }
    gcm->start[2] = end;
    gcm->tag[0] = tag;
    gcm->tag[1] = end;
    return gcm;
}

void atrium_aes_gcm_free(atrium_aes_gcm *gcm) {
    if (gcm == NULL) return;
    EVP_CIPHER_CTX_free(gcm->ctx);
    free(gcm);
}

// Starts a message: the IV (and, opening, the expected tag) in one set_params, then the associated data.
static int gcm_start(atrium_aes_gcm *gcm, const uint8_t *iv12, const uint8_t *tag16, const uint8_t *aad,
                     size_t aad_length, const uint8_t *aad2, size_t aad2_length) {
    if (aad_length > (size_t)INT32_MAX || aad2_length > (size_t)INT32_MAX) return 0;
    // The provider only reads these two through a set_params call.
    if (gcm->encrypt) {
        gcm->start[0].data = (void *)iv12;
    } else {
        gcm->start[0].data = (void *)tag16;
        gcm->start[1].data = (void *)iv12;
    }
    if (EVP_CIPHER_CTX_set_params(gcm->ctx, gcm->start) != 1) return 0;
    int out = 0;
    if (aad_length > 0 && EVP_CipherUpdate(gcm->ctx, NULL, &out, aad, (int)aad_length) != 1) return 0;
    if (aad2_length > 0 && EVP_CipherUpdate(gcm->ctx, NULL, &out, aad2, (int)aad2_length) != 1) return 0;
    return 1;
}

int atrium_aes_gcm_seal(atrium_aes_gcm *gcm, const uint8_t *iv12, const uint8_t *aad, size_t aad_length,
                        const uint8_t *aad2, size_t aad2_length, uint8_t *data, size_t length, uint8_t *tag16) {
    if (!gcm->encrypt || length > (size_t)INT32_MAX ||
        !gcm_start(gcm, iv12, NULL, aad, aad_length, aad2, aad2_length))
        return 0;
    int out = 0;
    if (length > 0 && (EVP_EncryptUpdate(gcm->ctx, data, &out, data, (int)length) != 1 || (size_t)out != length))
        return 0;
    uint8_t end[16];
    if (EVP_EncryptFinal_ex(gcm->ctx, end, &out) != 1) return 0;
    gcm->tag[0].data = tag16;
    gcm->tag[0].return_size = 0;
    return EVP_CIPHER_CTX_get_params(gcm->ctx, gcm->tag) == 1 && gcm->tag[0].return_size == 16;
}

int atrium_aes_gcm_open(atrium_aes_gcm *gcm, const uint8_t *iv12, const uint8_t *aad, size_t aad_length,
                        const uint8_t *aad2, size_t aad2_length, uint8_t *data, size_t length,
                        const uint8_t *tag16) {
    if (gcm->encrypt || length > (size_t)INT32_MAX ||
        !gcm_start(gcm, iv12, tag16, aad, aad_length, aad2, aad2_length))
        return -1;
    int out = 0;
    if (length > 0 && (EVP_DecryptUpdate(gcm->ctx, data, &out, data, (int)length) != 1 || (size_t)out != length))
        return -1;
    uint8_t end[16];
    return EVP_DecryptFinal_ex(gcm->ctx, end, &out) == 1 ? 1 : 0;
}

atrium_hmac_sha1 *atrium_hmac_sha1_new(const uint8_t *key, size_t key_length) {
    atrium_hmac_sha1 *hmac = calloc(1, sizeof *hmac);
    if (hmac == NULL) return NULL;
    uint8_t block[SHA_CBLOCK];
    memset(block, 0, sizeof block);
    if (key_length > SHA_CBLOCK) {
        SHA1(key, key_length, block);
    } else if (key_length > 0) {
        memcpy(block, key, key_length);
    }
    uint8_t pad[SHA_CBLOCK];
    for (size_t i = 0; i < SHA_CBLOCK; i++) pad[i] = block[i] ^ 0x36;
    SHA1_Init(&hmac->inner);
    SHA1_Update(&hmac->inner, pad, sizeof pad);
    for (size_t i = 0; i < SHA_CBLOCK; i++) pad[i] = block[i] ^ 0x5c;
    SHA1_Init(&hmac->outer);
    SHA1_Update(&hmac->outer, pad, sizeof pad);
    OPENSSL_cleanse(block, sizeof block);
    OPENSSL_cleanse(pad, sizeof pad);
    return hmac;
}

void atrium_hmac_sha1_free(atrium_hmac_sha1 *hmac) {
    if (hmac == NULL) return;
    OPENSSL_cleanse(hmac, sizeof *hmac);
    free(hmac);
}

void atrium_hmac_sha1_mac(const atrium_hmac_sha1 *hmac, const uint8_t *first, size_t first_length,
                          const uint8_t *second, size_t second_length, uint8_t *out20) {
    SHA_CTX c = hmac->inner;
    if (first_length > 0) SHA1_Update(&c, first, first_length);
    if (second_length > 0) SHA1_Update(&c, second, second_length);
    uint8_t inner[SHA_DIGEST_LENGTH];
    SHA1_Final(inner, &c);
    c = hmac->outer;
    SHA1_Update(&c, inner, sizeof inner);
    SHA1_Final(out20, &c);
    OPENSSL_cleanse(&c, sizeof c);
}

int atrium_constant_time_equal(const uint8_t *a, const uint8_t *b, size_t length) {
    return CRYPTO_memcmp(a, b, length) == 0;
}

void atrium_cleanse(void *p, size_t length) { OPENSSL_cleanse(p, length); }
