/*
 * tpu_sample.c - reading one counter sample of a TPU line (tpu_sample.h).
 */
#include "tpu_sample.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int tpu_plane_has_counters(const struct xp_plane *pl)
{
    return pl->stat_id[XS_COUNTER_VALUE] != XP_NO_STAT ||
           xp_plane_stat_id_by_name(pl, "counter_value") != XP_NO_STAT;
}

uint64_t tpu_counter_value(const struct xp_stat *st)
{
    switch (st->kind) {
    case XP_STAT_DOUBLE:
        if (st->v.d != 0.0) {
            if (isnan(st->v.d) || st->v.d < 0)
                return 0;
            if (st->v.d >= 18446744073709551616.0)
                return UINT64_MAX;
            return (uint64_t)st->v.d;
        }
        return 0;
    case XP_STAT_UINT:
        return st->v.u;
    case XP_STAT_INT:
        return (uint64_t)st->v.i;
    default:
        return 0;
    }
}

/* The integer of an id stat (XStatVisitor::IntOrUintValue). */
static uint64_t int_or_uint(const struct xp_stat *st)
{
    if (st->kind == XP_STAT_UINT)
        return st->v.u;
    if (st->kind == XP_STAT_INT)
        return (uint64_t)st->v.i;
    return 0;
}

int tpu_sampler_init(struct tpu_sampler *s, const struct tpu_plan *plan, const struct xp_plane *pl,
                     struct xp_err *err)
{
    int64_t ids[2];
    uint32_t m, k;
    size_t n = plan->ntable + 1;

    memset(s, 0, sizeof(*s));
    s->plan = plan;
    s->pl = pl;
    ids[0] = xp_plane_stat_id_by_name(pl, "performance_counter_id");
    ids[1] = pl->stat_id[XS_COUNTER_VALUE];
    if (ids[1] == XP_NO_STAT)
        ids[1] = xp_plane_stat_id_by_name(pl, "counter_value");
    s->meta_id = malloc(pl->nemeta * sizeof(*s->meta_id));
    s->meta_val_kind = malloc(pl->nemeta * sizeof(*s->meta_val_kind));
    s->meta_val = malloc(pl->nemeta * sizeof(*s->meta_val));
    s->v = calloc(n, sizeof(*s->v));
    s->off = malloc(n * sizeof(*s->off));
    s->dur = malloc(n * sizeof(*s->dur));
    s->touched = malloc(n * sizeof(*s->touched));
    s->seen = calloc(n, 1);
    if (s->meta_id == NULL || s->meta_val_kind == NULL || s->meta_val == NULL || s->v == NULL ||
        s->off == NULL || s->dur == NULL || s->touched == NULL || s->seen == NULL ||
        xp_pick_init(&s->pick, pl, ids, 2, 0) != 0) {
        tpu_sampler_free(s);
        return xp_err_set(err, -ENOMEM, "out of memory for a TPU counter sample");
    }
    /* What each event metadata's own stats say (GetStat's fallback). */
    for (m = 0; m < pl->nemeta; m++) {
        const struct xp_event_meta *em = &pl->emeta[m];
        int got_id = 0, got_val = 0;
        s->meta_id[m] = -1;
        s->meta_val_kind[m] = 0;
        s->meta_val[m] = 0;
        for (k = 0; k < em->nstats; k++) {
            const struct xp_stat *st = &em->stats[k];
            if (!got_id && ids[0] != XP_NO_STAT && st->meta_id == ids[0]) {
                s->meta_id[m] = (int64_t)int_or_uint(st);
                got_id = 1;
            } else if (!got_val && ids[1] != XP_NO_STAT && st->meta_id == ids[1]) {
                s->meta_val_kind[m] = 1;
                s->meta_val[m] = tpu_counter_value(st);
                got_val = 1;
            }
        }
    }
    return 0;
}

void tpu_sampler_free(struct tpu_sampler *s)
{
    xp_pick_free(&s->pick);
    free(s->meta_id);
    free(s->meta_val_kind);
    free(s->meta_val);
    free(s->v);
    free(s->off);
    free(s->dur);
    free(s->touched);
    free(s->seen);
    memset(s, 0, sizeof(*s));
}

uint64_t tpu_sample_line(struct tpu_sampler *s, const struct xp_line *l, enum tpu_sample_mode mode,
                         int64_t *longest_ps)
{
    const struct tpu_plan *p = s->plan;
    uint64_t kept = 0;
    int64_t longest = 0;
    uint32_t i;

    for (i = 0; i < s->ntouched; i++) {
        s->v[s->touched[i]] = 0;
        s->seen[s->touched[i]] = 0;
    }
    s->ntouched = 0;
    for (i = 0; i < l->nevents; i++) {
        const struct xp_event *e = &l->events[i];
        struct xp_stat st[2];
        uint32_t found = xp_pick_event(&s->pick, l, e, st), ix;
        uint64_t id = 0, value = 0;
        int has_value = 0;

        if (e->duration_ps > longest)
            longest = e->duration_ps;
        if (found & 1)
            id = int_or_uint(&st[0]);
        else if (s->meta_id[e->meta] >= 0)
            id = (uint64_t)s->meta_id[e->meta];
        if (id == 0)
            id = (uint64_t)s->pl->emeta[e->meta].id;
        if (found & 2) {
            value = tpu_counter_value(&st[1]);
            has_value = 1;
        } else if (s->meta_val_kind[e->meta]) {
            value = s->meta_val[e->meta];
            has_value = 1;
        }
        if (!has_value || id == 0)
            continue;
        kept++;
        ix = tpu_plan_index(p, id);
        if (ix == p->zero)
            continue;       /* not in the table: no metric reads it */
        if (!s->seen[ix]) { /* first sight in this sample */
            s->seen[ix] = 1;
            s->touched[s->ntouched++] = ix;
            s->v[ix] = value;
            s->off[ix] = e->offset_ps;
            s->dur[ix] = e->duration_ps;
        } else if (mode == TPU_SAMPLE_SUM) {
            s->v[ix] += value;
        } else if (mode == TPU_SAMPLE_ORDERED) {
            if (e->offset_ps > s->off[ix] ||
                (e->offset_ps == s->off[ix] && e->duration_ps <= s->dur[ix])) {
                s->v[ix] = value;
                s->off[ix] = e->offset_ps;
                s->dur[ix] = e->duration_ps;
            }
        } else {
            s->v[ix] = value;
        }
    }
    if (longest_ps != NULL)
        *longest_ps = longest;
    return kept;
}
