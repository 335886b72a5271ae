/*
 * sigv4.h - AWS Signature Version 4 for one HTTP request (S3 and the
 * S3-compatible stores, gs:// through its XML API with HMAC keys).
 *
 * The caller gives the raw path and query parameters (not yet encoded), the
 * headers to sign (host and x-amz-date among them) and the payload's SHA-256
 * in hex; sigv4 encodes them as the canonical request wants (RFC 3986
 * unreserved characters kept, the path's slashes kept, each byte else as
 * %XX), then makes the string to sign and the signature. SHA-256 and HMAC
 * are OpenSSL's libcrypto (docs/design.md says why).
 */
#ifndef XPROFS_SIGV4_H
#define XPROFS_SIGV4_H

#include <stddef.h>

struct sigv4_pair {
    const char *name;  /* header or query parameter name */
    const char *value; /* its value */
};

struct sigv4_request {
    const char *method;               /* "GET" */
    const char *path;                 /* raw path, "/" or "/bucket/key" */
    const struct sigv4_pair *query;   /* raw query parameters, any order */
    size_t nquery;                    /* entries in query */
    const struct sigv4_pair *headers; /* headers to sign, any case and order */
    size_t nheaders;                  /* entries in headers */
    const char *payload_sha256;       /* hex SHA-256 of the body, or "UNSIGNED-PAYLOAD" */
};

struct sigv4_key {
    const char *access_key; /* AKIDEXAMPLE */
    const char *secret;     /* secret access key */
    const char *region;     /* us-east-1 */
    const char *service;    /* s3 */
    const char *amz_date;   /* 20150830T123600Z, the x-amz-date header's value */
};

/* What signing made; every string is malloc'ed (sigv4_result_free). */
struct sigv4_result {
    char *canonical_request; /* the canonical request */
    char *string_to_sign;    /* the string to sign */
    char *signed_headers;    /* "host;x-amz-date" */
    char signature[65];      /* hex HMAC */
    char *authorization;     /* the Authorization header's value */
};

/* Sign req with key. 0, or -EINVAL (a field missing, a bad date) or -ENOMEM. */
int sigv4_sign(const struct sigv4_request *req, const struct sigv4_key *key,
               struct sigv4_result *out);
void sigv4_result_free(struct sigv4_result *r);

/* s percent-encoded as SigV4 wants, slashes kept if keep_slash. malloc'ed;
 * NULL on no memory. */
char *sigv4_uri_encode(const char *s, int keep_slash);

/* Hex SHA-256 of n bytes into hex[65]. */
void sigv4_sha256_hex(const void *data, size_t n, char hex[65]);

/* The hex SHA-256 of nothing, the payload hash of a request without body. */
#define SIGV4_EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

#endif
