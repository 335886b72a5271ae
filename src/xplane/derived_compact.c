/*
 * derived_compact.c - the name pairs of a derived line (derived.h): the
 * table its events refer to while it is built, the compaction that drops
 * the events' times once the trace index holds them, and the accessors
 * that read an event the same way before and after.
 *
 * A line names a few hundred ops, scopes or sources again and again over
 * the steps, so its events hold the index of a (name, display name) pair
 * instead of the pointers: 24 bytes an event while built, 8 once
 * compacted (its ref and group, the tail of the record).
 */
#include "derived.h"
#include "base/bigalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t ref_hash(const char *name, const char *display, uint32_t cap)
{
    uint64_t x = (uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ull;

    x ^= (uint64_t)(uintptr_t)display * 0xc2b2ae3d27d4eb4full;
    return (uint32_t)(x >> 32) & (cap - 1);
}

/* Slots for twice the refs and every ref placed again. Returns 0 or -ENOMEM. */
static int slots_grow(struct dv_line *l)
{
    uint32_t cap = l->ref_slots_cap ? l->ref_slots_cap * 2 : 64, i;
    uint32_t *slots;

    while (cap < 2 * (l->nrefs + 1))
        cap *= 2;
    slots = calloc(cap, sizeof(*slots));
    if (slots == NULL)
        return -ENOMEM;
    for (i = 0; i < l->nrefs; i++) {
        uint32_t s = ref_hash(l->refs[i].name, l->refs[i].display, cap);
        while (slots[s] != 0)
            s = (s + 1) & (cap - 1);
        slots[s] = i + 1;
    }
    free(l->ref_slots);
    l->ref_slots = slots;
    l->ref_slots_cap = cap;
    return 0;
}

int derived_line_ref(struct dv_line *l, const char *name, const char *display, uint32_t *ref)
{
    uint32_t s;

    /* Events of a line often repeat the pair of the one before. */
    if (l->ev != NULL && l->nev > 0) {
        const struct dv_ref *r = &l->refs[l->ev[l->nev - 1].ref];
        if (r->name == name && r->display == display) {
            *ref = l->ev[l->nev - 1].ref;
            return 0;
        }
    }
    if (2 * (l->nrefs + 1) > l->ref_slots_cap && slots_grow(l) != 0)
        return -ENOMEM;
    for (s = ref_hash(name, display, l->ref_slots_cap); l->ref_slots[s] != 0;
         s = (s + 1) & (l->ref_slots_cap - 1)) {
        const struct dv_ref *o = &l->refs[l->ref_slots[s] - 1];
        if (o->name == name && o->display == display) {
            *ref = l->ref_slots[s] - 1;
            return 0;
        }
    }
    if (l->nrefs == l->refs_cap) {
        uint32_t cap = l->refs_cap ? l->refs_cap * 2 : 16;
        struct dv_ref *v = realloc(l->refs, cap * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        l->refs = v;
        l->refs_cap = cap;
    }
    l->refs[l->nrefs].name = name;
    l->refs[l->nrefs].display = display;
    l->ref_slots[s] = l->nrefs + 1;
    *ref = l->nrefs++;
    return 0;
}

void derived_compact_line(struct dv_line *l)
{
    struct dv_kept *kept;
    uint32_t k;
    char *to;

    if (l->ev == NULL)
        return;
    /* Record k goes to bytes [8k, 8k + 8), which hold no event not yet
     * read (event k starts at byte 24k). */
    to = (char *)l->ev;
    for (k = 0; k < l->nev; k++) {
        struct dv_kept x = {l->ev[k].ref, l->ev[k].group};
        memcpy(to + (size_t)k * sizeof(x), &x, sizeof(x));
    }
    kept = big_realloc(l->ev, (l->nev ? l->nev : 1) * sizeof(*kept));
    l->kept = kept != NULL ? kept : (struct dv_kept *)(void *)to;
    l->ev = NULL;
    l->cap = 0;
    free(l->ref_slots);
    l->ref_slots = NULL;
    l->ref_slots_cap = 0;
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
    return derived_ref(l, k)->name;
}

int32_t derived_group(const struct dv_line *l, uint32_t k)
{
    return l->ev != NULL ? l->ev[k].group : l->kept[k].group;
}

const char *derived_display(const struct dv_line *l, uint32_t k)
{
    return derived_ref(l, k)->display;
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
