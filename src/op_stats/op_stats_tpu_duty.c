/*
 * op_stats_tpu_duty.c - TPU duty cycle: busy and idle time of the device op
 * metrics db (XProf's ConstructDutyCycleTracker, DutyCycleTracker and
 * DutyCycleCombiner in xprof/convert/).
 *
 * For every `/device:TPU:` plane (SparseCore ones included): the busy spans
 * are the `XLA Ops` events whose metadata hlo_category is not off-duty
 * (infeed, outfeed, host send/recv and their done ops, megacore fusion) and
 * every `Sparse Core Ops` event; the window starts at time 0 (XProf's
 * tracker starts from an empty span at 0, and profiles store times relative
 * to the profile start) and ends at the last end of those events and of the
 * `XLA Modules` / `Sparse Core Modules` events. Planes with a `core_details`
 * stat are merged per local chip (union of busy spans, widest window);
 * every other plane counts alone. busy = sum of the union lengths, idle =
 * sum of window - busy.
 */
#include "op_stats_tpu_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "base/wire.h"

/* One busy span of a group (a chip or a lone plane). */
struct duty_span {
    uint32_t group;
    int64_t begin, end;
};

/* A chip (key < 2^32: its local_chip_id) or a plane without core details
 * (key = 2^32 + plane index), and the end of its window. */
struct duty_group {
    uint64_t key;
    int64_t end;
};

struct duty_acc {
    struct duty_span *spans;
    uint32_t nspans, cap;
    struct duty_group *groups;
    uint32_t ngroups;
};

/* IsOffDutyOp (asked of every op event: lengths kept beside the names). */
static int is_off_duty(const char *s, size_t n)
{
    static const struct {
        const char *name;
        size_t len;
    } off[] = {{"infeed", 6},          {"outfeed", 7},   {"host send", 9},
               {"host send-done", 14}, {"host recv", 9}, {"host recv-done", 14},
               {"megacore fusion", 15}};
    size_t i;

    for (i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
        if (off[i].len == n && memcmp(off[i].name, s, n) == 0)
            return 1;
    }
    return 0;
}

int tpu_core_details(const struct xp_plane *p, uint32_t *chip)
{
    int64_t id = xp_plane_stat_id_by_name(p, "core_details");
    struct wire w;
    uint32_t i, field;
    uint64_t v;
    int type;

    if (id == XP_NO_STAT)
        return 0;
    for (i = 0; i < p->nstats; i++) {
        if (p->stats[i].meta_id == id)
            break;
    }
    if (i == p->nstats || p->stats[i].kind != XP_STAT_BYTES)
        return 0;
    *chip = 0;
    wire_init(&w, p->stats[i].str, p->stats[i].len);
    while (!wire_eof(&w)) {
        if (wire_key(&w, &field, &type) != 0)
            return 0;
        if (field == 4 && type == 0) {
            if (wire_varint(&w, &v) != 0)
                return 0;
            *chip = (uint32_t)v;
        } else if (wire_skip(&w, type) != 0) {
            return 0;
        }
    }
    return 1;
}

static int add_span(struct duty_acc *a, uint32_t group, int64_t begin, int64_t end)
{
    if (a->nspans == a->cap) {
        uint32_t cap = a->cap ? a->cap * 2 : 1024;
        struct duty_span *s = realloc(a->spans, cap * sizeof(*s));
        if (s == NULL)
            return -ENOMEM;
        a->spans = s;
        a->cap = cap;
    }
    a->spans[a->nspans].group = group;
    a->spans[a->nspans].begin = begin;
    a->spans[a->nspans].end = end;
    a->nspans++;
    return 0;
}

/* The group of key, added if new. */
static uint32_t group_of(struct duty_acc *a, uint64_t key)
{
    uint32_t g;

    for (g = 0; g < a->ngroups; g++) {
        if (a->groups[g].key == key)
            return g;
    }
    a->groups[g].key = key;
    a->groups[g].end = 0;
    a->ngroups++;
    return g;
}

/* The spans and window of one plane into group g. A line's spans come in
 * time order: those that overlap the one before are merged here already
 * (the union is the same), so a plane adds a few spans per step, not one
 * per op. */
static int plane_spans(const struct xp_plane *p, struct duty_acc *a, uint32_t g)
{
    int64_t cat_id = p->stat_id[XS_HLO_CATEGORY];
    uint32_t li, i;
    int rc;

    for (li = 0; li < p->nlines; li++) {
        const struct xp_line *l = &p->lines[li];
        int ops = strcmp(l->name, "XLA Ops") == 0;
        int sc_ops = strcmp(l->name, "Sparse Core Ops") == 0;
        int modules =
            strcmp(l->name, "XLA Modules") == 0 || strcmp(l->name, "Sparse Core Modules") == 0;
        int64_t cur_begin = 0, cur_end = 0;
        int have_cur = 0;
        if (!ops && !sc_ops && !modules)
            continue;
        for (i = 0; i < l->nevents; i++) {
            const struct xp_event *e = &l->events[i];
            int64_t begin = xp_event_start_ps(l, e), end = xp_event_end_ps(l, e);
            struct xp_stat st;
            if (end > a->groups[g].end)
                a->groups[g].end = end;
            if (modules)
                continue;
            if (ops && tpu_meta_stat(xp_event_meta(p, e), cat_id, &st) &&
                (st.kind == XP_STAT_STR || st.kind == XP_STAT_REF) && is_off_duty(st.str, st.len))
                continue;
            if (have_cur && begin >= cur_begin && begin <= cur_end) {
                if (end > cur_end)
                    cur_end = end;
                continue;
            }
            if (have_cur && (rc = add_span(a, g, cur_begin, cur_end)) != 0)
                return rc;
            cur_begin = begin;
            cur_end = end;
            have_cur = 1;
        }
        if (have_cur && (rc = add_span(a, g, cur_begin, cur_end)) != 0)
            return rc;
    }
    return 0;
}

static int span_cmp(const void *x, const void *y, void *ctx)
{
    const struct duty_span *a = x, *b = y;

    (void)ctx;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    if (a->begin != b->begin)
        return a->begin < b->begin ? -1 : 1;
    return 0;
}

int op_stats_tpu_duty(struct host_ctx *ctx)
{
    const struct xspace *xs = ctx->xs;
    struct op_metrics_db *db = &ctx->os->device_db;
    struct duty_acc a = {0};
    uint64_t busy = 0, idle = 0;
    uint32_t p, i, g;
    int rc = 0;

    a.groups = calloc(xs->nplanes ? xs->nplanes : 1, sizeof(*a.groups));
    if (a.groups == NULL)
        return -ENOMEM;
    for (p = 0; rc == 0 && p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        uint32_t chip;
        if (strncmp(pl->name, "/device:TPU:", 12) != 0)
            continue;
        g = group_of(&a, tpu_core_details(pl, &chip) ? chip : (1ULL << 32) + p);
        rc = plane_spans(pl, &a, g);
    }
    if (rc == 0) {
        /* each line's spans come in time order: sorting merges runs */
        rc = xp_sort_runs(a.spans, a.nspans, sizeof(*a.spans), span_cmp, NULL);
    }
    if (rc == 0) {
        for (g = 0, i = 0; g < a.ngroups; g++) {
            uint64_t active = 0, window = a.groups[g].end > 0 ? (uint64_t)a.groups[g].end : 0;
            while (i < a.nspans && a.spans[i].group == g) {
                int64_t b = a.spans[i].begin, e = a.spans[i].end;
                for (i++; i < a.nspans && a.spans[i].group == g && a.spans[i].begin <= e; i++) {
                    if (a.spans[i].end > e)
                        e = a.spans[i].end;
                }
                active += (uint64_t)(e - b);
            }
            busy += active;
            idle += window > active ? window - active : 0;
        }
        db->busy_time_ps = busy;
        db->idle_time_ps = idle;
    }
    free(a.spans);
    free(a.groups);
    return rc;
}
