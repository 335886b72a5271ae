/*
 * pt_overlaps.c - the GPU events that overlap each GPU event on another
 * stream, as TraceLens's GPUEventAnalyser.get_gpu_event_lists finds them: a
 * sweep over the start / end points of the linked GPU events (ends first at
 * equal times), pairing a starting event with each active one on a
 * different stream (or with no stream) when they share at least 1 µs. The
 * active set and each event's overlap set are Python sets; their iteration
 * order decides the order of names in the launcher table, so both are
 * emulated (pt_pyset.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pt_launchers_int.h"
#include "pt_pyrepr.h"
#include "pt_pyset.h"
#include "base/sort.h"

struct point {
    double t;
    uint32_t is_start; /* ends sort first at equal times */
    uint32_t seq;      /* insertion order */
    uint32_t gi;       /* index into the linked GPU event list */
};

static int point_cmp(const void *a, const void *b)
{
    const struct point *x = a, *y = b;

    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->is_start != y->is_start)
        return x->is_start < y->is_start ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int overlap_cmp(const void *a, const void *b)
{
    const struct pt_overlap *x = a, *y = b;

    if (x->event != y->event)
        return x->event < y->event ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* args.stream of a GPU event as JSON text (NULL when absent or null). */
struct stream {
    const char *text;
    size_t len;
    int known;
};

static const struct stream *event_stream(const struct ctrace *ct, uint32_t ev, struct stream *s)
{
    if (!s->known) {
        size_t alen;
        const char *args = ctrace_event_args_text(ct, &ct->events[ev], &alen);
        s->known = 1;
        s->text = NULL;
        if (args != NULL && pt_json_member(args, alen, "stream", &s->text, &s->len) &&
            s->len == 4 && memcmp(s->text, "null", 4) == 0)
            s->text = NULL;
    }
    return s;
}

static int ov_push(struct pt_overlap **v, size_t *n, size_t *cap, uint32_t event, uint32_t other)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        struct pt_overlap *nv = realloc(*v, c * sizeof(*nv));
        if (nv == NULL)
            return -ENOMEM;
        *v = nv;
        *cap = c;
    }
    (*v)[*n].event = event;
    (*v)[*n].other = other;
    (*v)[*n].seq = (uint32_t)*n;
    (*n)++;
    return 0;
}

/* Put each event's overlapping events in the order its Python set iterates. */
static int order_overlap_sets(struct pt_overlap *ov, size_t nov)
{
    int64_t *items = NULL;
    size_t i, j, k;
    int rc = 0;

    xp_qsort(ov, nov, sizeof(*ov), overlap_cmp);
    if (nov > 0 && (items = malloc(nov * sizeof(*items))) == NULL)
        return -ENOMEM;
    for (i = 0; i < nov && rc == 0; i = j) {
        struct pt_pyset set;
        for (j = i; j < nov && ov[j].event == ov[i].event; j++)
            ;
        rc = pt_pyset_init(&set);
        for (k = i; k < j && rc == 0; k++)
            rc = pt_pyset_add(&set, ov[k].other);
        if (rc == 0) {
            size_t m = pt_pyset_items(&set, items);
            for (k = 0; k < m; k++)
                ov[i + k].other = (uint32_t)items[k];
        }
        pt_pyset_free(&set);
    }
    free(items);
    return rc;
}

int pt_find_overlaps(const struct ctrace *ct, const uint32_t *gpu, uint32_t ngpu,
                     struct pt_overlap **ovp, size_t *novp)
{
    struct point *pts = malloc(((size_t)ngpu * 2 + 1) * sizeof(*pts));
    struct stream *streams = calloc((size_t)ngpu + 1, sizeof(*streams));
    int64_t *active = malloc(((size_t)ngpu + 1) * sizeof(*active));
    struct pt_overlap *ov = NULL;
    size_t npts = 0, nov = 0, cap = 0, i, k;
    struct pt_pyset set;
    int rc = -ENOMEM;

    memset(&set, 0, sizeof(set));
    if (pts == NULL || streams == NULL || active == NULL || pt_pyset_init(&set) != 0)
        goto out;
    for (i = 0; i < ngpu; i++) {
        const struct ctrace_event *ev = &ct->events[gpu[i]];
        if (!(ev->ts + ev->dur > ev->ts))
            continue;
        pts[npts].t = ev->ts;
        pts[npts].is_start = 1;
        pts[npts].seq = (uint32_t)npts;
        pts[npts].gi = (uint32_t)i;
        npts++;
        pts[npts].t = ev->ts + ev->dur;
        pts[npts].is_start = 0;
        pts[npts].seq = (uint32_t)npts;
        pts[npts].gi = (uint32_t)i;
        npts++;
    }
    xp_qsort(pts, npts, sizeof(*pts), point_cmp);
    for (i = 0; i < npts; i++) {
        uint32_t g = pts[i].gi, uid = gpu[g];
        const struct ctrace_event *ev = &ct->events[uid];
        size_t nact;
        if (!pts[i].is_start) {
            pt_pyset_discard(&set, uid);
            continue;
        }
        nact = pt_pyset_items(&set, active);
        for (k = 0; k < nact; k++) {
            uint32_t auid = (uint32_t)active[k], lo = 0, hi = ngpu;
            const struct ctrace_event *ae = &ct->events[auid];
            const struct stream *ms, *as;
            double ov_start, ov_end;
            while (lo < hi) { /* gpu[] is in file (= uid) order */
                uint32_t mid = lo + (hi - lo) / 2;
                if (gpu[mid] < auid)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            ms = event_stream(ct, uid, &streams[g]);
            as = event_stream(ct, auid, &streams[lo]);
            if (ms->text != NULL && as->text != NULL && ms->len == as->len &&
                memcmp(ms->text, as->text, ms->len) == 0)
                continue;
            ov_start = ev->ts > ae->ts ? ev->ts : ae->ts;
            ov_end = ev->ts + ev->dur < ae->ts + ae->dur ? ev->ts + ev->dur : ae->ts + ae->dur;
            if (ov_end - ov_start < 1.0)
                continue;
            if (ov_push(&ov, &nov, &cap, uid, auid) != 0 ||
                ov_push(&ov, &nov, &cap, auid, uid) != 0)
                goto out;
        }
        if (pt_pyset_add(&set, uid) != 0)
            goto out;
    }
    rc = order_overlap_sets(ov, nov);
    if (rc == 0) {
        *ovp = ov;
        *novp = nov;
        ov = NULL;
    }
out:
    free(ov);
    free(pts);
    free(streams);
    free(active);
    pt_pyset_free(&set);
    return rc;
}
