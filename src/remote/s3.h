/*
 * s3.h - a read-only S3 client over libcurl: list, HEAD and ranged GET.
 *
 * Talks to AWS S3 or an S3-compatible store (MinIO, Ceph, R2, s3rver, GCS's
 * XML API with HMAC keys) at an endpoint, path-style (endpoint/bucket/key)
 * or virtual-host-style (bucket.host/key), signing with SigV4 when it has
 * credentials. TLS is verified. Transient failures (connection refused or
 * reset, a transfer cut short, HTTP 429 and 5xx) are retried with backoff;
 * the rest fail at once with the store's own code and message. It only
 * reads: no request it makes can change the store.
 */
#ifndef XPROFS_S3_H
#define XPROFS_S3_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct s3_conf {
    const char *scheme; /* "s3" or "gs", for messages */
    char *endpoint;     /* scheme://host[:port], no trailing slash */
    char *bucket;       /* bucket name */
    char *region;       /* signing region */
    int path_style;     /* 1: endpoint/bucket/key; 0: bucket.host/key */
    char *access_key;   /* NULL: requests go unsigned (a public bucket) */
    char *secret;       /* secret access key */
    char *token;        /* session token or NULL */
    int retries;        /* tries after the first for a transient failure */
    int range_mb;       /* ranged GET piece, MiB (8) */
    int parallel;       /* ranges in flight at once (8) */
    int timeout_s;      /* bound of each HTTP request, seconds (60) */
    const int *cancel;  /* nonzero (atomic read): requests in flight stop, or NULL */
    /* An OAuth bearer token instead of SigV4 (gs:// without HMAC keys):
     * fills buf, 0 or a negative errno with err. NULL: SigV4. */
    int (*bearer)(void *arg, char *buf, size_t n, struct xp_err *err);
    void *bearer_arg;
};

struct s3_object {
    char *key;      /* full key */
    int64_t size;   /* bytes */
    char etag[128]; /* ETag without its quotes */
    int64_t mtime;  /* LastModified, seconds since the epoch; 0 when not given */
};

/* Fill c for bucket: credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 * AWS_SESSION_TOKEN, else ~/.aws/credentials (AWS_SHARED_CREDENTIALS_FILE) at
 * profile AWS_PROFILE (default "default"); region from AWS_REGION or
 * AWS_DEFAULT_REGION, else the profile's region in ~/.aws/config
 * (AWS_CONFIG_FILE) or ~/.aws/credentials, else us-east-1; endpoint (NULL:
 * AWS's regional one) and style ("path", "virtual" or NULL: as AWS, that is
 * virtual-host-style for an amazonaws.com endpoint, path-style for any
 * other). 0, or a negative errno with err. */
int s3_conf_init(struct s3_conf *c, const char *bucket, const char *endpoint, const char *style,
                 struct xp_err *err);
void s3_conf_free(struct s3_conf *c);

/* The URL of key (NULL: the bucket) without query, into url (n bytes), and
 * the Host header's value into host (hn bytes): endpoint/bucket/key
 * path-style, bucket.host/key virtual-host-style, the key percent-encoded
 * as SigV4 wants; the path signed (raw) into path (pn bytes) when not
 * NULL. 0, -ENOMEM or -ENAMETOOLONG. */
int s3_url(const struct s3_conf *c, const char *key, char *url, size_t n, char *host, size_t hn,
           char *path, size_t pn);

/* Every object under prefix (ListObjectsV2, page after page), sorted by key.
 * *objs is malloc'ed (s3_objects_free). 0 or a negative errno with err. */
int s3_list(const struct s3_conf *c, const char *prefix, struct s3_object **objs, size_t *n,
            struct xp_err *err);
void s3_objects_free(struct s3_object *objs, size_t n);

/* Size and ETag of key. -ENOENT when there is none. */
int s3_head(const struct s3_conf *c, const char *key, int64_t *size, char etag[128],
            struct xp_err *err);

/* The size bytes of key into fd from offset 0, in ranges of range_mb MiB,
 * parallel at a time; each range must still be etag's (If-Match) when
 * etag is not NULL. 0, or a negative errno (-EIO) with err. */
int s3_download(const struct s3_conf *c, const char *key, int64_t size, const char *etag, int fd,
                struct xp_err *err);

/* Calls s3_download made (for tests and benchmarks): ranges fetched. */
uint64_t s3_ranges_fetched(void);

#endif
