/*
 * arena.c - bump allocation in large blocks; see arena.h.
 */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Blocks double from ARENA_FIRST_BLOCK to ARENA_BLOCK (the bytes held so
 * far decide): an arena that holds a few names (one per thread of a profile
 * with 100,000 threads) costs a few KiB, not a quarter MiB. */
#define ARENA_FIRST_BLOCK 256
#define ARENA_BLOCK (256 * 1024)

struct arena_block {
    struct arena_block *next; /* older block */
    size_t used;              /* bytes handed out from data */
    size_t cap;               /* bytes in data */
    _Alignas(16) unsigned char data[];
};

static void *arena_pbc_alloc(void *data, size_t size)
{
    return arena_alloc(data, size);
}

static void arena_pbc_free(void *data, void *ptr)
{
    (void)data;
    (void)ptr;
}

void arena_init(struct arena *a)
{
    memset(a, 0, sizeof(*a));
    a->pbc.alloc = arena_pbc_alloc;
    a->pbc.free = arena_pbc_free;
    a->pbc.allocator_data = a;
}

void *arena_alloc(struct arena *a, size_t n)
{
    struct arena_block *b = a->head;
    size_t need = (n + 15) & ~(size_t)15;
    void *p;

    if (n > SIZE_MAX / 2)
        return NULL;
    if (need == 0)
        need = 16;
    if (b == NULL || b->cap - b->used < need) {
        size_t block = a->total < ARENA_FIRST_BLOCK ? ARENA_FIRST_BLOCK
                       : a->total < ARENA_BLOCK     ? a->total
                                                    : ARENA_BLOCK;
        size_t cap = need > block / 4 ? need : block;
        b = malloc(sizeof(*b) + cap);
        if (b == NULL)
            return NULL;
        b->cap = cap;
        b->used = 0;
        if (need > block / 4 && a->head != NULL) {
            /* A big allocation gets its own block behind the current one,
             * so the current block's free space is not wasted. */
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
        a->total += cap;
    }
    p = b->data + b->used;
    b->used += need;
    return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);

    if (p == NULL)
        return NULL;
    if (n > 0)
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void arena_free(struct arena *a)
{
    struct arena_block *b = a->head;

    while (b != NULL) {
        struct arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
    a->total = 0;
}
