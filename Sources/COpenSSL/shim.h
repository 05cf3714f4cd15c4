#pragma once
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/rand.h>

// SSL_set_tlsext_host_name is a macro around SSL_ctrl.
static inline long cssl_set_sni(SSL *s, const char *name) { return SSL_set_tlsext_host_name(s, name); }
