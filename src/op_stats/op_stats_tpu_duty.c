/*
 * op_stats_tpu_duty.c - TPU duty cycle: busy and idle time of the device op
 * metrics db, plain and "high confidence" (XProf's ConstructDutyCycleTrackers,
 * DutyCycleTracker, DutyCycleCombiner and custom_call_duty_cycle.cc in
 * xprof/convert/), and the core_id_to_details map.
 *
 * For every `/device:TPU:` plane (SparseCore ones included): the busy spans
 * are the `XLA Ops` events whose hlo_category (the metadata's, else the
 * event's own) is not off-duty (infeed, outfeed, host send/recv and their
 * done ops, megacore fusion) and every `Sparse Core Ops` event; the
 * high-confidence spans also drop the custom-calls whose flops, model_flops
 * and uses_ici (int or uint stats, metadata first, then the event) are all 0
 * or absent: opaque kernels that may or may not keep the core busy. The
 * window starts at time 0 (XProf's tracker starts from an empty span at 0,
 * and profiles store times relative to the profile start) and ends at the
 * last end of those events and of the `XLA Modules` / `Sparse Core Modules`
 * events. Planes with a `core_details` stat are merged per local chip (union
 * of busy spans, widest window); every other plane counts alone. busy = sum
 * of the union lengths, idle = sum of window - busy.
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

/* The busy spans of one tracker. */
struct duty_spans {
    struct duty_span *spans;
    uint32_t nspans, cap;
};

/* The two trackers: DUTY_PLAIN (device_duty_cycle_percent) and DUTY_HC
 * (high confidence); they share the groups and windows. */
enum { DUTY_PLAIN, DUTY_HC, DUTY_NTRACKERS };

struct duty_acc {
    struct duty_spans set[DUTY_NTRACKERS];
    struct duty_group *groups;
    uint32_t ngroups;
};

/* The stat ids one plane's events are read with. */
struct duty_ids {
    int64_t category, flops, model_flops, uses_ici;
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

/* The plane's core_details stat parsed: 1 and its local_chip_id and
 * device_ordinal, or 0 when the stat is absent or does not parse. */
static int core_details_of(const struct xp_plane *p, uint32_t *chip, uint32_t *ordinal)
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
    *chip = *ordinal = 0;
    wire_init(&w, p->stats[i].str, p->stats[i].len);
    while (!wire_eof(&w)) {
        if (wire_key(&w, &field, &type) != 0)
            return 0;
        if ((field == 2 || field == 4) && type == 0) {
            if (wire_varint(&w, &v) != 0)
                return 0;
            if (field == 2)
                *ordinal = (uint32_t)v;
            else
                *chip = (uint32_t)v;
        } else if (wire_skip(&w, type) != 0) {
            return 0;
        }
    }
    return 1;
}

int tpu_core_details(const struct xp_plane *p, uint32_t *chip)
{
    uint32_t ordinal;

    return core_details_of(p, chip, &ordinal);
}

static int add_span(struct duty_spans *a, uint32_t group, int64_t begin, int64_t end)
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

/* A stat of the event's metadata, else of the event itself (XProf's
 * GetXEventStat). 1 and *st when found. */
static int event_stat(const struct xp_plane *p, const struct xp_line *l, const struct xp_event *e,
                      int64_t id, struct xp_stat *st)
{
    if (id == XP_NO_STAT)
        return 0;
    return tpu_meta_stat(xp_event_meta(p, e), id, st) || xp_event_own_stat(p, l, e, id, st);
}

/* GetIntStatDef(event, id, 0): IntOrUintValue of the stat, 0 when absent
 * or of another kind. */
static int64_t event_int(const struct xp_plane *p, const struct xp_line *l,
                         const struct xp_event *e, int64_t id)
{
    struct xp_stat st;

    if (!event_stat(p, l, e, id, &st))
        return 0;
    if (st.kind == XP_STAT_UINT)
        return (int64_t)st.v.u;
    return st.kind == XP_STAT_INT ? st.v.i : 0;
}

/* IsCustomCallEventOffDuty for an event of category cat: a custom-call
 * with no flops, no model flops and no ICI use. */
static int custom_call_off_duty(const struct xp_plane *p, const struct xp_line *l,
                                const struct xp_event *e, const struct duty_ids *ids,
                                const struct xp_stat *cat)
{
    if (cat->len != 11 || memcmp(cat->str, "custom-call", 11) != 0)
        return 0;
    return event_int(p, l, e, ids->uses_ici) <= 0 && event_int(p, l, e, ids->flops) == 0 &&
           event_int(p, l, e, ids->model_flops) == 0;
}

/* The tracker's span [begin, end) after the current one (*have: there is
 * one): merged into it when they overlap, else the current one is stored. */
static int next_span(struct duty_spans *a, uint32_t g, int64_t cur[2], int *have, int64_t begin,
                     int64_t end)
{
    int rc;

    if (*have && begin >= cur[0] && begin <= cur[1]) {
        if (end > cur[1])
            cur[1] = end;
        return 0;
    }
    if (*have && (rc = add_span(a, g, cur[0], cur[1])) != 0)
        return rc;
    cur[0] = begin;
    cur[1] = end;
    *have = 1;
    return 0;
}

/* The spans and window of one plane into group g. A line's spans come in
 * time order: those that overlap the one before are merged here already
 * (the union is the same), so a plane adds a few spans per step, not one
 * per op. */
static int plane_spans(const struct xp_plane *p, struct duty_acc *a, uint32_t g)
{
    struct duty_ids ids = {p->stat_id[XS_HLO_CATEGORY], p->stat_id[XS_FLOPS],
                           p->stat_id[XS_MODEL_FLOPS], xp_plane_stat_id_by_name(p, "uses_ici")};
    uint32_t li, i, k;
    int rc;

    for (li = 0; li < p->nlines; li++) {
        const struct xp_line *l = &p->lines[li];
        int ops = strcmp(l->name, "XLA Ops") == 0;
        int sc_ops = strcmp(l->name, "Sparse Core Ops") == 0;
        int modules =
            strcmp(l->name, "XLA Modules") == 0 || strcmp(l->name, "Sparse Core Modules") == 0;
        int64_t cur[DUTY_NTRACKERS][2] = {{0, 0}, {0, 0}};
        int have[DUTY_NTRACKERS] = {0, 0};
        if (!ops && !sc_ops && !modules)
            continue;
        for (i = 0; i < l->nevents; i++) {
            const struct xp_event *e = &l->events[i];
            int64_t begin = xp_event_start_ps(l, e), end = xp_event_end_ps(l, e);
            int on[DUTY_NTRACKERS] = {1, 1};
            struct xp_stat st;
            if (end > a->groups[g].end)
                a->groups[g].end = end;
            if (modules)
                continue;
            if (ops && event_stat(p, l, e, ids.category, &st) &&
                (st.kind == XP_STAT_STR || st.kind == XP_STAT_REF)) {
                if (is_off_duty(st.str, st.len))
                    on[DUTY_PLAIN] = on[DUTY_HC] = 0;
                else if (custom_call_off_duty(p, l, e, &ids, &st))
                    on[DUTY_HC] = 0;
            }
            for (k = 0; k < DUTY_NTRACKERS; k++) {
                if (on[k] && (rc = next_span(&a->set[k], g, cur[k], &have[k], begin, end)) != 0)
                    return rc;
            }
        }
        for (k = 0; k < DUTY_NTRACKERS; k++) {
            if (have[k] && (rc = add_span(&a->set[k], g, cur[k][0], cur[k][1])) != 0)
                return rc;
        }
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

/* Busy and idle time of one tracker's spans, sorted by group then begin,
 * summed over the groups. */
static void tracker_sums(const struct duty_acc *a, const struct duty_spans *set, uint64_t *busy,
                         uint64_t *idle)
{
    uint32_t g, i = 0;

    *busy = *idle = 0;
    for (g = 0; g < a->ngroups; g++) {
        uint64_t active = 0, window = a->groups[g].end > 0 ? (uint64_t)a->groups[g].end : 0;
        while (i < set->nspans && set->spans[i].group == g) {
            int64_t b = set->spans[i].begin, e = set->spans[i].end;
            for (i++; i < set->nspans && set->spans[i].group == g && set->spans[i].begin <= e;
                 i++) {
                if (set->spans[i].end > e)
                    e = set->spans[i].end;
            }
            active += (uint64_t)(e - b);
        }
        *busy += active;
        *idle += window > active ? window - active : 0;
    }
}

/* core_id_to_details: an entry per TPU plane with core details, keyed by
 * the plane id, with the XSpace's hostname (XProf's Hostname). */
static int add_core_details(struct op_stats *os, const struct xspace *xs, const struct xp_plane *p,
                            uint32_t ordinal)
{
    const char *host = xs->nhostnames > 0 ? xs->hostnames[0] : "localhost";
    struct core_details *d;

    /* one entry per plane at most: room for all of them at once */
    if (os->core_details == NULL) {
        d = arena_alloc(&os->arena, (size_t)xs->nplanes * sizeof(*d));
        if (d == NULL)
            return -ENOMEM;
        os->core_details = d;
    }
    if (os->ncore_details >= xs->nplanes)
        return 0;
    d = &os->core_details[os->ncore_details];
    d->core_id = (uint32_t)p->id;
    d->device_ordinal = ordinal;
    /* one host: every entry shares the first one's copy of its name */
    d->hostname = os->ncore_details > 0 ? os->core_details[0].hostname
                                        : arena_strndup(&os->arena, host, strlen(host));
    if (d->hostname == NULL)
        return -ENOMEM;
    os->ncore_details++;
    return 0;
}

int op_stats_tpu_duty(struct host_ctx *ctx)
{
    const struct xspace *xs = ctx->xs;
    struct op_metrics_db *db = &ctx->os->device_db;
    struct duty_acc a = {0};
    uint32_t p, k, g;
    int rc = 0;

    a.groups = calloc(xs->nplanes ? xs->nplanes : 1, sizeof(*a.groups));
    if (a.groups == NULL)
        return -ENOMEM;
    for (p = 0; rc == 0 && p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        uint32_t chip, ordinal;
        int details;
        if (strncmp(pl->name, "/device:TPU:", 12) != 0)
            continue;
        details = core_details_of(pl, &chip, &ordinal);
        if (details && (rc = add_core_details(ctx->os, xs, pl, ordinal)) != 0)
            break;
        g = group_of(&a, details ? chip : (1ULL << 32) + p);
        rc = plane_spans(pl, &a, g);
    }
    for (k = 0; rc == 0 && k < DUTY_NTRACKERS; k++) {
        /* each line's spans come in time order: sorting merges runs */
        rc = xp_sort_runs(a.set[k].spans, a.set[k].nspans, sizeof(*a.set[k].spans), span_cmp, NULL);
    }
    if (rc == 0) {
        tracker_sums(&a, &a.set[DUTY_PLAIN], &db->busy_time_ps, &db->idle_time_ps);
        tracker_sums(&a, &a.set[DUTY_HC], &db->busy_time_hc_ps, &db->idle_time_hc_ps);
    }
    for (k = 0; k < DUTY_NTRACKERS; k++)
        free(a.set[k].spans);
    free(a.groups);
    return rc;
}
