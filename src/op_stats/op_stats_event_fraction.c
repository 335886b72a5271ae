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
 * host each step's mean over its planes. With a persistent cache each
 * host's result is kept there, so a new process combines the hosts' results
 * without reading their profiles.
 */
#include "op_stats_event_fraction.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/sort.h"
#include "op_stats_tpu_int.h"
#include "store/store_codec.h"
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

/* One host's result for event alone (r: empty, then one host entry at most)
 * from its profile. */
static int host_analyze(struct snapshot *snap, const char *name, const char *event,
                        struct ef_result *r, struct xp_err *err)
{
    int barrier = strcmp(event, "barrier-cores") == 0;
    uint32_t chip_cap = 0, host_cap = 0, p;
    struct ef_hits h = {0};
    struct xspace *xs;
    const struct xp_groups *groups;
    int rc;

    if ((rc = snapshot_xspace_decoded(snap, name, &xs, err)) != 0 ||
        (rc = snapshot_groups(snap, name, &groups, err)) != 0)
        return rc;
    for (p = 0; rc == 0 && p < xs->nplanes; p++)
        rc = plane_hits(xs, groups, p, event, barrier, &h);
    if (rc == 0 && xp_sort_runs(h.v, h.n, sizeof(*h.v), hit_cmp, NULL) != 0)
        rc = -ENOMEM;
    if (rc == 0)
        rc = host_result(&h, xs->nhostnames > 0 ? xs->hostnames[0] : name, r, &chip_cap, &host_cap);
    free(h.v);
    if (rc != 0)
        xp_err_set(err, rc, "event time fractions of %s: out of memory", event);
    return rc;
}

/* ---- kept per host in the persistent cache --------------------------------
 * Payload (store_codec.h): "EVFRAC01", the chip fractions (u32 count, f32
 * each), u32 hosts (0 or 1) and per host its name and fractions. */

#define EF_MAGIC "EVFRAC01"

static void put_floats(struct out *o, const float *v, uint32_t n)
{
    sc_put_u32(o, n);
    for (uint32_t i = 0; i < n; i++)
        sc_put_f32(o, v[i]);
}

static void save(const struct ef_result *r, struct out *o)
{
    out_write(o, EF_MAGIC, 8);
    put_floats(o, r->chip_fractions, r->nchip);
    sc_put_u32(o, r->nhosts);
    for (uint32_t i = 0; i < r->nhosts; i++) {
        sc_put_str(o, r->hosts[i].hostname);
        put_floats(o, r->hosts[i].fractions, r->hosts[i].n);
    }
}

/* n floats, malloc'd (one slot at least), or NULL with c bad. */
static float *get_floats(struct sc_cur *c, uint32_t *n)
{
    float *v;

    *n = sc_u32(c);
    if (c->bad || (uint64_t)*n * 4 > c->left || (v = malloc((*n ? *n : 1) * 4)) == NULL) {
        c->bad = 1;
        *n = 0;
        return NULL;
    }
    for (uint32_t i = 0; i < *n; i++)
        v[i] = sc_f32(c);
    return v;
}

static int load(const void *p, size_t size, struct ef_result *r)
{
    struct arena a;
    struct sc_cur c;
    uint32_t nhosts;

    memset(r, 0, sizeof(*r));
    arena_init(&a);
    sc_init(&c, p, size, &a);
    sc_magic(&c, EF_MAGIC);
    r->chip_fractions = get_floats(&c, &r->nchip);
    nhosts = sc_u32(&c);
    if (!c.bad && nhosts <= 1 && (r->hosts = calloc(1, sizeof(*r->hosts))) == NULL)
        c.bad = 1;
    if (nhosts > 1)
        c.bad = 1;
    for (uint32_t i = 0; !c.bad && i < nhosts; i++) {
        const char *name = sc_str(&c);
        if (name == NULL || (r->hosts[i].hostname = strdup(name)) == NULL) {
            c.bad = 1;
            break;
        }
        r->nhosts++;
        r->hosts[i].fractions = get_floats(&c, &r->hosts[i].n);
    }
    arena_free(&a);
    if (sc_done(&c) != 0) {
        ef_free(r);
        return -EIO;
    }
    return 0;
}

static char *persist_key(const struct snapshot *snap, const char *host, const char *event)
{
    size_t n = strlen(host) + strlen(event) + 48;
    char *what = malloc(n), *key;

    if (what == NULL)
        return NULL;
    snprintf(what, n, "intermediate event_fraction %s %s", event, host);
    key = snapshot_key_text(snap, what);
    free(what);
    return key;
}

/* One host's result, from the persistent cache when it has it. */
static int host_cached(struct snapshot *snap, const char *name, const char *event,
                       struct ef_result *r, struct xp_err *err)
{
    struct store *st = store_shared();
    char *key = st != NULL ? persist_key(snap, name, event) : NULL;
    int rc;

    if (key != NULL) {
        struct blob *b = store_get(st, key);
        rc = b != NULL ? load(b->mem, b->size, r) : -ENOENT;
        blob_unref(b);
        if (rc == 0) {
            free(key);
            return 0;
        }
    }
    memset(r, 0, sizeof(*r));
    rc = host_analyze(snap, name, event, r, err);
    if (rc == 0 && key != NULL && !snapshot_is_fresh(snap, 2)) {
        struct out o;
        out_init(&o);
        save(r, &o);
        sc_persist(st, key, &o);
    }
    free(key);
    return rc;
}

/* Add one host's result to r: its chip fractions pooled, its fractions to
 * the host entry of its name. */
static int merge(struct ef_result *r, const struct ef_result *one, uint32_t *chip_cap,
                 uint32_t *host_cap)
{
    for (uint32_t i = 0; i < one->nchip; i++) {
        if (push_float(&r->chip_fractions, &r->nchip, chip_cap, one->chip_fractions[i]) != 0)
            return -ENOMEM;
    }
    for (uint32_t k = 0; k < one->nhosts; k++) {
        struct ef_host *he = host_entry(r, host_cap, one->hosts[k].hostname);
        uint32_t hcap = he != NULL ? he->n : 0;
        if (he == NULL)
            return -ENOMEM;
        for (uint32_t i = 0; i < one->hosts[k].n; i++) {
            if (push_float(&he->fractions, &he->n, &hcap, one->hosts[k].fractions[i]) != 0)
                return -ENOMEM;
        }
    }
    return 0;
}

int ef_analyze(const struct host_list *hl, const char *event, struct ef_result *r,
               struct xp_err *err)
{
    uint32_t chip_cap = 0, host_cap = 0;
    int i, rc = 0;

    memset(r, 0, sizeof(*r));
    for (i = 0; rc == 0 && i < hl->n; i++) {
        struct ef_result one;
        const char *name = hl->names[i];
        if (snapshot_host_file(hl->snap, name, SRC_XPLANE) == NULL)
            continue;
        if ((rc = host_cached(hl->snap, name, event, &one, err)) != 0)
            break;
        if ((rc = merge(r, &one, &chip_cap, &host_cap)) != 0)
            xp_err_set(err, rc, "event time fractions of %s: out of memory", event);
        ef_free(&one);
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
