/*
 * pbw.h - a tiny protobuf writer for building test profiles byte by byte.
 *
 * Messages are built inside out: write the inner message into its own
 * struct pbw, then add it to the outer one with pbw_msg(). Test-only code:
 * allocation failures abort the test.
 */
#ifndef XPROFS_TEST_PBW_H
#define XPROFS_TEST_PBW_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pbw {
    unsigned char *p;
    size_t n, cap;
};

static inline void pbw_raw(struct pbw *w, const void *src, size_t n)
{
    if (w->n + n > w->cap) {
        w->cap = (w->n + n) * 2 + 64;
        w->p = realloc(w->p, w->cap);
        if (w->p == NULL)
            abort();
    }
    if (n > 0)
        memcpy(w->p + w->n, src, n);
    w->n += n;
}

static inline void pbw_varint(struct pbw *w, uint64_t v)
{
    unsigned char b[10];
    int n = 0;
    do {
        b[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v)
            b[n] |= 0x80;
        n++;
    } while (v);
    pbw_raw(w, b, (size_t)n);
}

static inline void pbw_key(struct pbw *w, uint32_t field, int type)
{
    pbw_varint(w, ((uint64_t)field << 3) | (uint64_t)type);
}

static inline void pbw_uint(struct pbw *w, uint32_t field, uint64_t v)
{
    pbw_key(w, field, 0);
    pbw_varint(w, v);
}

static inline void pbw_bytes(struct pbw *w, uint32_t field, const void *p, size_t n)
{
    pbw_key(w, field, 2);
    pbw_varint(w, n);
    pbw_raw(w, p, n);
}

static inline void pbw_str(struct pbw *w, uint32_t field, const char *s)
{
    pbw_bytes(w, field, s, strlen(s));
}

static inline void pbw_double(struct pbw *w, uint32_t field, double d)
{
    pbw_key(w, field, 1);
    pbw_raw(w, &d, 8);
}

static inline void pbw_msg(struct pbw *w, uint32_t field, struct pbw *inner)
{
    pbw_bytes(w, field, inner->p, inner->n);
    free(inner->p);
    memset(inner, 0, sizeof(*inner));
}

/* Write bytes to a new temp file; returns its malloc'd path. */
static inline char *pbw_tmpfile(const void *p, size_t n, const char *suffix)
{
    char tmpl[] = "/tmp/xprofs-test-XXXXXX";
    int fd = mkstemp(tmpl);
    char *path;
    if (fd < 0)
        abort();
    if (n > 0 && write(fd, p, n) != (ssize_t)n)
        abort();
    close(fd);
    path = malloc(strlen(tmpl) + strlen(suffix) + 1);
    sprintf(path, "%s%s", tmpl, suffix);
    if (rename(tmpl, path) != 0)
        abort();
    return path;
}

#endif
