// OpenSSL 3 for Swift: TLS for https/wss (BedrudNet) and DTLS-SRTP (BedrudRTC).
// Function-like macros and odd constants get static inline wrappers here.
#ifndef BEDRUD_COPENSSL_SHIM_H
#define BEDRUD_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/sha.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>

static inline int shim_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int v) { return (int)SSL_CTX_set_min_proto_version(ctx, v); }
static inline int shim_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int v) { return (int)SSL_CTX_set_max_proto_version(ctx, v); }
static inline int shim_SSL_set_tlsext_host_name(SSL *ssl, const char *name) { return (int)SSL_set_tlsext_host_name(ssl, name); }
static inline long shim_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
static inline long shim_SSL_set_mtu(SSL *ssl, long mtu) { return SSL_set_mtu(ssl, mtu); }
static inline long shim_DTLSv1_get_timeout(SSL *ssl, struct timeval *tv) { return DTLSv1_get_timeout(ssl, tv); }
static inline long shim_DTLSv1_handle_timeout(SSL *ssl) { return DTLSv1_handle_timeout(ssl); }
static inline size_t shim_BIO_pending(BIO *b) { return (size_t)BIO_pending(b); }
static inline long shim_BIO_set_mem_eof_return(BIO *b, long v) { return BIO_set_mem_eof_return(b, v); }
static inline EVP_PKEY *shim_EVP_EC_gen_P256(void) { return EVP_EC_gen("P-256"); }
static inline void shim_OPENSSL_free(void *p) { OPENSSL_free(p); }
static const uint64_t shim_SSL_OP_NO_QUERY_MTU = SSL_OP_NO_QUERY_MTU;
static const uint64_t shim_SSL_OP_NO_COMPRESSION = SSL_OP_NO_COMPRESSION;
static const uint64_t shim_SSL_OP_NO_RENEGOTIATION = SSL_OP_NO_RENEGOTIATION;
static const uint64_t shim_SSL_OP_IGNORE_UNEXPECTED_EOF = SSL_OP_IGNORE_UNEXPECTED_EOF;
static inline X509_STORE *shim_SSL_CTX_get_cert_store(SSL_CTX *ctx) { return SSL_CTX_get_cert_store(ctx); }
static const long shim_SSL_MODE_AUTO_RETRY = SSL_MODE_AUTO_RETRY;
static const long shim_SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER = SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER;
static const long shim_SSL_MODE_ENABLE_PARTIAL_WRITE = SSL_MODE_ENABLE_PARTIAL_WRITE;

// --- DTLS-SRTP additions for BedrudRTC (additive; the lines above belong to BedrudNet) ---
/// SSL_set_app_data is a macro over SSL_set_ex_data(ssl, 0, p).
static inline int shim_SSL_set_app_data(SSL *ssl, void *p) { return SSL_set_ex_data(ssl, 0, p); }
static inline void *shim_SSL_get_app_data(const SSL *ssl) { return SSL_get_ex_data(ssl, 0); }
/// The SSL that owns an X509_STORE_CTX during certificate verification.
static inline SSL *shim_X509_STORE_CTX_get_ssl(X509_STORE_CTX *ctx) {
    return (SSL *)X509_STORE_CTX_get_ex_data(ctx, SSL_get_ex_data_X509_STORE_CTX_idx());
}
static const int shim_SSL_VERIFY_PEER_FAIL_IF_NO_PEER_CERT = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
static inline long shim_SSL_CTX_set_read_ahead(SSL_CTX *ctx, long on) { return SSL_CTX_set_read_ahead(ctx, on); }
static inline int shim_SSL_CTX_set1_groups_list(SSL_CTX *ctx, const char *list) { return (int)SSL_CTX_set1_groups_list(ctx, list); }
#endif
