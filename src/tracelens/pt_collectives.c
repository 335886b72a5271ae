/*
 * pt_collectives.c - collectives.csv of a multi-rank PyTorch run: TraceLens's
 * NcclAnalyser(...).build_df_nccl_implicit_sync_cat(detailed=True), one row
 * per collective call matched across ranks (rank r = the run's r-th host in
 * hosts.json order, as TraceLens numbers its list of files).
 *
 * Collective kernels: cat "kernel", a name matching nccl / rccl /
 * cross_device_reduce (case-insensitive), a correlation or External id arg.
 * Calls match across ranks by (Process Group Name, order of start on the
 * rank); a trace without process-group names and one stream per rank
 * matches by order alone (TraceLens's simplified mode, group "all").
 * Kept: allreduce, reducescatter, allgather and alltoall calls (by
 * TraceLens's table of collective names). Per call: comm_latency = the
 * shortest rank's duration, each rank's wait = latest start - its start,
 * skew in start / end time, the earliest arrival rank, the mean wait,
 * Full msg size (MB) (Out for allgather, else In; nelems x dtype bytes /
 * 2^20), algo bw (GB/s) = (MB / 1024) / (comm_latency / 1e6) and bus bw =
 * algo bw x 2(n-1)/n for allreduce, (n-1)/n for the others. Cells are
 * printed as pandas prints the DataFrame: ints stay ints unless the column
 * has gaps or floats, NaN and None are empty.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_timeline.h"
#include "gt_int.h"
#include "pt_collectives.h"
#include "pt_pyrepr.h"
#include "reader/ctrace.h"
#include "base/np_arith.h"

/* A Python value of a DataFrame cell. */
enum pv_kind { PV_NONE, PV_INT, PV_FLOAT, PV_TEXT };

struct pv {
    enum pv_kind kind;
    double num;       /* PV_INT, PV_FLOAT */
    const char *text; /* PV_TEXT: the cell's text (owned by the row) */
};

/* The metadata of one collective kernel on one rank. */
enum {
    M_PG_NAME,
    M_PG_RANKS,
    M_COLL_NAME,
    M_GROUP_SIZE,
    M_DTYPE,
    M_IN_NELEMS,
    M_OUT_NELEMS,
    M_IN_MB,
    M_OUT_MB,
    NMETA
};

static const char *const meta_names[NMETA] = {
    "Process Group Name", "Process Group Ranks", "Collective name",  "Group size",       "dtype",
    "In msg nelems",      "Out msg nelems",      "In msg size (MB)", "Out msg size (MB)"};

struct coll {
    int rank;
    uint32_t seq; /* file order on its rank */
    double ts, dur;
    int ts_int, dur_int;
    struct pv meta[NMETA];
    char *texts[NMETA]; /* owned texts of meta */
    const char *stream; /* args.stream text, or NULL */
    size_t stream_len;
    struct pv extra[3];   /* In split size, Out split size, stream (the long table) */
    char *extra_texts[3]; /* owned texts of extra */
    uint32_t idx;         /* index_in_group */
    char *cid;            /* collective_id */
};

/* TraceLens's dtype2bytes. */
static int dtype_bytes(const char *s)
{
    static const struct {
        const char *name;
        int bytes;
    } t[] = {{"Float", 4}, {"Int", 4},    {"Long", 8}, {"BFloat16", 2}, {"Bool", 1},
             {"Byte", 1},  {"Double", 8}, {"Half", 2}, {"Short", 2}};
    size_t i;

    for (i = 0; s != NULL && i < sizeof(t) / sizeof(t[0]); i++) {
        if (strcmp(s, t[i].name) == 0)
            return t[i].bytes;
    }
    return 0;
}

/* TraceLens's collective_name2type, NULL for an unknown name. */
static const char *coll_type(const char *name)
{
    static const struct {
        const char *name, *type;
    } t[] = {{"allreduce", "allreduce"},
             {"allreduce_coalesced", "allreduce"},
             {"reducescatter", "reducescatter"},
             {"_reduce_scatter_base", "reducescatter"},
             {"reduce_scatter_tensor_coalesced", "reducescatter"},
             {"allgather", "allgather"},
             {"all_gather", "allgather"},
             {"_allgather_base", "allgather"},
             {"all_gather_into_tensor_coalesced", "allgather"},
             {"allgather_into_tensor_coalesced", "allgather"},
             {"all_to_all", "alltoall"},
             {"all_to_allv", "alltoallv"}};
    size_t i;

    for (i = 0; name != NULL && i < sizeof(t) / sizeof(t[0]); i++) {
        if (strcmp(name, t[i].name) == 0)
            return t[i].type;
    }
    return NULL;
}

/* A JSON arg as a cell value: numbers, strings as they are, the rest by
 * repr (lists as tuples). Returns 0 or -ENOMEM. */
static int json_cell(const char *text, size_t len, struct pv *v, char **own)
{
    struct pt_buf b;

    v->kind = PV_NONE;
    *own = NULL;
    if (len == 4 && memcmp(text, "null", 4) == 0)
        return 0;
    if (len > 0 && (text[0] == '-' || (text[0] >= '0' && text[0] <= '9'))) {
        char *end;
        v->num = strtod(text, &end);
        v->kind = memchr(text, '.', len) || memchr(text, 'e', len) || memchr(text, 'E', len)
                      ? PV_FLOAT
                      : PV_INT;
        return 0;
    }
    if (len > 0 && text[0] == '"') {
        *own = malloc(len + 1);
        if (*own == NULL)
            return -ENOMEM;
        if (!pt_json_string(text, len, *own, len + 1))
            (*own)[0] = '\0';
        v->kind = PV_TEXT;
        v->text = *own;
        return 0;
    }
    memset(&b, 0, sizeof(b));
    if (pt_json_repr(&b, text, len, 1) != 0 || b.oom) {
        pt_buf_free(&b);
        return b.oom ? -ENOMEM : 0;
    }
    pt_buf_putc(&b, '\0');
    if (b.oom) {
        pt_buf_free(&b);
        return -ENOMEM;
    }
    *own = b.p;
    v->kind = PV_TEXT;
    v->text = *own;
    return 0;
}

static void coll_free(struct coll *c)
{
    int f;

    for (f = 0; f < NMETA; f++)
        free(c->texts[f]);
    for (f = 0; f < 3; f++)
        free(c->extra_texts[f]);
    free(c->cid);
}

/* The collective kernels of one rank's trace appended to *v. */
static int rank_colls(const struct ctrace *ct, int rank, struct coll **v, size_t *n, size_t *cap)
{
    uint32_t kernel = ctrace_str_find(ct, "kernel"), i, seq = 0;
    signed char *comm = NULL;

    if (kernel == 0)
        return 0;
    comm = calloc(ctrace_str_count(ct) + 1, 1);
    if (comm == NULL)
        return -ENOMEM;
    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        const char *args, *val;
        size_t alen, vlen;
        struct coll *c;
        int f;
        if (ev->cat != kernel || ev->name == 0)
            continue;
        if (comm[ev->name] == 0)
            comm[ev->name] = gt_is_communication(ctrace_str(ct, ev->name)) ? 1 : -1;
        if (comm[ev->name] < 0 || (ev->correlation == CT_NONE && ev->external_id == CT_NONE))
            continue;
        if (!(ev->flags & CT_HAS_TS) || !(ev->flags & CT_HAS_DUR))
            continue;
        if (*n == *cap) {
            struct coll *nv;
            *cap = *cap ? *cap * 2 : 64;
            nv = realloc(*v, *cap * sizeof(*nv));
            if (nv == NULL) {
                free(comm);
                return -ENOMEM;
            }
            *v = nv;
        }
        c = &(*v)[*n];
        memset(c, 0, sizeof(*c));
        (*n)++;
        c->rank = rank;
        c->seq = seq++;
        c->ts = ev->ts;
        c->dur = ev->dur;
        c->ts_int = (ev->flags & CT_TS_INT) != 0;
        c->dur_int = (ev->flags & CT_DUR_INT) != 0;
        args = ctrace_event_args_text(ct, ev, &alen);
        for (f = 0; f < M_IN_MB; f++) {
            if (args != NULL && pt_json_member(args, alen, meta_names[f], &val, &vlen) &&
                json_cell(val, vlen, &c->meta[f], &c->texts[f]) != 0) {
                free(comm);
                return -ENOMEM;
            }
        }
        if (args != NULL && pt_json_member(args, alen, "stream", &val, &vlen)) {
            c->stream = val;
            c->stream_len = vlen;
        }
        for (f = 0; f < 3; f++) {
            static const char *const extra_names[3] = {"In split size", "Out split size", "stream"};
            if (args != NULL && pt_json_member(args, alen, extra_names[f], &val, &vlen) &&
                json_cell(val, vlen, &c->extra[f], &c->extra_texts[f]) != 0) {
                free(comm);
                return -ENOMEM;
            }
        }
        if (c->meta[M_COLL_NAME].kind == PV_NONE &&
            gt_contains_nocase(ctrace_str(ct, ev->name), "cross_device_reduce")) {
            c->meta[M_COLL_NAME].kind = PV_TEXT;
            c->meta[M_COLL_NAME].text = "allreduce";
        }
        {
            int bpe = c->meta[M_DTYPE].kind == PV_TEXT ? dtype_bytes(c->meta[M_DTYPE].text) : 0;
            const struct pv *in = &c->meta[M_IN_NELEMS], *out = &c->meta[M_OUT_NELEMS];
            if (bpe > 0 && in->kind != PV_NONE && in->kind != PV_TEXT && out->kind != PV_NONE &&
                out->kind != PV_TEXT) {
                c->meta[M_IN_MB].kind = c->meta[M_OUT_MB].kind = PV_FLOAT;
                c->meta[M_IN_MB].num = in->num * bpe / 1048576.0;
                c->meta[M_OUT_MB].num = out->num * bpe / 1048576.0;
            }
        }
    }
    free(comm);
    return 0;
}

static int pv_equal(const struct pv *a, const struct pv *b)
{
    if (a->kind == PV_NONE || b->kind == PV_NONE)
        return a->kind == b->kind;
    if (a->kind == PV_TEXT || b->kind == PV_TEXT)
        return a->kind == b->kind && strcmp(a->text, b->text) == 0;
    return a->num == b->num;
}

/* ---- the table -------------------------------------------------------------- */

enum {
    C_FULL_MB,
    C_LATENCY,
    C_SKEW_START,
    C_EARLIEST,
    C_AVG_WAIT,
    C_SKEW_END,
    C_ALGO_BW,
    C_BUS_BW,
    NCALC
};

static const char *const calc_names[NCALC] = {
    "Full msg size (MB)", "comm_latency",     "skew in start time", "earliest arrival rank",
    "avg_wait_time",      "skew in end time", "algo bw (GB/s)",     "bus bw (GB/s)"};

/* One output row: a call and its ranks' events. */
struct call {
    const char *cid;
    const struct coll *first;  /* metadata: the first rank's event */
    const struct coll **ranks; /* by rank, NULL where the rank lacks it */
    struct pv calc[NCALC];
    struct pv *per_rank; /* ts, dur, wait for each rank: 3 * nranks */
};

/* Whether every non-empty cell of a column is a number, and any needs a
 * float: the column's pandas dtype. */
struct colkind {
    int numeric; /* no text */
    int floaty;  /* a float or a gap: ints print as floats */
};

static void col_add(struct colkind *k, const struct pv *v)
{
    if (v->kind == PV_TEXT)
        k->numeric = 0;
    if (v->kind == PV_FLOAT || v->kind == PV_NONE)
        k->floaty = 1;
}

static void put_pv(struct out *o, const struct pv *v, const struct colkind *k)
{
    char num[48];

    if (v->kind == PV_NONE)
        return;
    if (v->kind == PV_TEXT) {
        out_csv_str(o, v->text, strlen(v->text));
        return;
    }
    if (isnan(v->num))
        return;
    if (v->kind == PV_INT && !(k->numeric && k->floaty)) {
        out_printf(o, "%.0f", v->num);
        return;
    }
    pt_float_repr(v->num, num, sizeof(num));
    out_puts(o, num);
}

static struct pv pv_num(double x, int is_int)
{
    struct pv v;

    v.kind = is_int ? PV_INT : PV_FLOAT;
    v.num = x;
    v.text = NULL;
    return v;
}

/* Fill call c's computed cells (nranks ranks; per_rank has room). */
static void compute_call(struct call *c, int nranks, const char *ctype)
{
    double latest = 0, earliest_end = 0, latest_end = 0, lat = 0, wsum = 0, maxw = 0;
    int latest_int = 1, lat_int = 1, le_int = 1, lend_int = 1, maxw_int = 1;
    int r, seen = 0, maxr = 0, count = 0;

    for (r = 0; r < nranks; r++) {
        const struct coll *e = c->ranks[r];
        double end;
        int end_int;
        if (e == NULL)
            continue;
        end = e->ts + e->dur;
        end_int = e->ts_int && e->dur_int;
        if (!seen || e->ts > latest) {
            latest = e->ts;
            latest_int = e->ts_int;
        }
        if (!seen || end < earliest_end) {
            earliest_end = end;
            le_int = end_int;
        }
        if (!seen || end > latest_end) {
            latest_end = end;
            lend_int = end_int;
        }
        if (!seen || e->dur < lat) {
            lat = e->dur;
            lat_int = e->dur_int;
        }
        seen = 1;
        count++;
    }
    seen = 0;
    for (r = 0; r < nranks; r++) {
        const struct coll *e = c->ranks[r];
        struct pv *pr = &c->per_rank[3 * r];
        double w;
        if (e == NULL) {
            pr[0].kind = pr[1].kind = pr[2].kind = PV_NONE;
            continue;
        }
        w = latest - e->ts;
        pr[0] = pv_num(e->ts, e->ts_int);
        pr[1] = pv_num(e->dur, e->dur_int);
        pr[2] = pv_num(w, latest_int && e->ts_int);
        /* max((wait, rank)): a later rank wins a tie */
        if (!seen || w >= maxw) {
            maxw = w;
            maxw_int = latest_int && e->ts_int;
            maxr = r;
        }
        seen = 1;
        wsum += w;
    }
    c->calc[C_LATENCY] = pv_num(lat, lat_int);
    c->calc[C_SKEW_START] = pv_num(maxw, maxw_int);
    c->calc[C_EARLIEST] = pv_num(maxr, 1);
    c->calc[C_AVG_WAIT] = pv_num(wsum / count, 0);
    c->calc[C_SKEW_END] = pv_num(latest_end - earliest_end, lend_int && le_int);
    {
        const struct pv *in = &c->first->meta[M_IN_MB], *out = &c->first->meta[M_OUT_MB];
        const struct pv *gs = &c->first->meta[M_GROUP_SIZE];
        if (in->kind != PV_NONE && out->kind != PV_NONE && ctype != NULL) {
            double full = strcmp(ctype, "allgather") == 0 ? out->num : in->num, algo;
            c->calc[C_FULL_MB] = pv_num(full, 0);
            algo = lat > 0 ? (full / 1024) / (lat / 1e6) : NAN;
            c->calc[C_ALGO_BW] = pv_num(algo, 0);
            if (gs->kind == PV_INT && strcmp(ctype, "alltoallv") != 0) {
                double n = gs->num;
                double f = strcmp(ctype, "allreduce") == 0 ? 2 * (n - 1) / n : (n - 1) / n;
                c->calc[C_BUS_BW] = pv_num(algo * f, 0);
            } else {
                c->calc[C_BUS_BW] = pv_num(NAN, 0);
            }
        } else {
            c->calc[C_FULL_MB] = c->calc[C_ALGO_BW] = c->calc[C_BUS_BW] = pv_num(NAN, 0);
        }
    }
}

/* Events by (rank, group name, ts, file order): index_in_group's order. */
static int by_group_ts(const void *a, const void *b)
{
    const struct coll *x = *(const struct coll *const *)a, *y = *(const struct coll *const *)b;
    int c;

    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    c = strcmp(x->meta[M_PG_NAME].text, y->meta[M_PG_NAME].text);
    if (c != 0)
        return c;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Events by (collective_id, rank); ties cannot happen. */
static int by_cid(const void *a, const void *b)
{
    const struct coll *x = *(const struct coll *const *)a, *y = *(const struct coll *const *)b;
    int c = strcmp(x->cid, y->cid);

    if (c != 0)
        return c;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* index_in_group and collective_id of every event (group names set). */
static int number_events(struct coll *v, size_t n, int simplified)
{
    struct coll **p = malloc((n + 1) * sizeof(*p));
    size_t i;

    if (p == NULL)
        return -ENOMEM;
    for (i = 0; i < n; i++)
        p[i] = &v[i];
    qsort(p, n, sizeof(*p), by_group_ts);
    for (i = 0; i < n; i++) {
        const struct coll *q = i > 0 ? p[i - 1] : NULL;
        size_t len = strlen(p[i]->meta[M_PG_NAME].text) + 16;
        p[i]->idx = q != NULL && q->rank == p[i]->rank &&
                            strcmp(q->meta[M_PG_NAME].text, p[i]->meta[M_PG_NAME].text) == 0
                        ? q->idx + 1
                        : 0;
        p[i]->cid = malloc(len);
        if (p[i]->cid == NULL) {
            free(p);
            return -ENOMEM;
        }
        if (simplified)
            snprintf(p[i]->cid, len, "%u", p[i]->idx);
        else
            snprintf(p[i]->cid, len, "%s_%u", p[i]->meta[M_PG_NAME].text, p[i]->idx);
    }
    free(p);
    return 0;
}

/* TraceLens's simplified mode: no process-group names and at most one
 * stream per rank. Sets every event's group name. */
static int set_groups(struct coll *v, size_t n, int nranks)
{
    int simplified = 1, r;
    size_t i;

    for (i = 0; i < n; i++) {
        const struct pv *g = &v[i].meta[M_PG_NAME];
        if (g->kind != PV_NONE && !(g->kind == PV_TEXT && strcmp(g->text, "Unknown_Group") == 0))
            simplified = 0;
    }
    for (r = 0; r < nranks && simplified; r++) {
        const struct coll *one = NULL;
        for (i = 0; i < n; i++) {
            if (v[i].rank != r || v[i].stream == NULL)
                continue;
            if (one == NULL)
                one = &v[i];
            else if (one->stream_len != v[i].stream_len ||
                     memcmp(one->stream, v[i].stream, v[i].stream_len) != 0)
                simplified = 0;
        }
    }
    for (i = 0; i < n; i++) {
        struct pv *g = &v[i].meta[M_PG_NAME];
        if (simplified || g->kind != PV_TEXT) {
            g->kind = PV_TEXT;
            g->text = simplified ? "all" : "Unknown_Group";
        }
    }
    return simplified;
}

/* A per-rank column: rank, field (0 ts, 1 dur, 2 wait_time). */
struct rcol {
    int rank, field;
};

static void add_rcol(struct rcol *cols, int *ncols, int rank, int field)
{
    int i;

    for (i = 0; i < *ncols; i++) {
        if (cols[i].rank == rank && cols[i].field == field)
            return;
    }
    cols[*ncols].rank = rank;
    cols[*ncols].field = field;
    (*ncols)++;
}

/* The columns' pandas dtypes come from the long table of every collective
 * event (v[0..n)), dropped calls included: a gap or a float anywhere makes
 * the column float. */
static int write_table(struct out *o, struct call *calls, size_t ncalls, int nranks,
                       const struct coll *v, size_t n)
{
    int ts_int = 1, dur_int = 1;
    static const char *const fields[3] = {"ts", "dur", "wait_time"};
    struct rcol *cols = malloc((3 * (size_t)nranks + 1) * sizeof(*cols));
    struct colkind mk[NMETA], ck[NCALC], *rk = calloc(3 * (size_t)nranks + 1, sizeof(*rk));
    int ncols = 0, r, f, k;
    size_t i;

    if (cols == NULL || rk == NULL) {
        free(cols);
        free(rk);
        return -ENOMEM;
    }
    for (i = 0; i < ncalls; i++) {
        for (r = 0; r < nranks; r++) {
            if (calls[i].ranks[r] != NULL) {
                add_rcol(cols, &ncols, r, 0);
                add_rcol(cols, &ncols, r, 1);
            }
        }
        for (r = 0; r < nranks; r++) {
            if (calls[i].ranks[r] != NULL)
                add_rcol(cols, &ncols, r, 2);
        }
    }
    for (f = 0; f < NMETA; f++)
        mk[f].numeric = 1, mk[f].floaty = 0;
    for (i = 0; i < n; i++) {
        ts_int &= v[i].ts_int;
        dur_int &= v[i].dur_int;
        for (f = 0; f < NMETA; f++)
            col_add(&mk[f], &v[i].meta[f]);
    }
    for (f = 0; f < NCALC; f++)
        ck[f].numeric = 1, ck[f].floaty = 0;
    ck[C_LATENCY].floaty = !dur_int;
    ck[C_SKEW_START].floaty = !ts_int;
    ck[C_SKEW_END].floaty = !ts_int || !dur_int;
    for (k = 0; k < ncols; k++)
        rk[k].numeric = 1, rk[k].floaty = cols[k].field == 1 ? !dur_int : !ts_int;
    for (i = 0; i < ncalls; i++) {
        for (f = 0; f < NCALC; f++)
            col_add(&ck[f], &calls[i].calc[f]);
        for (k = 0; k < ncols; k++)
            col_add(&rk[k], &calls[i].per_rank[3 * cols[k].rank + cols[k].field]);
    }
    out_puts(o, "collective_id");
    for (f = 0; f < NMETA; f++) {
        out_putc(o, ',');
        out_puts(o, meta_names[f]);
    }
    for (f = 0; f < NCALC; f++) {
        out_putc(o, ',');
        out_puts(o, calc_names[f]);
    }
    for (k = 0; k < ncols; k++)
        out_printf(o, ",rank_%d_%s", cols[k].rank, fields[cols[k].field]);
    out_putc(o, '\n');
    for (i = 0; i < ncalls; i++) {
        out_csv_str(o, calls[i].cid, strlen(calls[i].cid));
        for (f = 0; f < NMETA; f++) {
            out_putc(o, ',');
            put_pv(o, &calls[i].first->meta[f], &mk[f]);
        }
        for (f = 0; f < NCALC; f++) {
            out_putc(o, ',');
            put_pv(o, &calls[i].calc[f], &ck[f]);
        }
        for (k = 0; k < ncols; k++) {
            out_putc(o, ',');
            put_pv(o, &calls[i].per_rank[3 * cols[k].rank + cols[k].field], &rk[k]);
        }
        out_putc(o, '\n');
    }
    free(cols);
    free(rk);
    return 0;
}

/* Match the numbered events into calls (in order of first sight, rank-major),
 * check their metadata, compute and write them. */
static int write_calls(struct out *o, struct coll *v, size_t n, int nranks, int simplified,
                       struct xp_err *err)
{
    struct coll **p = malloc((n + 1) * sizeof(*p));
    struct call *calls = calloc(n + 1, sizeof(*calls));
    const struct coll **rankv = calloc((n + 1) * (size_t)nranks, sizeof(*rankv));
    struct pv *prv = calloc((n + 1) * 3 * (size_t)nranks, sizeof(*prv));
    size_t *first = malloc((n + 1) * sizeof(*first)), i, j, nc = 0, *order = NULL;
    int rc = 0, f;

    if (p == NULL || calls == NULL || rankv == NULL || prv == NULL || first == NULL) {
        rc = xp_err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (i = 0; i < n; i++)
        p[i] = &v[i];
    qsort(p, n, sizeof(*p), by_cid);
    /* groups of equal cid; the group's first sight is its lowest event index
     * (v is rank-major in file order, as TraceLens's long table) */
    for (i = 0; i < n; i = j) {
        size_t lo = (size_t)(p[i] - v);
        for (j = i + 1; j < n && strcmp(p[j]->cid, p[i]->cid) == 0; j++) {
            if ((size_t)(p[j] - v) < lo)
                lo = (size_t)(p[j] - v);
        }
        first[nc] = lo;
        calls[nc].cid = p[i]->cid;
        calls[nc].first = &v[lo];
        calls[nc].ranks = rankv + nc * (size_t)nranks;
        calls[nc].per_rank = prv + nc * 3 * (size_t)nranks;
        for (size_t k = i; k < j; k++)
            calls[nc].ranks[p[k]->rank] = p[k];
        nc++;
    }
    /* order of first sight: sort call indices by first[] */
    order = malloc((nc + 1) * sizeof(*order));
    if (order == NULL) {
        rc = xp_err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    {
        /* first[] values are distinct event indices: a counting pass */
        size_t *slot = malloc((n + 1) * sizeof(*slot));
        if (slot == NULL) {
            rc = xp_err_set(err, -ENOMEM, "out of memory");
            goto out;
        }
        for (i = 0; i < n; i++)
            slot[i] = (size_t)-1;
        for (i = 0; i < nc; i++)
            slot[first[i]] = i;
        for (i = 0, j = 0; i < n; i++) {
            if (slot[i] != (size_t)-1)
                order[j++] = slot[i];
        }
        free(slot);
    }
    {
        struct call *kept = calloc(nc + 1, sizeof(*kept));
        size_t nk = 0;
        if (kept == NULL) {
            rc = xp_err_set(err, -ENOMEM, "out of memory");
            goto out;
        }
        for (i = 0; i < nc && rc == 0; i++) {
            struct call *c = &calls[order[i]];
            const struct pv *name = &c->first->meta[M_COLL_NAME];
            const char *ctype = name->kind == PV_TEXT ? coll_type(name->text) : NULL;
            int r;
            if (simplified) {
                if (ctype != NULL && strcmp(ctype, "alltoallv") == 0)
                    continue;
            } else if (ctype == NULL || strcmp(ctype, "alltoallv") == 0) {
                continue;
            }
            for (r = 0; r < nranks && !simplified; r++) {
                const struct coll *e = c->ranks[r];
                for (f = 0; e != NULL && f < NMETA; f++) {
                    if (!pv_equal(&e->meta[f], &c->first->meta[f])) {
                        rc = xp_err_set(err, -EIO,
                                        "collectives.csv: metadata mismatch in '%s' for "
                                        "collective %s",
                                        meta_names[f], c->cid);
                        break;
                    }
                }
            }
            if (rc != 0)
                break;
            compute_call(c, nranks, ctype);
            kept[nk++] = *c;
        }
        if (rc == 0 && nk == 0)
            rc = xp_err_set(err, -ENOENT,
                            "collectives.csv: no allreduce, reducescatter, "
                            "allgather or alltoall collectives");
        if (rc == 0 && write_table(o, kept, nk, nranks, v, n) != 0)
            rc = xp_err_set(err, -ENOMEM, "out of memory");
        free(kept);
    }
out:
    free(p);
    free(calls);
    free(rankv);
    free(prv);
    free(first);
    free(order);
    return rc;
}

int pt_collectives_csv(const struct host_list *hl, struct out *o, struct xp_err *err)
{
    struct coll *v = NULL;
    size_t n = 0, cap = 0, i;
    int r, rc = 0, simplified = 0;

    for (r = 0; r < hl->n && rc == 0; r++) {
        const struct ctrace *ct;
        rc = snapshot_ctrace(hl->snap, hl->names[r], &ct, err);
        if (rc == 0 && rank_colls(ct, r, &v, &n, &cap) != 0)
            rc = xp_err_set(err, -ENOMEM, "out of memory");
    }
    if (rc == 0 && n == 0)
        rc = xp_err_set(err, -ENOENT, "collectives.csv: no NCCL / RCCL collective kernels");
    if (rc == 0) {
        simplified = set_groups(v, n, hl->n);
        if (number_events(v, n, simplified) != 0)
            rc = xp_err_set(err, -ENOMEM, "out of memory");
    }
    if (rc == 0)
        rc = write_calls(o, v, n, hl->n, simplified, err);
    for (i = 0; i < n; i++)
        coll_free(&v[i]);
    free(v);
    return rc;
}

/* ---- coll_analysis: NcclAnalyser.build_df_summary_long ------------------------- */

/* The group key of an event: rank, then these fields (metadata index, or
 * 100 + extra index). */
static const int summary_fields[10] = {M_PG_NAME, M_PG_RANKS,  M_COLL_NAME,  M_GROUP_SIZE,
                                       M_DTYPE,   M_IN_NELEMS, M_OUT_NELEMS, 100,
                                       101,       102};

static const struct pv *summary_field(const struct coll *c, int k)
{
    int f = summary_fields[k];

    return f >= 100 ? &c->extra[f - 100] : &c->meta[f];
}

static int pv_cmp(const struct pv *a, const struct pv *b)
{
    if (a->kind == PV_TEXT || b->kind == PV_TEXT) {
        if (a->kind != b->kind)
            return a->kind == PV_TEXT ? 1 : -1;
        return strcmp(a->text, b->text);
    }
    return a->num < b->num ? -1 : a->num > b->num;
}

static int summary_cmp(const void *pa, const void *pb)
{
    const struct coll *x = *(const struct coll *const *)pa, *y = *(const struct coll *const *)pb;
    int k, c;

    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    for (k = 0; k < 10; k++) {
        c = pv_cmp(summary_field(x, k), summary_field(y, k));
        if (c != 0)
            return c;
    }
    return x < y ? -1 : x > y; /* row order within a group */
}

int pt_coll_summary_csv(const struct host_list *hl, struct out *o, struct xp_err *err)
{
    static const char header[] =
        "rank,Process Group Name,Process Group Ranks,Collective name,Group size,dtype,"
        "In msg nelems,Out msg nelems,In split size,Out split size,stream,"
        "In msg size (MB)_first,Out msg size (MB)_first,dur_sum,dur_mean,dur_std,dur_min,"
        "dur_max,operation_count\n";
    struct coll *v = NULL, **p = NULL;
    struct colkind kind[10];
    size_t n = 0, cap = 0, i, j, ng = 0, *order = NULL, *gfirst = NULL, *gn = NULL;
    double *sums = NULL;
    int r, k, rc = 0, dur_int = 1;

    for (r = 0; r < hl->n && rc == 0; r++) {
        const struct ctrace *ct;
        rc = snapshot_ctrace(hl->snap, hl->names[r], &ct, err);
        if (rc == 0 && rank_colls(ct, r, &v, &n, &cap) != 0)
            rc = xp_err_set(err, -ENOMEM, "out of memory");
    }
    if (rc == 0 && n == 0)
        rc = xp_err_set(err, -ENOENT, "no NCCL / RCCL collective kernels");
    if (rc != 0)
        goto out;
    set_groups(v, n, hl->n);
    p = malloc((n + 1) * sizeof(*p));
    gfirst = malloc((n + 1) * sizeof(*gfirst));
    gn = malloc((n + 1) * sizeof(*gn));
    sums = malloc((n + 1) * sizeof(*sums));
    order = malloc((n + 1) * sizeof(*order));
    if (p == NULL || gfirst == NULL || gn == NULL || sums == NULL || order == NULL) {
        rc = xp_err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    /* column dtypes of the long table (every event) */
    for (k = 0; k < 10; k++)
        kind[k].numeric = 1, kind[k].floaty = 0;
    for (i = 0; i < n; i++) {
        dur_int &= v[i].dur_int;
        for (k = 0; k < 10; k++)
            col_add(&kind[k], summary_field(&v[i], k));
    }
    /* groupby(sort=True, dropna=True): rows with a missing key are left out */
    for (i = 0, j = 0; i < n; i++) {
        for (k = 0; k < 10 && summary_field(&v[i], k)->kind != PV_NONE; k++)
            ;
        if (k == 10)
            p[j++] = &v[i];
    }
    qsort(p, j, sizeof(*p), summary_cmp);
    for (i = 0; i < j;) {
        size_t e = i + 1;
        double sum = 0, comp = 0;
        while (e < j) {
            for (k = 0; k < 10 && pv_cmp(summary_field(p[e], k), summary_field(p[i], k)) == 0; k++)
                ;
            if (k < 10 || p[e]->rank != p[i]->rank)
                break;
            e++;
        }
        for (size_t q = i; q < e; q++) {
            double y = p[q]->dur - comp, t = sum + y;
            comp = t - sum - y;
            sum = t;
        }
        gfirst[ng] = i;
        gn[ng] = e - i;
        sums[ng] = sum;
        ng++;
        i = e;
    }
    if (ng == 0) {
        rc = xp_err_set(err, -ENOENT, "every collective lacks part of the grouping metadata");
        goto out;
    }
    if (np_order_desc(sums, ng, order) != 0) {
        rc = xp_err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    out_puts(o, header);
    for (i = 0; i < ng; i++) {
        struct coll **g = p + gfirst[order[i]];
        size_t m = gn[order[i]];
        double mean = 0, m2 = 0, mn = g[0]->dur, mx = g[0]->dur;
        struct pv in = {PV_NONE, 0, NULL}, outmb = {PV_NONE, 0, NULL};
        struct colkind fk = {1, 1};
        out_printf(o, "%d", g[0]->rank);
        for (k = 0; k < 10; k++) {
            out_putc(o, ',');
            put_pv(o, summary_field(g[0], k), &kind[k]);
        }
        for (size_t q = 0; q < m; q++) {
            double old = mean;
            if (in.kind == PV_NONE && g[q]->meta[M_IN_MB].kind != PV_NONE)
                in = g[q]->meta[M_IN_MB];
            if (outmb.kind == PV_NONE && g[q]->meta[M_OUT_MB].kind != PV_NONE)
                outmb = g[q]->meta[M_OUT_MB];
            mean += (g[q]->dur - old) / (double)(q + 1);
            m2 += (g[q]->dur - old) * (g[q]->dur - mean);
            if (g[q]->dur < mn)
                mn = g[q]->dur;
            if (g[q]->dur > mx)
                mx = g[q]->dur;
        }
        out_putc(o, ',');
        put_pv(o, &in, &fk);
        out_putc(o, ',');
        put_pv(o, &outmb, &fk);
        {
            struct pv sv = pv_num(sums[order[i]], dur_int), meanv = pv_num(sums[order[i]] / m, 0);
            struct pv sd = pv_num(m > 1 ? sqrt(m2 / (double)(m - 1)) : NAN, 0);
            struct pv mnv = pv_num(mn, dur_int), mxv = pv_num(mx, dur_int);
            struct colkind ik = {1, 0};
            out_putc(o, ',');
            put_pv(o, &sv, &ik);
            out_putc(o, ',');
            put_pv(o, &meanv, &fk);
            out_putc(o, ',');
            put_pv(o, &sd, &fk);
            out_putc(o, ',');
            put_pv(o, &mnv, &ik);
            out_putc(o, ',');
            put_pv(o, &mxv, &ik);
        }
        out_printf(o, ",%zu\n", m);
    }
out:
    for (i = 0; i < n; i++)
        coll_free(&v[i]);
    free(v);
    free(p);
    free(gfirst);
    free(gn);
    free(sums);
    free(order);
    return rc;
}
