/*
 * cache.c - single-flight LRU of produced blobs; see cache.h.
 */
#include "cache.h"
#include "base/hash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_MAX_ENTRIES 65536

struct cache_entry {
    struct cache_entry *hnext; /* hash chain */
    struct cache_entry *prev;  /* LRU neighbours (entries holding a blob) */
    struct cache_entry *next;
    char *key;         /* run + '\0'-free path?query */
    uint64_t gen;      /* generation of blob / size */
    int busy;          /* a computation is under way */
    struct blob *blob; /* held blob, or NULL */
    long long size;    /* size of the last blob made at gen, or -1 */
};

int cache_init(struct cache *c, size_t max_bytes)
{
    memset(c, 0, sizeof(*c));
    c->nslots = 4096;
    c->slots = calloc(c->nslots, sizeof(*c->slots));
    if (c->slots == NULL)
        return -ENOMEM;
    c->max_bytes = max_bytes;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    return 0;
}

void cache_destroy(struct cache *c)
{
    size_t i;

    for (i = 0; i < c->nslots; i++) {
        struct cache_entry *e = c->slots[i];
        while (e != NULL) {
            struct cache_entry *n = e->hnext;
            blob_unref(e->blob);
            free(e->key);
            free(e);
            e = n;
        }
    }
    free(c->slots);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->cond);
}

static struct cache_entry *find(struct cache *c, const char *key)
{
    struct cache_entry *e = c->slots[fnv64_str(key) & (c->nslots - 1)];

    while (e != NULL && strcmp(e->key, key) != 0)
        e = e->hnext;
    return e;
}

static void lru_unlink(struct cache *c, struct cache_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else if (c->lru == e)
        c->lru = e->next;
    if (e->next)
        e->next->prev = e->prev;
    e->prev = e->next = NULL;
}

static void lru_push(struct cache *c, struct cache_entry *e)
{
    e->prev = NULL;
    e->next = c->lru;
    if (c->lru)
        c->lru->prev = e;
    c->lru = e;
}

static void drop_blob(struct cache *c, struct cache_entry *e)
{
    if (e->blob == NULL)
        return;
    lru_unlink(c, e);
    c->bytes -= e->blob->size;
    blob_unref(e->blob);
    e->blob = NULL;
}

/* Evict least recently used blobs until bytes fit. */
static void evict(struct cache *c)
{
    struct cache_entry *tail = c->lru;

    while (tail && tail->next)
        tail = tail->next;
    while (c->bytes > c->max_bytes && tail != NULL) {
        struct cache_entry *prev = tail->prev;
        drop_blob(c, tail);
        tail = prev;
    }
}

/* A held blob of e, made most recently used; referenced. */
static struct blob *use_blob(struct cache *c, struct cache_entry *e)
{
    lru_unlink(c, e);
    lru_push(c, e);
    return blob_ref(e->blob);
}

int cache_get(struct cache *c, const char *key, uint64_t gen, int keep, cache_fill_fn fill,
              void *arg, struct blob **blob, struct xp_err *err)
{
    struct cache_entry *e;
    struct blob *b = NULL;
    int rc;

    *blob = NULL;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        e = find(c, key);
        if (e == NULL || !e->busy)
            break;
        pthread_cond_wait(&c->cond, &c->lock);
    }
    if (e != NULL && e->gen == gen && e->blob != NULL) {
        *blob = use_blob(c, e);
        pthread_mutex_unlock(&c->lock);
        return 0;
    }
    if (e == NULL) {
        if (c->nentries >= CACHE_MAX_ENTRIES) {
            /* Too many remembered keys: compute without remembering. */
            pthread_mutex_unlock(&c->lock);
            return fill(arg, blob, err);
        }
        e = calloc(1, sizeof(*e));
        if (e == NULL || (e->key = strdup(key)) == NULL) {
            free(e);
            pthread_mutex_unlock(&c->lock);
            return xp_err_set(err, -ENOMEM, "out of memory");
        }
        e->size = -1;
        size_t h = fnv64_str(key) & (c->nslots - 1);
        e->hnext = c->slots[h];
        c->slots[h] = e;
        c->nentries++;
    }
    drop_blob(c, e);
    e->busy = 1;
    pthread_mutex_unlock(&c->lock);

    rc = fill(arg, &b, err);

    pthread_mutex_lock(&c->lock);
    e->busy = 0;
    if (rc == 0) {
        e->gen = gen;
        e->size = b->final ? (long long)b->size : -1;
        if (keep && b->final && b->size <= c->max_bytes) {
            e->blob = blob_ref(b);
            c->bytes += b->size;
            lru_push(c, e);
            evict(c);
        }
        *blob = b;
    }
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

struct blob *cache_peek(struct cache *c, const char *key, uint64_t gen)
{
    struct cache_entry *e;
    struct blob *b = NULL;

    pthread_mutex_lock(&c->lock);
    e = find(c, key);
    if (e != NULL && !e->busy && e->gen == gen && e->blob != NULL)
        b = use_blob(c, e);
    pthread_mutex_unlock(&c->lock);
    return b;
}

long long cache_known_size(struct cache *c, const char *key, uint64_t gen)
{
    struct cache_entry *e;
    long long size = -1;

    pthread_mutex_lock(&c->lock);
    e = find(c, key);
    if (e != NULL && e->gen == gen)
        size = e->size;
    pthread_mutex_unlock(&c->lock);
    return size;
}
