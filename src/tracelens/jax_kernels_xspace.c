/*
 * jax_kernels_xspace.c - the GPU kernels of an xspace in TraceLens's trace
 * order (jax_launchers_int.h): the "Stream" lines of the /device:GPU planes
 * by (pid, tid), then each line's events by start, longer first. Per kernel:
 * its name and category (the hlo_op's, through a cache of op texts, wins
 * over the name's but for flash attention) and, when asked, its correlation
 * id, read in one walk over the event's stats.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "jax_launchers_int.h"
#include "base/sort.h"

/* Marks event metadata that is not a kernel (memcpy, memset). */
static const char not_kernel[] = "not a kernel";
#define NOT_KERNEL not_kernel

/* A GPU stream line in trace order: (pid, tid), then file order. */
struct line_ref {
    const struct xp_plane *plane;
    const struct xp_line *line;
    int64_t pid;
    int64_t tid;
    uint32_t seq;
};

/* (pid, tid, file order) of two lines. */
static int line_ref_cmp(const void *a, const void *b)
{
    const struct line_ref *x = a, *y = b;

    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* (start, longer first, file order) of two events of the line ctx. */
static int event_order_cmp(const void *a, const void *b, void *ctx)
{
    const struct xp_line *ln = ctx;
    const struct xp_event *x = &ln->events[*(const uint32_t *)a];
    const struct xp_event *y = &ln->events[*(const uint32_t *)b];

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
    xp_qsort_r(idx, ln->nevents, sizeof(*idx), event_order_cmp, (void *)ln);
    *idxp = idx;
    return 0;
}

/* What the event metadata of a plane give every kernel: the category of the
 * name (NOT_KERNEL for memcpy / memset, NULL for none) and the name. */
struct meta_info {
    const char *by_name;
    const char *name;
    size_t name_len;
    int name_plain;
};

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

/* Kernels of an xspace's GPU streams in trace order. Without
 * v->want_category every kernel gets its name's category (the hlo_op is not
 * looked at). */
int jax_visit_xspace(const struct xspace *xs, int host, struct jax_visit_state *v)
{
    struct line_ref *refs = NULL;
    struct meta_info *info = NULL;
    struct jax_op_cache ops;
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
                struct line_ref *grown;
                cap = cap ? cap * 2 : 64;
                grown = realloc(refs, cap * sizeof(*grown));
                if (grown == NULL) {
                    free(refs);
                    return -ENOMEM;
                }
                refs = grown;
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
                info[k].by_name = jax_is_kernel_name(name) ? jax_match_category(name) : NOT_KERNEL;
                info[k].name = name;
                info[k].name_len = strlen(name);
                info[k].name_plain = jax_csv_plain(name, info[k].name_len);
            }
        }
        rc = line_order(ln, &idx);
        if (rc != 0)
            break;
        for (k = 0; k < ln->nevents && rc == 0; k++) {
            const struct xp_event *ev = &ln->events[idx != NULL ? idx[k] : k];
            const struct meta_info *mi = &info[ev->meta];
            struct jax_kernel x;
            struct xp_stat op;
            int has_op;
            if (mi->by_name == NOT_KERNEL)
                continue;
            x.name = mi->name;
            x.name_len = mi->name_len;
            x.name_plain = mi->name_plain;
            x.category = mi->by_name != NULL ? mi->by_name : JAX_UNCATEGORIZED;
            x.corr = CT_NONE;
            /* The hlo_op's category wins over the name's, but for FA. */
            event_stats(pl, ln, ev,
                        v->want_category &&
                                (mi->by_name == NULL || strncmp(mi->by_name, "FA ", 3) != 0)
                            ? &op
                            : NULL,
                        &has_op, v->want_latency ? &x.corr : NULL);
            if (has_op && (op.kind == XP_STAT_STR || op.kind == XP_STAT_REF)) {
                const char *by_op;
                rc = jax_op_category(&ops, op.str, op.len, &by_op);
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
            rc = jax_emit(v, &x);
        }
        free(idx);
    }
    jax_op_cache_free(&ops);
    free(info);
    free(refs);
    return rc;
}
