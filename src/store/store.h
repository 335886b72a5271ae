/*
 * store.h - the persistent cache of produced files (-o cache_dir=DIR).
 *
 * A directory of entries, one file each, that outlives the process: a
 * produced file made once is mapped back by the next process (or the next
 * mount) instead of being made again. An entry is named by a 128-bit hash
 * of its key and holds the key itself, so a hash collision is a miss, never
 * a wrong file. The key text is the caller's: it names the xprofs version,
 * the run, the file with its canonical query (or the intermediate) and every
 * source file's fingerprint (snapshot_key_text), so a new version or a
 * changed source misses.
 *
 * Entry format 2 (little-endian; docs/design.md "The persistent cache"):
 *
 *   0   8  magic "XPROFSC\x1a"
 *   8   4  format version (STORE_FORMAT)
 *   12  4  CRC-32C of the header, this field taken as 0
 *   16  8  payload bytes P
 *   24  4  CRC-32C of the payload
 *   28  4  key bytes K
 *   32  8  when it was written (ns since the epoch)
 *   40  K  the key
 *       .. zeros up to a multiple of 8 (H = the header's size)
 *   H   P  the payload: the produced file, byte for byte
 *
 * A hit maps the entry (from STORE_MAP_AT bytes on; a smaller one is read)
 * and checks both checksums before the payload is handed out.
 * The file is exactly H + P bytes; anything else (cut short, grown, a bad
 * magic, version or checksum) is a corrupt entry: it is removed and the
 * caller makes the file again.
 *
 * Writes are crash-safe: an entry is written to a temporary file in
 * DIR/tmp, fsync'ed, and renamed into DIR/entries, so a reader sees a whole
 * entry or none, also with several processes sharing DIR. A process killed
 * mid-write leaves only its temporary file, removed by a later store once it
 * is an hour old. DIR is created owner-only (0700) and refused when another
 * user owns it or others may write it. The bound (max_bytes) is kept by
 * removing the entries least recently used: a hit sets the entry's atime.
 */
#ifndef XPROFS_STORE_H
#define XPROFS_STORE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "out/out.h"

#define STORE_FORMAT 2 /* 1: the same with zlib's CRC-32 */
#define STORE_MAGIC "XPROFSC\x1a"
#define STORE_HEADER_FIXED 40
#define STORE_MAX_KEY (1u << 20)
/* Entries of this many bytes or more are mapped; smaller ones are read. */
#define STORE_MAP_AT ((size_t)64 << 10)
/* A temporary file this old is a writer's that died. */
#define STORE_STALE_TMP_S 3600

struct store {
    char *dir;            /* DIR as given */
    char *entries;        /* DIR/entries */
    char *tmp;            /* DIR/tmp */
    size_t max_bytes;     /* bound on the entries' bytes; 0: none */
    pthread_mutex_t lock; /* guards bytes */
    size_t bytes;         /* entries' bytes, as last counted plus what we added */
};

/* Counters of this process's stores, for stats files and tests. */
struct store_counters {
    uint64_t hits;    /* entries mapped back */
    uint64_t misses;  /* lookups that found no valid entry */
    uint64_t stored;  /* entries written */
    uint64_t dropped; /* corrupt entries removed */
    uint64_t evicted; /* entries removed for the bound */
};

/* Open (creating it, 0700) the store at dir. Returns 0 and *sp (free with
 * store_close), or -errno with err: -EPERM when another user owns dir or
 * others may write it, -ENOTDIR when it is not a directory. */
int store_open(const char *dir, size_t max_bytes, struct store **sp, struct xp_err *err);
void store_close(struct store *st); /* NULL is a no-op */

/* The entry of key as a blob over its mapped payload (blob_unref unmaps
 * it), or NULL on a miss (none, another key, or corrupt: then removed).
 * A hit makes the entry the most recently used. */
struct blob *store_get(struct store *st, const char *key);

/* An entry being written (store_put_*). */
struct store_writer;

/* Start writing key's entry. Returns 0 and *wp, or -errno with err. */
int store_put_begin(struct store *st, const char *key, struct store_writer **wp,
                    struct xp_err *err);
/* Append payload bytes. Returns 0 or -errno (the writer stays usable only
 * for store_put_abort). */
int store_put_write(struct store_writer *w, const void *p, size_t n);
/* Finish: the entry appears whole under its name (replacing an older one),
 * then the bound is kept; an entry bigger than the bound itself is dropped
 * instead (0). Frees w. Returns 0 or -errno with err. */
int store_put_commit(struct store_writer *w, struct xp_err *err);
/* Give up: the temporary file goes. Frees w; NULL is a no-op. */
void store_put_abort(struct store_writer *w);

/* Write blob b as key's entry (skipped, returning 0, when it alone would
 * pass the bound). Returns 0 or -errno with err. */
int store_put_blob(struct store *st, const char *key, const struct blob *b, struct xp_err *err);

/* Remove least recently used entries, once they pass max_bytes, until the
 * rest fit 90% of it (so the next writes do not list the directory again), and
 * stale temporary files. Returns the number of entries removed. */
int store_trim(struct store *st);

/* The store the process's intermediates use (the per-host op_stats,
 * op_stats_build.c, and GPU timelines, gpu_timeline.c): set by vfs_use_store, NULL when none. One a
 * process: the last one set. */
void store_set_shared(struct store *st);
struct store *store_shared(void);

/* The counters so far (all stores of the process). */
void store_counters(struct store_counters *c);

/* The entry file name of key: 32 hex digits and a NUL. */
void store_entry_name(const char *key, char name[33]);

#endif
