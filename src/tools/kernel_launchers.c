/*
 * kernel_launchers.c - kernel_launchers.csv, kernel_launchers_summary.csv,
 * kernel_launchers_summary_by_category.csv and xla_summary.csv, as TraceLens's
 * JAX analyser makes
 * them: on JAX/XLA profiles each GPU kernel is its own launcher
 * (total_direct_kernel_time = its duration), categorised by the JaxOpKeys
 * keywords on the kernel name, then on its hlo_op, else
 * "Uncategorized Events/XLA". GPU_kernel_launch_latency = kernel start minus
 * the start of the host event (pid 701, /host:CPU) with the same
 * correlation_id. Summaries group by name / category with pandas' arithmetic
 * (Kahan group sums, numpy pairwise totals, running cumulative percentages).
 *
 * Sources: .xplane.pb hosts and JAX Chrome traces. PyTorch runs get
 * TraceLens's CPU-op launchers instead (pt_launchers.c, hooked in below).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sort.h"
#include "ctrace.h"
#include "gpu_timeline.h"
#include "np_arith.h"
#include "pt_launchers.h"
#include "tool.h"

/* TraceLens's JaxOpKeys.ClassCategories, in its order. */
struct category {
    const char *name;
    const char *keys[5];
};

static const struct category categories[] = {
    {"GEMM", {"Cijk", "gemm", "nvjet", "cublasLt", NULL}},
    {"FA BWD", {"FmhaBwd", "flash_bprop", "ck_fused_attn::dk_dv_reduce_thd", "fmha_bwd", NULL}},
    {"FA FWD", {"FmhaFwd", "flash_fprop", "fmha_fwd", NULL}},
    {"FA V3", {"kernel_func", NULL}},
    {"Conv", {"conv_", "conv.", "conv-", NULL}},
    {"TE", {"transformer_engine", "te_fused_attn", NULL}},
    {"Communication rccl/nccl", {"rccl", "nccl", NULL}},
};

#define NCATEGORIES (sizeof(categories) / sizeof(categories[0]))
#define UNCATEGORIZED "Uncategorized Events/XLA"
/* Marks event metadata that is not a kernel (memcpy, memset). */
static const char not_kernel[] = "not a kernel";
#define NOT_KERNEL not_kernel

static const char *match_category(const char *s)
{
    size_t c, k;

    for (c = 0; c < NCATEGORIES; c++) {
        for (k = 0; categories[c].keys[k] != NULL; k++) {
            if (strstr(s, categories[c].keys[k]) != NULL)
                return categories[c].name;
        }
    }
    return NULL;
}

/* The category of a kernel from its name and hlo_op (may be NULL). */
static const char *kernel_category(const char *name, const char *hlo_op)
{
    const char *by_name = match_category(name), *by_op;
    int fa = by_name != NULL && strncmp(by_name, "FA ", 3) == 0;

    if (hlo_op != NULL && hlo_op[0] != 0 && !fa) {
        by_op = match_category(hlo_op);
        if (by_op != NULL)
            return by_op;
    }
    return by_name != NULL ? by_name : UNCATEGORIZED;
}

static int is_kernel_name(const char *name)
{
    static const char *const not_kernels[] = {"copy", "memcpy", "memset"};
    size_t k, i;

    for (k = 0; k < 3; k++) {
        const char *p = not_kernels[k];
        for (i = 0; p[i] != 0 && tolower((unsigned char)name[i]) == p[i]; i++)
            ;
        if (p[i] == 0)
            return 0;
    }
    return 1;
}

/* correlation id -> host launch start (µs), sorted for bsearch. */
struct corr {
    int64_t id;
    double ts;
};

static int corr_cmp(const void *a, const void *b)
{
    const struct corr *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int corr_cmp_ctx(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    return corr_cmp(a, b);
}

/* Sort by id: host events come in runs of ascending ids (one per thread),
 * which xp_sort_runs merges; qsort when out of memory for that. */
static void corr_sort(struct corr *v, size_t n)
{
    if (xp_sort_runs(v, n, sizeof(*v), corr_cmp_ctx, NULL) != 0)
        xp_qsort(v, n, sizeof(*v), corr_cmp);
}

static double corr_find(const struct corr *v, size_t n, int64_t id)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo].id == id ? v[lo].ts : NAN;
}

/* Launch start by correlation id: a table indexed by id - base when the ids
 * are dense (as runtimes hand them out), else the sorted pairs. */
struct launches {
    struct corr *sorted; /* by id, one per id */
    size_t n;
    double *dense; /* [id - base], NaN where no launch has the id */
    int64_t base;
    uint64_t range;
};

static void launches_free(struct launches *t)
{
    free(t->sorted);
    free(t->dense);
    memset(t, 0, sizeof(*t));
}

static double launch_ts(const struct launches *t, int64_t id)
{
    if (t->dense != NULL) {
        uint64_t slot = (uint64_t)id - (uint64_t)t->base;
        return slot < t->range ? t->dense[slot] : NAN;
    }
    return corr_find(t->sorted, t->n, id);
}

/* Index v[0..n) (taken over) keeping the latest start per id: directly when
 * the ids span less than four times their number, else sorted. */
static int launches_latest(struct launches *t, struct corr *v, size_t n)
{
    int64_t lo, hi;
    size_t i, w;

    memset(t, 0, sizeof(*t));
    if (n == 0) {
        free(v);
        return 0;
    }
    lo = hi = v[0].id;
    for (i = 1; i < n; i++) {
        if (v[i].id < lo)
            lo = v[i].id;
        if (v[i].id > hi)
            hi = v[i].id;
    }
    if ((uint64_t)hi - (uint64_t)lo < 4 * (uint64_t)n + 1024) {
        t->range = (uint64_t)hi - (uint64_t)lo + 1;
        t->base = lo;
        t->dense = malloc(t->range * sizeof(*t->dense));
        if (t->dense != NULL) {
            for (i = 0; i < t->range; i++)
                t->dense[i] = NAN;
            for (i = 0; i < n; i++) {
                double *d = &t->dense[(uint64_t)v[i].id - (uint64_t)lo];
                if (isnan(*d) || v[i].ts > *d)
                    *d = v[i].ts;
            }
            free(v);
            return 0;
        }
    }
    corr_sort(v, n);
    for (i = 0, w = 0; i < n; i++) {
        if (w > 0 && v[w - 1].id == v[i].id) {
            if (v[i].ts > v[w - 1].ts)
                v[w - 1].ts = v[i].ts;
            continue;
        }
        v[w++] = v[i];
    }
    t->sorted = v;
    t->n = w;
    return 0;
}

/* Host-side events with a correlation id on /host:CPU planes. Where several
 * share an id, the last in trace order (thread, then time) wins, as in
 * TraceLens's linking loop. */
static int xspace_corrs(const struct xspace *xs, struct launches *t)
{
    struct corr *v = NULL;
    size_t n = 0, cap = 0;
    uint32_t p, l, e;

    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        if (strncmp(pl->name, "/host:CPU", 9) != 0 || pl->stat_id[XS_CORRELATION_ID] == XP_NO_STAT)
            continue;
        for (l = 0; l < pl->nlines; l++) {
            const struct xp_line *ln = &pl->lines[l];
            for (e = 0; e < ln->nevents; e++) {
                struct xp_stat st;
                if (!xp_event_stat(pl, ln, &ln->events[e], XS_CORRELATION_ID, &st))
                    continue;
                if (n == cap) {
                    struct corr *nv;
                    cap = cap ? cap * 2 : 1024;
                    nv = realloc(v, cap * sizeof(*nv));
                    if (nv == NULL) {
                        free(v);
                        return -ENOMEM;
                    }
                    v = nv;
                }
                v[n].id = xp_stat_int(&st);
                v[n].ts = (double)xp_event_start_ps(ln, &ln->events[e]) / 1e6;
                n++;
            }
        }
    }
    return launches_latest(t, v, n);
}

/* ---- visiting kernels in trace order ---------------------------------------- */

/* One kernel as the visitor hands it over. name points into the profile. */
struct kernel {
    const char *name;     /* kernel name */
    size_t name_len;      /* its length */
    int name_plain;       /* 1: a CSV field as is (no comma, quote, line break) */
    const char *category; /* static, a CSV field as is */
    double ts;            /* µs */
    double dur;           /* µs */
    int64_t pid;          /* TraceLens gpu pid */
    int64_t tid;          /* stream */
    int64_t corr;         /* correlation id, CT_NONE if none or not asked */
    int host;             /* index among the covered hosts */
};

typedef int (*kernel_fn)(void *arg, const struct kernel *k);

/* A GPU stream line in trace order: (pid, tid), then file order. */
struct line_ref {
    const struct xp_plane *plane;
    const struct xp_line *line;
    int64_t pid;
    int64_t tid;
    uint32_t seq;
};

static int line_ref_cmp(const void *a, const void *b)
{
    const struct line_ref *x = a, *y = b;

    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Events of one line for the order comparator. */
static const struct xp_line *sort_line;

static int event_order_cmp(const void *a, const void *b)
{
    const struct xp_event *x = &sort_line->events[*(const uint32_t *)a];
    const struct xp_event *y = &sort_line->events[*(const uint32_t *)b];

    if (x->offset_ps != y->offset_ps)
        return x->offset_ps < y->offset_ps ? -1 : 1;
    if (x->duration_ps != y->duration_ps)
        return x->duration_ps > y->duration_ps ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The events of a line in (start, longer first) order: NULL when the file
 * order already is that order, else a sorted index array (caller frees). */
static int line_order(const struct xp_line *ln, uint32_t **idxp)
{
    uint32_t e, *idx;

    *idxp = NULL;
    for (e = 1; e < ln->nevents; e++) {
        const struct xp_event *a = &ln->events[e - 1], *b = &ln->events[e];
        if (a->offset_ps > b->offset_ps ||
            (a->offset_ps == b->offset_ps && a->duration_ps < b->duration_ps))
            break;
    }
    if (e >= ln->nevents)
        return 0;
    idx = malloc(ln->nevents * sizeof(*idx));
    if (idx == NULL)
        return -ENOMEM;
    for (e = 0; e < ln->nevents; e++)
        idx[e] = e;
    sort_line = ln; /* qsort has no context argument; callers are serialised */
    xp_qsort(idx, ln->nevents, sizeof(*idx), event_order_cmp);
    *idxp = idx;
    return 0;
}

static pthread_mutex_t sort_lock = PTHREAD_MUTEX_INITIALIZER;

static int csv_plain(const char *s, size_t n)
{
    return memchr(s, ',', n) == NULL && memchr(s, '"', n) == NULL && memchr(s, '\n', n) == NULL &&
           memchr(s, '\r', n) == NULL;
}

/* What the event metadata of a plane give every kernel: the category of the
 * name (NOT_KERNEL for memcpy / memset, NULL for none) and the name. */
struct meta_info {
    const char *by_name;
    const char *name;
    size_t name_len;
    int name_plain;
};

/* The category an hlo_op text gives (match_category on at most its first
 * HLO_OP_MAX bytes, up to a NUL, as a C string), cached by the text: ops
 * repeat across kernels and matching them is not free. */
#define HLO_OP_MAX 511

struct op_entry {
    const char *text; /* NULL: empty slot */
    size_t len;
    const char *category; /* NULL: no category */
};

struct op_cache {
    struct op_entry *slots;
    size_t nslots; /* a power of two */
    size_t used;
};

static uint64_t bytes_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    size_t i;

    for (i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h ^ (h >> 32);
}

static int op_cache_grow(struct op_cache *c)
{
    size_t nslots = c->nslots ? c->nslots * 2 : 256, i;
    struct op_entry *slots = calloc(nslots, sizeof(*slots));

    if (slots == NULL)
        return -ENOMEM;
    for (i = 0; i < c->nslots; i++) {
        size_t k;
        if (c->slots[i].text == NULL)
            continue;
        k = bytes_hash(c->slots[i].text, c->slots[i].len) & (nslots - 1);
        while (slots[k].text != NULL)
            k = (k + 1) & (nslots - 1);
        slots[k] = c->slots[i];
    }
    free(c->slots);
    c->slots = slots;
    c->nslots = nslots;
    return 0;
}

/* *catp = the category of the op text s[0..n); -ENOMEM when out of memory. */
static int op_category(struct op_cache *c, const char *s, size_t n, const char **catp)
{
    char text[HLO_OP_MAX + 1];
    size_t k;

    if (n > HLO_OP_MAX)
        n = HLO_OP_MAX;
    if ((c->used + 1) * 2 > c->nslots && op_cache_grow(c) != 0)
        return -ENOMEM;
    k = bytes_hash(s, n) & (c->nslots - 1);
    while (c->slots[k].text != NULL) {
        if (c->slots[k].len == n && memcmp(c->slots[k].text, s, n) == 0) {
            *catp = c->slots[k].category;
            return 0;
        }
        k = (k + 1) & (c->nslots - 1);
    }
    memcpy(text, s, n);
    text[n] = 0;
    c->slots[k].text = s;
    c->slots[k].len = n;
    c->slots[k].category = text[0] != 0 ? match_category(text) : NULL;
    c->used++;
    *catp = c->slots[k].category;
    return 0;
}

/* The event's hlo_op (when op != NULL) and correlation id (when corr !=
 * NULL) in one walk over its stats, in xp_event_stat's order: the event's
 * own first match, then its metadata's. *has_op / *corr say what was found
 * (*corr stays CT_NONE when not). */
static void event_stats(const struct xp_plane *pl, const struct xp_line *ln,
                        const struct xp_event *ev, struct xp_stat *op, int *has_op, int64_t *corr)
{
    int64_t op_id = op != NULL ? pl->stat_id[XS_HLO_OP] : XP_NO_STAT;
    int64_t corr_id = corr != NULL ? pl->stat_id[XS_CORRELATION_ID] : XP_NO_STAT;
    int want_op = op_id != XP_NO_STAT, want_corr = corr_id != XP_NO_STAT;
    const struct xp_event_meta *m;
    struct xp_stat_iter it;
    struct xp_stat st;
    uint32_t i;

    *has_op = 0;
    if (!want_op && !want_corr)
        return;
    xp_stat_iter_init(&it, pl, ln, ev);
    while ((want_op || want_corr) && xp_stat_next(&it, &st) == 1) {
        if (want_op && st.meta_id == op_id) {
            *op = st;
            *has_op = 1;
            want_op = 0;
        }
        if (want_corr && st.meta_id == corr_id) {
            *corr = xp_stat_int(&st);
            want_corr = 0;
        }
    }
    m = xp_event_meta(pl, ev);
    for (i = 0; i < m->nstats && (want_op || want_corr); i++) {
        if (want_op && m->stats[i].meta_id == op_id) {
            *op = m->stats[i];
            *has_op = 1;
            want_op = 0;
        }
        if (want_corr && m->stats[i].meta_id == corr_id) {
            *corr = xp_stat_int(&m->stats[i]);
            want_corr = 0;
        }
    }
}

/* Kernels of an xspace's GPU streams in trace order. Without want_category
 * every kernel gets its name's category (the hlo_op is not looked at). */
static int visit_xspace(const struct xspace *xs, int host, int want_corr, int want_category,
                        kernel_fn fn, void *arg)
{
    struct line_ref *refs = NULL;
    struct meta_info *info = NULL;
    struct op_cache ops;
    size_t n = 0, cap = 0, i;
    uint32_t p, l;
    int rc = 0;

    memset(&ops, 0, sizeof(ops));
    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        if (strncmp(pl->name, "/device:GPU:", 12) != 0)
            continue;
        for (l = 0; l < pl->nlines; l++) {
            const struct xp_line *ln = &pl->lines[l];
            const char *lname = ln->display_name[0] ? ln->display_name : ln->name;
            if (ln->nevents == 0 || strncmp(lname, "Stream", 6) != 0)
                continue;
            if (n == cap) {
                struct line_ref *v;
                cap = cap ? cap * 2 : 64;
                v = realloc(refs, cap * sizeof(*v));
                if (v == NULL) {
                    free(refs);
                    return -ENOMEM;
                }
                refs = v;
            }
            refs[n].plane = pl;
            refs[n].line = ln;
            refs[n].pid = 1 + pl->id > 500 || 1 + pl->id < 1 ? 1 : 1 + pl->id;
            refs[n].tid = (uint32_t)(ln->display_id ? ln->display_id : ln->id);
            refs[n].seq = (uint32_t)n;
            n++;
        }
    }
    if (n > 0)
        xp_qsort(refs, n, sizeof(*refs), line_ref_cmp);
    for (i = 0; i < n && rc == 0; i++) {
        const struct xp_plane *pl = refs[i].plane;
        const struct xp_line *ln = refs[i].line;
        uint32_t *idx, k;
        if (i == 0 || pl != refs[i - 1].plane) {
            /* Per event metadata: kernel or not, the category its name
             * gives, the name (names repeat; matching them is not free). */
            free(info);
            info = malloc((pl->nemeta ? pl->nemeta : 1) * sizeof(*info));
            if (info == NULL) {
                rc = -ENOMEM;
                break;
            }
            for (k = 0; k < pl->nemeta; k++) {
                const struct xp_event_meta *m = &pl->emeta[k];
                const char *name = m->display_name[0] ? m->display_name : m->name;
                info[k].by_name = is_kernel_name(name) ? match_category(name) : NOT_KERNEL;
                info[k].name = name;
                info[k].name_len = strlen(name);
                info[k].name_plain = csv_plain(name, info[k].name_len);
            }
        }
        pthread_mutex_lock(&sort_lock);
        rc = line_order(ln, &idx);
        pthread_mutex_unlock(&sort_lock);
        if (rc != 0)
            break;
        for (k = 0; k < ln->nevents && rc == 0; k++) {
            const struct xp_event *ev = &ln->events[idx != NULL ? idx[k] : k];
            const struct meta_info *mi = &info[ev->meta];
            struct kernel x;
            struct xp_stat op;
            int has_op;
            if (mi->by_name == NOT_KERNEL)
                continue;
            x.name = mi->name;
            x.name_len = mi->name_len;
            x.name_plain = mi->name_plain;
            x.category = mi->by_name != NULL ? mi->by_name : UNCATEGORIZED;
            x.corr = CT_NONE;
            /* The hlo_op's category wins over the name's, but for FA. */
            event_stats(pl, ln, ev,
                        want_category &&
                                (mi->by_name == NULL || strncmp(mi->by_name, "FA ", 3) != 0)
                            ? &op
                            : NULL,
                        &has_op, want_corr ? &x.corr : NULL);
            if (has_op && (op.kind == XP_STAT_STR || op.kind == XP_STAT_REF)) {
                const char *by_op;
                rc = op_category(&ops, op.str, op.len, &by_op);
                if (rc != 0)
                    break;
                if (by_op != NULL)
                    x.category = by_op;
            }
            x.ts = (double)xp_event_start_ps(ln, ev) / 1e6;
            x.dur = (double)(ev->duration_ps > 0 ? ev->duration_ps : 1) / 1e6;
            x.pid = refs[i].pid;
            x.tid = refs[i].tid;
            x.host = host;
            rc = fn(arg, &x);
        }
        free(idx);
    }
    free(ops.slots);
    free(info);
    free(refs);
    return rc;
}

/* JAX Chrome trace: GPU stream events, ordered by (pid, tid, ts, longer
 * first, file order) through an index array. */
static const struct ctrace *sort_ct;

static int ct_order_cmp(const void *a, const void *b)
{
    const struct ctrace_event *x = &sort_ct->events[*(const uint32_t *)a];
    const struct ctrace_event *y = &sort_ct->events[*(const uint32_t *)b];

    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int visit_json(const struct ctrace *ct, int host, kernel_fn fn, void *arg)
{
    uint32_t *idx = malloc((ct->nevents ? ct->nevents : 1) * sizeof(*idx)), n = 0, i;
    int rc = 0;

    if (idx == NULL)
        return -ENOMEM;
    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        if (ev->ph == 'M' || !(ev->flags & CT_HAS_TS) || !(ev->flags & CT_HAS_DUR) ||
            (ev->flags & (CT_PID_STR | CT_TID_STR)))
            continue;
        if (strstr(ctrace_event_process_name(ct, ev), "/device:GPU") == NULL ||
            strncmp(ctrace_event_thread_name(ct, ev), "Stream", 6) != 0 ||
            !is_kernel_name(ctrace_str(ct, ev->name)))
            continue;
        idx[n++] = i;
    }
    pthread_mutex_lock(&sort_lock);
    sort_ct = ct;
    xp_qsort(idx, n, sizeof(*idx), ct_order_cmp);
    pthread_mutex_unlock(&sort_lock);
    for (i = 0; i < n && rc == 0; i++) {
        const struct ctrace_event *ev = &ct->events[idx[i]];
        struct kernel x;
        char hlo_op[512];
        cJSON *args = ctrace_event_args(ct, ev);
        cJSON *op = cJSON_GetObjectItemCaseSensitive(args, "hlo_op");
        hlo_op[0] = 0;
        if (cJSON_IsString(op)) {
            strncpy(hlo_op, op->valuestring, sizeof(hlo_op) - 1);
            hlo_op[sizeof(hlo_op) - 1] = 0;
        }
        cJSON_Delete(args);
        x.name = ctrace_str(ct, ev->name);
        x.name_len = strlen(x.name);
        x.name_plain = csv_plain(x.name, x.name_len);
        x.category = kernel_category(x.name, hlo_op);
        x.ts = ev->ts;
        x.dur = ev->dur;
        x.pid = ev->pid;
        x.tid = ev->tid;
        x.corr = ev->correlation;
        x.host = host;
        rc = fn(arg, &x);
    }
    free(idx);
    return rc;
}

/* Host events (pid 701) of a JAX Chrome trace with a correlation id. */
static int json_corrs(const struct ctrace *ct, struct launches *t)
{
    struct corr *v = NULL;
    size_t n = 0, cap = 0, i, w;

    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        if (ev->pid != 701 || (ev->flags & CT_PID_STR) || ev->correlation == CT_NONE)
            continue;
        if (n == cap) {
            struct corr *nv;
            cap = cap ? cap * 2 : 1024;
            nv = realloc(v, cap * sizeof(*nv));
            if (nv == NULL) {
                free(v);
                return -ENOMEM;
            }
            v = nv;
        }
        v[n].id = ev->correlation;
        v[n].ts = ev->ts;
        n++;
    }
    if (n > 0) {
        corr_sort(v, n);
        for (i = 0, w = 0; i < n; i++) {
            if (w > 0 && v[w - 1].id == v[i].id)
                continue;
            v[w++] = v[i];
        }
        n = w;
    }
    memset(t, 0, sizeof(*t));
    t->sorted = v;
    t->n = n;
    return 0;
}

/* Per-host state handed to the callbacks. */
struct visit_ctx {
    kernel_fn fn;             /* the caller's callback */
    void *arg;                /* its argument */
    struct launches launches; /* this host's launches, when asked */
    uint64_t count;           /* kernels seen */
    int want_category;        /* 0: k->category may be the name's alone (xplane) */
};

/* Visit the kernels of every covered JAX host in trace order. With want_corr,
 * k->corr is set and launch_ts() answers the launch time. */
static int visit(struct tool_ctx *ctx, int want_corr, struct visit_ctx *vc)
{
    int i, n = tool_host_count(ctx), rc = 0;

    for (i = 0; i < n && rc == 0; i++) {
        const char *host = tool_host(ctx, i);
        memset(&vc->launches, 0, sizeof(vc->launches));
        if (snapshot_host_file(ctx->snap, host, SRC_XPLANE) != NULL) {
            struct xspace *xs;
            rc = snapshot_xspace_decoded(ctx->snap, host, &xs, ctx->err);
            if (rc != 0)
                return rc;
            if (want_corr)
                rc = xspace_corrs(xs, &vc->launches);
            if (rc == 0)
                rc = visit_xspace(xs, i, want_corr, vc->want_category, vc->fn, vc);
        } else if (snapshot_host_file(ctx->snap, host, SRC_TRACE_JSON) != NULL &&
                   snapshot_host_file(ctx->snap, host, SRC_PT_TRACE) == NULL) {
            const struct ctrace *ct;
            rc = ctrace_snapshot(ctx->snap, host, &ct, ctx->err);
            if (rc != 0)
                return rc;
            if (want_corr)
                rc = json_corrs(ct, &vc->launches);
            if (rc == 0)
                rc = visit_json(ct, i, vc->fn, vc);
        }
        launches_free(&vc->launches);
        if (rc == -ENOMEM)
            return xp_err_set(ctx->err, rc, "out of memory");
    }
    if (rc == 0 && vc->count == 0)
        return xp_err_set(ctx->err, -ENOENT, "no GPU kernels found (JAX/XLA profiles only)");
    return rc;
}

static void put_num(struct out *o, double v)
{
    char buf[48];

    if (isnan(v))
        return;
    out_write(o, buf, gt_pyrepr(v, buf, sizeof(buf)));
}

/* ---- kernel_launchers.csv ----------------------------------------------------- */

struct csv_ctx {
    struct visit_ctx vc; /* first: the callbacks get a struct visit_ctx * */
    struct tool_ctx *ctx;
    struct out *o;
    int multi;
};

/* One row: the name as a field, then the rest of the line composed in a
 * buffer and written at once. */
static int write_row(void *arg, const struct kernel *k)
{
    struct csv_ctx *c = arg;
    struct out *o = c->o;
    char line[192];
    size_t len = 0, clen = strlen(k->category);
    double latency = NAN;

    c->vc.count++;
    if (k->corr != CT_NONE)
        latency = k->ts - launch_ts(&c->vc.launches, k->corr);
    if (k->name_plain)
        out_write(o, k->name, k->name_len);
    else
        out_csv_str(o, k->name, k->name_len);
    line[len++] = ',';
    memcpy(line + len, k->category, clen); /* categories are plain fields */
    len += clen;
    line[len++] = ',';
    len += gt_pyrepr(k->dur, line + len, 48);
    memcpy(line + len, ",1,", 3);
    len += 3;
    len += out_format_i64(line + len, k->pid);
    line[len++] = ',';
    len += out_format_i64(line + len, k->tid);
    line[len++] = ',';
    if (!isnan(latency))
        len += gt_pyrepr(latency, line + len, 48);
    if (c->multi) {
        const char *h = tool_host(c->ctx, k->host);
        out_write(o, line, len);
        out_putc(o, ',');
        out_csv_str(o, h, strlen(h));
        len = 0;
    }
    line[len++] = '\n';
    out_write(o, line, len);
    return 0;
}

static int launchers_csv(struct tool_ctx *ctx, struct out *o)
{
    struct csv_ctx c;

    memset(&c, 0, sizeof(c));
    c.vc.fn = write_row;
    c.vc.want_category = 1;
    c.ctx = ctx;
    c.o = o;
    c.multi = tool_host_count(ctx) > 1;
    out_puts(o, "name,op category,total_direct_kernel_time,direct_kernel_count,pid,tid,"
                "GPU_kernel_launch_latency");
    out_puts(o, c.multi ? ",host\n" : "\n");
    return visit(ctx, 1, &c.vc);
}
struct group {
    const char *key; /* name or category */
    double sum;      /* Kahan sum of durations, µs */
    double comp;     /* Kahan compensation */
    uint64_t count;  /* kernels */
    double ms;       /* sum / 1000 */
};

/* Groups keyed by name or category, with pandas' Kahan group sums. */
/* What a summary groups by. */
enum group_by {
    BY_NAME,     /* kernel_launchers_summary.csv */
    BY_CATEGORY, /* kernel_launchers_summary_by_category.csv */
    BY_XLA_NAME, /* xla_summary.csv: XLA kernels, by name without its digits */
};

struct group_ctx {
    struct visit_ctx vc; /* first: the callbacks get a struct visit_ctx * */
    enum group_by by;
    char **stripped; /* BY_XLA_NAME: the digit-less names (group keys) */
    size_t nstripped, stripped_cap;
    struct group *groups;
    size_t ngroups, cap;
    uint32_t *slots; /* hash slots: group index + 1, 0 = empty */
    size_t nslots;
    /* In front of the slots: key pointer -> group index + 1 (a metadata
     * hands over the same name pointer for all its kernels). */
    const char **ptr_keys;
    uint32_t *ptr_groups;
    size_t nptr_slots, nptrs;
    int64_t pids[512]; /* distinct pids seen (xplane gpu pids are at most 500) */
    size_t npids;
};

static uint64_t key_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int group_slots_grow(struct group_ctx *g)
{
    size_t nslots = g->nslots ? g->nslots * 2 : 256, i;
    uint32_t *slots = calloc(nslots, sizeof(*slots));

    if (slots == NULL)
        return -ENOMEM;
    for (i = 0; i < g->ngroups; i++) {
        size_t s = key_hash(g->groups[i].key) & (nslots - 1);
        while (slots[s] != 0)
            s = (s + 1) & (nslots - 1);
        slots[s] = (uint32_t)(i + 1);
    }
    free(g->slots);
    g->slots = slots;
    g->nslots = nslots;
    return 0;
}

static size_t ptr_hash(const char *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32);
}

static int ptr_slots_grow(struct group_ctx *g)
{
    size_t nslots = g->nptr_slots ? g->nptr_slots * 2 : 256, i;
    const char **keys = calloc(nslots, sizeof(*keys));
    uint32_t *groups = calloc(nslots, sizeof(*groups));

    if (keys == NULL || groups == NULL) {
        free(keys);
        free(groups);
        return -ENOMEM;
    }
    for (i = 0; i < g->nptr_slots; i++) {
        size_t s;
        if (g->ptr_groups[i] == 0)
            continue;
        s = ptr_hash(g->ptr_keys[i]) & (nslots - 1);
        while (groups[s] != 0)
            s = (s + 1) & (nslots - 1);
        keys[s] = g->ptr_keys[i];
        groups[s] = g->ptr_groups[i];
    }
    free(g->ptr_keys);
    free(g->ptr_groups);
    g->ptr_keys = keys;
    g->ptr_groups = groups;
    g->nptr_slots = nslots;
    return 0;
}

/* The group of key by the string: index + 1, 0 when out of memory. */
static uint32_t group_by_text(struct group_ctx *g, const char *key)
{
    size_t s;

    if ((g->ngroups + 1) * 2 > g->nslots && group_slots_grow(g) != 0)
        return 0;
    s = key_hash(key) & (g->nslots - 1);
    while (g->slots[s] != 0 && strcmp(g->groups[g->slots[s] - 1].key, key) != 0)
        s = (s + 1) & (g->nslots - 1);
    if (g->slots[s] == 0) {
        if (g->ngroups == g->cap) {
            size_t cap = g->cap ? g->cap * 2 : 64;
            struct group *v = realloc(g->groups, cap * sizeof(*v));
            if (v == NULL)
                return 0;
            g->groups = v;
            g->cap = cap;
        }
        memset(&g->groups[g->ngroups], 0, sizeof(*g->groups));
        g->groups[g->ngroups].key = key;
        g->slots[s] = (uint32_t)(++g->ngroups);
    }
    return g->slots[s];
}

/* TraceLens's xla_summary key: the name with every digit removed
 * (loop_slice_fusion_202 -> loop_slice_fusion_), kept in g->stripped. */
static const char *strip_digits(struct group_ctx *g, const char *name)
{
    size_t n = strlen(name), i, j = 0;
    char *key;

    if (g->nstripped == g->stripped_cap) {
        size_t cap = g->stripped_cap ? g->stripped_cap * 2 : 64;
        char **v = realloc(g->stripped, cap * sizeof(*v));
        if (v == NULL)
            return NULL;
        g->stripped = v;
        g->stripped_cap = cap;
    }
    key = malloc(n + 1);
    if (key == NULL)
        return NULL;
    for (i = 0; i < n; i++) {
        if (name[i] < '0' || name[i] > '9')
            key[j++] = name[i];
    }
    key[j] = '\0';
    g->stripped[g->nstripped++] = key;
    return key;
}

static int add_to_group(void *arg, const struct kernel *k)
{
    struct group_ctx *g = arg;
    const char *key = g->by == BY_CATEGORY ? k->category : k->name;
    struct group *gr;
    size_t s, i;
    double y, t;

    g->vc.count++;
    if (g->by == BY_XLA_NAME && strcmp(k->category, "Uncategorized Events/XLA") != 0)
        return 0;
    for (i = 0; i < g->npids && g->pids[i] != k->pid; i++)
        ;
    if (i == g->npids && g->npids < sizeof(g->pids) / sizeof(g->pids[0]))
        g->pids[g->npids++] = k->pid;
    if ((g->nptrs + 1) * 2 > g->nptr_slots && ptr_slots_grow(g) != 0)
        return -ENOMEM;
    s = ptr_hash(key) & (g->nptr_slots - 1);
    while (g->ptr_groups[s] != 0 && g->ptr_keys[s] != key)
        s = (s + 1) & (g->nptr_slots - 1);
    if (g->ptr_groups[s] == 0) {
        const char *text = g->by == BY_XLA_NAME ? strip_digits(g, key) : key;
        uint32_t group = text != NULL ? group_by_text(g, text) : 0;
        if (group == 0)
            return -ENOMEM;
        g->ptr_keys[s] = key;
        g->ptr_groups[s] = group;
        g->nptrs++;
    }
    gr = &g->groups[g->ptr_groups[s] - 1];
    y = k->dur - gr->comp;
    t = gr->sum + y;
    gr->comp = t - gr->sum - y;
    gr->sum = t;
    gr->count++;
    return 0;
}

static int group_key_cmp(const void *a, const void *b)
{
    return strcmp(((const struct group *)a)->key, ((const struct group *)b)->key);
}

/* Reorder g's groups as pandas' sort_values(ascending=False) by sum does
 * (tmp: room for ngroups doubles). Returns 0 or -ENOMEM. */
static int sort_groups_desc(struct group_ctx *g, double *tmp)
{
    size_t *order = malloc((g->ngroups + 1) * sizeof(*order));
    struct group *sorted = malloc((g->ngroups + 1) * sizeof(*sorted));
    size_t i;
    int rc;

    if (order == NULL || sorted == NULL) {
        free(order);
        free(sorted);
        return -ENOMEM;
    }
    for (i = 0; i < g->ngroups; i++)
        tmp[i] = g->groups[i].sum;
    rc = np_order_desc(tmp, g->ngroups, order);
    if (rc == 0) {
        for (i = 0; i < g->ngroups; i++)
            sorted[i] = g->groups[order[i]];
        if (g->ngroups > 0)
            memcpy(g->groups, sorted, g->ngroups * sizeof(*sorted));
    }
    free(order);
    free(sorted);
    return rc;
}

static void group_ctx_free(struct group_ctx *g)
{
    size_t i;

    for (i = 0; i < g->nstripped; i++)
        free(g->stripped[i]);
    free(g->stripped);
    free(g->groups);
    free(g->slots);
    free(g->ptr_keys);
    free(g->ptr_groups);
}

static int summary(struct tool_ctx *ctx, struct out *o, enum group_by by)
{
    struct group_ctx g;
    double *ms = NULL, total, cum = 0;
    size_t i;
    int rc, by_category = by == BY_CATEGORY;

    memset(&g, 0, sizeof(g));
    g.vc.fn = add_to_group;
    g.vc.want_category = by != BY_NAME;
    g.by = by;
    rc = visit(ctx, 0, &g.vc);
    if (rc == 0 && (ms = malloc((g.ngroups + 1) * sizeof(*ms))) == NULL)
        rc = xp_err_set(ctx->err, -ENOMEM, "out of memory");
    if (rc != 0) {
        group_ctx_free(&g);
        return rc;
    }
    /* groupby sorts by key; then sort_values(ascending=False), with
     * numpy's order of ties. */
    xp_qsort(g.groups, g.ngroups, sizeof(*g.groups), group_key_cmp);
    rc = sort_groups_desc(&g, ms);
    if (rc != 0) {
        free(ms);
        group_ctx_free(&g);
        return xp_err_set(ctx->err, rc, "out of memory");
    }
    for (i = 0; i < g.ngroups; i++)
        ms[i] = g.groups[i].ms = g.groups[i].sum / 1000;
    total = np_sum(ms, g.ngroups);
    if (by_category)
        out_puts(o, "op category,Count,total_direct_kernel_time_ms,Percentage (%),"
                    "Cumulative Percentage (%),time ms per gpu\n");
    else
        out_puts(o, "name,total_direct_kernel_time_sum,Count,total_direct_kernel_time_ms,"
                    "Percentage (%),Cumulative Percentage (%),time ms per gpu\n");
    for (i = 0; i < g.ngroups; i++) {
        const struct group *gr = &g.groups[i];
        double pct = gr->ms / total * 100;
        cum = i == 0 ? pct : cum + pct;
        out_csv_str(o, gr->key, strlen(gr->key));
        out_putc(o, ',');
        if (!by_category) {
            put_num(o, gr->sum);
            out_putc(o, ',');
        }
        out_u64(o, gr->count);
        out_putc(o, ',');
        put_num(o, gr->ms);
        out_putc(o, ',');
        put_num(o, pct);
        out_putc(o, ',');
        put_num(o, cum);
        out_putc(o, ',');
        put_num(o, gr->ms / (double)g.npids);
        out_putc(o, '\n');
    }
    free(ms);
    group_ctx_free(&g);
    return 0;
}

static int summary_csv(struct tool_ctx *ctx, struct out *o)
{
    return summary(ctx, o, BY_NAME);
}

static int summary_by_category_csv(struct tool_ctx *ctx, struct out *o)
{
    return summary(ctx, o, BY_CATEGORY);
}

static int xla_summary_csv(struct tool_ctx *ctx, struct out *o)
{
    return summary(ctx, o, BY_XLA_NAME);
}

/* Listed for runs with xplane or JAX trace JSON hosts. */
static int listed_jax(const struct snapshot *snap)
{
    return snapshot_count(snap, SRC_XPLANE) > 0 || snapshot_count(snap, SRC_TRACE_JSON) > 0;
}

/* ---- PyTorch runs: TraceLens's CPU-op launchers (pt_launchers.c) ----------- */

static int launchers_csv_any(struct tool_ctx *ctx, struct out *o)
{
    return pt_launchers_serves(ctx) ? pt_kernel_launchers_csv(ctx, o) : launchers_csv(ctx, o);
}

static int summary_csv_any(struct tool_ctx *ctx, struct out *o)
{
    return pt_launchers_serves(ctx) ? pt_kernel_launchers_summary_csv(ctx, o) : summary_csv(ctx, o);
}

static int summary_by_category_csv_any(struct tool_ctx *ctx, struct out *o)
{
    return pt_launchers_serves(ctx) ? pt_kernel_launchers_by_category_csv(ctx, o)
                                    : summary_by_category_csv(ctx, o);
}

static int listed_any(const struct snapshot *snap)
{
    return listed_jax(snap) || snapshot_count(snap, SRC_PT_TRACE) > 0;
}

const struct tool tool_kernel_launchers_csv = {
    .file = "kernel_launchers.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_any,
    .produce = launchers_csv_any,
};

const struct tool tool_kernel_launchers_summary_csv = {
    .file = "kernel_launchers_summary.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_any,
    .produce = summary_csv_any,
};

const struct tool tool_kernel_launchers_summary_by_category_csv = {
    .file = "kernel_launchers_summary_by_category.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_any,
    .produce = summary_by_category_csv_any,
};

/* TraceLens's JAX report (generate_perf_report_jax.py) also writes xla_summary:
 * the kernels of category "Uncategorized Events/XLA", grouped by name with its
 * digits removed, summarised as kernel_launchers_summary. */
const struct tool tool_xla_summary_csv = {
    .file = "xla_summary.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_jax,
    .produce = xla_summary_csv,
};
