/*
 * s3.c - S3 requests over libcurl: signing, retries, listing, HEAD and the
 * parallel ranged download; see s3.h.
 */
#include "s3.h"
#include "sigv4.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define S3_BODY_MAX (16u << 20) /* a listing page or an error body */

static uint64_t ranges_fetched;

uint64_t s3_ranges_fetched(void)
{
    return __atomic_load_n(&ranges_fetched, __ATOMIC_RELAXED);
}

/* A response body held in memory (listings, errors). */
struct body {
    char *s;
    size_t n, cap;
    int too_big;
};

static size_t body_write(char *data, size_t size, size_t nmemb, void *arg)
{
    struct body *b = arg;
    size_t n = size * nmemb;

    if (b->n + n + 1 > S3_BODY_MAX) {
        b->too_big = 1;
        return 0;
    }
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        char *t;
        while (cap < b->n + n + 1)
            cap *= 2;
        t = realloc(b->s, cap);
        if (t == NULL)
            return 0;
        b->s = t;
        b->cap = cap;
    }
    memcpy(b->s + b->n, data, n);
    b->n += n;
    b->s[b->n] = '\0';
    return n;
}

/* The text of the first <tag>...</tag> in [p, end), entities decoded, into
 * out (n bytes). Returns the end of the element or NULL. */
static const char *xml_get(const char *p, const char *end, const char *tag, char *out, size_t n)
{
    char open[64], close[64];
    const char *a, *b;
    size_t w = 0;

    snprintf(open, sizeof(open), "<%s>", tag);
    snprintf(close, sizeof(close), "</%s>", tag);
    a = memmem(p, (size_t)(end - p), open, strlen(open));
    if (a == NULL)
        return NULL;
    a += strlen(open);
    b = memmem(a, (size_t)(end - a), close, strlen(close));
    if (b == NULL)
        return NULL;
    while (a < b && w + 1 < n) {
        static const char *const ent[][2] = {
            {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}};
        size_t i, len = 0;
        for (i = 0; *a == '&' && i < 5; i++) {
            len = strlen(ent[i][0]);
            if ((size_t)(b - a) >= len && memcmp(a, ent[i][0], len) == 0)
                break;
        }
        if (*a == '&' && i < 5) {
            out[w++] = ent[i][1][0];
            a += len;
        } else if (*a == '&' && a + 2 < b && a[1] == '#') {
            char *e;
            long v = a[2] == 'x' ? strtol(a + 3, &e, 16) : strtol(a + 2, &e, 10);
            if (*e == ';' && v > 0 && v < 128) {
                out[w++] = (char)v;
                a = e + 1;
            } else {
                out[w++] = *a++;
            }
        } else {
            out[w++] = *a++;
        }
    }
    out[w] = '\0';
    return b + strlen(close);
}

static void strip_quotes(char *s)
{
    size_t n = strlen(s);

    if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
        memmove(s, s + 1, n - 2);
        s[n - 2] = '\0';
    }
}

/* One request's URL, headers and signature. */
struct req {
    char url[8192];
    char desc[1024]; /* s3://bucket/key, for messages */
    struct curl_slist *hdrs;
};

static int append_query_url(char *url, size_t n, const struct sigv4_pair *q, size_t nq)
{
    size_t i;

    for (i = 0; i < nq; i++) {
        char *k = sigv4_uri_encode(q[i].name, 0), *v = sigv4_uri_encode(q[i].value, 0);
        size_t len = strlen(url);
        if (k == NULL || v == NULL) {
            free(k);
            free(v);
            return -ENOMEM;
        }
        snprintf(url + len, n - len, "%s%s=%s", i == 0 ? "?" : "&", k, v);
        free(k);
        free(v);
    }
    return strlen(url) + 1 < n ? 0 : -ENAMETOOLONG;
}

static void free_req(struct req *r)
{
    curl_slist_free_all(r->hdrs);
    r->hdrs = NULL;
}

static int add_header(struct req *r, const char *name, const char *value)
{
    char line[4096];
    struct curl_slist *l;

    snprintf(line, sizeof(line), "%s: %s", name, value);
    l = curl_slist_append(r->hdrs, line);
    if (l == NULL)
        return -ENOMEM;
    r->hdrs = l;
    return 0;
}

int s3_url(const struct s3_conf *c, const char *key, char *url, size_t n, char *host, size_t hn,
           char *path, size_t pn)
{
    const char *scheme_end = strstr(c->endpoint, "://");
    const char *ehost = scheme_end ? scheme_end + 3 : c->endpoint;
    const char *eslash = strchr(ehost, '/');
    size_t ehn = eslash ? (size_t)(eslash - ehost) : strlen(ehost);
    char raw[4096], *epath;
    int w;

    if (c->path_style) {
        w = snprintf(host, hn, "%.*s", (int)ehn, ehost);
        if (w >= 0 && (size_t)w < hn)
            w = snprintf(raw, sizeof(raw), "/%s/%s", c->bucket, key ? key : "");
    } else {
        w = snprintf(host, hn, "%s.%.*s", c->bucket, (int)ehn, ehost);
        if (w >= 0 && (size_t)w < hn)
            w = snprintf(raw, sizeof(raw), "/%s", key ? key : "");
    }
    if (w < 0 || (size_t)w >= hn || (size_t)w >= sizeof(raw))
        return -ENAMETOOLONG;
    if (path != NULL && (size_t)snprintf(path, pn, "%s", raw) >= pn)
        return -ENAMETOOLONG;
    epath = sigv4_uri_encode(raw, 1);
    if (epath == NULL)
        return -ENOMEM;
    w = snprintf(url, n, "%.*s%s%s", (int)(ehost - c->endpoint), c->endpoint, host, epath);
    free(epath);
    return w < 0 || (size_t)w >= n ? -ENAMETOOLONG : 0;
}

/* URL and signed headers of method on key (NULL: the bucket) with query q. */
static int build_req(const struct s3_conf *c, const char *method, const char *key,
                     const struct sigv4_pair *q, size_t nq, struct req *r, struct xp_err *err)
{
    char hostbuf[512], path[4096], date[32];
    struct tm tm;
    time_t now = time(NULL);
    int rc;

    memset(r, 0, sizeof(*r));
    snprintf(r->desc, sizeof(r->desc), "%s://%s/%s", c->scheme, c->bucket, key ? key : "");
    rc = s3_url(c, key, r->url, sizeof(r->url), hostbuf, sizeof(hostbuf), path, sizeof(path));
    if (rc == -ENOMEM)
        return xp_err_set(err, rc, "out of memory");
    if (rc != 0)
        return xp_err_set(err, rc, "%s: URL too long", r->desc);
    if (append_query_url(r->url, sizeof(r->url), q, nq) != 0)
        return xp_err_set(err, -ENAMETOOLONG, "%s: URL too long", r->desc);
    gmtime_r(&now, &tm);
    strftime(date, sizeof(date), "%Y%m%dT%H%M%SZ", &tm);
    rc = add_header(r, "x-amz-date", date);
    if (rc == 0)
        rc = add_header(r, "x-amz-content-sha256", SIGV4_EMPTY_SHA256);
    if (rc == 0 && c->token != NULL)
        rc = add_header(r, "x-amz-security-token", c->token);
    if (rc == 0 && c->bearer != NULL) {
        char tok[4096 + 8] = "Bearer ";
        rc = c->bearer(c->bearer_arg, tok + 7, sizeof(tok) - 7, err);
        if (rc == 0)
            rc = add_header(r, "Authorization", tok);
        memset(tok, 0, sizeof(tok));
        if (rc != 0) {
            free_req(r);
            if (err != NULL && err->code == rc)
                xp_err_prefix(err, "%s: no access token: ", r->desc);
            return rc;
        }
    } else if (rc == 0 && c->access_key != NULL) {
        struct sigv4_pair h[4] = {{"host", hostbuf},
                                  {"x-amz-date", date},
                                  {"x-amz-content-sha256", SIGV4_EMPTY_SHA256},
                                  {"x-amz-security-token", c->token}};
        struct sigv4_request sr = {method, path, q, nq, h, c->token ? 4 : 3, SIGV4_EMPTY_SHA256};
        struct sigv4_key k = {c->access_key, c->secret, c->region, "s3", date};
        struct sigv4_result res;
        rc = sigv4_sign(&sr, &k, &res);
        if (rc == 0) {
            rc = add_header(r, "Authorization", res.authorization);
            sigv4_result_free(&res);
        }
    }
    if (rc != 0) {
        free_req(r);
        return xp_err_set(err, rc, "%s: cannot sign: %s", r->desc, strerror(-rc));
    }
    return 0;
}

/* Stops a transfer once the client's cancel flag is up (the mount closes). */
static int xfer_cancel(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    const int *cancel = arg;

    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    return cancel != NULL && __atomic_load_n(cancel, __ATOMIC_RELAXED) != 0;
}

static void set_common(CURL *h, const struct s3_conf *c, const struct req *r)
{
    long t = c->timeout_s > 0 ? c->timeout_s : 60;

    curl_easy_setopt(h, CURLOPT_URL, r->url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, r->hdrs);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    /* Each request, connection to last byte, within store_timeout. */
    curl_easy_setopt(h, CURLOPT_TIMEOUT, t);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, t < 10 ? t : 10L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, t < 30 ? t : 30L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_USERAGENT, "xprofs");
    if (c->cancel != NULL) {
        curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, xfer_cancel);
        curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)c->cancel);
        curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    }
}

/* 1 if the client's cancel flag is up. */
static int cancelled(const struct s3_conf *c)
{
    return c->cancel != NULL && __atomic_load_n(c->cancel, __ATOMIC_RELAXED) != 0;
}

static int transient_curl(CURLcode cc)
{
    return cc == CURLE_COULDNT_CONNECT || cc == CURLE_RECV_ERROR || cc == CURLE_SEND_ERROR ||
           cc == CURLE_PARTIAL_FILE || cc == CURLE_OPERATION_TIMEDOUT || cc == CURLE_GOT_NOTHING ||
           cc == CURLE_COULDNT_RESOLVE_HOST;
}

static int transient_http(long status)
{
    return status == 429 || status >= 500;
}

static void backoff(int attempt)
{
    useconds_t us = 100000u;
    int i;

    for (i = 0; i < attempt && us < 2000000u; i++)
        us *= 4;
    usleep(us);
}

/* The store's error of a failed response: HTTP status, <Code>, <Message>. */
static int store_error(const struct req *r, long status, const struct body *b, struct xp_err *err)
{
    char code[128] = "", msg[256] = "";

    if (b->s != NULL) {
        xml_get(b->s, b->s + b->n, "Code", code, sizeof(code));
        xml_get(b->s, b->s + b->n, "Message", msg, sizeof(msg));
    }
    return xp_err_set(err, status == 404 ? -ENOENT : -EIO, "%s: HTTP %ld%s%s%s%s", r->desc, status,
                      code[0] ? " " : "", code, msg[0] ? ": " : "", msg);
}

/* Perform a request with retries; the body (for GET) lands in b. */
static int perform(const struct s3_conf *c, const char *method, const char *key,
                   const struct sigv4_pair *q, size_t nq, struct body *b, long *status,
                   int64_t *size, char *etag, struct xp_err *err)
{
    int attempt;

    for (attempt = 0;; attempt++) {
        struct req r;
        CURL *h;
        CURLcode cc;
        int rc = build_req(c, method, key, q, nq, &r, err);
        if (rc != 0)
            return rc;
        h = curl_easy_init();
        if (h == NULL) {
            free_req(&r);
            return xp_err_set(err, -ENOMEM, "out of memory");
        }
        set_common(h, c, &r);
        b->n = 0;
        b->too_big = 0;
        if (strcmp(method, "HEAD") == 0)
            curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, body_write);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
        cc = curl_easy_perform(h);
        *status = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
        if (cc == CURLE_OK && *status >= 200 && *status < 300 && size != NULL) {
            curl_off_t len = -1;
            struct curl_header *eh;
            curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
            *size = len;
            etag[0] = '\0';
            if (curl_easy_header(h, "ETag", 0, CURLH_HEADER, -1, &eh) == CURLHE_OK) {
                snprintf(etag, 128, "%s", eh->value);
                strip_quotes(etag);
            }
        }
        curl_easy_cleanup(h);
        if (cc == CURLE_OK && *status >= 200 && *status < 300) {
            free_req(&r);
            return 0;
        }
        if (attempt < c->retries && !cancelled(c) &&
            ((cc != CURLE_OK && transient_curl(cc)) ||
             (cc == CURLE_OK && transient_http(*status)))) {
            free_req(&r);
            backoff(attempt);
            continue;
        }
        if (cc != CURLE_OK && !(cc == CURLE_WRITE_ERROR && b->too_big)) {
            rc = xp_err_set(err, -EIO, "%s: %s: %s (after %d tries)", r.desc, c->endpoint,
                            curl_easy_strerror(cc), attempt + 1);
        } else if (b->too_big) {
            rc = xp_err_set(err, -EIO, "%s: answer over %u MiB", r.desc, S3_BODY_MAX >> 20);
        } else {
            rc = store_error(&r, *status, b, err);
        }
        free_req(&r);
        return rc;
    }
}

static int obj_cmp(const void *a, const void *b)
{
    return strcmp(((const struct s3_object *)a)->key, ((const struct s3_object *)b)->key);
}

void s3_objects_free(struct s3_object *objs, size_t n)
{
    size_t i;

    for (i = 0; objs != NULL && i < n; i++)
        free(objs[i].key);
    free(objs);
}

/* A listed object's LastModified ("2026-12-07T23:40:00.000Z") in seconds
 * since the epoch, 0 when absent or not of that form. */
static int64_t last_modified(const char *p, const char *end)
{
    char text[64];
    struct tm tm;
    time_t t;

    memset(&tm, 0, sizeof(tm));
    if (xml_get(p, end, "LastModified", text, sizeof(text)) == NULL ||
        sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec) != 6)
        return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    t = timegm(&tm);
    return t > 0 ? (int64_t)t : 0;
}

int s3_list(const struct s3_conf *c, const char *prefix, struct s3_object **objsp, size_t *np,
            struct xp_err *err)
{
    struct s3_object *objs = NULL;
    size_t n = 0, cap = 0;
    char token[2048] = "";
    struct body b = {0};
    int rc = 0, pages;

    *objsp = NULL;
    *np = 0;
    for (pages = 0; pages < 100000; pages++) {
        struct sigv4_pair q[3] = {
            {"list-type", "2"}, {"prefix", prefix}, {"continuation-token", token}};
        char trunc[16] = "", key[4096], size[32], etag[128];
        const char *p, *end;
        long status;
        rc = perform(c, "GET", NULL, q, token[0] ? 3 : 2, &b, &status, NULL, NULL, err);
        if (rc != 0)
            break;
        if (b.s == NULL || strstr(b.s, "<ListBucketResult") == NULL) {
            rc = xp_err_set(err, -EIO, "%s://%s/%s: listing is not a ListBucketResult", c->scheme,
                            c->bucket, prefix);
            break;
        }
        p = b.s;
        end = b.s + b.n;
        while ((p = memmem(p, (size_t)(end - p), "<Contents>", 10)) != NULL) {
            const char *ce = memmem(p, (size_t)(end - p), "</Contents>", 11);
            if (ce == NULL)
                break;
            if (xml_get(p, ce, "Key", key, sizeof(key)) != NULL &&
                xml_get(p, ce, "Size", size, sizeof(size)) != NULL) {
                if (xml_get(p, ce, "ETag", etag, sizeof(etag)) == NULL)
                    etag[0] = '\0';
                strip_quotes(etag);
                if (n == cap) {
                    size_t nc = cap ? cap * 2 : 64;
                    struct s3_object *t = realloc(objs, nc * sizeof(*t));
                    if (t == NULL) {
                        rc = xp_err_set(err, -ENOMEM, "out of memory");
                        break;
                    }
                    objs = t;
                    cap = nc;
                }
                objs[n].key = strdup(key);
                objs[n].size = strtoll(size, NULL, 10);
                objs[n].mtime = last_modified(p, ce);
                snprintf(objs[n].etag, sizeof(objs[n].etag), "%s", etag);
                if (objs[n].key == NULL) {
                    rc = xp_err_set(err, -ENOMEM, "out of memory");
                    break;
                }
                n++;
            }
            p = ce + 11;
        }
        if (rc != 0)
            break;
        xml_get(b.s, end, "IsTruncated", trunc, sizeof(trunc));
        if (strcmp(trunc, "true") != 0)
            break;
        if (xml_get(b.s, end, "NextContinuationToken", token, sizeof(token)) == NULL ||
            token[0] == '\0') {
            rc = xp_err_set(err, -EIO, "%s://%s/%s: truncated listing without a token", c->scheme,
                            c->bucket, prefix);
            break;
        }
    }
    free(b.s);
    if (rc != 0) {
        s3_objects_free(objs, n);
        return rc;
    }
    qsort(objs, n, sizeof(*objs), obj_cmp);
    *objsp = objs;
    *np = n;
    return 0;
}

int s3_head(const struct s3_conf *c, const char *key, int64_t *size, char etag[128],
            struct xp_err *err)
{
    struct body b = {0};
    long status;
    int rc = perform(c, "HEAD", key, NULL, 0, &b, &status, size, etag, err);

    free(b.s);
    return rc;
}

/* One range of a download. */
struct range {
    int fd;
    int64_t off, len, got;
    int attempts;
    int64_t not_before_ms;
    struct req r;
    struct body errbody; /* the body of a failed answer */
    long status;         /* the answer's status, once known */
    int failed_write;
    CURL *h; /* in flight, or NULL */
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static size_t range_write(char *data, size_t size, size_t nmemb, void *arg)
{
    struct range *rg = arg;
    size_t n = size * nmemb, done = 0;

    if (rg->status == 0)
        rg->status = 1; /* body begun */
    if (rg->errbody.cap != 0 || rg->status >= 300)
        return body_write(data, size, nmemb, &rg->errbody);
    if (rg->got + (int64_t)n > rg->len) {
        rg->failed_write = 1;
        return 0;
    }
    while (done < n) {
        ssize_t w = pwrite(rg->fd, data + done, n - done, rg->off + rg->got);
        if (w <= 0) {
            rg->failed_write = 1;
            return 0;
        }
        done += (size_t)w;
        rg->got += w;
    }
    return n;
}

static size_t range_header(char *data, size_t size, size_t nmemb, void *arg)
{
    struct range *rg = arg;
    long st;

    if (nmemb * size > 9 && strncmp(data, "HTTP/", 5) == 0) {
        const char *sp = memchr(data, ' ', size * nmemb);
        st = sp ? strtol(sp + 1, NULL, 10) : 0;
        rg->status = st;
    }
    return size * nmemb;
}

static CURL *range_start(const struct s3_conf *c, const char *key, const char *etag,
                         struct range *rg, struct xp_err *err)
{
    char hv[128];
    CURL *h;

    if (build_req(c, "GET", key, NULL, 0, &rg->r, err) != 0)
        return NULL;
    snprintf(hv, sizeof(hv), "bytes=%lld-%lld", (long long)rg->off,
             (long long)(rg->off + rg->len - 1));
    if (add_header(&rg->r, "Range", hv) != 0 ||
        (etag != NULL && etag[0] != '\0' &&
         (snprintf(hv, sizeof(hv), "\"%s\"", etag), add_header(&rg->r, "If-Match", hv)) != 0)) {
        free_req(&rg->r);
        xp_err_set(err, -ENOMEM, "out of memory");
        return NULL;
    }
    h = curl_easy_init();
    if (h == NULL) {
        free_req(&rg->r);
        xp_err_set(err, -ENOMEM, "out of memory");
        return NULL;
    }
    set_common(h, c, &rg->r);
    rg->got = 0;
    rg->status = 0;
    rg->failed_write = 0;
    free(rg->errbody.s);
    memset(&rg->errbody, 0, sizeof(rg->errbody));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, range_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, rg);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, range_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, rg);
    curl_easy_setopt(h, CURLOPT_PRIVATE, rg);
    return h;
}

int s3_download(const struct s3_conf *c, const char *key, int64_t size, const char *etag, int fd,
                struct xp_err *err)
{
    int64_t piece = (int64_t)(c->range_mb > 0 ? c->range_mb : 8) << 20;
    size_t nr = size > 0 ? (size_t)((size + piece - 1) / piece) : 0, done = 0, i;
    int parallel = c->parallel > 0 ? c->parallel : 8, running = 0, active = 0, rc = 0;
    struct range *rgs;
    size_t *queue, qh = 0, qt = 0;
    CURLM *m;

    if (ftruncate(fd, size) != 0)
        return xp_err_set(err, -errno, "%s://%s/%s: cannot size the copy: %s", c->scheme, c->bucket,
                          key, strerror(errno));
    if (nr == 0)
        return 0;
    rgs = calloc(nr, sizeof(*rgs));
    queue = calloc(nr * (size_t)(c->retries + 2), sizeof(*queue));
    m = curl_multi_init();
    if (rgs == NULL || queue == NULL || m == NULL) {
        free(rgs);
        free(queue);
        if (m != NULL)
            curl_multi_cleanup(m);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    for (i = 0; i < nr; i++) {
        rgs[i].fd = fd;
        rgs[i].off = (int64_t)i * piece;
        rgs[i].len = size - rgs[i].off < piece ? size - rgs[i].off : piece;
        queue[qt++] = i;
    }
    while (rc == 0 && done < nr) {
        CURLMsg *msg;
        int left;
        /* Start ranges while there is room and their backoff is over. */
        while (active < parallel && qh < qt && rgs[queue[qh]].not_before_ms <= mono_ms()) {
            struct range *rg = &rgs[queue[qh++]];
            CURL *h = range_start(c, key, etag, rg, err);
            if (h == NULL) {
                rc = err ? err->code : -ENOMEM;
                break;
            }
            rg->h = h;
            curl_multi_add_handle(m, h);
            active++;
        }
        if (rc != 0)
            break;
        curl_multi_perform(m, &running);
        while ((msg = curl_multi_info_read(m, &left)) != NULL) {
            struct range *rg;
            long status = 0;
            CURLcode cc;
            if (msg->msg != CURLMSG_DONE)
                continue;
            cc = msg->data.result;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&rg);
            curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &status);
            curl_multi_remove_handle(m, msg->easy_handle);
            curl_easy_cleanup(msg->easy_handle);
            rg->h = NULL;
            active--;
            __atomic_add_fetch(&ranges_fetched, 1, __ATOMIC_RELAXED);
            int ok = cc == CURLE_OK &&
                     (status == 206 || (status == 200 && rg->off == 0 && rg->len == size)) &&
                     rg->got == rg->len;
            if (ok) {
                free_req(&rg->r);
                done++;
                continue;
            }
            int transient = (cc != CURLE_OK && transient_curl(cc)) ||
                            (cc == CURLE_OK && transient_http(status)) ||
                            (cc == CURLE_OK && status == 206 && rg->got < rg->len);
            if (transient && rg->attempts < c->retries && !rg->failed_write && !cancelled(c)) {
                rg->attempts++;
                rg->not_before_ms = mono_ms() + 100 * (1 << (2 * (rg->attempts - 1)));
                free_req(&rg->r);
                queue[qt++] = (size_t)(rg - rgs);
                continue;
            }
            if (rg->failed_write)
                rc = xp_err_set(err, -EIO, "%s: cannot write the copy (bytes %lld-%lld)",
                                rg->r.desc, (long long)rg->off, (long long)(rg->off + rg->len - 1));
            else if (cc != CURLE_OK)
                rc = xp_err_set(err, -EIO, "%s: %s: %s (after %d tries)", rg->r.desc, c->endpoint,
                                curl_easy_strerror(cc), rg->attempts + 1);
            else if (status == 412)
                rc =
                    xp_err_set(err, -EIO, "%s: changed in the store while it was read", rg->r.desc);
            else if (status >= 300)
                rc = store_error(&rg->r, status, &rg->errbody, err);
            else
                rc = xp_err_set(err, -EIO, "%s: HTTP %ld with %lld of %lld bytes", rg->r.desc,
                                status, (long long)rg->got, (long long)rg->len);
            if (rc == -ENOENT)
                rc = -EIO;
            free_req(&rg->r);
            break;
        }
        if (rc == 0 && done < nr)
            curl_multi_poll(m, NULL, 0, active > 0 ? 100 : 20, NULL);
    }
    /* Stop what is still in flight. */
    for (i = 0; i < nr; i++) {
        if (rgs[i].h != NULL) {
            curl_multi_remove_handle(m, rgs[i].h);
            curl_easy_cleanup(rgs[i].h);
            free_req(&rgs[i].r);
        }
        free(rgs[i].errbody.s);
    }
    curl_multi_cleanup(m);
    free(rgs);
    free(queue);
    return rc;
}
