/*
 * pt_launchers.c - TraceLens's kernel launchers of a PyTorch trace (see
 * pt_launchers.h), built once per snapshot and host: the call tree
 * (pt_tree.h), one pass over the linked GPU events to find each one's
 * launcher, counting sorts to group kernels by launcher and by every
 * launcher above them, busy times, the launcher start order, and the
 * cross-stream overlaps (pt_overlaps.c).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_timeline.h"
#include "pt_launchers.h"
#include "pt_launchers_int.h"
#include "pt_pyrepr.h"
#include "pt_tree.h"
#include "base/sort.h"

static void host_launchers_free(void *p)
{
    struct pt_host *h = p;

    if (h == NULL)
        return;
    free(h->v);
    free(h->kernels);
    free(h->ov);
    free(h);
}

/* ---- grouping ---------------------------------------------------------------- */

struct pair {
    uint32_t slot;  /* launcher slot */
    uint32_t event; /* GPU event */
};

/* Append to a growing pair array. */
static int pair_push(struct pair **v, size_t *n, size_t *cap, uint32_t slot, uint32_t event)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 1024;
        struct pair *nv = realloc(*v, c * sizeof(*nv));
        if (nv == NULL)
            return -ENOMEM;
        *v = nv;
        *cap = c;
    }
    (*v)[*n].slot = slot;
    (*v)[*n].event = event;
    (*n)++;
    return 0;
}

/* Counting sort of pairs by slot (stable): events into out, offsets into
 * first[0..nslots] (first[nslots] = n). */
static int group_pairs(const struct pair *v, size_t n, uint32_t nslots, uint32_t *out,
                       uint32_t *first)
{
    uint32_t *pos = calloc((size_t)nslots + 1, sizeof(*pos));
    size_t i;

    if (pos == NULL)
        return -ENOMEM;
    for (i = 0; i < n; i++)
        pos[v[i].slot + 1]++;
    for (i = 0; i < nslots; i++)
        pos[i + 1] += pos[i];
    memcpy(first, pos, ((size_t)nslots + 1) * sizeof(*first));
    for (i = 0; i < n; i++)
        out[pos[v[i].slot]++] = v[i].event;
    free(pos);
    return 0;
}

/* An interval of a GPU event with the Python types of its ends. */
struct span {
    double start, end;
    uint32_t order;    /* position in the event list (sorted() is stable) */
    uint8_t start_int; /* ts was a JSON integer */
    uint8_t end_int;   /* ts + dur is an int: both were */
};

static int span_cmp(const void *a, const void *b)
{
    const struct span *x = a, *y = b;

    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Busy time of the GPU events ev[0..n) as GPUEventAnalyser computes it
 * (merge_intervals, then the sum of lengths), and in *is_int whether Python
 * gets an int: every merged end kept is an int. */
static double busy_time(const struct ctrace *ct, const uint32_t *ev, uint32_t n, struct span *tmp,
                        int *is_int)
{
    uint32_t i, m = 0;
    double sum = 0;

    for (i = 0; i < n; i++) {
        const struct ctrace_event *e = &ct->events[ev[i]];
        tmp[i].start = e->ts;
        tmp[i].end = e->ts + e->dur;
        tmp[i].order = i;
        tmp[i].start_int = (e->flags & CT_TS_INT) != 0;
        tmp[i].end_int = (e->flags & CT_TS_INT) && (e->flags & CT_DUR_INT);
    }
    xp_qsort(tmp, n, sizeof(*tmp), span_cmp);
    for (i = 0; i < n; i++) {
        if (m > 0 && tmp[i].start <= tmp[m - 1].end) {
            if (tmp[i].end > tmp[m - 1].end) { /* max() keeps the first of equals */
                tmp[m - 1].end = tmp[i].end;
                tmp[m - 1].end_int = tmp[i].end_int;
            }
            continue;
        }
        tmp[m++] = tmp[i];
    }
    *is_int = 1;
    for (i = 0; i < m; i++) {
        sum += tmp[i].end - tmp[i].start;
        if (!tmp[i].start_int || !tmp[i].end_int)
            *is_int = 0;
    }
    return sum;
}

/* ---- building ---------------------------------------------------------------- */

/* Two launchers by their events' start (ctx: the trace), then their order
 * of discovery. */
static int launcher_cmp(const void *a, const void *b, void *ctx)
{
    const struct ctrace *ct = ctx;
    const struct pt_launcher *x = a, *y = b;
    const struct ctrace_event *ex = &ct->events[x->uid], *ey = &ct->events[y->uid];
    double tx = (ex->flags & CT_HAS_TS) ? ex->ts : 0, ty = (ey->flags & CT_HAS_TS) ? ey->ts : 0;

    if (tx != ty)
        return tx < ty ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The launcher of linked GPU event g: the nearest cpu_op above its runtime
 * launch (passing python_function and "execute"), else the launch. */
static uint32_t launcher_of(const struct ctrace *ct, const struct pt_tree *t, uint32_t g,
                            uint32_t execute)
{
    uint32_t runtime = t->parent[g], cur = t->parent[runtime];

    while (cur != PT_NONE) {
        if (t->kind[cur] == PT_CPU_OP) {
            if (execute != 0 && ct->events[cur].name == execute) {
                cur = t->parent[cur];
                continue;
            }
            return cur;
        }
        if (t->kind[cur] != PT_PYTHON)
            break;
        cur = t->parent[cur];
    }
    return runtime;
}

static int build(const struct ctrace *ct, struct pt_host *h)
{
    struct pt_tree t;
    uint32_t *slot = NULL, *gpu = NULL, *sub = NULL, *sub_first = NULL, *first = NULL;
    uint8_t *comm = NULL; /* per name id: 0 unknown, 1 communication, 2 not */
    struct pair *direct = NULL, *subtree = NULL;
    size_t ndirect = 0, capd = 0, nsub = 0, caps = 0;
    struct span *tmp = NULL;
    uint32_t execute = ctrace_str_find(ct, "execute"), ngpu = 0, nl = 0, i, maxk = 1;
    int rc;

    memset(h, 0, sizeof(*h));
    h->ct = ct;
    rc = pt_tree_build(ct, 0, &t);
    if (rc != 0)
        return rc;
    rc = -ENOMEM;
    slot = malloc(((size_t)ct->nevents + 1) * sizeof(*slot));
    gpu = malloc(((size_t)ct->nevents + 1) * sizeof(*gpu));
    comm = calloc((size_t)ctrace_str_count(ct) + 1, 1);
    if (slot == NULL || gpu == NULL || comm == NULL)
        goto out;
    memset(slot, 0xff, ((size_t)ct->nevents + 1) * sizeof(*slot));
    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        uint32_t l;
        if (t.kind[i] != PT_GPU || t.parent[i] == PT_NONE)
            continue;
        gpu[ngpu++] = i;
        if (comm[ev->name] == 0)
            comm[ev->name] = gt_is_communication(ctrace_str(ct, ev->name)) ? 1 : 2;
        if (comm[ev->name] == 1)
            continue;
        l = launcher_of(ct, &t, i, execute);
        if (slot[l] == PT_NONE) {
            if (nl % 1024 == 0) {
                struct pt_launcher *nv = realloc(h->v, ((size_t)nl + 1024) * sizeof(*nv));
                if (nv == NULL)
                    goto out;
                h->v = nv;
            }
            memset(&h->v[nl], 0, sizeof(h->v[nl]));
            h->v[nl].uid = l;
            h->v[nl].seq = nl;
            slot[l] = nl++;
        }
        if (pair_push(&direct, &ndirect, &capd, slot[l], i) != 0)
            goto out;
    }
    h->n = nl;
    /* Every linked GPU event counts in the subtree of each launcher above it. */
    for (i = 0; i < ngpu; i++) {
        uint32_t a = t.parent[gpu[i]];
        for (; a != PT_NONE; a = t.parent[a]) {
            if (slot[a] != PT_NONE && pair_push(&subtree, &nsub, &caps, slot[a], gpu[i]) != 0)
                goto out;
        }
    }
    h->kernels = malloc((ndirect + 1) * sizeof(*h->kernels));
    first = malloc(((size_t)nl + 1) * sizeof(*first));
    sub = malloc((nsub + 1) * sizeof(*sub));
    sub_first = malloc(((size_t)nl + 1) * sizeof(*sub_first));
    if (h->kernels == NULL || first == NULL || sub == NULL || sub_first == NULL)
        goto out;
    if (group_pairs(direct, ndirect, nl, h->kernels, first) != 0 ||
        group_pairs(subtree, nsub, nl, sub, sub_first) != 0)
        goto out;
    for (i = 0; i < nl; i++) {
        if (first[i + 1] - first[i] > maxk)
            maxk = first[i + 1] - first[i];
        if (sub_first[i + 1] - sub_first[i] > maxk)
            maxk = sub_first[i + 1] - sub_first[i];
    }
    tmp = malloc((size_t)maxk * sizeof(*tmp));
    if (tmp == NULL)
        goto out;
    for (i = 0; i < nl; i++) {
        struct pt_launcher *l = &h->v[i];
        uint32_t k, best;
        l->first = first[i];
        l->nkernels = first[i + 1] - first[i];
        best = h->kernels[l->first];
        for (k = 1; k < l->nkernels; k++) {
            uint32_t e = h->kernels[l->first + k];
            if (ct->events[e].ts < ct->events[best].ts)
                best = e;
        }
        l->first_kernel = best;
        l->direct_us = busy_time(ct, h->kernels + l->first, l->nkernels, tmp, &l->direct_int);
        l->subtree_us = busy_time(ct, sub + sub_first[i], sub_first[i + 1] - sub_first[i], tmp,
                                  &l->subtree_int);
        l->category = pt_op_category(ctrace_str(ct, ct->events[l->uid].name),
                                     ctrace_str(ct, ct->events[best].name));
    }
    xp_qsort_r(h->v, nl, sizeof(*h->v), launcher_cmp, (void *)ct);
    rc = pt_find_overlaps(ct, gpu, ngpu, &h->ov, &h->nov);
out:
    pt_tree_free(&t);
    free(slot);
    free(gpu);
    free(comm);
    free(direct);
    free(subtree);
    free(sub);
    free(sub_first);
    free(first);
    free(tmp);
    return rc;
}

static int build_host(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    const char *host = arg;
    const struct ctrace *ct;
    struct pt_host *h;
    int rc = snapshot_ctrace(snap, host, &ct, err);

    if (rc != 0)
        return rc;
    h = calloc(1, sizeof(*h));
    if (h == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    rc = build(ct, h);
    if (rc != 0) {
        host_launchers_free(h);
        return xp_err_set(err, rc, "out of memory");
    }
    *value = h;
    return 0;
}

static const struct snapshot_part pt_launchers_part = {"pt_launchers", build_host,
                                                       host_launchers_free};

static int host_launchers(struct snapshot *snap, const char *host, const struct pt_host **hp,
                          struct xp_err *err)
{
    void *v;
    int rc;

    rc = snapshot_part(snap, &pt_launchers_part, host, NULL, host, &v, err);
    *hp = rc == 0 ? v : NULL;
    return rc;
}

int pt_launchers_serves(const struct host_list *hl)
{
    return hl->n > 0 && snapshot_host_file(hl->snap, hl->names[0], SRC_PT_TRACE) != NULL;
}

int pt_all_hosts(const struct host_list *hl, const struct pt_host **hs, int *nhosts,
                 struct xp_err *err)
{
    int i, n = hl->n, rc;
    uint32_t total = 0;

    for (i = 0; i < n; i++) {
        hs[i] = NULL;
        if (snapshot_host_file(hl->snap, hl->names[i], SRC_PT_TRACE) == NULL)
            continue;
        rc = host_launchers(hl->snap, hl->names[i], &hs[i], err);
        if (rc != 0)
            return rc;
        total += hs[i]->n;
    }
    *nhosts = n;
    if (total == 0)
        return xp_err_set(err, -ENOENT, "no GPU kernel is launched in this trace");
    return 0;
}

/* ---- cells the two writers share ---------------------------------------------- */

void pt_put_float(struct out *o, double v)
{
    char buf[48];

    if (isnan(v))
        return;
    pt_float_repr(v, buf, sizeof(buf));
    out_puts(o, buf);
}

void pt_put_time(struct out *o, double v, int as_int)
{
    if (as_int)
        out_printf(o, "%.0f", v);
    else
        pt_put_float(o, v);
}

void pt_int_columns(const struct pt_host *const *hs, int n, int *direct, int *subtree)
{
    int h;
    uint32_t k;

    *direct = *subtree = 1;
    for (h = 0; h < n; h++) {
        for (k = 0; hs[h] != NULL && k < hs[h]->n; k++) {
            *direct &= hs[h]->v[k].direct_int;
            *subtree &= hs[h]->v[k].subtree_int;
        }
    }
}

void pt_put_buf(struct out *o, struct pt_buf *b)
{
    out_csv_str(o, b->p != NULL ? b->p : "", b->n);
    b->n = 0;
}
