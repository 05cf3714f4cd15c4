#pragma once
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/rand.h>

// SSL_set_tlsext_host_name is a macro around SSL_ctrl.
static inline long cssl_set_sni(SSL *s, const char *name) { return SSL_set_tlsext_host_name(s, name); }

// Macros around SSL_CTX_ctrl / SSL_ctrl, and option bits Swift cannot import.
static inline int cssl_ctx_set_min_tls12(SSL_CTX *ctx) {
    return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}
static inline void cssl_set_io_modes(SSL *s) {
    SSL_set_mode(s, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}
// A peer that drops TCP without close_notify ends the stream instead of raising an SSL error.
static inline void cssl_ctx_ignore_unexpected_eof(SSL_CTX *ctx) {
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
}
