/*
 * op_stats_steps.c - step events and the step database.
 *
 * Ports of xprof/utils/event_span.cc (StepDetails, ToNonOverlappedEvents,
 * StepTime, ComputePrecisionStats) and xprof/convert/step_events_to_steps_db.cc
 * (GPU/CPU path: one core, id 1).
 */
#include "base/sort.h"
#include "op_stats_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"

int step_events_init(struct step_events *se, uint32_t n)
{
    se->n = n;
    se->by_group = calloc(n ? n : 1, sizeof(*se->by_group));
    return se->by_group == NULL ? -ENOMEM : 0;
}

void step_events_free(struct step_events *se)
{
    uint32_t i;

    if (se->by_group != NULL) {
        for (i = 0; i < se->n; i++) {
            free(se->by_group[i].markers);
            free(se->by_group[i].events);
        }
    }
    free(se->by_group);
    se->by_group = NULL;
    se->n = 0;
}

int step_add_marker(struct step_details *d, int64_t begin, int64_t end, uint8_t kind)
{
    if (d->nmarkers == d->markers_cap) {
        uint32_t cap = d->markers_cap ? d->markers_cap * 2 : 4;
        struct step_marker *v = realloc(d->markers, cap * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        d->markers = v;
        d->markers_cap = cap;
    }
    d->markers[d->nmarkers++] = (struct step_marker){begin, end, kind};
    d->present = 1;
    return 0;
}

int step_add_event(struct step_details *d, int64_t begin, int64_t end, uint8_t type)
{
    if (d->nevents == d->events_cap) {
        uint32_t cap = d->events_cap ? d->events_cap * 2 : 16;
        struct step_event *v = realloc(d->events, cap * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        d->events = v;
        d->events_cap = cap;
    }
    d->events[d->nevents++] = (struct step_event){begin, end, type};
    d->present = 1;
    return 0;
}

/* Room for `more` entries in a growable array of `size`-byte elements. */
static int reserve(void **v, uint32_t *cap, uint32_t n, uint32_t more, size_t size, uint32_t min)
{
    uint64_t want = (uint64_t)n + more;
    uint64_t c = *cap ? *cap : min;
    void *nv;

    if (want <= *cap)
        return 0;
    if (want > UINT32_MAX)
        return -ENOMEM;
    while (c < want)
        c *= 2;
    if (c > UINT32_MAX)
        c = UINT32_MAX;
    nv = realloc(*v, (size_t)c * size);
    if (nv == NULL)
        return -ENOMEM;
    *v = nv;
    *cap = (uint32_t)c;
    return 0;
}

int step_details_reserve(struct step_details *d, uint32_t more_markers, uint32_t more_events)
{
    if (more_markers > 0 && reserve((void **)&d->markers, &d->markers_cap, d->nmarkers,
                                    more_markers, sizeof(*d->markers), 4) != 0)
        return -ENOMEM;
    if (more_events > 0 && reserve((void **)&d->events, &d->events_cap, d->nevents, more_events,
                                   sizeof(*d->events), 16) != 0)
        return -ENOMEM;
    return 0;
}

void step_details_release(struct step_details *d)
{
    free(d->markers);
    free(d->events);
    d->markers = NULL;
    d->events = NULL;
    d->nmarkers = d->markers_cap = 0;
    d->nevents = d->events_cap = 0;
}

int step_details_combine(struct step_details *dst, const struct step_details *src)
{
    uint32_t i;

    if (src->nmarkers > 0) {
        if (reserve((void **)&dst->markers, &dst->markers_cap, dst->nmarkers, src->nmarkers,
                    sizeof(*dst->markers), 4) != 0)
            return -ENOMEM;
        memcpy(dst->markers + dst->nmarkers, src->markers, src->nmarkers * sizeof(*src->markers));
        dst->nmarkers += src->nmarkers;
    }
    if (src->nevents > 0) {
        if (reserve((void **)&dst->events, &dst->events_cap, dst->nevents, src->nevents,
                    sizeof(*dst->events), 16) != 0)
            return -ENOMEM;
        memcpy(dst->events + dst->nevents, src->events, src->nevents * sizeof(*src->events));
        dst->nevents += src->nevents;
    }
    for (i = 0; i < 3; i++) {
        dst->xfer_occurrence[i] += src->xfer_occurrence[i];
        dst->xfer_time_us[i] += src->xfer_time_us[i];
        dst->xfer_bytes[i] += src->xfer_bytes[i];
    }
    if (dst->step_name == NULL || dst->step_name[0] == '\0')
        dst->step_name = src->step_name;
    dst->present = 1;
    return 0;
}

int step_events_union(struct step_events *dst, const struct step_events *src)
{
    uint32_t i;
    int rc;

    if (src->n > dst->n) {
        struct step_details *v = realloc(dst->by_group, src->n * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        memset(v + dst->n, 0, (src->n - dst->n) * sizeof(*v));
        dst->by_group = v;
        dst->n = src->n;
    }
    for (i = 0; i < src->n; i++) {
        if (src->by_group[i].present &&
            (rc = step_details_combine(&dst->by_group[i], &src->by_group[i])) != 0)
            return rc;
    }
    return 0;
}

/* ---- ToNonOverlappedEvents ---- */

struct boundary {
    int64_t t;     /* time */
    uint8_t type;  /* EventType / 10 */
    uint8_t start; /* 1 = start, 0 = end */
};

static int boundary_cmp(const void *a, const void *b, void *ctx)
{
    const struct boundary *x = a, *y = b;

    (void)ctx;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->start != y->start)
        return x->start ? 1 : -1; /* ends first */
    if (x->type != y->type)
        return x->type > y->type ? -1 : 1; /* higher priority first */
    return 0;
}

/* A boundary as one sortable key: time above the byte that orders ends
 * before starts and higher priority types first (boundary_cmp's order;
 * equal keys are equal boundaries). Needs times within 2^56 ps (20 hours)
 * of base. */
#define KEY_SPAN ((uint64_t)1 << 56)

static uint64_t boundary_key(int64_t t, int64_t base, uint8_t type, int start)
{
    return (uint64_t)(t - base) << 8 | (uint64_t)start << 7 | (uint64_t)(127 - type);
}

/* The boundaries of d's events in boundary_cmp order, into b[0..2n): starts,
 * then ends, each in event order, are a few ascending runs (one per
 * timeline), merged; equal boundaries are identical, so any sort gives the
 * same sequence. */
static int sorted_boundaries(const struct step_details *d, struct boundary *b)
{
    uint32_t i, n = d->nevents * 2;
    int64_t lo = d->events[0].begin, hi = d->events[0].end;
    uint64_t *key;

    for (i = 0; i < d->nevents; i++) {
        const struct step_event *e = &d->events[i];
        if (e->begin < lo)
            lo = e->begin;
        if (e->end < lo)
            lo = e->end;
        if (e->begin > hi)
            hi = e->begin;
        if (e->end > hi)
            hi = e->end;
    }
    key = (uint64_t)hi - (uint64_t)lo < KEY_SPAN ? malloc(n * sizeof(*key)) : NULL;
    if (key == NULL) {
        /* times too far apart for packed keys (or no memory for them) */
        for (i = 0; i < d->nevents; i++) {
            b[i] = (struct boundary){d->events[i].begin, d->events[i].type, 1};
            b[d->nevents + i] = (struct boundary){d->events[i].end, d->events[i].type, 0};
        }
        return xp_sort_runs(b, n, sizeof(*b), boundary_cmp, NULL);
    }
    for (i = 0; i < d->nevents; i++) {
        key[i] = boundary_key(d->events[i].begin, lo, d->events[i].type, 1);
        key[d->nevents + i] = boundary_key(d->events[i].end, lo, d->events[i].type, 0);
    }
    if (xp_sort_runs_u64(key, n) != 0) {
        free(key);
        return -ENOMEM;
    }
    for (i = 0; i < n; i++) {
        b[i].t = lo + (int64_t)(key[i] >> 8);
        b[i].start = (uint8_t)((key[i] >> 7) & 1);
        b[i].type = (uint8_t)(127 - (key[i] & 127));
    }
    free(key);
    return 0;
}

/* Replace d->events by their non-overlapping partition. */
static int non_overlapped(struct step_details *d)
{
    struct boundary *b;
    struct step_event *out;
    int64_t count[EV_NTYPES] = {0};
    int cur = 0;
    uint32_t i, n = d->nevents * 2, k = 0;

    if (d->nevents == 0)
        return 0;
    b = malloc(n * sizeof(*b));
    out = malloc(n * sizeof(*out));
    if (b == NULL || out == NULL || sorted_boundaries(d, b) != 0) {
        free(b);
        free(out);
        return -ENOMEM;
    }
    for (i = 0; i + 1 < n; i++) {
        int t = b[i].type;
        if (b[i].start) {
            count[t]++;
            if (t > cur)
                cur = t;
        } else {
            count[t]--;
            if (t == cur && count[t] == 0) {
                int j;
                cur = 0;
                for (j = t - 1; j >= 0; j--) {
                    if (count[j] > 0) {
                        cur = j;
                        break;
                    }
                }
            }
        }
        out[k].begin = b[i].t;
        out[k].end = b[i + 1].t > b[i].t ? b[i + 1].t : b[i].t;
        out[k].type = (uint8_t)cur;
        k++;
    }
    free(b);
    free(d->events);
    d->events = out;
    d->nevents = k;
    d->events_cap = n;
    return 0;
}

/* StepDetails::StepTime: the longest device marker, unless the longest host
 * marker includes it. Returns 0 when there is no step time. */
static void step_time(const struct step_details *d, int64_t *begin, int64_t *dur)
{
    int64_t hb = 0, hd = 0, db = 0, dd = 0;
    uint32_t i;

    for (i = 0; i < d->nmarkers; i++) {
        const struct step_marker *m = &d->markers[i];
        int64_t len = m->end - m->begin;
        if (m->kind == MK_DEVICE) {
            if (len > dd) {
                db = m->begin;
                dd = len;
            }
        } else if (len > hd) {
            hb = m->begin;
            hd = len;
        }
    }
    if (db == 0 && dd == 0) {
        *begin = hb;
        *dur = hd;
        return;
    }
    if (hb <= db && db + dd <= hb + hd) {
        *begin = hb;
        *dur = hd;
        return;
    }
    *begin = db;
    *dur = dd;
}

/* What one step gives: its core, or nothing. */
struct step_result {
    struct step_core core; /* the step's one core */
    int keep;              /* 1: the step goes into the db */
    uint64_t prec16_ps;    /* 16-bit compute time */
    uint64_t prec32_ps;    /* 32-bit compute time */
};

struct step_db_job {
    struct step_events *se;
    struct step_result *res; /* [group] */
    int has_device;
};

/* One step: its events made non-overlapping, its breakdown. */
static int step_breakdown(struct step_db_job *job, size_t g)
{
    struct step_details *d = &job->se->by_group[g];
    struct step_result *r = &job->res[g];
    struct step_core *core = &r->core;
    int64_t begin, dur;
    uint64_t total = 0;
    uint32_t i;
    int rc, well_formed;

    if (!d->present)
        return 0;
    if ((rc = non_overlapped(d)) != 0)
        return rc;
    for (i = 0; i < d->nevents; i++) {
        int64_t len = d->events[i].end - d->events[i].begin;
        if (d->events[i].type == EV_DEVICE_COMPUTE_32 / 10)
            r->prec32_ps += (uint64_t)len;
        else if (d->events[i].type == EV_DEVICE_COMPUTE_16 / 10)
            r->prec16_ps += (uint64_t)len;
    }
    step_time(d, &begin, &dur);
    for (i = 0; i < d->nevents; i++) {
        int64_t lo = d->events[i].begin > begin ? d->events[i].begin : begin;
        int64_t hi = d->events[i].end < begin + dur ? d->events[i].end : begin + dur;
        uint64_t ov = hi > lo ? (uint64_t)(hi - lo) : 0;
        core->type_ps[d->events[i].type] += ov;
        core->type_present |= 1u << d->events[i].type;
        total += ov;
    }
    if (total < (uint64_t)dur) {
        core->type_ps[0] += (uint64_t)dur - total;
        core->type_present |= 1u;
    }
    well_formed = job->has_device
                      ? (core->type_present & ((1u << (EV_DEVICE_COMPUTE_16 / 10)) |
                                               (1u << (EV_DEVICE_COMPUTE_32 / 10)))) != 0
                      : (core->type_present & (1u << (EV_HOST_COMPUTE / 10))) != 0;
    if (!well_formed || dur == 0)
        return 0;
    core->core_id = 1;
    core->step_num = (uint32_t)g;
    core->step_name = d->step_name ? d->step_name : "";
    core->begin_ps = (uint64_t)begin;
    core->duration_ps = (uint64_t)dur;
    r->keep = 1;
    return 0;
}

/* One step, whose events are released afterwards (their memory serves the
 * next steps). */
static int step_one(void *arg, size_t g)
{
    struct step_db_job *job = arg;
    int rc = step_breakdown(job, g);

    step_details_release(&job->se->by_group[g]);
    return rc;
}

int op_stats_step_db(struct op_stats *os, struct step_events *se, int has_device)
{
    struct step_db_job job = {se, NULL, has_device};
    struct step_core *cores;
    uint32_t g, nkeep = 0, k = 0;
    int rc;

    if (se->n == 0)
        return 0;
    job.res = calloc(se->n, sizeof(*job.res));
    if (job.res == NULL)
        return -ENOMEM;
    if ((rc = parallel_for(se->n, 0, step_one, &job)) != 0) {
        free(job.res);
        return rc;
    }
    for (g = 0; g < se->n; g++) {
        os->device_db.precision_32_ps += job.res[g].prec32_ps;
        os->device_db.precision_16_ps += job.res[g].prec16_ps;
        nkeep += job.res[g].keep != 0;
    }
    if (nkeep > 0) {
        struct step_entry *v = realloc(os->steps, (os->nsteps + nkeep) * sizeof(*v));
        cores = arena_alloc(&os->arena, nkeep * sizeof(*cores));
        if (v != NULL)
            os->steps = v;
        if (v == NULL || cores == NULL) {
            free(job.res);
            return -ENOMEM;
        }
        for (g = 0; g < se->n; g++) {
            if (!job.res[g].keep)
                continue;
            cores[k] = job.res[g].core;
            os->steps[os->nsteps].step_num = g;
            os->steps[os->nsteps].cores = &cores[k];
            os->steps[os->nsteps].ncores = 1;
            os->steps[os->nsteps].hlo = NULL; /* XProf's per-step db is empty here */
            os->nsteps++;
            k++;
        }
    }
    free(job.res);
    return 0;
}
