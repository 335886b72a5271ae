/*
 * gpu_timeline.c - TraceLens's GPU timeline metrics per device (see
 * gpu_timeline.h): interval algebra, classification, the three sources
 * (xplane, JAX Chrome trace, PyTorch trace) and the per-snapshot cache.
 */
#include "base/sort.h"
#include "gpu_timeline.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/ctrace.h"
#include "reader/xspace.h"

const char *const gt_metric_names[GT_NMETRICS] = {
    "computation_time", "exposed_comm_time", "exposed_memcpy_time", "busy_time",
    "idle_time",        "total_time",        "total_comm_time",     "total_memcpy_time",
};

/* ---- interval algebra ---------------------------------------------------- */

static int interval_cmp(const void *a, const void *b)
{
    const struct gt_interval *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int interval_cmp_ctx(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    return interval_cmp(a, b);
}

size_t gt_merge(struct gt_interval *v, size_t n)
{
    size_t i, m = 0;

    if (n == 0)
        return 0;
    /* Intervals come in runs sorted by start (one per stream): merge the
     * runs; qsort if there is no memory for that. */
    if (xp_sort_runs(v, n, sizeof(*v), interval_cmp_ctx, NULL) != 0)
        xp_qsort(v, n, sizeof(*v), interval_cmp);
    for (i = 1; i < n; i++) {
        if (v[i].start <= v[m].end) {
            if (v[i].end > v[m].end)
                v[m].end = v[i].end;
        } else {
            v[++m] = v[i];
        }
    }
    return m + 1;
}

size_t gt_subtract(const struct gt_interval *a, size_t na, const struct gt_interval *b, size_t nb,
                   struct gt_interval *out)
{
    size_t ai = 0, bi, n = 0;

    for (bi = 0; bi < nb; bi++) {
        double cur = b[bi].start, bend = b[bi].end;
        size_t t;
        while (ai < na && a[ai].end <= b[bi].start)
            ai++;
        for (t = ai; t < na && a[t].start < bend; t++) {
            if (a[t].start > cur) {
                out[n].start = cur;
                out[n].end = bend < a[t].start ? bend : a[t].start;
                n++;
            }
            if (a[t].end > cur)
                cur = a[t].end;
            if (cur >= bend)
                break;
        }
        if (cur < bend) {
            out[n].start = cur;
            out[n].end = bend;
            n++;
        }
    }
    return n;
}

double gt_length(const struct gt_interval *v, size_t n)
{
    double sum = 0;
    size_t i;

    for (i = 0; i < n; i++)
        sum += v[i].end - v[i].start;
    return sum;
}

int gt_metrics(struct gt_interval *cls[3], size_t ncls[3], double metric[GT_NMETRICS])
{
    size_t ncomp, ncomm, nmem, nall = ncls[0] + ncls[1] + ncls[2], nx, nmc, nem, ntmp;
    struct gt_interval *all, *tmp, *second;

    if (nall == 0)
        return -EINVAL;
    ncomp = gt_merge(cls[GT_COMPUTATION], ncls[GT_COMPUTATION]);
    ncomm = gt_merge(cls[GT_COMMUNICATION], ncls[GT_COMMUNICATION]);
    nmem = gt_merge(cls[GT_MEMCPY], ncls[GT_MEMCPY]);
    /* The union of all intervals is the union of the merged classes (the
     * same connected pieces), which are fewer and already in order. */
    nall = ncomp + ncomm + nmem;
    ntmp = ncomp + (ncomm > nmem ? ncomm : nmem) + 1;
    all = malloc(nall * sizeof(*all));
    tmp = malloc(ntmp * sizeof(*tmp));
    if (all == NULL || tmp == NULL) {
        free(all);
        free(tmp);
        return -ENOMEM;
    }
    if (ncomp > 0)
        memcpy(all, cls[GT_COMPUTATION], ncomp * sizeof(*all));
    if (ncomm > 0)
        memcpy(all + ncomp, cls[GT_COMMUNICATION], ncomm * sizeof(*all));
    if (nmem > 0)
        memcpy(all + ncomp + ncomm, cls[GT_MEMCPY], nmem * sizeof(*all));
    nall = gt_merge(all, nall);

    metric[GT_TOTAL_TIME] = all[nall - 1].end - all[0].start;
    metric[GT_COMPUTATION_TIME] = gt_length(cls[GT_COMPUTATION], ncomp);
    metric[GT_TOTAL_COMM_TIME] = gt_length(cls[GT_COMMUNICATION], ncomm);
    nx = gt_subtract(cls[GT_COMPUTATION], ncomp, cls[GT_COMMUNICATION], ncomm, tmp);
    metric[GT_EXPOSED_COMM_TIME] = gt_length(tmp, nx);
    metric[GT_TOTAL_MEMCPY_TIME] = gt_length(cls[GT_MEMCPY], nmem);
    /* (memcpy \ comp) \ comm: the first result lives in tmp[0..nmc), the
     * second after it. Each subtraction yields at most nb + na pieces. */
    nmc = gt_subtract(cls[GT_COMPUTATION], ncomp, cls[GT_MEMCPY], nmem, tmp);
    second = malloc((nmc + ncomm + 1) * sizeof(*second));
    if (second == NULL) {
        free(all);
        free(tmp);
        return -ENOMEM;
    }
    nem = gt_subtract(cls[GT_COMMUNICATION], ncomm, tmp, nmc, second);
    metric[GT_EXPOSED_MEMCPY_TIME] = gt_length(second, nem);
    free(second);
    metric[GT_BUSY_TIME] = gt_length(all, nall);
    metric[GT_IDLE_TIME] = metric[GT_TOTAL_TIME] - metric[GT_BUSY_TIME];
    free(all);
    free(tmp);
    return 0;
}

/* ---- classification ------------------------------------------------------ */

static int has_prefix_nocase(const char *s, const char *p)
{
    for (; *p; s++, p++) {
        if (tolower((unsigned char)*s) != *p)
            return 0;
    }
    return 1;
}

static int contains_nocase(const char *s, const char *p)
{
    size_t n = strlen(p);

    for (; *s; s++) {
        if (strncasecmp(s, p, n) == 0)
            return 1;
    }
    return 0;
}

int gt_is_communication(const char *name)
{
    return contains_nocase(name, "nccl") || contains_nocase(name, "rccl") ||
           contains_nocase(name, "cross_device_reduce");
}

enum gt_class gt_classify_jax(const char *name)
{
    if (has_prefix_nocase(name, "copy") || has_prefix_nocase(name, "memcpy") ||
        has_prefix_nocase(name, "memset"))
        return GT_MEMCPY;
    if (gt_is_communication(name))
        return GT_COMMUNICATION;
    return GT_COMPUTATION;
}

/* s is p, then optional suffixes in order, then end (Python's re.match with
 * '$', which also matches before one trailing newline). */
static const char *eat(const char *s, const char *p)
{
    size_t n = strlen(p);
    return strncmp(s, p, n) == 0 ? s + n : NULL;
}

static int at_end(const char *s)
{
    const char *k = eat(s, ".kd");
    if (k != NULL)
        s = k;
    return *s == 0 || (s[0] == '\n' && s[1] == 0);
}

static int is_rocm_legacy_memcpy(const char *name)
{
    static const char *const copies[] = {"MEMORY_COPY_HOST_TO_DEVICE", "MEMORY_COPY_DEVICE_TO_HOST",
                                         "MEMORY_COPY_DEVICE_TO_DEVICE"};
    const char *s;
    size_t k;

    for (k = 0; k < 3; k++) {
        s = eat(name, copies[k]);
        if (s != NULL && at_end(s))
            return 1;
    }
    s = eat(name, "__amd_rocclr_copyBuffer");
    if (s == NULL)
        return 0;
    if (eat(s, "Rect") != NULL)
        s = eat(s, "Rect");
    if (eat(s, "Aligned") != NULL)
        s = eat(s, "Aligned");
    return at_end(s);
}

static int is_rocm_legacy_memset(const char *name)
{
    const char *s = eat(name, "__amd_rocclr_fillBuffer");

    if (s == NULL)
        return 0;
    if (eat(s, "Aligned") != NULL)
        s = eat(s, "Aligned");
    return at_end(s);
}

enum gt_class gt_classify_pytorch(const char *cat, const char *name)
{
    if (strcmp(cat, "gpu_memcpy") == 0)
        return GT_MEMCPY;
    if (strcmp(cat, "kernel") == 0 && is_rocm_legacy_memcpy(name))
        return GT_MEMCPY;
    if (strcmp(cat, "kernel") == 0 && is_rocm_legacy_memset(name))
        return GT_COMPUTATION;
    if (gt_is_communication(name))
        return GT_COMMUNICATION;
    return GT_COMPUTATION;
}

/* ---- CPython set order ---------------------------------------------------- */

#define PY_LINEAR_PROBES 9
#define PY_PERTURB_SHIFT 5

struct pyset {
    int64_t *key;  /* slot keys */
    uint8_t *used; /* slot in use */
    size_t mask;   /* size - 1 */
    size_t fill;   /* slots in use */
};

static size_t pyhash(int64_t v)
{
    /* hash(int) for the values we meet (pids are small and non-negative). */
    if (v == -1)
        return (size_t)-2;
    return (size_t)v;
}

static void pyset_insert_clean(struct pyset *s, int64_t key)
{
    size_t h = pyhash(key), perturb = h, i = h & s->mask, j;

    for (;;) {
        if (!s->used[i])
            goto found;
        if (i + PY_LINEAR_PROBES <= s->mask) {
            for (j = 0; j < PY_LINEAR_PROBES; j++) {
                i++;
                if (!s->used[i])
                    goto found;
            }
            i -= PY_LINEAR_PROBES;
        }
        perturb >>= PY_PERTURB_SHIFT;
        i = (i * 5 + 1 + perturb) & s->mask;
    }
found:
    s->used[i] = 1;
    s->key[i] = key;
}

static int pyset_resize(struct pyset *s, size_t minused)
{
    size_t newsize = 8, k, oldsize = s->mask + 1;
    int64_t *oldkey = s->key;
    uint8_t *oldused = s->used;

    while (newsize <= minused)
        newsize <<= 1;
    s->key = calloc(newsize, sizeof(*s->key));
    s->used = calloc(newsize, 1);
    if (s->key == NULL || s->used == NULL) {
        free(s->key);
        free(s->used);
        s->key = oldkey;
        s->used = oldused;
        return -ENOMEM;
    }
    s->mask = newsize - 1;
    for (k = 0; k < oldsize; k++) {
        if (oldused[k])
            pyset_insert_clean(s, oldkey[k]);
    }
    free(oldkey);
    free(oldused);
    return 0;
}

static int pyset_add(struct pyset *s, int64_t key)
{
    size_t h = pyhash(key), perturb = h, i = h & s->mask, probes, e;

    for (;;) {
        probes = (i + PY_LINEAR_PROBES <= s->mask) ? PY_LINEAR_PROBES : 0;
        e = i;
        for (;;) {
            if (!s->used[e])
                goto unused;
            if (s->key[e] == key)
                return 0;
            e++;
            if (probes-- == 0)
                break;
        }
        perturb >>= PY_PERTURB_SHIFT;
        i = (i * 5 + 1 + perturb) & s->mask;
    }
unused:
    s->used[e] = 1;
    s->key[e] = key;
    s->fill++;
    if (s->fill * 5 < s->mask * 3)
        return 0;
    return pyset_resize(s, s->fill > 50000 ? s->fill * 2 : s->fill * 4);
}

size_t gt_pyset_order(const int64_t *v, size_t n, int64_t *out)
{
    struct pyset s = {calloc(8, sizeof(int64_t)), calloc(8, 1), 7, 0};
    size_t i, m = 0;

    if (s.key == NULL || s.used == NULL)
        goto fallback;
    for (i = 0; i < n; i++) {
        if (pyset_add(&s, v[i]) != 0)
            goto fallback;
    }
    for (i = 0; i <= s.mask; i++) {
        if (s.used[i])
            out[m++] = s.key[i];
    }
    free(s.key);
    free(s.used);
    return m;
fallback: /* out of memory: first-seen order */
    free(s.key);
    free(s.used);
    for (i = 0; i < n; i++) {
        size_t k;
        for (k = 0; k < m && out[k] != v[i]; k++)
            ;
        if (k == m)
            out[m++] = v[i];
    }
    return m;
}

/* ---- building devices ------------------------------------------------------ */

/* Growable interval lists of one device. */
struct gt_acc {
    int64_t pid;
    char *name;
    struct gt_interval *v[3];
    size_t n[3], cap[3];
    uint64_t nevents;
};

/* Room for n more intervals of class c. */
static int acc_reserve(struct gt_acc *a, enum gt_class c, size_t n)
{
    struct gt_interval *v;

    if (a->n[c] + n <= a->cap[c])
        return 0;
    v = realloc(a->v[c], (a->n[c] + n) * sizeof(*v));
    if (v == NULL)
        return -ENOMEM;
    a->v[c] = v;
    a->cap[c] = a->n[c] + n;
    return 0;
}

static int acc_add(struct gt_acc *a, enum gt_class c, double ts, double dur)
{
    if (a->n[c] == a->cap[c]) {
        size_t cap = a->cap[c] ? a->cap[c] * 2 : 256;
        struct gt_interval *v = realloc(a->v[c], cap * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        a->v[c] = v;
        a->cap[c] = cap;
    }
    a->v[c][a->n[c]].start = ts;
    a->v[c][a->n[c]].end = ts + dur;
    a->n[c]++;
    a->nevents++;
    return 0;
}

static void acc_free(struct gt_acc *a)
{
    int k;

    for (k = 0; k < 3; k++)
        free(a->v[k]);
    free(a->name);
}

static void host_free(void *value)
{
    struct gt_host *g = value;
    uint32_t i;

    if (g == NULL)
        return;
    for (i = 0; i < g->ndevices; i++)
        free(g->devices[i].name);
    free(g->devices);
    free(g);
}

/* Turn accumulators (in Python set order) into the host's devices. Devices
 * without counted events are left out (TraceLens stops with an error there). */
static int finish_host(struct gt_acc *acc, size_t nacc, int pytorch, struct gt_host **gp,
                       struct xp_err *err)
{
    struct gt_host *g = calloc(1, sizeof(*g));
    size_t i;
    int rc;

    if (g == NULL || (g->devices = calloc(nacc ? nacc : 1, sizeof(*g->devices))) == NULL) {
        free(g);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    g->pytorch = pytorch;
    for (i = 0; i < nacc; i++) {
        struct gt_device *d = &g->devices[g->ndevices];
        if (acc[i].nevents == 0)
            continue;
        rc = gt_metrics(acc[i].v, acc[i].n, d->metric);
        if (rc != 0) {
            host_free(g);
            return xp_err_set(err, rc, "out of memory");
        }
        d->gpu_pid = acc[i].pid;
        d->nevents = acc[i].nevents;
        d->name = acc[i].name;
        acc[i].name = NULL;
        g->ndevices++;
    }
    if (g->ndevices == 0) {
        host_free(g);
        return xp_err_set(err, -ENOENT, "no GPU events found in the trace");
    }
    *gp = g;
    return 0;
}

/* Put accumulators in the iteration order of the Python set built from the
 * pids in order[0..n) (first-appearance order of the events). */
static int order_accs(struct gt_acc *acc, size_t nacc, const int64_t *seen, size_t nseen)
{
    int64_t *ord = malloc((nseen ? nseen : 1) * sizeof(*ord));
    struct gt_acc *copy = malloc((nacc ? nacc : 1) * sizeof(*copy));
    size_t m, i, k, w = 0;

    if (ord == NULL || copy == NULL) {
        free(ord);
        free(copy);
        return -ENOMEM;
    }
    m = gt_pyset_order(seen, nseen, ord);
    memcpy(copy, acc, nacc * sizeof(*acc));
    for (i = 0; i < m; i++) {
        for (k = 0; k < nacc; k++) {
            if (copy[k].pid == ord[i] && copy[k].name != NULL) {
                acc[w++] = copy[k];
                copy[k].name = NULL;
                break;
            }
        }
    }
    for (k = 0; k < nacc; k++) {
        if (copy[k].name != NULL)
            acc[w++] = copy[k];
    }
    free(ord);
    free(copy);
    return 0;
}

/* The name an event shows in the trace viewer: display name, else name. */
static const char *xp_shown_name(const struct xp_event_meta *m)
{
    return m->display_name[0] ? m->display_name : m->name;
}

/* A line whose events count: named "Stream #...", or unnamed with an id
 * below 100. */
static int counted_line(const struct xp_line *ln)
{
    const char *lname = ln->display_name[0] ? ln->display_name : ln->name;

    if (lname[0] != 0)
        return strncmp(lname, "Stream #", 8) == 0;
    return (uint32_t)(ln->display_id ? ln->display_id : ln->id) < 100;
}

static int from_xspace(struct xspace *xs, struct gt_host **gp, struct xp_err *err)
{
    struct gt_acc *acc = calloc(xs->nplanes ? xs->nplanes : 1, sizeof(*acc));
    int64_t *seen = malloc((xs->nplanes ? xs->nplanes : 1) * sizeof(*seen));
    size_t nacc = 0, nseen = 0, i;
    uint8_t *cls = NULL;
    uint32_t p, l, e;
    size_t count[3];
    int rc = 0, c;

    if (acc == NULL || seen == NULL) {
        free(acc);
        free(seen);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        struct gt_acc *a;
        int any = 0;
        if (strncmp(pl->name, "/device:GPU:", 12) != 0)
            continue;
        /* Classes per event metadata: names repeat, classifying is not free. */
        free(cls);
        cls = malloc(pl->nemeta ? pl->nemeta : 1);
        if (cls == NULL) {
            rc = -ENOMEM;
            break;
        }
        for (e = 0; e < pl->nemeta; e++)
            cls[e] = (uint8_t)gt_classify_jax(xp_shown_name(&pl->emeta[e]));
        a = &acc[nacc];
        a->pid = 1 + pl->id > 500 || 1 + pl->id < 1 ? 1 : 1 + pl->id;
        a->name = strdup(pl->name);
        if (a->name == NULL) {
            rc = -ENOMEM;
            break;
        }
        nacc++;
        /* Count each class first: the arrays are allocated once. */
        memset(count, 0, sizeof(count));
        for (l = 0; l < pl->nlines; l++) {
            const struct xp_line *ln = &pl->lines[l];
            if (!counted_line(ln))
                continue;
            for (e = 0; e < ln->nevents; e++)
                count[cls[ln->events[e].meta]]++;
        }
        for (c = 0; c < 3 && rc == 0; c++)
            rc = acc_reserve(a, (enum gt_class)c, count[c]);
        for (l = 0; l < pl->nlines && rc == 0; l++) {
            const struct xp_line *ln = &pl->lines[l];
            if (ln->nevents > 0)
                any = 1;
            if (!counted_line(ln))
                continue;
            for (e = 0; e < ln->nevents; e++) {
                const struct xp_event *ev = &ln->events[e];
                double ts = (double)xp_event_start_ps(ln, ev) / 1e6;
                double dur = (double)(ev->duration_ps > 0 ? ev->duration_ps : 1) / 1e6;
                rc = acc_add(a, (enum gt_class)cls[ev->meta], ts, dur);
                if (rc != 0)
                    break;
            }
        }
        if (any)
            seen[nseen++] = a->pid;
    }
    free(cls);
    if (rc == 0)
        rc = order_accs(acc, nacc, seen, nseen);
    if (rc == 0)
        rc = finish_host(acc, nacc, 0, gp, err);
    else
        xp_err_set(err, rc, "out of memory");
    for (i = 0; i < nacc; i++)
        acc_free(&acc[i]);
    free(acc);
    free(seen);
    return rc;
}

/* JAX rules on a Chrome trace: devices are the processes named /device:GPU. */
static int from_jax_json(const struct ctrace *ct, struct gt_host **gp, struct xp_err *err)
{
    struct gt_acc *acc = calloc(ct->nprocesses ? ct->nprocesses : 1, sizeof(*acc));
    int64_t *seen = malloc((ct->nprocesses ? ct->nprocesses : 1) * sizeof(*seen));
    size_t nacc = 0, nseen = 0, i;
    uint32_t k;
    int rc = 0;

    if (acc == NULL || seen == NULL) {
        free(acc);
        free(seen);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    for (i = 0; i < ct->nevents && rc == 0; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        const char *pname, *tname;
        struct gt_acc *a = NULL;
        if (ev->ph == 'M' || (ev->flags & CT_PID_STR))
            continue;
        pname = ctrace_event_process_name(ct, ev);
        if (strstr(pname, "/device:GPU") == NULL)
            continue;
        for (k = 0; k < nacc; k++) {
            if (acc[k].pid == ev->pid) {
                a = &acc[k];
                break;
            }
        }
        if (a == NULL) {
            if (nacc == ct->nprocesses)
                continue; /* cannot happen: the process is named */
            a = &acc[nacc++];
            a->pid = ev->pid;
            a->name = strdup(pname);
            if (a->name == NULL) {
                rc = -ENOMEM;
                break;
            }
            seen[nseen++] = ev->pid;
        }
        if (!(ev->flags & CT_HAS_TS) || !(ev->flags & CT_HAS_DUR))
            continue;
        tname = ctrace_event_thread_name(ct, ev);
        if (tname[0] != 0 ? strncmp(tname, "Stream #", 8) != 0
                          : (ev->tid == CT_NONE || (ev->flags & CT_TID_STR) || ev->tid >= 100))
            continue;
        rc = acc_add(a, gt_classify_jax(ctrace_str(ct, ev->name)), ev->ts, ev->dur);
    }
    if (rc == 0)
        rc = order_accs(acc, nacc, seen, nseen);
    if (rc == 0)
        rc = finish_host(acc, nacc, 0, gp, err);
    else
        xp_err_set(err, rc, "out of memory");
    for (i = 0; i < nacc; i++)
        acc_free(&acc[i]);
    free(acc);
    free(seen);
    return rc;
}

/* ---- PyTorch linking -------------------------------------------------------- */

/* A map from (pid, tid, link id, flags) to an event index; last write wins. */
struct link_map {
    int64_t (*key)[3];
    uint16_t *flags;
    uint32_t *val; /* UINT32_MAX = empty */
    size_t mask;
};

static size_t link_hash(const int64_t k[3], uint16_t f)
{
    uint64_t h = 1469598103934665603ull;
    int i;

    for (i = 0; i < 3; i++)
        h = (h ^ (uint64_t)k[i]) * 1099511628211ull;
    h = (h ^ f) * 1099511628211ull;
    return (size_t)(h ^ (h >> 29));
}

static int link_map_init(struct link_map *m, size_t n)
{
    size_t size = 16;

    while (size < n * 2)
        size <<= 1;
    m->key = malloc(size * sizeof(*m->key));
    m->flags = malloc(size * sizeof(*m->flags));
    m->val = malloc(size * sizeof(*m->val));
    m->mask = size - 1;
    if (m->key == NULL || m->flags == NULL || m->val == NULL)
        return -ENOMEM;
    memset(m->val, 0xff, size * sizeof(*m->val));
    return 0;
}

static void link_map_free(struct link_map *m)
{
    free(m->key);
    free(m->flags);
    free(m->val);
}

/* The slot of key: its entry, or the empty slot where it goes. */
static size_t link_slot(const struct link_map *m, const int64_t k[3], uint16_t f)
{
    size_t i = link_hash(k, f) & m->mask;

    while (m->val[i] != UINT32_MAX && !(m->key[i][0] == k[0] && m->key[i][1] == k[1] &&
                                        m->key[i][2] == k[2] && m->flags[i] == f))
        i = (i + 1) & m->mask;
    return i;
}

static void link_put(struct link_map *m, const int64_t k[3], uint16_t f, uint32_t v)
{
    size_t i = link_slot(m, k, f);

    m->key[i][0] = k[0];
    m->key[i][1] = k[1];
    m->key[i][2] = k[2];
    m->flags[i] = f;
    m->val[i] = v;
}

static uint32_t link_get(const struct link_map *m, const int64_t k[3], uint16_t f)
{
    return m->val[link_slot(m, k, f)];
}

int gt_pt_links(const struct ctrace *ct, uint32_t **parentp)
{
    uint32_t cat_rt = ctrace_str_find(ct, "cuda_runtime");
    uint32_t cat_drv = ctrace_str_find(ct, "cuda_driver");
    uint32_t cat_ac2g = ctrace_str_find(ct, "ac2g");
    uint32_t cat_kernel = ctrace_str_find(ct, "kernel");
    uint32_t cat_memcpy = ctrace_str_find(ct, "gpu_memcpy");
    uint32_t cat_memset = ctrace_str_find(ct, "gpu_memset");
    uint32_t graph1 = ctrace_str_find(ct, "cudaGraphLaunch");
    uint32_t graph2 = ctrace_str_find(ct, "hipGraphLaunch");
    struct link_map start, end, ptl, graphs;
    uint32_t *parent, i;
    int use_corr = 0, rc = -ENOMEM;

#define IS_RT(ev) ((ev)->cat != 0 && ((ev)->cat == cat_rt || (ev)->cat == cat_drv))
#define IS_GPU(ev)                                                                                 \
    ((ev)->cat != 0 &&                                                                             \
     ((ev)->cat == cat_kernel || (ev)->cat == cat_memcpy || (ev)->cat == cat_memset))
#define LINK(ev) (use_corr ? (ev)->correlation : (ev)->external_id)

    *parentp = NULL;
    parent = malloc((ct->nevents ? ct->nevents : 1) * sizeof(*parent));
    if (parent == NULL)
        return -ENOMEM;
    memset(parent, 0xff, (ct->nevents ? ct->nevents : 1) * sizeof(*parent));
    memset(&start, 0, sizeof(start));
    memset(&end, 0, sizeof(end));
    memset(&ptl, 0, sizeof(ptl));
    memset(&graphs, 0, sizeof(graphs));
    /* The linking key: "correlation" if the first launch has it. */
    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        char lower[256];
        const char *name;
        size_t k;
        if (!IS_RT(ev))
            continue;
        name = ctrace_str(ct, ev->name);
        for (k = 0; name[k] && k < sizeof(lower) - 1; k++)
            lower[k] = (char)tolower((unsigned char)name[k]);
        lower[k] = 0;
        if (strstr(lower, "launch") == NULL && strlen(name) < sizeof(lower) - 1)
            continue;
        if (strstr(lower, "launch") == NULL) {
            /* Longer than the buffer: search the whole name. */
            if (!contains_nocase(name, "launch"))
                continue;
        }
        use_corr = ev->args_len > 0 &&
                   memmem(ct->text + ev->args_off, ev->args_len, "\"correlation\"", 13) != NULL;
        break;
    }
    if (link_map_init(&start, ct->nevents) != 0 || link_map_init(&end, ct->nevents) != 0 ||
        link_map_init(&ptl, ct->nevents) != 0 || link_map_init(&graphs, ct->nevents) != 0)
        goto out;
    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        int64_t k[3];
        if (ev->cat != 0 && ev->cat == cat_ac2g) {
            k[0] = ev->id;
            k[1] = k[2] = 0;
            if (ev->id == CT_NONE)
                continue;
            if (ev->ph == 's')
                link_put(&start, k, 0, i);
            else if (ev->ph == 'f')
                link_put(&end, k, 0, i);
            continue;
        }
        if (ev->args_len == 0 || LINK(ev) == CT_NONE)
            continue;
        if (ev->pid == CT_NONE || ev->tid == CT_NONE)
            continue;
        k[0] = ev->pid;
        k[1] = ev->tid;
        k[2] = LINK(ev);
        link_put(&ptl, k, ev->flags & (CT_PID_STR | CT_TID_STR), i);
    }
    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        int64_t k[3];
        uint32_t s, f, g;
        if (!IS_RT(ev))
            continue;
        if (ev->name != 0 && (ev->name == graph1 || ev->name == graph2)) {
            /* It links every GPU event of its id: done below, once. */
            if (ev->args_len == 0 || LINK(ev) == CT_NONE)
                continue;
            k[0] = LINK(ev);
            k[1] = k[2] = 0;
            link_put(&graphs, k, 0, i);
            continue;
        }
        if (ev->args_len == 0 || LINK(ev) == CT_NONE)
            continue;
        k[0] = LINK(ev);
        k[1] = k[2] = 0;
        s = link_get(&start, k, 0);
        f = link_get(&end, k, 0);
        if (s == UINT32_MAX || f == UINT32_MAX)
            continue;
        k[0] = ct->events[f].pid;
        k[1] = ct->events[f].tid;
        k[2] = ct->events[f].id;
        g = link_get(&ptl, k, ct->events[f].flags & (CT_PID_STR | CT_TID_STR));
        if (g != UINT32_MAX && IS_GPU(&ct->events[g]))
            parent[g] = i;
    }
    /* Graph launches, in TraceLens's terms: each one, in file order, links
     * every GPU event of its id, overwriting earlier links. So a GPU event's
     * parent is the later of the last graph launch of its id and its flow
     * link (graphs maps an id to its last graph launch). */
    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *gv = &ct->events[i];
        int64_t k[3];
        uint32_t g;
        if (!IS_GPU(gv) || gv->args_len == 0 || LINK(gv) == CT_NONE)
            continue;
        k[0] = LINK(gv);
        k[1] = k[2] = 0;
        g = link_get(&graphs, k, 0);
        if (g != UINT32_MAX && (parent[i] == UINT32_MAX || g > parent[i]))
            parent[i] = g;
    }
    rc = 0;
out:
    link_map_free(&start);
    link_map_free(&end);
    link_map_free(&ptl);
    link_map_free(&graphs);
    if (rc != 0) {
        free(parent);
        return rc;
    }
    *parentp = parent;
    return 0;
#undef IS_RT
#undef IS_GPU
#undef LINK
}

/* PyTorch rules: GPU events reached from a runtime launch (gt_pt_linked). */
static int from_pytorch(const struct ctrace *ct, struct gt_host **gp, struct xp_err *err)
{
    struct gt_acc acc;
    uint32_t *linked = NULL;
    uint32_t cat_kernel = ctrace_str_find(ct, "kernel");
    uint32_t cat_memcpy = ctrace_str_find(ct, "gpu_memcpy");
    uint32_t cat_memset = ctrace_str_find(ct, "gpu_memset");
    uint32_t i;
    int rc;

    memset(&acc, 0, sizeof(acc));
    rc = gt_pt_links(ct, &linked);
    if (rc != 0)
        return xp_err_set(err, rc, "out of memory");
    acc.pid = -1;
    acc.name = strdup("all GPUs");
    if (acc.name == NULL) {
        free(linked);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    for (i = 0; i < ct->nevents && rc == 0; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        if (ev->cat == 0 ||
            (ev->cat != cat_kernel && ev->cat != cat_memcpy && ev->cat != cat_memset))
            continue;
        if (linked[i] == UINT32_MAX)
            continue;
        rc = acc_add(&acc, gt_classify_pytorch(ctrace_str(ct, ev->cat), ctrace_str(ct, ev->name)),
                     ev->ts, ev->dur);
    }
    free(linked);
    if (rc == 0)
        rc = finish_host(&acc, 1, 1, gp, err);
    else
        xp_err_set(err, rc, "out of memory");
    acc_free(&acc);
    return rc;
}

static int build_host(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    const char *host = arg;
    struct gt_host *g = NULL;
    int rc;

    if (snapshot_host_file(snap, host, SRC_XPLANE) != NULL) {
        struct xspace *xs;
        rc = snapshot_xspace_decoded(snap, host, &xs, err);
        if (rc == 0)
            rc = from_xspace(xs, &g, err);
    } else {
        const struct ctrace *ct;
        rc = ctrace_snapshot(snap, host, &ct, err);
        if (rc == 0) {
            if (snapshot_host_file(snap, host, SRC_PT_TRACE) != NULL)
                rc = from_pytorch(ct, &g, err);
            else
                rc = from_jax_json(ct, &g, err);
        }
    }
    if (rc != 0)
        return rc;
    *value = g;
    return 0;
}

int gt_host_timeline(struct snapshot *snap, const char *host, const struct gt_host **gp,
                     struct xp_err *err)
{
    char *key;
    void *v;
    int rc;

    rc = snapshot_host_key("gpu_timeline", host, NULL, &key, err);
    if (rc == 0) {
        rc = snapshot_intermediate(snap, key, build_host, host_free, host, &v, err);
        free(key);
    }
    *gp = rc == 0 ? v : NULL;
    return rc;
}
