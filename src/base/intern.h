/*
 * intern.h - a table of interned strings: each distinct byte string gets
 * one id, in the order first added, and one NUL-terminated copy in an
 * arena. Id 0 is the empty text and means "no string"; every added string,
 * the empty one included, gets an id of 1 or more. Open addressing over ids,
 * doubled at half full. Not locked: one writer, or readers only.
 */
#ifndef XPROFS_INTERN_H
#define XPROFS_INTERN_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"

struct intern {
    struct arena arena; /* the copies */
    const char **text;  /* by id; [0] = "" */
    uint32_t *len;      /* by id */
    uint32_t n;         /* ids in use, 0 included */
    uint32_t cap;       /* room in text and len */
    uint32_t *slots;    /* hash slots holding ids (0 = free) */
    uint32_t nslots;    /* a power of two */
};

/* An empty table. 0 or -ENOMEM (then intern_free is still safe). */
int intern_init(struct intern *t);
void intern_free(struct intern *t);

/* The id of s[0..n), or 0 if it was never added. */
uint32_t intern_find(const struct intern *t, const char *s, size_t n);

/* The id of s[0..n) into *id, added when new. 0, or -ENOMEM, or -EIO for a
 * string of 4 GiB or more. */
int intern_add(struct intern *t, const char *s, size_t n, uint32_t *id);

#endif
