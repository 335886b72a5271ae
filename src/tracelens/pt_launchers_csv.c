/*
 * pt_launchers_csv.c - kernel_launchers.csv of PyTorch runs: the rows of
 * TraceLens's get_df_kernel_launchers() (default arguments) as pandas'
 * to_csv(index=False) writes them. Cells hold Python values: floats and
 * tuples by repr(), strings as they are, None empty; the overlap cells
 * follow TreePerfAnalyzer._compute_overlap_info; process / thread names come
 * from the "M" events as TraceLens's metadata dict keeps them (the last one
 * wins, the process entry is the one at tid 0, "Unknown" when none).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_timeline.h"
#include "pt_launchers.h"
#include "pt_launchers_int.h"
#include "pt_pyrepr.h"

/* A DataFrame cell holding the JSON value text[0..len) as Python holds it:
 * strings as they are, null empty, the rest repr()'d. */
static void put_json_cell(struct out *o, const char *text, size_t len, int tuples, struct pt_buf *b)
{
    if (len == 4 && memcmp(text, "null", 4) == 0)
        return;
    if (len > 0 && text[0] == '"') {
        char *s = malloc(len + 1);
        if (s != NULL && pt_json_string(text, len, s, len + 1))
            out_csv_str(o, s, strlen(s));
        free(s);
        return;
    }
    if (pt_json_repr(b, text, len, tuples) != 0)
        b->n = 0;
    pt_put_buf(o, b);
}

/* Process / thread names from the "M" events, as TraceLens's metadata dict. */
struct meta {
    int64_t pid;
    int64_t tid;
    uint16_t flags;
    int field;        /* 0 process_name, 1 process_labels, 2 thread_name */
    const char *text; /* the JSON value */
    size_t len;
};

/* The collected entries, as pt_launchers_int.h hands them out. */
struct pt_meta {
    struct meta *v;
    size_t n;
};

static int collect_meta(const struct ctrace *ct, struct meta **mp, size_t *np)
{
    static const char *const names[3] = {"process_name", "process_labels", "thread_name"};
    static const char *const arg_keys[3] = {"name", "labels", "name"};
    uint32_t ids[3];
    struct meta *m = NULL;
    size_t n = 0, cap = 0;
    uint32_t i;
    int f;

    for (f = 0; f < 3; f++)
        ids[f] = ctrace_str_find(ct, names[f]);
    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        const char *args, *val;
        size_t alen, vlen;
        if (ev->ph != 'M' || ev->name == 0)
            continue;
        for (f = 0; f < 3 && ev->name != ids[f]; f++)
            ;
        if (f == 3)
            continue;
        args = ctrace_event_args_text(ct, ev, &alen);
        if (args == NULL || !pt_json_member(args, alen, arg_keys[f], &val, &vlen))
            continue;
        if (n == cap) {
            struct meta *nm;
            cap = cap ? cap * 2 : 64;
            nm = realloc(m, cap * sizeof(*nm));
            if (nm == NULL) {
                free(m);
                return -ENOMEM;
            }
            m = nm;
        }
        m[n].pid = ev->pid;
        m[n].tid = ev->tid;
        m[n].flags = ev->flags & (CT_PID_STR | CT_TID_STR);
        m[n].field = f;
        m[n].text = val;
        m[n].len = vlen;
        n++;
    }
    *mp = m;
    *np = n;
    return 0;
}

/* The last metadata entry of field for (pid, tid), or NULL. */
static const struct meta *meta_find(const struct meta *m, size_t n, int field, int64_t pid,
                                    int64_t tid, uint16_t flags)
{
    size_t i;

    for (i = n; i-- > 0;) {
        if (m[i].field == field && m[i].pid == pid && m[i].tid == tid && m[i].flags == flags)
            return &m[i];
    }
    return NULL;
}

static void put_meta(struct out *o, const struct meta *m, struct pt_buf *b)
{
    if (m == NULL)
        out_puts(o, "Unknown");
    else
        put_json_cell(o, m->text, m->len, 0, b);
}

/* The overlapping events of GPU event ev: h->ov[*first..*first+n). */
static size_t overlaps_of(const struct pt_host *h, uint32_t ev, size_t *first)
{
    size_t lo = 0, hi = h->nov, end;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->ov[mid].event < ev)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (end = lo; end < h->nov && h->ov[end].event == ev; end++)
        ;
    *first = lo;
    return end - lo;
}

/* One entry of overlapping_kernels_details before grouping by name. */
struct detail {
    uint32_t name;  /* string id */
    uint32_t other; /* the overlapping event (dur, stream) */
    double pct;     /* round(overlap / runtime, 2) */
};

/* overlapping_kernel_names, overlapping_kernels_details and overlap_pct of
 * launcher l (TreePerfAnalyzer._compute_overlap_info). */
static int put_overlap_cells(struct out *o, const struct pt_host *h, const struct pt_launcher *l,
                             struct pt_buf *b)
{
    const struct ctrace *ct = h->ct;
    struct detail *d = NULL;
    size_t nd = 0, cap = 0, i, j, k, first, n;
    struct gt_interval *iv = NULL;
    double total_overlap = 0;
    char num[48];
    int rc = 0;

    for (i = 0; i < l->nkernels; i++) {
        uint32_t e = h->kernels[l->first + i];
        const struct ctrace_event *ke = &ct->events[e];
        n = overlaps_of(h, e, &first);
        if (n == 0)
            continue;
        if (nd + n > cap) {
            struct detail *nv;
            cap = (nd + n) * 2;
            nv = realloc(d, cap * sizeof(*nv));
            if (nv == NULL) {
                rc = -ENOMEM;
                goto out;
            }
            d = nv;
        }
        free(iv);
        iv = malloc(n * sizeof(*iv));
        if (iv == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        for (k = 0, j = 0; k < n; k++) {
            const struct ctrace_event *oe = &ct->events[h->ov[first + k].other];
            double os = ke->ts > oe->ts ? ke->ts : oe->ts;
            double oend = ke->ts + ke->dur < oe->ts + oe->dur ? ke->ts + ke->dur : oe->ts + oe->dur;
            double ot = oend - os > 0 ? oend - os : 0;
            d[nd].name = oe->name;
            d[nd].other = h->ov[first + k].other;
            d[nd].pct = l->direct_us > 0 ? pt_round2(ot / l->direct_us) : 0.0;
            nd++;
            if (oend > os) {
                iv[j].start = os;
                iv[j].end = oend;
                j++;
            }
        }
        j = gt_merge(iv, j);
        total_overlap += gt_length(iv, j);
    }
    if (nd == 0) {
        out_puts(o, ",,");
        goto out;
    }
    /* overlapping_kernel_names: names in first-seen order. */
    pt_buf_putc(b, '[');
    for (i = 0, n = 0; i < nd; i++) {
        for (j = 0; j < i && d[j].name != d[i].name; j++)
            ;
        if (j < i)
            continue;
        if (n++ > 0)
            pt_buf_puts(b, ", ");
        pt_str_repr(b, ctrace_str(ct, d[i].name), strlen(ctrace_str(ct, d[i].name)));
    }
    pt_buf_putc(b, ']');
    pt_put_buf(o, b);
    out_putc(o, ',');
    /* overlapping_kernels_details: one dict per name, averaged. */
    pt_buf_putc(b, '[');
    for (i = 0, n = 0; i < nd; i++) {
        double sum_dur = 0, sum_pct = 0;
        size_t cnt = 0;
        const char *stext = NULL, *args;
        size_t slen = 0, alen;
        for (j = 0; j < i && d[j].name != d[i].name; j++)
            ;
        if (j < i)
            continue;
        for (j = i; j < nd; j++) {
            if (d[j].name != d[i].name)
                continue;
            sum_dur += ct->events[d[j].other].dur;
            sum_pct += d[j].pct;
            cnt++;
        }
        if (n++ > 0)
            pt_buf_puts(b, ", ");
        pt_buf_puts(b, "{'name': ");
        pt_str_repr(b, ctrace_str(ct, d[i].name), strlen(ctrace_str(ct, d[i].name)));
        pt_buf_puts(b, ", 'dur': ");
        pt_float_repr(pt_round2(sum_dur / (double)cnt), num, sizeof(num));
        pt_buf_puts(b, num);
        pt_buf_puts(b, ", 'stream': ");
        args = ctrace_event_args_text(ct, &ct->events[d[i].other], &alen);
        if (args != NULL && pt_json_member(args, alen, "stream", &stext, &slen) &&
            pt_json_repr(b, stext, slen, 0) == 0)
            ;
        else
            pt_buf_puts(b, "None");
        pt_buf_puts(b, ", 'overlap_pct': ");
        pt_float_repr(pt_round2(sum_pct / (double)cnt), num, sizeof(num));
        pt_buf_puts(b, num);
        pt_buf_putc(b, '}');
    }
    pt_buf_putc(b, ']');
    pt_put_buf(o, b);
    out_putc(o, ',');
    pt_put_float(o, pt_round2(l->direct_us > 0 ? total_overlap / l->direct_us : 0.0));
out:
    free(iv);
    free(d);
    return rc;
}

/* ---- the grouping cells (kernel_launchers_unique_args.csv) -------------------- */

/* Append one cell to cells: a kind byte (0 None, 1 text), its length (4
 * bytes, host order) and its text. */
static void put_group_cell(struct pt_buf *cells, int none, const char *s, size_t n)
{
    uint32_t len = (uint32_t)n;

    pt_buf_putc(cells, none ? 0 : 1);
    pt_buf_write(cells, (const char *)&len, sizeof(len));
    pt_buf_write(cells, s, n);
}

/* A JSON value as its DataFrame cell's text (str() of the Python value):
 * strings as they are, null None, the rest repr()'d (tuples for lists). */
static void put_group_json(struct pt_buf *cells, const char *text, size_t len, struct pt_buf *b)
{
    if (len == 4 && memcmp(text, "null", 4) == 0) {
        put_group_cell(cells, 1, "", 0);
        return;
    }
    if (len > 0 && text[0] == '"') {
        char *s = malloc(len + 1);
        if (s == NULL) {
            cells->oom = 1;
            return;
        }
        if (pt_json_string(text, len, s, len + 1))
            put_group_cell(cells, 0, s, strlen(s));
        else
            put_group_cell(cells, 0, "", 0);
        free(s);
        return;
    }
    b->n = 0;
    if (pt_json_repr(b, text, len, 1) != 0)
        b->n = 0;
    put_group_cell(cells, 0, b->p != NULL ? b->p : "", b->n);
    b->n = 0;
}

static void put_group_meta(struct pt_buf *cells, const struct meta *m, struct pt_buf *b)
{
    if (m == NULL)
        put_group_cell(cells, 0, "Unknown", 7);
    else
        put_group_json(cells, m->text, m->len, b);
}

static const char *const arg_columns[4] = {"Input Dims", "Input type", "Input Strides",
                                           "Concrete Inputs"};

int pt_meta_collect(const struct ctrace *ct, struct pt_meta **mp)
{
    struct pt_meta *pm = calloc(1, sizeof(*pm));
    int rc;

    if (pm == NULL)
        return -ENOMEM;
    rc = collect_meta(ct, &pm->v, &pm->n);
    if (rc != 0) {
        free(pm);
        return rc;
    }
    *mp = pm;
    return 0;
}

void pt_meta_free(struct pt_meta *m)
{
    if (m != NULL)
        free(m->v);
    free(m);
}

int pt_group_cells(const struct ctrace *ct, const struct pt_launcher *l, const struct pt_meta *m,
                   struct pt_buf *cells)
{
    const struct ctrace_event *ev = &ct->events[l->uid];
    const char *name = ctrace_str(ct, ev->name), *args, *val;
    size_t alen, vlen;
    struct pt_buf b;
    int c;

    memset(&b, 0, sizeof(b));
    put_group_cell(cells, 0, name, strlen(name));
    put_group_cell(cells, 0, l->category, strlen(l->category));
    put_group_meta(cells, meta_find(m->v, m->n, 0, ev->pid, 0, ev->flags & CT_PID_STR), &b);
    put_group_meta(cells, meta_find(m->v, m->n, 1, ev->pid, 0, ev->flags & CT_PID_STR), &b);
    put_group_meta(
        cells, meta_find(m->v, m->n, 2, ev->pid, ev->tid, ev->flags & (CT_PID_STR | CT_TID_STR)),
        &b);
    args = ctrace_event_args_text(ct, ev, &alen);
    for (c = 0; c < 4; c++) {
        if (args != NULL && pt_json_member(args, alen, arg_columns[c], &val, &vlen))
            put_group_json(cells, val, vlen, &b);
        else
            put_group_cell(cells, 1, "", 0);
    }
    if (b.oom)
        cells->oom = 1;
    pt_buf_free(&b);
    return cells->oom ? -ENOMEM : 0;
}

/* ---- kernel_launchers.csv ---------------------------------------------------- */

static int write_rows(struct out *o, const struct pt_host *h, const char *host,
                      const int int_cols[2], struct pt_buf *b)
{
    const struct ctrace *ct = h->ct;
    struct meta *meta = NULL;
    size_t nmeta = 0;
    uint32_t i;
    int rc = collect_meta(ct, &meta, &nmeta), c;

    for (i = 0; i < h->n && rc == 0; i++) {
        const struct pt_launcher *l = &h->v[i];
        const struct ctrace_event *ev = &ct->events[l->uid];
        const char *name = ctrace_str(ct, ev->name), *args, *val;
        size_t alen, vlen;
        out_csv_str(o, name, strlen(name));
        out_putc(o, ',');
        out_puts(o, l->category);
        out_putc(o, ',');
        out_u64(o, l->uid);
        out_putc(o, ',');
        pt_put_time(o, l->direct_us, int_cols[0]);
        out_putc(o, ',');
        pt_put_time(o, l->subtree_us, int_cols[1]);
        out_putc(o, ',');
        out_u64(o, l->nkernels);
        out_putc(o, ',');
        rc = put_overlap_cells(o, h, l, b);
        args = ctrace_event_args_text(ct, ev, &alen);
        for (c = 0; c < 4; c++) {
            out_putc(o, ',');
            if (args != NULL && pt_json_member(args, alen, arg_columns[c], &val, &vlen))
                put_json_cell(o, val, vlen, 1, b);
        }
        out_putc(o, ',');
        put_meta(o, meta_find(meta, nmeta, 0, ev->pid, 0, ev->flags & CT_PID_STR), b);
        out_putc(o, ',');
        put_meta(o, meta_find(meta, nmeta, 1, ev->pid, 0, ev->flags & CT_PID_STR), b);
        out_putc(o, ',');
        put_meta(o,
                 meta_find(meta, nmeta, 2, ev->pid, ev->tid, ev->flags & (CT_PID_STR | CT_TID_STR)),
                 b);
        if (host != NULL) {
            out_putc(o, ',');
            out_csv_str(o, host, strlen(host));
        }
        out_putc(o, '\n');
    }
    free(meta);
    if (rc == 0 && b->oom)
        rc = -ENOMEM;
    return rc;
}

int pt_kernel_launchers_csv(const struct host_list *hl, struct out *o, struct xp_err *err)
{
    const struct pt_host **hs = calloc((size_t)hl->n + 1, sizeof(*hs));
    struct pt_buf b;
    int n = 0, i, rc, multi = hl->n > 1, int_cols[2];

    memset(&b, 0, sizeof(b));
    if (hs == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    rc = pt_all_hosts(hl, hs, &n, err);
    if (rc == 0)
        pt_int_columns(hs, n, &int_cols[0], &int_cols[1]);
    if (rc == 0) {
        out_puts(o, "name,op category,UID,total_direct_kernel_time,total_subtree_kernel_time,"
                    "direct_kernel_count,overlapping_kernel_names,overlapping_kernels_details,"
                    "overlap_pct,Input Dims,Input type,Input Strides,Concrete Inputs,"
                    "process_name,process_label,thread_name");
        out_puts(o, multi ? ",host\n" : "\n");
    }
    for (i = 0; i < n && rc == 0; i++) {
        if (hs[i] != NULL)
            rc = write_rows(o, hs[i], multi ? hl->names[i] : NULL, int_cols, &b);
        if (rc != 0)
            xp_err_set(err, rc, "out of memory");
    }
    pt_buf_free(&b);
    free(hs);
    return rc;
}
