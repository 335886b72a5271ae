/*
 * pt_pyset.h - the iteration order of a CPython (3.11) set of integers
 * (pids, tids, event indices): an emulation of its open-addressing table (hash = the value,
 * linear probes then perturbed jumps, dummies left by discards, resizes at
 * 3/5 full), so code that loops over a Python set can visit the same items
 * in the same order.
 */
#ifndef XPROFS_PT_PYSET_H
#define XPROFS_PT_PYSET_H

#include <stddef.h>
#include <stdint.h>

struct pt_pyset {
    int64_t *key;   /* slot values */
    uint8_t *state; /* 0 unused, 1 active, 2 dummy (discarded) */
    size_t mask;    /* table size - 1 */
    size_t fill;    /* active + dummy slots */
    size_t used;    /* active slots */
};

/* An empty set (8 slots). Returns 0 or -ENOMEM. */
int pt_pyset_init(struct pt_pyset *s);
void pt_pyset_free(struct pt_pyset *s);

/* set.add(v) / set.discard(v). add returns 0 or -ENOMEM (the set unchanged). */
int pt_pyset_add(struct pt_pyset *s, int64_t v);
void pt_pyset_discard(struct pt_pyset *s, int64_t v);

/* The members in iteration order into out (room for s->used); returns the count. */
size_t pt_pyset_items(const struct pt_pyset *s, int64_t *out);

#endif
