/*
 * derived_compact.c - a derived event's name, display name and group, read
 * the same way before and after its line is compacted (derived.h).
 *
 * Once the trace index holds a line's times, the line keeps 8 bytes per
 * event: its group and the index of its (name, display name) pair in the
 * line's refs. A line names a few hundred ops, scopes or sources again and
 * again over the steps, so the pairs are few. Names and display names are
 * stored strings (interned, or the line's own copies), so a pair is told
 * apart by its pointers.
 */
#include "derived.h"
#include "bigalloc.h"

#include <stdlib.h>
#include <string.h>

/* Open addressing over the refs found so far: slot -> ref + 1 (0: empty). */
struct ref_table {
    uint32_t *slots;     /* cap entries */
    uint32_t cap;        /* a power of two */
    struct dv_ref *refs; /* the pairs, in first-seen order */
    uint32_t n;          /* entries in refs */
    uint32_t refs_cap;   /* allocated refs */
};

static uint32_t ref_hash(const struct dv_ref *r, uint32_t cap)
{
    uint64_t x = (uint64_t)(uintptr_t)r->name * 0x9e3779b97f4a7c15ull;

    x ^= (uint64_t)(uintptr_t)r->display * 0xc2b2ae3d27d4eb4full;
    return (uint32_t)(x >> 32) & (cap - 1);
}

/* Double the slots and place every ref again. Returns 0 or -1. */
static int table_grow(struct ref_table *t)
{
    uint32_t cap = t->cap ? t->cap * 2 : 256, i, *slots = calloc(cap, sizeof(*slots));

    if (slots == NULL)
        return -1;
    for (i = 0; i < t->n; i++) {
        uint32_t s = ref_hash(&t->refs[i], cap);
        while (slots[s] != 0)
            s = (s + 1) & (cap - 1);
        slots[s] = i + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

/* The index of pair r, added if new; UINT32_MAX when out of memory. */
static uint32_t table_ref(struct ref_table *t, const struct dv_ref *r)
{
    uint32_t s;

    if (2 * (t->n + 1) > t->cap && table_grow(t) != 0)
        return UINT32_MAX;
    for (s = ref_hash(r, t->cap); t->slots[s] != 0; s = (s + 1) & (t->cap - 1)) {
        const struct dv_ref *o = &t->refs[t->slots[s] - 1];
        if (o->name == r->name && o->display == r->display)
            return t->slots[s] - 1;
    }
    if (t->n == t->refs_cap) {
        uint32_t cap = t->refs_cap ? t->refs_cap * 2 : 64;
        struct dv_ref *v = realloc(t->refs, cap * sizeof(*v));
        if (v == NULL)
            return UINT32_MAX;
        t->refs = v;
        t->refs_cap = cap;
    }
    t->refs[t->n] = *r;
    t->slots[s] = t->n + 1;
    return t->n++;
}

/* The display name of event k of a line not compacted yet. */
static const char *display_before(const struct dv_line *l, uint32_t k)
{
    uint32_t d = l->ev[k].display;

    if (d == 0)
        return NULL;
    if (d == DV_DISPLAY_TABLE)
        return k < l->ndisplay ? l->display[k] : NULL;
    return l->ev[k].name + d;
}

void derived_compact_line(struct dv_line *l)
{
    struct ref_table t;
    struct dv_kept *kept;
    uint32_t *ref, k;
    char *to;

    if (l->ev == NULL)
        return;
    memset(&t, 0, sizeof(t));
    /* First every event's pair (nothing changes yet, so running out of
     * memory leaves the line as it was), then the records over the events. */
    ref = malloc((l->nev ? l->nev : 1) * sizeof(*ref));
    for (k = 0; ref != NULL && k < l->nev; k++) {
        struct dv_ref r = {l->ev[k].name, display_before(l, k)};
        if (k > 0 && r.name == l->ev[k - 1].name && r.display == t.refs[ref[k - 1]].display)
            ref[k] = ref[k - 1];
        else
            ref[k] = table_ref(&t, &r);
        if (ref[k] == UINT32_MAX)
            break;
    }
    free(t.slots);
    if (ref == NULL || k < l->nev) {
        free(ref);
        free(t.refs);
        return;
    }
    /* Record k goes to bytes [8k, 8k + 8), which hold no event not yet
     * read (event k starts at byte 32k). */
    to = (char *)l->ev;
    for (k = 0; k < l->nev; k++) {
        struct dv_kept x = {ref[k], l->ev[k].group};
        memcpy(to + (size_t)k * sizeof(x), &x, sizeof(x));
    }
    free(ref);
    kept = big_realloc(l->ev, (l->nev ? l->nev : 1) * sizeof(*kept));
    l->kept = kept != NULL ? kept : (struct dv_kept *)(void *)to;
    l->ev = NULL;
    l->cap = 0;
    l->refs = t.refs;
    l->nrefs = t.n;
    free(l->display);
    l->display = NULL;
    l->ndisplay = 0;
}

void derived_compact(struct derived *dv)
{
    uint32_t i;

    if (dv == NULL)
        return;
    for (i = 0; i < dv->nlines; i++)
        derived_compact_line(&dv->lines[i]);
}

const char *derived_name(const struct dv_line *l, uint32_t k)
{
    return l->ev != NULL ? l->ev[k].name : l->refs[l->kept[k].ref].name;
}

int32_t derived_group(const struct dv_line *l, uint32_t k)
{
    return l->ev != NULL ? l->ev[k].group : l->kept[k].group;
}

const char *derived_display(const struct dv_line *l, uint32_t k)
{
    return l->ev != NULL ? display_before(l, k) : l->refs[l->kept[k].ref].display;
}

const char *derived_long_name(const struct dv_line *l, uint32_t k)
{
    return derived_display(l, k) != NULL ? derived_name(l, k) : NULL;
}

const char *derived_step_name(const struct dv_line *l, uint32_t k)
{
    int32_t grp = derived_group(l, k);

    if (l->steps == NULL || grp < 0 || (uint32_t)grp >= l->steps->ngroups)
        return NULL;
    return l->steps->groups[grp].name;
}
