/*
 * derived_line.c - XProf's DerivedXLineBuilder (derived_timeline.cc): the
 * last event per level, expanding it while the name and group repeat,
 * ResetLastEvents with AdjustDurationForTraceViewer; plus the sorted events
 * of a plane and the derived lines' stored names (see derived_int.h).
 */
#include "derived_int.h"
#include "base/bigalloc.h"
#include "base/sort.h"
#include "base/intern.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sorted_cmp(const void *a, const void *b)
{
    const struct sorted_ev *x = a, *y = b;

    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return x->event < y->event ? -1 : x->event > y->event;
}

static int sorted_cmp_ctx(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    return sorted_cmp(a, b);
}

/* Events of the given lines (all non-derived lines if only < 0), sorted. */
int dv_sorted_events(const struct xp_plane *pl, int64_t only, struct sorted_ev **outp, uint32_t *np)
{
    uint32_t l, e, n = 0, k = 0;
    struct sorted_ev *v;

    for (l = 0; l < pl->nlines; l++) {
        if ((only >= 0 && l != (uint64_t)only) || derived_is_thread_id(pl->lines[l].id))
            continue;
        n += pl->lines[l].nevents;
    }
    v = big_malloc((n ? n : 1) * sizeof(*v));
    if (v == NULL)
        return -ENOMEM;
    for (l = 0; l < pl->nlines; l++) {
        const struct xp_line *ln = &pl->lines[l];
        if ((only >= 0 && l != (uint64_t)only) || derived_is_thread_id(ln->id))
            continue;
        for (e = 0; e < ln->nevents; e++) {
            v[k].ts = (uint64_t)xp_event_start_ps(ln, &ln->events[e]);
            v[k].dur = (uint64_t)ln->events[e].duration_ps;
            v[k].line = l;
            v[k].event = e;
            k++;
        }
    }
    if (xp_sort_runs(v, n, sizeof(*v), sorted_cmp_ctx, NULL) != 0) {
        big_free(v);
        return -ENOMEM;
    }
    *outp = v;
    *np = n;
    return 0;
}

/* --- lines under construction (DerivedXLineBuilder) ------------------------- */

struct dv_line *dvb_line(struct builder_line *b)
{
    return b->li >= 0 ? &b->dv->lines[b->li] : NULL;
}

static int line_materialize(struct builder_line *b)
{
    struct derived *dv = b->dv;
    struct dv_line *l;

    if (b->li >= 0)
        return 0;
    l = realloc(dv->lines, (dv->nlines + 1) * sizeof(*l));
    if (l == NULL)
        return -ENOMEM;
    dv->lines = l;
    l = &dv->lines[dv->nlines];
    memset(l, 0, sizeof(*l));
    l->plane = b->plane;
    l->id = b->id;
    l->name = b->name;
    b->li = (int32_t)dv->nlines++;
    return 0;
}

void dvb_init(struct builder_line *b, struct derived *dv, uint32_t plane, int64_t id,
              const char *name)
{
    int i;

    b->dv = dv;
    b->li = -1;
    b->plane = plane;
    b->id = id;
    b->name = name;
    b->nlevels = 0;
    b->dep[0] = b->dep[1] = NULL;
    b->hint = 0;
    b->unique_names = 0;
    for (i = 0; i < MAX_LEVELS; i++)
        b->last[i] = -1;
}

struct dv_event *dvb_last(struct builder_line *b, int level)
{
    struct dv_line *l = dvb_line(b);

    if (level >= MAX_LEVELS || b->last[level] < 0 || l == NULL)
        return NULL;
    return &l->ev[b->last[level]];
}

/* XProf's AdjustDurationForTraceViewer: shrink a stack of events with equal
 * spans by 1 ns per level so the viewer stacks them deterministically. */
static void adjust_durations(struct builder_line *b, int level)
{
    int max_level = level, i;
    int64_t max_shrink_ns, shrink_ns = 0;
    uint64_t last_ts = 0, last_dur = 0;
    int have_last = 0;
    struct dv_event *top;

    if (level >= b->nlevels || dvb_last(b, level) == NULL)
        return;
    for (; max_level < b->nlevels; max_level++) {
        if (dvb_last(b, max_level) == NULL)
            break;
    }
    max_level--;
    if (max_level <= level)
        return;
    top = dvb_last(b, max_level);
    max_shrink_ns = (int64_t)(top->dur / 1000) - 1;
    for (i = level; i <= max_level; i++) {
        struct dv_event *cur = dvb_last(b, i);
        uint64_t ts = cur->ts, dur = cur->dur;
        if (shrink_ns < max_shrink_ns && have_last && last_ts == ts && last_dur == dur)
            shrink_ns++;
        last_ts = ts;
        last_dur = dur;
        have_last = 1;
        if (shrink_ns)
            cur->dur = dur - 1000 * (uint64_t)shrink_ns;
    }
}

void dvb_reset(struct builder_line *b, int level)
{
    int i, top = b->nlevels < MAX_LEVELS ? b->nlevels : MAX_LEVELS;

    adjust_durations(b, level);
    /* Levels at or above nlevels were never set. */
    for (i = level; i < top; i++)
        b->last[i] = -1;
    if (level == 0) {
        for (i = 0; i < 2; i++) {
            if (b->dep[i] != NULL)
                dvb_reset(b->dep[i], 0);
        }
    }
}

static void expand(struct dv_event *last, uint64_t ts, uint64_t dur)
{
    uint64_t begin = last->ts < ts ? last->ts : ts;
    uint64_t end = last->ts + last->dur > ts + dur ? last->ts + last->dur : ts + dur;

    last->ts = begin;
    last->dur = end - begin;
}

static int key_equal(const struct name_key *x, const struct name_key *y)
{
    if (x->a == NULL || y->a == NULL || x->a_len != y->a_len || x->b_len != y->b_len ||
        x->has_number != y->has_number || (x->has_number && x->number != y->number))
        return 0;
    if (x->a != y->a && memcmp(x->a, y->a, x->a_len) != 0)
        return 0;
    return x->b == y->b || x->b_len == 0 || memcmp(x->b, y->b, x->b_len) == 0;
}

/* Expand the last event of level if it was made from key in the same group.
 * Returns 1 if it did. */
int dvb_expand_same_key(struct builder_line *b, int level, const struct name_key *key,
                        int32_t group, uint64_t ts, uint64_t dur)
{
    struct dv_event *last = dvb_last(b, level);

    if (last == NULL || last->group != group || !key_equal(&b->key[level], key))
        return 0;
    expand(last, ts, dur);
    return 1;
}

/* XProf's ExpandOrAddLevelEvent on a GPU plane (no gap rule). Names are
 * NUL-terminated; stable ones live as long as the result (interned HLO
 * strings) and are kept as they are, others are copied when an event is
 * created. key (or NULL) is what the name was built from. */
int dvb_expand_or_add(struct builder_line *b, const char *name, const char *display, int stable,
                      const struct name_key *key, uint64_t ts, uint64_t dur, int32_t group,
                      int level)
{
    struct dv_event *last;
    struct dv_line *l;
    uint32_t ref;

    if (level >= MAX_LEVELS)
        return 0;
    if (level >= b->nlevels)
        b->nlevels = level + 1;
    last = dvb_last(b, level);
    if (last != NULL && last->group == group) {
        const char *last_name = dvb_line(b)->refs[last->ref].name;
        if (last_name == name || (!b->unique_names && strcmp(last_name, name) == 0)) {
            expand(last, ts, dur);
            if (key != NULL)
                b->key[level] = *key;
            return 0;
        }
    }
    dvb_reset(b, level);
    if (line_materialize(b) != 0)
        return -ENOMEM;
    l = dvb_line(b);
    if (l->nev == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : b->hint > 64 ? b->hint : 64;
        struct dv_event *ev = big_realloc(l->ev, cap * sizeof(*ev));
        if (ev == NULL)
            return -ENOMEM;
        l->ev = ev;
        l->cap = cap;
    }
    /* Names are copied only when an event is created: expanding is common. */
    if (!stable) {
        const char *given = display;
        name = arena_strndup(&b->dv->arena, name, strlen(name));
        display = given != NULL ? arena_strndup(&b->dv->arena, given, strlen(given)) : NULL;
        if (name == NULL || (given != NULL && display == NULL))
            return -ENOMEM;
    }
    if (derived_line_ref(l, name, display, &ref) != 0)
        return -ENOMEM;
    last = &l->ev[l->nev];
    last->ts = ts;
    last->dur = dur;
    last->ref = ref;
    last->group = group;
    b->last[level] = (int32_t)l->nev++;
    if (key != NULL)
        b->key[level] = *key;
    else
        b->key[level].a = NULL;
    return 0;
}

/* --- string helpers --------------------------------------------------------- */

const char *dv_strdup(struct derived *dv, const char *s, size_t n)
{
    return arena_strndup(&dv->arena, s, n);
}

void dv_intern_free(struct intern *in)
{
    intern_free(in);
    free(in);
}

/* The stored copy of s[0..n) (same bytes, same pointer), or NULL when out
 * of memory. */
const char *dv_intern(struct derived *dv, const char *s, size_t n)
{
    uint32_t id;

    if (dv->intern == NULL) {
        if ((dv->intern = malloc(sizeof(*dv->intern))) == NULL)
            return NULL;
        if (intern_init(dv->intern) != 0) {
            dv_intern_free(dv->intern);
            dv->intern = NULL;
            return NULL;
        }
    }
    if (intern_add(dv->intern, s, n, &id) != 0)
        return NULL;
    return dv->intern->text[id];
}

/* v in decimal at buf (21 bytes suffice); returns the length. */
size_t dv_u64_dec(char *buf, uint64_t v)
{
    char tmp[20];
    size_t n = 0, i;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}
