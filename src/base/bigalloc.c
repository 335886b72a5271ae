/*
 * bigalloc.c - big arrays on their own huge-page mappings (see bigalloc.h).
 *
 * Each block starts with a header holding its usable size and whether it is
 * a mapping; the caller's pointer follows the header.
 *
 * While some work holds the pool (big_pool_hold), the pages of a freed
 * mapping stay mapped in the pool and the next mappings are made of them:
 * a pooled range is moved into place (mremap, page tables only) instead of
 * new pages being faulted in and cleared. The last big_pool_release unmaps
 * what is left.
 */
#include "bigalloc.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)
#define POOL_SLOTS 1024 /* pooled ranges; a free finding none left unmaps */
/* Smaller mappings are unmapped when freed: freed in the middle of a pass,
 * their pages serve its page faults best from the kernel's free lists. */
#define POOL_FROM ((size_t)32 << 20)

/* Under AddressSanitizer every block comes from malloc, so that overruns of
 * big arrays are caught too. */
#ifdef __SANITIZE_ADDRESS__
#define MAP_FROM SIZE_MAX
#else
#define MAP_FROM XP_BIG_ALLOC
#endif

/* A freed range of whole huge pages, still mapped. */
struct pool_range {
    char *at;   /* first byte, 2 MiB aligned */
    size_t len; /* bytes, whole huge pages */
};

static struct {
    pthread_mutex_t lock;
    int holders;                          /* big_pool_hold calls not released */
    struct pool_range ranges[POOL_SLOTS]; /* freed ranges, the latest last */
    uint32_t n;                           /* entries in ranges */
    size_t bytes;                         /* their bytes */
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

struct big_head {
    size_t bytes;                                /* usable bytes after the header */
    int mapped;                                  /* 1: own mapping, 0: malloc */
    char pad[64 - sizeof(size_t) - sizeof(int)]; /* header of 64 bytes: data stays aligned */
};

static struct big_head *head_of(void *p)
{
    return (struct big_head *)((char *)p - sizeof(struct big_head));
}

/* Mapping length of a block: whole 2 MiB pages, so that the kernel places
 * it on a huge-page boundary and every part of it can be a huge page. */
static size_t map_len(size_t bytes)
{
    return (bytes + sizeof(struct big_head) + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
}

/* Keep [at, at + len) mapped for the next blocks; 0 when nothing holds
 * the pool or it is full (the caller unmaps it). */
static int pool_put(char *at, size_t len)
{
    int kept = 0;

    pthread_mutex_lock(&pool.lock);
    if (pool.holders > 0 && pool.n < POOL_SLOTS && len >= POOL_FROM) {
        pool.ranges[pool.n].at = at;
        pool.ranges[pool.n].len = len;
        pool.n++;
        pool.bytes += len;
        kept = 1;
    }
    pthread_mutex_unlock(&pool.lock);
    return kept;
}

/* Drop range i of the pool once it is used up (call with the lock held). */
static void pool_drop_empty(uint32_t i)
{
    if (pool.ranges[i].len == 0)
        pool.ranges[i] = pool.ranges[--pool.n];
}

/* The front len bytes of the smallest pooled range that has them, taken
 * out of the pool; NULL if none has. */
static char *pool_take(size_t len)
{
    uint32_t i, best = UINT32_MAX;
    char *at = NULL;

    pthread_mutex_lock(&pool.lock);
    for (i = 0; i < pool.n; i++) {
        if (pool.ranges[i].len >= len &&
            (best == UINT32_MAX || pool.ranges[i].len < pool.ranges[best].len))
            best = i;
    }
    if (best != UINT32_MAX) {
        at = pool.ranges[best].at;
        pool.ranges[best].at += len;
        pool.ranges[best].len -= len;
        pool.bytes -= len;
        pool_drop_empty(best);
    }
    pthread_mutex_unlock(&pool.lock);
    return at;
}

/* Move the pages of [from, from + len) over [to, to + len) (whole huge
 * pages of our own mappings), one huge page at a time. A range may span
 * several mappings, which one mremap cannot move, and a move that fails
 * has unmapped its destination first, where another thread's mapping may
 * then be made; a huge page of ours lies in one mapping, so its move fails
 * only at the kernel's limit of mappings. 512 moves a GiB: about 12 ms.
 * Returns the bytes moved from the start. */
static size_t move_pages(char *from, char *to, size_t len)
{
    size_t off;

    for (off = 0; off < len; off += HUGE_PAGE) {
        if (mremap(from + off, HUGE_PAGE, HUGE_PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, to + off) ==
            MAP_FAILED)
            break;
    }
    return off;
}

/* After a move that failed at at: map fresh pages where it may have left
 * none (a mapping made there since is left alone). */
static void refill(char *at)
{
    void *m = mmap(at, HUGE_PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

    if (m != MAP_FAILED && m != at)
        munmap(m, HUGE_PAGE); /* a kernel without MAP_FIXED_NOREPLACE */
}

/* Move pooled pages over the front of [dst, dst + len), a mapping of our
 * own not touched yet, the latest freed first. Returns the bytes moved. */
static size_t pool_fill(char *dst, size_t len)
{
    size_t done = 0;

    pthread_mutex_lock(&pool.lock);
    while (done < len && pool.n > 0) {
        struct pool_range *r = &pool.ranges[pool.n - 1];
        size_t take = r->len < len - done ? r->len : len - done;
        size_t moved = move_pages(r->at, dst + done, take);
        r->at += moved;
        r->len -= moved;
        pool.bytes -= moved;
        pool_drop_empty(pool.n - 1);
        done += moved;
        if (moved < take) {
            refill(dst + done);
            break;
        }
    }
    pthread_mutex_unlock(&pool.lock);
    return done;
}

void big_pool_hold(void)
{
    pthread_mutex_lock(&pool.lock);
    pool.holders++;
    pthread_mutex_unlock(&pool.lock);
}

void big_pool_release(void)
{
    uint32_t i;

    pthread_mutex_lock(&pool.lock);
    if (pool.holders > 0 && --pool.holders == 0) {
        for (i = 0; i < pool.n; i++)
            munmap(pool.ranges[i].at, pool.ranges[i].len);
        pool.n = 0;
        pool.bytes = 0;
    }
    pthread_mutex_unlock(&pool.lock);
}

size_t big_pool_bytes(void)
{
    size_t n;

    pthread_mutex_lock(&pool.lock);
    n = pool.bytes;
    pthread_mutex_unlock(&pool.lock);
    return n;
}

/* A mapped block of bytes; *reused is how many bytes from its start are
 * pooled pages (holding old contents), the rest reads zero. */
static void *map_block(size_t bytes, size_t *reused)
{
    size_t total = map_len(bytes);
    struct big_head *h;
    char *m = pool_take(total);

    if (m != NULL) {
        *reused = total;
    } else {
        m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        madvise(m, total, MADV_HUGEPAGE);
        *reused = pool_fill(m, total);
    }
    h = (struct big_head *)m;
    h->bytes = bytes;
    h->mapped = 1;
    return h + 1;
}

/* [m, m + had) grown to total bytes, moved if need be (NULL: no memory,
 * m unchanged). */
static char *grow_mapping(char *m, size_t had, size_t total)
{
    char *g = mremap(m, had, total, MREMAP_MAYMOVE);
    size_t moved;

    if (g != MAP_FAILED) {
        madvise(g, total, MADV_HUGEPAGE);
        return g;
    }
    if (errno != EFAULT)
        return NULL;
    /* Several mappings (pooled pages): move them into a new one. */
    g = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g == MAP_FAILED)
        return NULL;
    madvise(g, total, MADV_HUGEPAGE);
    moved = move_pages(m, g, had);
    if (moved < had) {
        refill(g + moved);
        memcpy(g + moved, m + moved, had - moved);
        /* Only what did not move: the moved part's addresses are free,
         * and another thread may have mapped them since. */
        munmap(m + moved, had - moved);
    }
    return g;
}

void *big_malloc(size_t bytes)
{
    struct big_head *h;
    size_t reused;

    if (bytes > SIZE_MAX / 2)
        return NULL;
    if (bytes >= MAP_FROM)
        return map_block(bytes, &reused);
    h = malloc(sizeof(*h) + bytes);
    if (h == NULL)
        return NULL;
    h->bytes = bytes;
    h->mapped = 0;
    return h + 1;
}

void *big_calloc(size_t n, size_t size)
{
    size_t bytes, reused;
    void *p;

    if (size != 0 && n > SIZE_MAX / 2 / size)
        return NULL;
    bytes = n * size;
    if (bytes < MAP_FROM) {
        p = big_malloc(bytes);
        if (p != NULL)
            memset(p, 0, bytes);
        return p;
    }
    /* Fresh pages are zero already: only pooled ones are cleared. */
    p = map_block(bytes, &reused);
    if (p != NULL && reused > sizeof(struct big_head))
        memset(p, 0,
               reused - sizeof(struct big_head) < bytes ? reused - sizeof(struct big_head) : bytes);
    return p;
}

void *big_realloc(void *p, size_t bytes)
{
    struct big_head *h, *nh;
    void *q;

    if (p == NULL)
        return big_malloc(bytes);
    if (bytes > SIZE_MAX / 2)
        return NULL;
    h = head_of(p);
    if (h->mapped && bytes >= MAP_FROM) {
        size_t total = map_len(bytes), had = map_len(h->bytes);
        char *m = (char *)h;
        /* A shrinking array is done growing: its tail's pages go back
         * (pooled, they would stay beside it unused). */
        if (total < had)
            munmap(m + total, had - total);
        if (total > had) {
            m = grow_mapping(m, had, total);
            if (m == NULL)
                return NULL;
            (void)pool_fill(m + had, total - had);
        }
        nh = (struct big_head *)m;
        nh->bytes = bytes;
        return nh + 1;
    }
    if (!h->mapped && bytes < MAP_FROM) {
        nh = realloc(h, sizeof(*h) + bytes);
        if (nh == NULL)
            return NULL;
        nh->bytes = bytes;
        return nh + 1;
    }
    /* Crossing the threshold: copy into the other kind. */
    q = big_malloc(bytes);
    if (q == NULL)
        return NULL;
    memcpy(q, p, h->bytes < bytes ? h->bytes : bytes);
    big_free(p);
    return q;
}

void big_free(void *p)
{
    struct big_head *h;

    if (p == NULL)
        return;
    h = head_of(p);
    if (h->mapped) {
        if (!pool_put((char *)h, map_len(h->bytes)))
            munmap(h, map_len(h->bytes));
    } else
        free(h);
}
