/*
 * sigv4.c - AWS Signature Version 4; see sigv4.h.
 */
#include "sigv4.h"

#include <ctype.h>
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growing string; on no memory it stays NULL and later appends do nothing. */
struct sbuf {
    char *s;
    size_t n, cap;
    int failed;
};

static void sb_addn(struct sbuf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *t;
        while (cap < b->n + n + 1)
            cap *= 2;
        t = realloc(b->s, cap);
        if (t == NULL) {
            free(b->s);
            b->s = NULL;
            b->failed = 1;
            return;
        }
        b->s = t;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void sb_add(struct sbuf *b, const char *s)
{
    sb_addn(b, s, strlen(s));
}

static void hex_of(const unsigned char *d, size_t n, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    size_t i;

    for (i = 0; i < n; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[2 * n] = '\0';
}

void sigv4_sha256_hex(const void *data, size_t n, char hex[65])
{
    unsigned char md[SHA256_DIGEST_LENGTH];

    SHA256(data, n, md);
    hex_of(md, sizeof(md), hex);
}

static void hmac(const void *key, size_t klen, const char *msg, unsigned char out[32])
{
    unsigned int len = 32;

    HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, strlen(msg), out, &len);
}

char *sigv4_uri_encode(const char *s, int keep_slash)
{
    static const char digits[] = "0123456789ABCDEF";
    size_t n = strlen(s), i, j = 0;
    char *out = malloc(3 * n + 1);

    if (out == NULL)
        return NULL;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
            (keep_slash && c == '/')) {
            out[j++] = (char)c;
        } else {
            out[j++] = '%';
            out[j++] = digits[c >> 4];
            out[j++] = digits[c & 15];
        }
    }
    out[j] = '\0';
    return out;
}

/* An encoded query parameter or a canonical header: name and value. */
struct kv {
    char *k, *v;
};

static int kv_cmp(const void *a, const void *b)
{
    const struct kv *x = a, *y = b;
    int c = strcmp(x->k, y->k);
    return c != 0 ? c : strcmp(x->v, y->v);
}

static void kv_free(struct kv *kv, size_t n)
{
    size_t i;

    for (i = 0; kv != NULL && i < n; i++) {
        free(kv[i].k);
        free(kv[i].v);
    }
    free(kv);
}

/* A header value trimmed, with runs of spaces made one. */
static char *header_value(const char *v)
{
    char *out = malloc(strlen(v) + 1), *w = out;
    int space = 0;

    if (out == NULL)
        return NULL;
    while (*v == ' ' || *v == '\t')
        v++;
    for (; *v; v++) {
        if (*v == ' ' || *v == '\t') {
            space = 1;
            continue;
        }
        if (space && w != out)
            *w++ = ' ';
        space = 0;
        *w++ = *v;
    }
    *w = '\0';
    return out;
}

static char *lower_dup(const char *s)
{
    char *d = strdup(s), *p;

    for (p = d; p != NULL && *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return d;
}

int sigv4_sign(const struct sigv4_request *req, const struct sigv4_key *key,
               struct sigv4_result *out)
{
    struct kv *q = NULL, *h = NULL;
    struct sbuf cr = {0}, sts = {0}, sh = {0}, auth = {0}, kb = {0};
    char *path = NULL, hash[65], date[9], scope[256];
    unsigned char k1[32], k2[32], k3[32], k4[32], sig[32];
    size_t i;
    int rc = -ENOMEM;

    memset(out, 0, sizeof(*out));
    if (req->method == NULL || req->path == NULL || req->payload_sha256 == NULL ||
        key->access_key == NULL || key->secret == NULL || key->region == NULL ||
        key->service == NULL || key->amz_date == NULL || strlen(key->amz_date) != 16 ||
        key->amz_date[8] != 'T')
        return -EINVAL;
    memcpy(date, key->amz_date, 8);
    date[8] = '\0';
    q = calloc(req->nquery + 1, sizeof(*q));
    h = calloc(req->nheaders + 1, sizeof(*h));
    path = sigv4_uri_encode(req->path[0] ? req->path : "/", 1);
    if (q == NULL || h == NULL || path == NULL)
        goto done;
    for (i = 0; i < req->nquery; i++) {
        q[i].k = sigv4_uri_encode(req->query[i].name, 0);
        q[i].v = sigv4_uri_encode(req->query[i].value ? req->query[i].value : "", 0);
        if (q[i].k == NULL || q[i].v == NULL)
            goto done;
    }
    for (i = 0; i < req->nheaders; i++) {
        h[i].k = lower_dup(req->headers[i].name);
        h[i].v = header_value(req->headers[i].value);
        if (h[i].k == NULL || h[i].v == NULL)
            goto done;
    }
    qsort(q, req->nquery, sizeof(*q), kv_cmp);
    qsort(h, req->nheaders, sizeof(*h), kv_cmp);

    sb_add(&cr, req->method);
    sb_add(&cr, "\n");
    sb_add(&cr, path);
    sb_add(&cr, "\n");
    for (i = 0; i < req->nquery; i++) {
        if (i > 0)
            sb_add(&cr, "&");
        sb_add(&cr, q[i].k);
        sb_add(&cr, "=");
        sb_add(&cr, q[i].v);
    }
    sb_add(&cr, "\n");
    /* Headers of one name are one line, their values joined by commas. */
    for (i = 0; i < req->nheaders; i++) {
        if (i > 0 && strcmp(h[i].k, h[i - 1].k) == 0) {
            sb_add(&cr, ",");
            sb_add(&cr, h[i].v);
            continue;
        }
        if (i > 0) {
            sb_add(&cr, "\n");
            sb_add(&sh, ";");
        }
        sb_add(&cr, h[i].k);
        sb_add(&cr, ":");
        sb_add(&cr, h[i].v);
        sb_add(&sh, h[i].k);
    }
    sb_add(&cr, "\n\n");
    sb_add(&cr, sh.s ? sh.s : "");
    sb_add(&cr, "\n");
    sb_add(&cr, req->payload_sha256);
    if (cr.failed || sh.failed)
        goto done;

    snprintf(scope, sizeof(scope), "%s/%s/%s/aws4_request", date, key->region, key->service);
    sigv4_sha256_hex(cr.s, cr.n, hash);
    sb_add(&sts, "AWS4-HMAC-SHA256\n");
    sb_add(&sts, key->amz_date);
    sb_add(&sts, "\n");
    sb_add(&sts, scope);
    sb_add(&sts, "\n");
    sb_add(&sts, hash);
    sb_add(&kb, "AWS4");
    sb_add(&kb, key->secret);
    if (sts.failed || kb.failed)
        goto done;
    hmac(kb.s, kb.n, date, k1);
    hmac(k1, 32, key->region, k2);
    hmac(k2, 32, key->service, k3);
    hmac(k3, 32, "aws4_request", k4);
    hmac(k4, 32, sts.s, sig);
    hex_of(sig, 32, out->signature);

    sb_add(&auth, "AWS4-HMAC-SHA256 Credential=");
    sb_add(&auth, key->access_key);
    sb_add(&auth, "/");
    sb_add(&auth, scope);
    sb_add(&auth, ", SignedHeaders=");
    sb_add(&auth, sh.s ? sh.s : "");
    sb_add(&auth, ", Signature=");
    sb_add(&auth, out->signature);
    if (auth.failed)
        goto done;
    out->canonical_request = cr.s;
    out->string_to_sign = sts.s;
    out->signed_headers = sh.s;
    out->authorization = auth.s;
    cr.s = sts.s = sh.s = auth.s = NULL;
    rc = 0;
done:
    if (kb.s != NULL)
        memset(kb.s, 0, kb.n);
    free(kb.s);
    free(cr.s);
    free(sts.s);
    free(sh.s);
    free(auth.s);
    free(path);
    kv_free(q, req->nquery);
    kv_free(h, req->nheaders);
    return rc;
}

void sigv4_result_free(struct sigv4_result *r)
{
    free(r->canonical_request);
    free(r->string_to_sign);
    free(r->signed_headers);
    free(r->authorization);
    memset(r, 0, sizeof(*r));
}
