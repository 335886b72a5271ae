/*
 * out.c - chunked output writer, its spill file, and immutable blobs; see out.h.
 */
#include "out.h"

#include "base/shortest.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>

/* Bytes per pread when a blob's file part is copied through memory. */
#define OUT_COPY_BUF ((size_t)1 << 20)

void out_init(struct out *o)
{
    memset(o, 0, sizeof(*o));
}

void out_spill_at(struct out *o, const char *dir, size_t threshold)
{
    o->spill_dir = dir;
    o->spill_at = threshold;
}

void out_spill(struct out *o, const char *dir)
{
    out_spill_at(o, dir, OUT_SPILL_THRESHOLD);
}

void out_on_spill(struct out *o, int (*fn)(void *arg, int fd, size_t spilled), void *arg)
{
    o->on_spill = fn;
    o->on_spill_arg = arg;
}

int out_failed(const struct out *o)
{
    return o->oom;
}

void out_stream_at(struct out *o, int fd, size_t threshold)
{
    o->stream = 1;
    o->spill_fd = fd;
    o->spill_at = threshold;
}

void out_on_stream(struct out *o, void (*fn)(void *arg, const void *p, size_t n), void *arg)
{
    o->on_stream = fn;
    o->on_stream_arg = arg;
}

/* Chunks are mapped on their own, and a writer's chunks after its first
 * with transparent huge pages: first writes to fresh memory then fault once
 * per 2 MiB instead of once per 4 KiB, which is much of the cost of writing
 * a big file. The first chunk keeps small pages, touched only as far as it
 * is written, unless the writer expects to fill much of it (out_expect):
 * most answers are a few KiB, for which a huge page would be 2 MiB to clear
 * (on fresh memory of a VM, milliseconds). Under AddressSanitizer they come
 * from malloc so that overruns are caught. */
#if defined(__SANITIZE_ADDRESS__)
#define OUT_CHUNK_MALLOC 1
#else
#define OUT_CHUNK_MALLOC 0
#endif

static char *chunk_alloc(int huge)
{
    void *p;

    if (OUT_CHUNK_MALLOC)
        return malloc(OUT_CHUNK);
    p = mmap(NULL, OUT_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (huge)
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

/* Write all n bytes to fd. Returns 0 or -errno. */
static int write_full(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (w == 0)
            return -EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* An unlinked read-write file in dir: O_TMPFILE, or mkstemp + unlink where
 * the file system refuses O_TMPFILE. Returns the fd or -errno. */
static int spill_open(const char *dir)
{
    static const char name[] = "/xprofs-spill-XXXXXX";
    char *path;
    size_t n;
    int fd, rc;

    fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
        return -errno;
    n = strlen(dir) + sizeof(name);
    path = malloc(n);
    if (path == NULL)
        return -ENOMEM;
    snprintf(path, n, "%s%s", dir, name);
    fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
        free(path);
        return rc;
    }
    if (unlink(path) != 0) {
        rc = -errno;
        close(fd);
        free(path);
        return rc;
    }
    free(path);
    return fd;
}

/* Append every chunk still in memory (all full) to the spill file (opening
 * it first if needed) or the streamed fd, and free them except the last,
 * whose memory goes to *reuse. Returns 0 or -errno (chunks not yet written
 * stay in memory). */
static int spill_chunks(struct out *o, char **reuse)
{
    size_t i;
    int rc;

    if (o->spilled == 0 && !o->stream) {
        rc = spill_open(o->spill_dir);
        if (rc < 0)
            return rc;
        o->spill_fd = rc;
    }
    for (i = o->spilled / OUT_CHUNK; i < o->nchunks; i++) {
        rc = write_full(o->spill_fd, o->chunks[i], OUT_CHUNK);
        if (rc != 0) {
            if (o->spilled == 0 && !o->stream)
                close(o->spill_fd);
            return rc;
        }
        if (o->on_stream != NULL && o->stream)
            o->on_stream(o->on_stream_arg, o->chunks[i], OUT_CHUNK);
        o->spilled += OUT_CHUNK;
        if (i + 1 < o->nchunks)
            chunk_free(o->chunks[i]);
        else
            *reuse = o->chunks[i];
        o->chunks[i] = NULL;
        if (o->on_spill != NULL && !o->stream) {
            rc = o->on_spill(o->on_spill_arg, o->spill_fd, o->spilled);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

/* Make sure a chunk with free space exists; a spilling writer past its
 * threshold first moves its full chunks to the file. Returns 0 or -1 (sets
 * oom, and spill_err for a file error). */
static int out_grow(struct out *o)
{
    char *chunk = NULL;

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
    if ((o->spill_dir != NULL || o->stream) && o->len >= o->spill_at && o->len > o->spilled) {
        int rc = spill_chunks(o, &chunk);
        if (rc != 0) {
            if (chunk != NULL)
                chunk_free(chunk);
            o->oom = 1;
            o->spill_err = rc;
            return -1;
        }
    }
    if (chunk == NULL)
        chunk = chunk_alloc(o->nchunks > 0 || o->expect >= OUT_CHUNK / 2);
    if (chunk == NULL) {
        o->oom = 1;
        return -1;
    }
    o->chunks[o->nchunks++] = chunk;
    return 0;
}

void out_write_chunks(struct out *o, const void *p, size_t n)
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

void out_decimal(struct out *o, double v, int shift)
{
    char d[24], buf[48];
    int k, e, n = 0, i;

    if (!isfinite(v)) {
        out_write(o, "null", 4);
        return;
    }
    if (v == 0) {
        out_write(o, "0", 1);
        return;
    }
    if (shift == 0 && v == floor(v) && fabs(v) < 1e15) {
        out_i64(o, (int64_t)v);
        return;
    }
    k = shortest_digits(v, d, &e); /* v = d[0].d[1..] x 10^e */
    e += shift;
    if (v < 0)
        buf[n++] = '-';
    if (e >= 0 && e < 15) { /* ddd.ddd */
        for (i = 0; i <= e; i++)
            buf[n++] = i < k ? d[i] : '0';
        if (k > e + 1)
            buf[n++] = '.';
        for (i = e + 1; i < k; i++)
            buf[n++] = d[i];
    } else if (e < 0 && e >= -6) { /* 0.000ddd */
        buf[n++] = '0';
        buf[n++] = '.';
        for (i = -1; i > e; i--)
            buf[n++] = '0';
        for (i = 0; i < k; i++)
            buf[n++] = d[i];
    } else { /* d.ddde+XX */
        buf[n++] = d[0];
        if (k > 1)
            buf[n++] = '.';
        for (i = 1; i < k; i++)
            buf[n++] = d[i];
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "e%c%02d", e < 0 ? '-' : '+', abs(e));
    }
    out_write(o, buf, (size_t)n);
}

void out_number(struct out *o, double v)
{
    out_decimal(o, v, 0);
}

const uint64_t out_pow10[20] = {1ull,
                                10ull,
                                100ull,
                                1000ull,
                                10000ull,
                                100000ull,
                                1000000ull,
                                10000000ull,
                                100000000ull,
                                1000000000ull,
                                10000000000ull,
                                100000000000ull,
                                1000000000000ull,
                                10000000000000ull,
                                100000000000000ull,
                                1000000000000000ull,
                                10000000000000000ull,
                                100000000000000000ull,
                                1000000000000000000ull,
                                10000000000000000000ull};

const char out_two_digits[] = "0001020304050607080910111213141516171819"
                              "2021222324252627282930313233343536373839"
                              "4041424344454647484950515253545556575859"
                              "6061626364656667686970717273747576777879"
                              "8081828384858687888990919293949596979899";

/* The decimal digits of v, ending just before end; returns their count.
 * Two digits per division: printing numbers is the trace writer's main
 * work. */
static size_t format_u64_before(char *end, uint64_t v)
{
    char *p = end;

    while (v >= 100) {
        unsigned d = (unsigned)(v % 100);
        v /= 100;
        p -= 2;
        memcpy(p, &out_two_digits[2 * d], 2);
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, &out_two_digits[2 * v], 2);
    } else {
        *--p = (char)('0' + v);
    }
    return (size_t)(end - p);
}

size_t out_format_i64(char *p, int64_t v)
{
    char buf[20];
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    size_t n = format_u64_before(buf + sizeof(buf), u), k = 0;

    if (v < 0)
        p[k++] = '-';
    memcpy(p + k, buf + sizeof(buf) - n, n);
    return k + n;
}

void out_i64(struct out *o, int64_t v)
{
    char buf[OUT_I64_MAX];

    out_write(o, buf, out_format_i64(buf, v));
}

void out_u64(struct out *o, uint64_t v)
{
    char buf[20];
    size_t n = format_u64_before(buf + sizeof(buf), v);

    out_write(o, buf + sizeof(buf) - n, n);
}

void out_expect(struct out *o, size_t bytes)
{
    o->expect = bytes;
}

void out_rewind(struct out *o)
{
    o->len = 0;
}

void out_append(struct out *o, const struct out *src)
{
    size_t i, used = (src->len + OUT_CHUNK - 1) / OUT_CHUNK;

    for (i = 0; i < used; i++)
        out_write(o, src->chunks[i], i + 1 < used ? OUT_CHUNK : src->len - i * OUT_CHUNK);
}

/* Free the chunks past the last one in use (a rewound writer may hold
 * some), so that every chunk but the last is full again. */
static void trim_chunks(struct out *o)
{
    size_t used = (o->len + OUT_CHUNK - 1) / OUT_CHUNK;

    while (o->nchunks > used && o->nchunks > o->spilled / OUT_CHUNK)
        chunk_free(o->chunks[--o->nchunks]);
}

size_t out_len(const struct out *o)
{
    return o->len;
}

/* Empty the writer, keeping where and when it spills or streams. */
static void out_reset(struct out *o)
{
    const char *dir = o->spill_dir;
    size_t at = o->spill_at;
    int stream = o->stream, fd = o->spill_fd;

    out_init(o);
    if (stream)
        out_stream_at(o, fd, at);
    else
        out_spill_at(o, dir, at);
}

void out_discard(struct out *o)
{
    size_t i;

    for (i = 0; i < o->nchunks; i++)
        chunk_free(o->chunks[i]);
    free(o->chunks);
    if (o->spilled > 0 && !o->stream)
        close(o->spill_fd);
    out_reset(o);
}

int out_finish(struct out *o, struct blob **blobp)
{
    struct blob *b;
    int rc;

    *blobp = NULL;
    if (o->oom || o->stream) {
        rc = o->oom ? (o->spill_err != 0 ? o->spill_err : -ENOMEM) : -EINVAL;
        out_discard(o);
        return rc;
    }
    trim_chunks(o);
    b = calloc(1, sizeof(*b));
    if (b == NULL) {
        out_discard(o);
        return -ENOMEM;
    }
    b->chunks = o->chunks;
    b->nchunks = o->nchunks;
    b->size = o->len;
    b->file_bytes = o->spilled;
    b->fd = o->spilled > 0 ? o->spill_fd : -1;
    b->refs = 1;
    b->final = 1;
    out_reset(o);
    *blobp = b;
    return 0;
}

int out_finish_to(struct out *o, int fd)
{
    size_t i;
    int rc = 0;

    if (o->oom)
        rc = o->spill_err != 0 ? o->spill_err : -ENOMEM;
    else if (o->spilled > 0 && !o->stream)
        rc = -EINVAL;
    trim_chunks(o);
    for (i = o->spilled / OUT_CHUNK; rc == 0 && i < o->nchunks; i++) {
        size_t n = i + 1 < o->nchunks ? OUT_CHUNK : o->len - i * OUT_CHUNK;
        rc = write_full(fd, o->chunks[i], n);
        if (rc == 0 && o->on_stream != NULL)
            o->on_stream(o->on_stream_arg, o->chunks[i], n);
    }
    out_discard(o);
    return rc;
}

struct blob *blob_ref(struct blob *b)
{
    if (b != NULL)
        __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
    return b;
}

int blob_unref(struct blob *b)
{
    size_t i;

    if (b == NULL || __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return 0;
    if (b->mem_release != NULL)
        b->mem_release(b->mem_arg);
    for (i = 0; i < b->nchunks; i++)
        chunk_free(b->chunks[i]);
    free(b->chunks);
    if (b->file_bytes > 0)
        close(b->fd);
    free(b);
    return 1;
}

/* pread exactly n bytes at off. Returns 0 or -errno (-EIO if the file is
 * shorter than it should be). */
static int pread_full(int fd, char *d, size_t n, size_t off)
{
    while (n > 0) {
        ssize_t r = pread(fd, d, n, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            return -EIO;
        d += r;
        off += (size_t)r;
        n -= (size_t)r;
    }
    return 0;
}

ssize_t blob_read(const struct blob *b, size_t off, void *dst, size_t n)
{
    char *d = dst;
    size_t done = 0;

    if (off >= b->size)
        return 0;
    if (n > b->size - off)
        n = b->size - off;
    if (b->mem != NULL) {
        memcpy(d, b->mem + off, n);
        return (ssize_t)n;
    }
    if (off < b->file_bytes) {
        size_t take = b->file_bytes - off < n ? b->file_bytes - off : n;
        int rc = pread_full(b->fd, d, take, off);
        if (rc != 0) {
            errno = -rc;
            return -1;
        }
        done = take;
    }
    while (done < n) {
        size_t ci = (off + done) / OUT_CHUNK;
        size_t co = (off + done) % OUT_CHUNK;
        size_t take = OUT_CHUNK - co;

        if (take > n - done)
            take = n - done;
        memcpy(d + done, b->chunks[ci] + co, take);
        done += take;
    }
    return (ssize_t)done;
}

/* Copy the file part [pos, file_bytes) to fd through a buffer (for fds
 * sendfile refuses). Returns 0 or -errno. */
static int copy_file_part(const struct blob *b, size_t pos, int fd)
{
    char *buf = malloc(OUT_COPY_BUF);
    int rc = buf == NULL ? -ENOMEM : 0;

    while (rc == 0 && pos < b->file_bytes) {
        size_t take = b->file_bytes - pos < OUT_COPY_BUF ? b->file_bytes - pos : OUT_COPY_BUF;
        rc = pread_full(b->fd, buf, take, pos);
        if (rc == 0)
            rc = write_full(fd, buf, take);
        pos += take;
    }
    free(buf);
    return rc;
}

/* Send the file part to fd, in the kernel where it can. Returns 0 or -errno. */
static int send_file_part(const struct blob *b, int fd)
{
    off_t pos = 0;

    while ((size_t)pos < b->file_bytes) {
        ssize_t w = sendfile(fd, b->fd, &pos, b->file_bytes - (size_t)pos);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EINVAL || errno == ENOSYS)
                return copy_file_part(b, (size_t)pos, fd);
            return -errno;
        }
        if (w == 0)
            return -EIO;
    }
    return 0;
}

int blob_write_fd(const struct blob *b, int fd)
{
    size_t i;
    int rc = 0;

    if (b->mem != NULL)
        return write_full(fd, b->mem, b->size);
    if (b->file_bytes > 0)
        rc = send_file_part(b, fd);
    for (i = b->file_bytes / OUT_CHUNK; rc == 0 && i < b->nchunks; i++) {
        size_t off = i * (size_t)OUT_CHUNK;
        size_t n = b->size - off < OUT_CHUNK ? b->size - off : OUT_CHUNK;
        rc = write_full(fd, b->chunks[i], n);
    }
    return rc;
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

struct blob *blob_from_map(const char *p, size_t n, void (*release)(void *arg), void *arg)
{
    struct blob *b = calloc(1, sizeof(*b));

    if (b == NULL)
        return NULL;
    b->mem = p;
    b->size = n;
    b->fd = -1;
    b->refs = 1;
    b->final = 1;
    b->mem_release = release;
    b->mem_arg = arg;
    return b;
}
