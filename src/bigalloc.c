/*
 * bigalloc.c - big arrays on their own huge-page mappings (see bigalloc.h).
 *
 * Each block starts with a header holding its usable size and whether it is
 * a mapping; the caller's pointer follows the header.
 */
#include "bigalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

/* Under AddressSanitizer every block comes from malloc, so that overruns of
 * big arrays are caught too. */
#ifdef __SANITIZE_ADDRESS__
#define MAP_FROM SIZE_MAX
#else
#define MAP_FROM XP_BIG_ALLOC
#endif

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

static void *map_block(size_t bytes)
{
    size_t total = map_len(bytes);
    struct big_head *h;
    void *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (m == MAP_FAILED)
        return NULL;
    madvise(m, total, MADV_HUGEPAGE);
    h = m;
    h->bytes = bytes;
    h->mapped = 1;
    return h + 1;
}

void *big_malloc(size_t bytes)
{
    struct big_head *h;

    if (bytes > SIZE_MAX / 2)
        return NULL;
    if (bytes >= MAP_FROM)
        return map_block(bytes);
    h = malloc(sizeof(*h) + bytes);
    if (h == NULL)
        return NULL;
    h->bytes = bytes;
    h->mapped = 0;
    return h + 1;
}

void *big_calloc(size_t n, size_t size)
{
    void *p;

    if (size != 0 && n > SIZE_MAX / 2 / size)
        return NULL;
    p = big_malloc(n * size);
    /* A fresh mapping is zero already. */
    if (p != NULL && !head_of(p)->mapped)
        memset(p, 0, n * size);
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
        size_t total = map_len(bytes);
        void *m = mremap(h, map_len(h->bytes), total, MREMAP_MAYMOVE);
        if (m == MAP_FAILED)
            return NULL;
        madvise(m, total, MADV_HUGEPAGE);
        nh = m;
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
    if (h->mapped)
        munmap(h, map_len(h->bytes));
    else
        free(h);
}
