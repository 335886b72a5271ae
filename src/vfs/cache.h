/*
 * cache.h - produced files, kept in memory and computed once.
 *
 * A blob is keyed by (run, path inside the run with canonical query) and the
 * snapshot generation it came from. Entries live in an LRU bounded in bytes.
 * Two callers asking for the same missing key cause one computation: the
 * second waits for the first (single flight). After a blob is evicted its size
 * is remembered, so `ls -l` keeps showing the true size of a file the kernel
 * may still hold in its page cache.
 */
#ifndef XPROFS_CACHE_H
#define XPROFS_CACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "out/out.h"

struct cache_entry;

struct cache {
    pthread_mutex_t lock;       /* guards everything below */
    pthread_cond_t cond;        /* signalled when a computation ends */
    struct cache_entry **slots; /* hash table of entries */
    size_t nslots;              /* power of two */
    size_t nentries;            /* entries in the table */
    struct cache_entry *lru;    /* most recently used entry holding a blob */
    size_t bytes;               /* bytes of blobs held */
    size_t max_bytes;           /* bound on bytes */
};

typedef int (*cache_fill_fn)(void *arg, struct blob **blob, struct xp_err *err);

int cache_init(struct cache *c, size_t max_bytes);
void cache_destroy(struct cache *c);

/* The blob of key at generation gen: cached, or made by fill(arg) (once, even
 * with concurrent callers). A blob whose `final` is 0 or keep == 0 is handed
 * out but not kept. Returns 0 and a referenced *blob, or fill's error. */
int cache_get(struct cache *c, const char *key, uint64_t gen, int keep, cache_fill_fn fill,
              void *arg, struct blob **blob, struct xp_err *err);

/* The blob of key at gen if one is held, referenced (and made most recently
 * used), else NULL. Never computes and never waits. */
struct blob *cache_peek(struct cache *c, const char *key, uint64_t gen);

/* The size of key at gen if it was computed (even if evicted since), else -1. */
long long cache_known_size(struct cache *c, const char *key, uint64_t gen);

#endif
