/*
 * out.h - the output writer and the blob it becomes.
 *
 * Every tool writes its bytes through a struct out: an append-only list of
 * fixed-size chunks, so a multi-gigabyte trace is never one giant string and
 * never copied on growth. Errors are sticky (SQLite's JsonString idea): after
 * an allocation failure every append is a no-op and out_finish reports -ENOMEM,
 * so writers check once at the end.
 *
 * out_finish turns the writer into a struct blob: immutable, reference counted,
 * shared by the cache, FUSE readers and the CLI.
 *
 * A writer told to spill (out_spill) keeps at most OUT_SPILL_THRESHOLD bytes
 * in memory: past that, every full chunk is appended to an unlinked temporary
 * file and its memory reused, so an output bigger than memory costs one chunk
 * of memory. Its blob reads that part back from the file. A spill error
 * (ENOSPC, EIO) is sticky like an allocation failure.
 *
 * A writer told to stream (out_stream_at, the CLI) does the same with the
 * caller's file descriptor (its stdout) instead of a file of its own: the
 * bytes past the threshold leave while they are produced, are never read
 * back, and out_finish_to writes the rest.
 */
#ifndef XPROFS_OUT_H
#define XPROFS_OUT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#define OUT_CHUNK (2u << 20) /* bytes per chunk; every chunk but the last is full */

/* Bytes a spilling writer holds in memory before it starts using its file. */
#define OUT_SPILL_THRESHOLD ((size_t)64 << 20)

/* A zeroed struct is an empty writer that never spills. */
struct out {
    char **chunks;         /* chunk pointers, each OUT_CHUNK bytes; NULL once spilled */
    size_t nchunks;        /* chunks in use (spilled ones included) */
    size_t cap;            /* slots in chunks[] */
    size_t len;            /* bytes written in total */
    int oom;               /* sticky: an allocation (or the spill file) failed */
    int spill_err;         /* negative errno of the failed spill file, or 0 */
    const char *spill_dir; /* directory of the spill file; NULL: never spill */
    size_t spill_at;       /* bytes written before chunks go to the file */
    size_t spilled;        /* bytes [0, spilled) are in the file (whole chunks) */
    int spill_fd;          /* the unlinked spill file (open exactly when spilled > 0), or
                              the caller's fd when streaming */
    int stream;            /* 1: spill_fd is the caller's (out_stream_at) */
    size_t expect;         /* bytes it is expected to hold (out_expect), 0: unknown */
    int (*on_spill)(void *arg, int fd, size_t spilled);    /* see out_on_spill, or NULL */
    void *on_spill_arg;                                    /* its argument */
    void (*on_stream)(void *arg, const void *p, size_t n); /* see out_on_stream, or NULL */
    void *on_stream_arg;                                   /* its argument */
};

struct blob {
    char **chunks;                  /* as in struct out; owned; NULL for chunks in the file */
    size_t nchunks;                 /* number of chunks */
    size_t size;                    /* bytes of content */
    size_t file_bytes;              /* bytes [0, file_bytes) are read from fd */
    int fd;                         /* unlinked spill file, open exactly when file_bytes > 0 */
    int refs;                       /* references; atomic */
    int final;                      /* 0: made while a source was still being written */
    uint64_t gen;                   /* session generation it was made from */
    const char *mem;                /* blob_from_map: the bytes (no chunks, no file), else NULL */
    void (*mem_release)(void *arg); /* called once when the last reference goes */
    void *mem_arg;                  /* its argument */
};

/* Start an empty writer. Cannot fail. */
void out_init(struct out *o);

/* Let the writer spill to an unlinked file in directory dir (which must
 * outlive the writer) once it holds more than OUT_SPILL_THRESHOLD bytes.
 * Call right after out_init. A writer that stays below never makes a file. */
void out_spill(struct out *o, const char *dir);

/* Same with a chosen threshold in bytes (tests use tiny ones). */
void out_spill_at(struct out *o, const char *dir, size_t threshold);

/* Tell fn(arg, fd, spilled) after every chunk a spilling writer adds to
 * its spill file fd: bytes [0, spilled) of the output are there (so that
 * readers can follow a file while it is being made: live_blob.h). fn
 * returns 0 to go on, or a negative errno to stop the writer, which then
 * fails with it like a failed spill file (nobody reads the file any more).
 * Call after out_spill. */
void out_on_spill(struct out *o, int (*fn)(void *arg, int fd, size_t spilled), void *arg);

/* 1 once an append has failed (out_finish will fail): a long producer can
 * stop early. */
int out_failed(const struct out *o);

/* Let the writer stream to fd (not owned: never closed) once it holds more
 * than threshold bytes: full chunks are written there and their memory
 * reused. Call right after out_init; end with out_finish_to(o, fd). */
void out_stream_at(struct out *o, int fd, size_t threshold);

/* fn(arg, p, n) for every run of bytes a streaming writer sends to its fd,
 * in order (full chunks as they leave, the rest in out_finish_to), so that
 * the caller can keep a copy (the persistent cache's entry) without the
 * bytes going through a spill file. Call after out_stream_at. */
void out_on_stream(struct out *o, void (*fn)(void *arg, const void *p, size_t n), void *arg);

/* Empty a writer that never spills or streams but keep its chunks, so that
 * a writer reused in a loop writes its next bytes into the same memory
 * (fresh memory costs a page fault and zeroing). */
void out_rewind(struct out *o);

/* The writer will hold about bytes: from half a chunk on, its first chunk
 * is on huge pages too (see chunk_alloc in out.c). */
void out_expect(struct out *o, size_t bytes);

/* Append everything src holds (a writer that never spilled or streamed). */
void out_append(struct out *o, const struct out *src);

/* Append n bytes, whatever room the current chunk has. */
void out_write_chunks(struct out *o, const void *p, size_t n);

/* Append n bytes. Writers append a few bytes at a time, so the common
 * case (they fit the chunk being filled) is inline; the rest is
 * out_write_chunks. */
static inline void out_write(struct out *o, const void *p, size_t n)
{
    size_t used = o->len % OUT_CHUNK;

    if (used != 0 && n <= OUT_CHUNK - used && !o->oom) {
        memcpy(o->chunks[o->len / OUT_CHUNK] + used, p, n);
        o->len += n;
        return;
    }
    out_write_chunks(o, p, n);
}

/* Append a NUL-terminated string (inline, so a literal's length is known
 * when compiling). */
static inline void out_puts(struct out *o, const char *s)
{
    out_write(o, s, strlen(s));
}

/* Append one byte. */
static inline void out_putc(struct out *o, char c)
{
    out_write(o, &c, 1);
}

/* Append printf-formatted text. */
void out_printf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void out_vprintf(struct out *o, const char *fmt, va_list ap);

/* Append s[0..n) as a JSON string literal, quotes included. */
void out_json_str(struct out *o, const char *s, size_t n);

/* Same for a NUL-terminated string (NULL writes ""). */
void out_json_cstr(struct out *o, const char *s);

/* Append s[0..n) as one CSV field: quoted when it holds a comma, quote or
 * line break, with quotes doubled (RFC 4180). */
void out_csv_str(struct out *o, const char *s, size_t n);

/* Append a double as %.17g, the shortest form JSON readers round-trip;
 * NaN and infinities are written as null (JSON has no spelling for them). */
void out_double17(struct out *o, double v);

/* Append a number as a person reads it and JSON parses it: a whole number
 * (below 1e15) as an integer, else the fewest digits that read back as v,
 * in plain decimal from 1e-6 to 1e15 and with an exponent outside that;
 * NaN and infinities as null. For our own files (report, steps, compare);
 * XProf's and TraceLens's keep their tools' spellings. */
void out_number(struct out *o, double v);

/* The same for v x 10^shift, shifting the decimal digits of v (exact: no
 * second rounding): out_decimal(o, ps, -6) writes picoseconds as us. */
void out_decimal(struct out *o, double v, int shift);

/* Append an int64 / uint64 in decimal. */
void out_i64(struct out *o, int64_t v);
void out_u64(struct out *o, uint64_t v);

/* 10^0 .. 10^19, for the exact decimal formatters (trace_json.c, gt_pyrepr.c). */
extern const uint64_t out_pow10[20];

/* "00", "01", ... "99" back to back: two digits at a time for formatters. */
extern const char out_two_digits[];

/* Write v in decimal at p (room for OUT_I64_MAX bytes, no NUL); returns the
 * count (for callers that assemble a line before appending it). */
#define OUT_I64_MAX 20
size_t out_format_i64(char *p, int64_t v);

/* Bytes written so far. */
size_t out_len(const struct out *o);

/* Turn the writer into a blob with one reference. Returns 0, or -ENOMEM if any
 * append failed, or the spill file's negative errno (-ENOSPC, -EIO, -ENOENT
 * for a missing directory...) if it failed; then the writer's memory and
 * file are released and *blobp is NULL. The writer is empty afterwards
 * either way. */
int out_finish(struct out *o, struct blob **blobp);

/* Write what the writer holds to fd (a streaming writer: what it has not
 * yet written there) and empty it. Returns 0, -ENOMEM if an append failed,
 * fd's -errno, or -EINVAL for a writer whose bytes went to a spill file. */
int out_finish_to(struct out *o, int fd);

/* Release a writer's memory and file without making a blob (on an error
 * path). */
void out_discard(struct out *o);

/* Take / drop a reference. blob_unref(NULL) is a no-op. */
struct blob *blob_ref(struct blob *b);
int blob_unref(struct blob *b); /* 1 when that freed it */

/* Copy up to n bytes from offset off into dst; returns the number copied
 * (short only at the end of the blob), or -1 with errno set when reading
 * the spill file failed. Safe to call from several threads at once. */
ssize_t blob_read(const struct blob *b, size_t off, void *dst, size_t n);

/* Write the whole blob to fd (a file, pipe or socket), streaming the
 * spilled part from its file with bounded memory. Returns 0 or -errno. */
int blob_write_fd(const struct blob *b, int fd);

/* A blob over bytes p[0..n) that stay valid until release(arg), called
 * when its last reference goes (a mapped cache entry, store.h). NULL when
 * out of memory (release is then not called). */
struct blob *blob_from_map(const char *p, size_t n, void (*release)(void *arg), void *arg);

/* A blob holding a copy of s[0..n). NULL when out of memory. */
struct blob *blob_from_mem(const void *s, size_t n);

#endif
