/*
 * op_stats_steps.c - step events and the step database.
 *
 * Ports of xprof/utils/event_span.cc (StepDetails, ToNonOverlappedEvents,
 * StepTime, ComputePrecisionStats) and xprof/convert/step_events_to_steps_db.cc
 * (GPU/CPU path: one core, id 1).
 */
#include "sort.h"
#include "op_stats_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* StepDetails::Combine. */
static int details_combine(struct step_details *dst, const struct step_details *src)
{
    uint32_t i;
    int rc;

    for (i = 0; i < src->nmarkers; i++) {
        rc = step_add_marker(dst, src->markers[i].begin, src->markers[i].end, src->markers[i].kind);
        if (rc != 0)
            return rc;
    }
    for (i = 0; i < src->nevents; i++) {
        rc = step_add_event(dst, src->events[i].begin, src->events[i].end, src->events[i].type);
        if (rc != 0)
            return rc;
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
            (rc = details_combine(&dst->by_group[i], &src->by_group[i])) != 0)
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

static int boundary_cmp(const void *a, const void *b)
{
    const struct boundary *x = a, *y = b;

    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->start != y->start)
        return x->start ? 1 : -1; /* ends first */
    if (x->type != y->type)
        return x->type > y->type ? -1 : 1; /* higher priority first */
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
    if (b == NULL || out == NULL) {
        free(b);
        free(out);
        return -ENOMEM;
    }
    for (i = 0; i < d->nevents; i++) {
        b[2 * i] = (struct boundary){d->events[i].begin, d->events[i].type, 1};
        b[2 * i + 1] = (struct boundary){d->events[i].end, d->events[i].type, 0};
    }
    xp_qsort(b, n, sizeof(*b), boundary_cmp);
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

int op_stats_step_db(struct op_stats *os, struct step_events *se, int has_device)
{
    uint32_t g;
    int rc;

    for (g = 0; g < se->n; g++) {
        struct step_details *d = &se->by_group[g];
        int64_t begin, dur;
        uint64_t total = 0;
        struct step_core core;
        uint32_t i;
        int well_formed;

        if (!d->present)
            continue;
        if ((rc = non_overlapped(d)) != 0)
            return rc;
        for (i = 0; i < d->nevents; i++) {
            int64_t len = d->events[i].end - d->events[i].begin;
            if (d->events[i].type == EV_DEVICE_COMPUTE_32 / 10)
                os->device_db.precision_32_ps += (uint64_t)len;
            else if (d->events[i].type == EV_DEVICE_COMPUTE_16 / 10)
                os->device_db.precision_16_ps += (uint64_t)len;
        }
        step_time(d, &begin, &dur);
        memset(&core, 0, sizeof(core));
        for (i = 0; i < d->nevents; i++) {
            int64_t lo = d->events[i].begin > begin ? d->events[i].begin : begin;
            int64_t hi = d->events[i].end < begin + dur ? d->events[i].end : begin + dur;
            uint64_t ov = hi > lo ? (uint64_t)(hi - lo) : 0;
            core.type_ps[d->events[i].type] += ov;
            core.type_present |= 1u << d->events[i].type;
            total += ov;
        }
        if (total < (uint64_t)dur) {
            core.type_ps[0] += (uint64_t)dur - total;
            core.type_present |= 1u;
        }
        well_formed = has_device ? (core.type_present & ((1u << (EV_DEVICE_COMPUTE_16 / 10)) |
                                                         (1u << (EV_DEVICE_COMPUTE_32 / 10)))) != 0
                                 : (core.type_present & (1u << (EV_HOST_COMPUTE / 10))) != 0;
        if (!well_formed || dur == 0)
            continue;
        core.core_id = 1;
        core.step_num = g;
        core.step_name = d->step_name ? d->step_name : "";
        core.begin_ps = (uint64_t)begin;
        core.duration_ps = (uint64_t)dur;
        {
            struct step_entry *v = realloc(os->steps, (os->nsteps + 1) * sizeof(*v));
            struct step_core *c;
            if (v == NULL)
                return -ENOMEM;
            os->steps = v;
            c = arena_alloc(&os->arena, sizeof(*c));
            if (c == NULL)
                return -ENOMEM;
            *c = core;
            v[os->nsteps].step_num = g;
            v[os->nsteps].cores = c;
            v[os->nsteps].ncores = 1;
            os->nsteps++;
        }
    }
    return 0;
}
