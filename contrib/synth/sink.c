/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Output files: a temporary file written through stdio or zlib's gz* calls,
 * renamed into place on success, and mkdir -p for the run directory.
 */
#include "sink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Returns a malloc'ed "<a><b>", or NULL. */
static char *concat(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    char *p = malloc(na + nb + 1);

    if (p == NULL)
        return NULL;
    memcpy(p, a, na);
    memcpy(p + na, b, nb + 1);
    return p;
}

int sink_open(struct sink *s, const char *path, int gzip)
{
    int saverr;

    memset(s, 0, sizeof(*s));
    s->path = concat(path, "");
    s->tmp_path = concat(path, ".tmp");
    if (s->path == NULL || s->tmp_path == NULL) {
        fprintf(stderr, "xprofs-synth: out of memory\n");
        goto err;
    }
    errno = 0;
    if (gzip)
        s->gz = gzopen(s->tmp_path, "wb1");
    else
        s->fp = fopen(s->tmp_path, "wb");
    if (s->gz == NULL && s->fp == NULL) {
        saverr = errno ? errno : ENOMEM;
        fprintf(stderr, "xprofs-synth: cannot create '%s': %s\n", s->tmp_path, strerror(saverr));
        free(s->path);
        free(s->tmp_path);
        memset(s, 0, sizeof(*s));
        return -saverr;
    }
    if (s->gz != NULL && gzbuffer(s->gz, 1 << 20) != 0) {
        fprintf(stderr, "xprofs-synth: gzbuffer failed for '%s'\n", s->tmp_path);
        gzclose(s->gz);
        unlink(s->tmp_path);
        goto err;
    }
    return 0;
err:
    free(s->path);
    free(s->tmp_path);
    memset(s, 0, sizeof(*s));
    return -ENOMEM;
}

int sink_write(struct sink *s, const void *p, size_t n)
{
    const char *c = p;
    int saverr;

    if (s->fp != NULL) {
        if (fwrite(p, 1, n, s->fp) != n) {
            saverr = errno ? errno : EIO;
            fprintf(stderr, "xprofs-synth: write failed on '%s': %s\n", s->tmp_path,
                    strerror(saverr));
            return -saverr;
        }
        s->bytes += n;
        return 0;
    }
    while (n > 0) {
        unsigned chunk = n > (1u << 30) ? (1u << 30) : (unsigned)n;
        int w = gzwrite(s->gz, c, chunk);

        if (w <= 0) {
            int zerr;
            fprintf(stderr, "xprofs-synth: gzip write failed on '%s': %s\n", s->tmp_path,
                    gzerror(s->gz, &zerr));
            return -EIO;
        }
        c += w;
        n -= (size_t)w;
        s->bytes += (size_t)w;
    }
    return 0;
}

int sink_close(struct sink *s, int ok)
{
    int rc = 0;

    if (s->fp != NULL && fclose(s->fp) != 0 && ok == 0) {
        rc = errno ? -errno : -EIO;
        fprintf(stderr, "xprofs-synth: close failed on '%s': %s\n", s->tmp_path, strerror(-rc));
    }
    if (s->gz != NULL && gzclose(s->gz) != Z_OK && ok == 0) {
        rc = -EIO;
        fprintf(stderr, "xprofs-synth: gzip close failed on '%s'\n", s->tmp_path);
    }
    if (ok == 0 && rc == 0 && rename(s->tmp_path, s->path) != 0) {
        rc = errno ? -errno : -EIO;
        fprintf(stderr, "xprofs-synth: cannot rename '%s': %s\n", s->tmp_path, strerror(-rc));
    }
    if (ok != 0 || rc != 0)
        unlink(s->tmp_path);
    free(s->path);
    free(s->tmp_path);
    memset(s, 0, sizeof(*s));
    return rc;
}

int sink_mkdirs(const char *path)
{
    char *p = concat(path, "");
    char *c;
    int rc = 0;

    if (p == NULL)
        return -ENOMEM;
    for (c = p + 1; *c != '\0'; c++) {
        if (*c != '/')
            continue;
        *c = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            rc = -errno;
        *c = '/';
        if (rc != 0)
            break;
    }
    if (rc == 0 && mkdir(p, 0777) != 0 && errno != EEXIST)
        rc = -errno;
    if (rc != 0)
        fprintf(stderr, "xprofs-synth: cannot create directory '%s': %s\n", p, strerror(-rc));
    free(p);
    return rc;
}
