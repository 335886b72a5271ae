/*
 * op_stats_event_fraction.c - XProf's event time fraction analyzer (see
 * op_stats_event_fraction.h).
 *
 * Per host, after the grouping: each TPU core plane's step events alone
 * (tpu_plane_steps: groups with ops and a marker, step time the plane's
 * longest marker). An event of any line of the plane whose metadata name
 * holds the text, with a group id of such a step and a device_duration_ps
 * stat, adds device_duration_ps / step time (a float) to its (step, plane)
 * share; barrier-cores events of 0 or 1250 ps (the dummy value) are
 * skipped. device_duration_ps is read as XStatVisitor::UintValue does: an
 * int64 stat reads 0. Of 3 steps or more the first and last go; of 2, one
 * under 1% of the other. Each plane gives its shares in step order; the
 * host each step's mean over its planes.
 */
#include "op_stats_event_fraction.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/sort.h"
#include "op_stats_tpu_int.h"
#include "xplane/group.h"

/* One event's share of its step on its plane. */
struct ef_hit {
    int64_t group;     /* step */
    const char *plane; /* plane name */
    double frac;       /* device duration / step time (float precision) */
    uint64_t step_ps;  /* the step's time on the plane */
};

struct ef_hits {
    struct ef_hit *v;
    uint32_t n, cap;
};

static int hit_cmp(const void *a, const void *b, void *ctx)
{
    const struct ef_hit *x = a, *y = b;

    (void)ctx;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return strcmp(x->plane, y->plane);
}

static int step_find(const struct tpu_plane_step *s, uint32_t n, int64_t g)
{
    uint32_t lo = 0, hi = n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s[mid].group < g)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && s[lo].group == g ? (int)lo : -1;
}

/* The hits of plane p. */
static int plane_hits(const struct xspace *xs, const struct xp_groups *groups, uint32_t p,
                      const char *event, int barrier, struct ef_hits *h)
{
    const struct xp_plane *pl = &xs->planes[p];
    struct tpu_plane_step *steps;
    uint32_t nsteps, li, i;
    int rc;

    if (tpu_plane_core(pl->name) == TPU_NOT_A_CORE)
        return 0;
    if ((rc = tpu_plane_steps(xs, groups, p, &steps, &nsteps)) != 0)
        return rc;
    for (li = 0; rc == 0 && nsteps > 0 && li < pl->nlines; li++) {
        const struct xp_line *l = &pl->lines[li];
        for (i = 0; i < l->nevents; i++) {
            const struct xp_event *e = &l->events[i];
            struct xp_stat st;
            int64_t g;
            uint64_t dur;
            int k;
            if (strstr(xp_event_meta(pl, e)->name, event) == NULL ||
                !tpu_event_group(xs, groups, p, li, i, &g) ||
                (k = step_find(steps, nsteps, g)) < 0 || steps[k].duration_ps == 0 ||
                !xp_event_stat(pl, l, e, XS_DEVICE_DURATION_PS, &st))
                continue;
            dur = st.kind == XP_STAT_UINT ? st.v.u : 0;
            if (barrier && (dur == 0 || dur == 1250))
                continue;
            if (xp_grow((void **)&h->v, &h->cap, h->n, sizeof(*h->v)) != 0) {
                rc = -ENOMEM;
                break;
            }
            h->v[h->n++] = (struct ef_hit){
                .group = g,
                .plane = pl->name,
                .frac = (float)((double)dur / (double)steps[k].duration_ps),
                .step_ps = steps[k].duration_ps,
            };
        }
    }
    free(steps);
    return rc;
}

static int push_float(float **v, uint32_t *n, uint32_t *cap, float f)
{
    if (xp_grow((void **)v, cap, *n, sizeof(**v)) != 0)
        return -ENOMEM;
    (*v)[(*n)++] = f;
    return 0;
}

/* The host entry named name, added if new. */
static struct ef_host *host_entry(struct ef_result *r, uint32_t *cap, const char *name)
{
    uint32_t i;

    for (i = 0; i < r->nhosts; i++) {
        if (strcmp(r->hosts[i].hostname, name) == 0)
            return &r->hosts[i];
    }
    if (xp_grow((void **)&r->hosts, cap, r->nhosts, sizeof(*r->hosts)) != 0)
        return NULL;
    memset(&r->hosts[r->nhosts], 0, sizeof(r->hosts[0]));
    if ((r->hosts[r->nhosts].hostname = strdup(name)) == NULL)
        return NULL;
    return &r->hosts[r->nhosts++];
}

/* The kept steps of one host's hits (sorted by step, then plane) into r. */
static int host_result(struct ef_hits *h, const char *hostname, struct ef_result *r,
                       uint32_t *chip_cap, uint32_t *host_cap)
{
    uint32_t i, j, first, last, nsteps = 0, s, hcap;
    struct ef_host *he;
    int rc = 0;

    /* merge the hits of one (step, plane), in event order (the sort is stable) */
    for (i = 0, j = 0; i < h->n; i++) {
        if (j > 0 && hit_cmp(&h->v[j - 1], &h->v[i], NULL) == 0) {
            h->v[j - 1].frac += h->v[i].frac;
            h->v[j - 1].step_ps = h->v[i].step_ps; /* the last event's step time */
        } else {
            h->v[j++] = h->v[i];
        }
    }
    h->n = j;
    for (i = 0; i < h->n; i++)
        nsteps += i == 0 || h->v[i].group != h->v[i - 1].group;
    first = 0;
    last = nsteps; /* steps [first, last) are kept */
    if (nsteps >= 3) {
        first = 1;
        last = nsteps - 1;
    } else if (nsteps == 2) {
        uint64_t d1 = 0, d2 = 0;
        for (i = 0; i < h->n; i++) {
            if (h->v[i].group == h->v[0].group)
                d1 = h->v[i].step_ps;
            else
                d2 = h->v[i].step_ps;
        }
        if ((double)d2 < 0.01 * (double)d1)
            last = 1;
        else if ((double)d1 < 0.01 * (double)d2)
            first = 1;
    }
    if ((he = host_entry(r, host_cap, hostname)) == NULL)
        return -ENOMEM;
    hcap = he->n;
    for (i = 0, s = 0; rc == 0 && i < h->n; s++) {
        uint32_t end = i;
        double sum = 0;
        while (end < h->n && h->v[end].group == h->v[i].group)
            end++;
        if (s >= first && s < last) {
            for (j = i; rc == 0 && j < end; j++) {
                sum += h->v[j].frac;
                rc = push_float(&r->chip_fractions, &r->nchip, chip_cap, (float)h->v[j].frac);
            }
            if (rc == 0)
                rc = push_float(&he->fractions, &he->n, &hcap, (float)(sum / (double)(end - i)));
        }
        i = end;
    }
    return rc;
}

static int host_name_cmp(const void *a, const void *b)
{
    return strcmp(((const struct ef_host *)a)->hostname, ((const struct ef_host *)b)->hostname);
}

int ef_analyze(const struct host_list *hl, const char *event, struct ef_result *r,
               struct xp_err *err)
{
    uint32_t chip_cap = 0, host_cap = 0, p;
    int barrier = strcmp(event, "barrier-cores") == 0;
    int i, rc = 0;

    memset(r, 0, sizeof(*r));
    for (i = 0; rc == 0 && i < hl->n; i++) {
        struct ef_hits h = {0};
        struct xspace *xs;
        const struct xp_groups *groups;
        const char *name = hl->names[i];
        if (snapshot_host_file(hl->snap, name, SRC_XPLANE) == NULL)
            continue;
        if ((rc = snapshot_xspace_decoded(hl->snap, name, &xs, err)) != 0 ||
            (rc = snapshot_groups(hl->snap, name, &groups, err)) != 0)
            break;
        for (p = 0; rc == 0 && p < xs->nplanes; p++)
            rc = plane_hits(xs, groups, p, event, barrier, &h);
        if (rc == 0 && xp_sort_runs(h.v, h.n, sizeof(*h.v), hit_cmp, NULL) != 0)
            rc = -ENOMEM;
        if (rc == 0)
            rc = host_result(&h, xs->nhostnames > 0 ? xs->hostnames[0] : name, r, &chip_cap,
                             &host_cap);
        free(h.v);
        if (rc != 0)
            xp_err_set(err, rc, "event time fractions of %s: out of memory", event);
    }
    if (rc == 0)
        xp_qsort(r->hosts, r->nhosts, sizeof(*r->hosts), host_name_cmp);
    return rc;
}

void ef_free(struct ef_result *r)
{
    uint32_t i;

    for (i = 0; i < r->nhosts; i++) {
        free(r->hosts[i].hostname);
        free(r->hosts[i].fractions);
    }
    free(r->hosts);
    free(r->chip_fractions);
    memset(r, 0, sizeof(*r));
}
