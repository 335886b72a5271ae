/*
 * out.c - chunked output writer and immutable blobs; see out.h.
 */
#include "out.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void out_init(struct out *o)
{
    memset(o, 0, sizeof(*o));
}

/* Chunks are mapped on their own with transparent huge pages: first writes
 * to fresh memory fault once per 2 MiB instead of once per 4 KiB, which is
 * much of the cost of writing a big file. Under AddressSanitizer they come
 * from malloc so that overruns are caught. */
#if defined(__SANITIZE_ADDRESS__)
#define OUT_CHUNK_MALLOC 1
#else
#define OUT_CHUNK_MALLOC 0
#endif

static char *chunk_alloc(void)
{
    void *p;

    if (OUT_CHUNK_MALLOC)
        return malloc(OUT_CHUNK);
    p = mmap(NULL, OUT_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    madvise(p, OUT_CHUNK, MADV_HUGEPAGE);
    return p;
}

static void chunk_free(char *p)
{
    if (OUT_CHUNK_MALLOC)
        free(p);
    else if (p != NULL)
        munmap(p, OUT_CHUNK);
}

/* Make sure a chunk with free space exists. Returns 0 or -1 (sets oom). */
static int out_grow(struct out *o)
{
    char *chunk;

    if (o->nchunks == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 8;
        char **chunks = realloc(o->chunks, cap * sizeof(*chunks));
        if (chunks == NULL) {
            o->oom = 1;
            return -1;
        }
        o->chunks = chunks;
        o->cap = cap;
    }
    chunk = chunk_alloc();
    if (chunk == NULL) {
        o->oom = 1;
        return -1;
    }
    o->chunks[o->nchunks++] = chunk;
    return 0;
}

void out_write(struct out *o, const void *p, size_t n)
{
    const char *src = p;

    if (o->oom)
        return;
    while (n > 0) {
        size_t used = o->len % OUT_CHUNK;
        size_t room, take;

        if (used == 0 && o->len / OUT_CHUNK == o->nchunks && out_grow(o) != 0)
            return;
        room = OUT_CHUNK - used;
        take = n < room ? n : room;
        memcpy(o->chunks[o->len / OUT_CHUNK] + used, src, take);
        o->len += take;
        src += take;
        n -= take;
    }
}

void out_puts(struct out *o, const char *s)
{
    out_write(o, s, strlen(s));
}

void out_putc(struct out *o, char c)
{
    out_write(o, &c, 1);
}

void out_vprintf(struct out *o, const char *fmt, va_list ap)
{
    char small[256];
    va_list ap2;
    int n;

    va_copy(ap2, ap);
    n = vsnprintf(small, sizeof(small), fmt, ap);
    if (n < 0) {
        va_end(ap2);
        o->oom = 1;
        return;
    }
    if ((size_t)n < sizeof(small)) {
        out_write(o, small, (size_t)n);
    } else {
        char *big = malloc((size_t)n + 1);
        if (big == NULL) {
            o->oom = 1;
        } else {
            vsnprintf(big, (size_t)n + 1, fmt, ap2);
            out_write(o, big, (size_t)n);
            free(big);
        }
    }
    va_end(ap2);
}

void out_printf(struct out *o, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    out_vprintf(o, fmt, ap);
    va_end(ap);
}

void out_json_str(struct out *o, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t i, start = 0;

    out_putc(o, '"');
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[6];
        size_t elen = 2;

        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        out_write(o, s + start, i - start);
        start = i + 1;
        esc[0] = '\\';
        switch (c) {
        case '"':
            esc[1] = '"';
            break;
        case '\\':
            esc[1] = '\\';
            break;
        case '\b':
            esc[1] = 'b';
            break;
        case '\f':
            esc[1] = 'f';
            break;
        case '\n':
            esc[1] = 'n';
            break;
        case '\r':
            esc[1] = 'r';
            break;
        case '\t':
            esc[1] = 't';
            break;
        default:
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            elen = 6;
            break;
        }
        out_write(o, esc, elen);
    }
    out_write(o, s + start, n - start);
    out_putc(o, '"');
}

void out_json_cstr(struct out *o, const char *s)
{
    if (s == NULL)
        s = "";
    out_json_str(o, s, strlen(s));
}

void out_csv_str(struct out *o, const char *s, size_t n)
{
    size_t i;

    if (memchr(s, ',', n) == NULL && memchr(s, '"', n) == NULL && memchr(s, '\n', n) == NULL &&
        memchr(s, '\r', n) == NULL) {
        out_write(o, s, n);
        return;
    }
    out_putc(o, '"');
    for (i = 0; i < n; i++) {
        if (s[i] == '"')
            out_putc(o, '"');
        out_putc(o, s[i]);
    }
    out_putc(o, '"');
}

void out_double17(struct out *o, double v)
{
    char buf[40];
    int n;

    if (!isfinite(v)) {
        out_write(o, "null", 4);
        return;
    }
    n = snprintf(buf, sizeof(buf), "%.17g", v);
    out_write(o, buf, (size_t)n);
}

size_t out_format_i64(char *p, int64_t v)
{
    char rev[20];
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    size_t n = 0, k = 0;

    do {
        rev[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        p[k++] = '-';
    while (n > 0)
        p[k++] = rev[--n];
    return k;
}

void out_i64(struct out *o, int64_t v)
{
    char buf[OUT_I64_MAX];

    out_write(o, buf, out_format_i64(buf, v));
}

void out_u64(struct out *o, uint64_t v)
{
    char buf[20];
    size_t i = sizeof(buf);

    do {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    out_write(o, buf + i, sizeof(buf) - i);
}

size_t out_len(const struct out *o)
{
    return o->len;
}

void out_discard(struct out *o)
{
    size_t i;

    for (i = 0; i < o->nchunks; i++)
        chunk_free(o->chunks[i]);
    free(o->chunks);
    out_init(o);
}

int out_finish(struct out *o, struct blob **blobp)
{
    struct blob *b;

    *blobp = NULL;
    if (o->oom) {
        out_discard(o);
        return -ENOMEM;
    }
    b = calloc(1, sizeof(*b));
    if (b == NULL) {
        out_discard(o);
        return -ENOMEM;
    }
    b->chunks = o->chunks;
    b->nchunks = o->nchunks;
    b->size = o->len;
    b->refs = 1;
    b->final = 1;
    out_init(o);
    *blobp = b;
    return 0;
}

struct blob *blob_ref(struct blob *b)
{
    if (b != NULL)
        __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
    return b;
}

void blob_unref(struct blob *b)
{
    size_t i;

    if (b == NULL || __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    for (i = 0; i < b->nchunks; i++)
        chunk_free(b->chunks[i]);
    free(b->chunks);
    free(b);
}

size_t blob_read(const struct blob *b, size_t off, void *dst, size_t n)
{
    char *d = dst;
    size_t done = 0;

    if (off >= b->size)
        return 0;
    if (n > b->size - off)
        n = b->size - off;
    while (done < n) {
        size_t ci = (off + done) / OUT_CHUNK;
        size_t co = (off + done) % OUT_CHUNK;
        size_t take = OUT_CHUNK - co;

        if (take > n - done)
            take = n - done;
        memcpy(d + done, b->chunks[ci] + co, take);
        done += take;
    }
    return done;
}

struct blob *blob_from_mem(const void *s, size_t n)
{
    struct out o;
    struct blob *b;

    out_init(&o);
    out_write(&o, s, n);
    if (out_finish(&o, &b) != 0)
        return NULL;
    return b;
}
