/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Arena of 64 KiB blocks (a request of a quarter block or more gets a block of
 * its own); nothing is freed before pool_release().
 */
#include "pool.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_SIZE 65536

struct pool_block {
    struct pool_block *next; /* older block */
    size_t used;             /* bytes handed out from data */
    size_t size;             /* bytes in data */
    _Alignas(16) unsigned char data[];
};

/* Adds a block of at least n bytes in front of the list; NULL on failure. */
static struct pool_block *add_block(struct pool *p, size_t n)
{
    size_t size = n < BLOCK_SIZE / 4 ? BLOCK_SIZE : n;
    struct pool_block *b = malloc(sizeof(*b) + size);

    if (b == NULL)
        return NULL;
    b->used = 0;
    b->size = size;
    if (n >= BLOCK_SIZE / 4 && p->head != NULL) {
        /* keep the partly used block in front for small requests */
        b->next = p->head->next;
        p->head->next = b;
    } else {
        b->next = p->head;
        p->head = b;
    }
    return b;
}

void *pool_alloc(struct pool *p, size_t n)
{
    struct pool_block *b = p->head;
    size_t need = (n + 15) & ~(size_t)15;
    void *out;

    if (n == 0)
        need = 16;
    if (b == NULL || b->size - b->used < need) {
        b = add_block(p, need);
        if (b == NULL)
            return NULL;
    }
    out = b->data + b->used;
    b->used += need;
    memset(out, 0, n);
    return out;
}

char *pool_printf(struct pool *p, const char *fmt, ...)
{
    va_list ap;
    int n;
    char *s;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    s = pool_alloc(p, (size_t)n + 1);
    if (s == NULL)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void pool_release(struct pool *p)
{
    struct pool_block *b = p->head;

    while (b != NULL) {
        struct pool_block *next = b->next;
        free(b);
        b = next;
    }
    p->head = NULL;
}
