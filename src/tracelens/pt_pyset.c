/*
 * pt_pyset.c - CPython's set table for integer keys (see pt_pyset.h),
 * following Objects/setobject.c: set_add_entry, set_discard_entry,
 * set_table_resize and set_insert_clean.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pt_pyset.h"

#define LINEAR_PROBES 9
#define PERTURB_SHIFT 5

enum { SLOT_UNUSED = 0, SLOT_ACTIVE = 1, SLOT_DUMMY = 2 };

int pt_pyset_init(struct pt_pyset *s)
{
    s->key = calloc(8, sizeof(*s->key));
    s->state = calloc(8, 1);
    s->mask = 7;
    s->fill = 0;
    s->used = 0;
    if (s->key == NULL || s->state == NULL) {
        pt_pyset_free(s);
        return -ENOMEM;
    }
    return 0;
}

void pt_pyset_free(struct pt_pyset *s)
{
    free(s->key);
    free(s->state);
    s->key = NULL;
    s->state = NULL;
}

/* CPython's hash() of an int, for the values met here (|v| < 2^61): the
 * value itself, except that -1 hashes to -2. */
static size_t py_hash(int64_t v)
{
    return v == -1 ? (size_t)-2 : (size_t)v;
}

/* Place v in a table known to hold no dummies and not v. */
static void insert_clean(struct pt_pyset *s, int64_t v)
{
    size_t perturb = py_hash(v), i = py_hash(v) & s->mask, j;

    for (;;) {
        if (s->state[i] == SLOT_UNUSED)
            goto found;
        if (i + LINEAR_PROBES <= s->mask) {
            for (j = 1; j <= LINEAR_PROBES; j++) {
                if (s->state[i + j] == SLOT_UNUSED) {
                    i += j;
                    goto found;
                }
            }
        }
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + 1 + perturb) & s->mask;
    }
found:
    s->state[i] = SLOT_ACTIVE;
    s->key[i] = v;
}

static int resize(struct pt_pyset *s, size_t minused)
{
    size_t newsize = 8, k, oldsize = s->mask + 1;
    int64_t *oldkey = s->key;
    uint8_t *oldstate = s->state;

    while (newsize <= minused)
        newsize <<= 1;
    s->key = calloc(newsize, sizeof(*s->key));
    s->state = calloc(newsize, 1);
    if (s->key == NULL || s->state == NULL) {
        free(s->key);
        free(s->state);
        s->key = oldkey;
        s->state = oldstate;
        return -ENOMEM;
    }
    s->mask = newsize - 1;
    s->fill = s->used;
    for (k = 0; k < oldsize; k++) {
        if (oldstate[k] == SLOT_ACTIVE)
            insert_clean(s, oldkey[k]);
    }
    free(oldkey);
    free(oldstate);
    return 0;
}

int pt_pyset_add(struct pt_pyset *s, int64_t v)
{
    size_t perturb = py_hash(v), i = py_hash(v) & s->mask, probes, e;
    size_t freeslot = SIZE_MAX;

    for (;;) {
        probes = (i + LINEAR_PROBES <= s->mask) ? LINEAR_PROBES : 0;
        e = i;
        for (;;) {
            if (s->state[e] == SLOT_UNUSED)
                goto unused;
            if (s->state[e] == SLOT_ACTIVE && s->key[e] == v)
                return 0;
            if (s->state[e] == SLOT_DUMMY)
                freeslot = e; /* the last dummy passed is reused */
            e++;
            if (probes-- == 0)
                break;
        }
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + 1 + perturb) & s->mask;
    }
unused:
    if (freeslot != SIZE_MAX) {
        s->state[freeslot] = SLOT_ACTIVE;
        s->key[freeslot] = v;
        s->used++;
        return 0;
    }
    s->state[e] = SLOT_ACTIVE;
    s->key[e] = v;
    s->fill++;
    s->used++;
    if (s->fill * 5 < s->mask * 3)
        return 0;
    return resize(s, s->used > 50000 ? s->used * 2 : s->used * 4);
}

void pt_pyset_discard(struct pt_pyset *s, int64_t v)
{
    size_t perturb = py_hash(v), i = py_hash(v) & s->mask, probes, e;

    for (;;) {
        probes = (i + LINEAR_PROBES <= s->mask) ? LINEAR_PROBES : 0;
        e = i;
        for (;;) {
            if (s->state[e] == SLOT_UNUSED)
                return;
            if (s->state[e] == SLOT_ACTIVE && s->key[e] == v) {
                s->state[e] = SLOT_DUMMY;
                s->used--;
                return;
            }
            e++;
            if (probes-- == 0)
                break;
        }
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + 1 + perturb) & s->mask;
    }
}

size_t pt_pyset_items(const struct pt_pyset *s, int64_t *out)
{
    size_t i, n = 0;

    for (i = 0; i <= s->mask; i++) {
        if (s->state[i] == SLOT_ACTIVE)
            out[n++] = s->key[i];
    }
    return n;
}
