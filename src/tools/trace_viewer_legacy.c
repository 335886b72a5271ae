/*
 * trace_viewer_legacy.c - trace_viewer_legacy.json: XProf's non-streaming
 * trace viewer (tag "trace_viewer"), for one host.
 *
 * XProf converts the preprocessed XSpace with xla's xplane_to_trace_events.cc
 * and prints it from Python (trace_events_json.py): the plane "/host:CPU" is
 * pid 701, GPU planes (else TPU, else CUSTOM) are 1 + plane id, named by the
 * plane name; every line is a thread (tid = display id); every event but
 * those of "Async XLA Ops" lines and internal types is a complete event
 * ("ph":"X", or "ph":"i" for duration 0) whose args are all its visible
 * stats as strings. Over 1,000,000 events (TF_PROFILER_TRACE_VIEWER_MAX_EVENTS
 * overrides) only the earliest-starting ones are kept, in start order.
 * Each object is json.dumps(sort_keys=True), one per line.
 *
 * format=pb is XProf's other path: the host's whole trace container
 * (ConvertXSpaceToTraceEventsContainer, our trace index with every event,
 * none down-sampled or dropped) as the compressed delta-series proto
 * (trace_pb.h), without details.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/sort.h"
#include "reader/stats.h"
#include "tool.h"
#include "trace/trace_index.h"
#include "trace/trace_json.h"
#include "trace/trace_pb.h"
#include "trace/trace_xplane.h"

#define HOST_PID 701
#define DEFAULT_MAX_EVENTS 1000000

static const struct query_key legacy_keys[] = {
    {"format", Q_STRING, 0, 0},
    {NULL, 0, 0, 0},
};

/* A shown line: a file line or a derived one. */
struct legacy_line {
    uint32_t plane;  /* plane index */
    int32_t file;    /* file line index, or -1 */
    int32_t derived; /* derived line index, or -1 */
    int64_t key;     /* order among the plane's derived lines */
};

/* An event to print. */
struct legacy_event {
    uint64_t ts;    /* start ps */
    uint32_t line;  /* index into the legacy_line table */
    uint32_t event; /* event index in its line */
    uint32_t pid;   /* process */
    uint32_t seq;   /* container order (tie-break after a cap) */
};

struct legacy {
    const struct xsrc *src;    /* the profile with its preprocessing */
    const struct tv_host *h;   /* its trace index (the derived events' times) */
    uint32_t *derived_at;      /* per derived event (source record - nfile): its index in h */
    struct legacy_line *lines; /* shown lines */
    uint32_t nlines;           /* entries in lines */
    uint32_t lines_cap;        /* allocated entries */
    uint32_t *plane_pid;       /* pid per plane (0 = not shown) */
};

/* Order of derived lines in a GPU plane after XProf's derivation: Steps,
 * then per stream (tf op, name scope, op, module, source), then Launch Stats. */
static int64_t derived_key(int64_t id)
{
    const int64_t base = (int64_t)(int32_t)0xdeadbeef;
    int64_t off = id - base;

    if (off == 0)
        return INT64_MIN;
    if (off == 1)
        return INT64_MAX;
    {
        int64_t first = base + 290, k = (id - first) / 6, slot = (id - first) % 6;
        static const int rank[6] = {1, 0, 3, 2, 4, 5};
        return k * 8 + rank[slot];
    }
}

static int legacy_line_cmp(const void *a, const void *b)
{
    const struct legacy_line *x = a, *y = b;

    if (x->plane != y->plane)
        return 0;
    if ((x->file >= 0) != (y->file >= 0))
        return x->file >= 0 ? -1 : 1;
    if (x->file >= 0)
        return x->file < y->file ? -1 : x->file > y->file;
    return x->key < y->key ? -1 : x->key > y->key;
}

static int push_line(struct legacy *lg, uint32_t plane, int32_t file, int32_t derived, int64_t key)
{
    struct legacy_line *l;

    if (xp_grow((void **)&lg->lines, &lg->lines_cap, lg->nlines, sizeof(*l)) != 0)
        return -ENOMEM;
    l = lg->lines;
    l[lg->nlines].plane = plane;
    l[lg->nlines].file = file;
    l[lg->nlines].derived = derived;
    l[lg->nlines].key = key;
    lg->nlines++;
    return 0;
}

/* Shown planes in XProf's order, and their lines. */
static int collect(struct legacy *lg)
{
    const struct xspace *xs = lg->src->xs;
    const struct derived *dv = lg->src->dv;
    uint32_t *order = malloc((xs->nplanes + 1) * sizeof(*order));
    uint32_t n = 0, i, l, ngpu = 0, ntpu = 0;
    const char *prefix;
    int rc = 0;

    lg->plane_pid = calloc(xs->nplanes + 1, sizeof(*lg->plane_pid));
    if (order == NULL || lg->plane_pid == NULL) {
        free(order);
        return -ENOMEM;
    }
    for (i = 0; i < xs->nplanes; i++) {
        if (strcmp(xs->planes[i].name, "/host:CPU") == 0) {
            order[n++] = i;
            lg->plane_pid[i] = HOST_PID;
            break;
        }
    }
    for (i = 0; i < xs->nplanes; i++) {
        ngpu += strncmp(xs->planes[i].name, "/device:GPU:", 12) == 0;
        ntpu += strncmp(xs->planes[i].name, "/device:TPU:", 12) == 0;
    }
    prefix = ngpu ? "/device:GPU:" : ntpu ? "/device:TPU:" : "/device:CUSTOM:";
    for (i = 0; i < xs->nplanes; i++) {
        if (strncmp(xs->planes[i].name, prefix, strlen(prefix)) == 0) {
            order[n++] = i;
            lg->plane_pid[i] = (uint32_t)(1 + xs->planes[i].id);
        }
    }
    for (i = 0; i < n && rc == 0; i++) {
        const struct xp_plane *pl = &xs->planes[order[i]];
        uint32_t first = lg->nlines;
        int gpu_derived = dv != NULL && strncmp(pl->name, "/device:GPU:", 12) == 0;
        for (l = 0; l < pl->nlines && rc == 0; l++) {
            /* Derivation removes the GPU planes' empty lines. */
            if (gpu_derived && pl->lines[l].nevents == 0)
                continue;
            rc = push_line(lg, order[i], (int32_t)l, -1, 0);
        }
        for (l = 0; dv != NULL && l < dv->nlines && rc == 0; l++) {
            if (dv->lines[l].plane == order[i])
                rc = push_line(lg, order[i], -1, (int32_t)l, derived_key(dv->lines[l].id));
        }
        if (rc == 0)
            xp_qsort(lg->lines + first, lg->nlines - first, sizeof(*lg->lines), legacy_line_cmp);
    }
    free(order);
    return rc;
}

static int64_t line_display_id(const struct legacy *lg, const struct legacy_line *ll)
{
    const struct derived *dv = lg->src->dv;

    if (ll->derived >= 0) {
        const struct dv_line *d = &dv->lines[ll->derived];
        return d->display_id != 0 ? d->display_id : d->id;
    }
    if (dv != NULL && dv->display_ids[ll->plane] != NULL &&
        dv->display_ids[ll->plane][ll->file] != 0)
        return dv->display_ids[ll->plane][ll->file];
    {
        const struct xp_line *ln = &lg->src->xs->planes[ll->plane].lines[ll->file];
        return ln->display_id != 0 ? ln->display_id : ln->id;
    }
}

/* Event k of derived line ll as the trace index holds it (its times). */
static const struct tv_event *derived_event(const struct legacy *lg, const struct legacy_line *ll,
                                            uint32_t k)
{
    uint32_t n = xsrc_derived_base(lg->src, (uint32_t)ll->derived) + k - lg->src->nfile;

    return &lg->h->events[lg->derived_at[n]];
}

/* Where the index keeps each derived event (every one is in it). */
static int index_derived(struct legacy *lg)
{
    const struct xsrc *src = lg->src;
    uint32_t n, i;

    if (src->dv == NULL)
        return 0;
    n = xsrc_derived_base(src, src->dv->nlines) - src->nfile;
    lg->derived_at = malloc((n ? n : 1) * sizeof(*lg->derived_at));
    if (lg->derived_at == NULL)
        return -ENOMEM;
    for (i = 0; i < lg->h->nevents; i++) {
        uint32_t r = lg->h->events[i].src;
        if (r >= src->nfile && r - src->nfile < n)
            lg->derived_at[r - src->nfile] = i;
    }
    return 0;
}

static const char *line_name(const struct legacy *lg, const struct legacy_line *ll)
{
    const struct xp_line *ln;

    if (ll->derived >= 0)
        return lg->src->dv->lines[ll->derived].name;
    ln = &lg->src->xs->planes[ll->plane].lines[ll->file];
    return ln->display_name[0] != '\0' ? ln->display_name : ln->name;
}

static uint32_t line_nevents(const struct legacy *lg, const struct legacy_line *ll)
{
    if (ll->derived >= 0)
        return lg->src->dv->lines[ll->derived].nev;
    return lg->src->xs->planes[ll->plane].lines[ll->file].nevents;
}

/* Planes by pid, stably (the order of planes with equal pids is kept). */
static int pid_cmp(const void *a, const void *b, void *ctx)
{
    const struct legacy *lg = ctx;
    uint32_t x = lg->plane_pid[*(const uint32_t *)a], y = lg->plane_pid[*(const uint32_t *)b];

    return x < y ? -1 : x > y;
}

/* A thread of the metadata: its tid, name and line (the order lines came). */
struct legacy_res {
    uint32_t plane; /* plane index */
    uint32_t tid;   /* display id */
    uint32_t line;  /* index in the legacy_line table */
    const char *name;
};

/* By plane pid, then tid, then line: one sort gives every process its
 * threads in tid order, a tid's lines in the order they came. */
static int res_cmp(const void *a, const void *b, void *ctx)
{
    const struct legacy_res *x = a, *y = b;
    const struct legacy *lg = ctx;
    uint32_t px = lg->plane_pid[x->plane], py = lg->plane_pid[y->plane];

    if (px != py)
        return px < py ? -1 : 1;
    if (x->plane != y->plane)
        return x->plane < y->plane ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

static void write_process(struct out *o, const struct legacy *lg, uint32_t p)
{
    const char *pname = lg->src->xs->planes[p].name;
    uint32_t pid = lg->plane_pid[p];

    if (pname[0] != '\0') {
        out_puts(o, "{\"args\": {\"name\": ");
        tj_py_str(o, pname, strlen(pname));
        out_printf(o, "}, \"name\": \"process_name\", \"ph\": \"M\", \"pid\": %u},\n", pid);
    }
    out_printf(o,
               "{\"args\": {\"sort_index\": %u}, \"name\": \"process_sort_index\", \"ph\": "
               "\"M\", \"pid\": %u},\n",
               pid, pid);
}

static void write_thread(struct out *o, uint32_t pid, const struct legacy_res *r)
{
    if (r->name[0] != '\0') {
        out_puts(o, "{\"args\": {\"name\": ");
        tj_py_str(o, r->name, strlen(r->name));
        out_printf(o,
                   "}, \"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %u, \"tid\": "
                   "%u},\n",
                   pid, r->tid);
    }
    out_printf(o,
               "{\"args\": {\"sort_index\": %u}, \"name\": \"thread_sort_index\", \"ph\": "
               "\"M\", \"pid\": %u, \"tid\": %u},\n",
               r->tid, pid, r->tid);
}

/* Python's json.dumps(sort_keys=True) of the metadata objects: processes
 * by pid (planes without a line too), each followed by its threads by tid,
 * one per line, a later line with the same tid renaming it. */
static void write_metadata(struct out *o, const struct legacy *lg)
{
    const struct xspace *xs = lg->src->xs;
    uint32_t *pids = malloc((xs->nplanes + 1) * sizeof(*pids)), np = 0, nr = 0, i, j, k;
    struct legacy_res *res = malloc((lg->nlines + 1) * sizeof(*res));

    if (pids == NULL || res == NULL) {
        o->oom = 1;
        goto out;
    }
    for (i = 0; i < xs->nplanes; i++) {
        if (lg->plane_pid[i] != 0)
            pids[np++] = i;
    }
    for (j = 0; j < lg->nlines; j++) {
        uint32_t p = lg->lines[j].plane;
        if (lg->plane_pid[p] == 0)
            continue;
        res[nr].plane = p;
        res[nr].tid = (uint32_t)line_display_id(lg, &lg->lines[j]);
        res[nr].line = j;
        res[nr].name = line_name(lg, &lg->lines[j]);
        nr++;
    }
    if (xp_sort_runs(pids, np, sizeof(*pids), pid_cmp, (void *)lg) != 0 ||
        xp_sort_runs(res, nr, sizeof(*res), res_cmp, (void *)lg) != 0) {
        o->oom = 1;
        goto out;
    }
    for (i = 0, k = 0; i < np; i++) {
        uint32_t p = pids[i];
        write_process(o, lg, p);
        while (k < nr && res[k].plane == p) {
            /* the last line of a tid names it */
            for (j = k; j + 1 < nr && res[j + 1].plane == p && res[j + 1].tid == res[k].tid; j++)
                ;
            write_thread(o, lg->plane_pid[p], &res[j]);
            k = j + 1;
        }
    }
out:
    free(res);
    free(pids);
}

/* args map<string,string>: later keys replace earlier ones. */
struct arg_kv {
    char *name;  /* key (owned) */
    char *value; /* value (owned) */
};

struct arg_map {
    struct arg_kv *v; /* entries */
    uint32_t n;       /* used */
    int oom;          /* allocation failed */
};

static void map_set(struct arg_map *m, const char *name, const char *value, size_t vlen)
{
    uint32_t i;
    char *val = malloc(vlen + 1);

    if (val == NULL) {
        m->oom = 1;
        return;
    }
    memcpy(val, value, vlen);
    val[vlen] = '\0';
    for (i = 0; i < m->n; i++) {
        if (strcmp(m->v[i].name, name) == 0) {
            free(m->v[i].value);
            m->v[i].value = val;
            return;
        }
    }
    {
        struct arg_kv *nv = realloc(m->v, (m->n + 1) * sizeof(*nv));
        if (nv == NULL) {
            free(val);
            m->oom = 1;
            return;
        }
        m->v = nv;
        m->v[m->n].name = strdup(name);
        m->v[m->n].value = val;
        if (m->v[m->n].name == NULL) {
            free(val);
            m->oom = 1;
            return;
        }
        m->n++;
    }
}

static void map_free(struct arg_map *m)
{
    uint32_t i;

    for (i = 0; i < m->n; i++) {
        free(m->v[i].name);
        free(m->v[i].value);
    }
    free(m->v);
}

static int kv_cmp(const void *a, const void *b)
{
    return strcmp(((const struct arg_kv *)a)->name, ((const struct arg_kv *)b)->name);
}

/* Put a stat's XStatVisitor::ToString under its name; a step_name stat also
 * renames the event (its text is kept in step_buf when it is a number). */
static void stat_set(struct arg_map *m, const struct xp_plane *pl, const struct xp_stat *st,
                     const char **step_name, size_t *step_len, char *step_buf)
{
    const char *name = xp_stat_name(pl, st);
    char buf[64];

    if (st->kind == XP_STAT_NONE || xp_stat_is_internal(name))
        return;
    switch (st->kind) {
    case XP_STAT_INT:
        snprintf(buf, sizeof(buf), "%lld", (long long)st->v.i);
        break;
    case XP_STAT_UINT:
        snprintf(buf, sizeof(buf), "%llu", (unsigned long long)st->v.u);
        break;
    case XP_STAT_DOUBLE:
        snprintf(buf, sizeof(buf), "%g", st->v.d);
        break;
    case XP_STAT_BYTES:
        snprintf(buf, sizeof(buf), "<opaque bytes>");
        break;
    default:
        if (st->meta_id == pl->stat_id[XS_STEP_NAME]) {
            *step_name = st->str;
            *step_len = st->len;
        }
        map_set(m, name, st->str, st->len);
        return;
    }
    if (st->meta_id == pl->stat_id[XS_STEP_NAME]) {
        snprintf(step_buf, 64, "%s", buf);
        *step_name = step_buf;
        *step_len = strlen(step_buf);
    }
    map_set(m, name, buf, strlen(buf));
}

/* Write one event object. */
static void write_event(struct out *o, const struct legacy *lg, const struct legacy_event *le)
{
    const struct legacy_line *ll = &lg->lines[le->line];
    struct arg_map m = {NULL, 0, 0};
    const char *name, *step_name = NULL;
    size_t step_len = 0, name_len;
    uint64_t dur;
    uint32_t tid = (uint32_t)line_display_id(lg, ll), i;
    char buf[64], step_buf[64];

    if (ll->derived >= 0) {
        const struct dv_line *dl = &lg->src->dv->lines[ll->derived];
        const struct dv_launch *la = derived_launch(dl, le->event);
        const char *de_step = derived_step_name(dl, le->event);
        const char *long_name = derived_long_name(dl, le->event);
        int32_t group = derived_group(dl, le->event);
        name = long_name != NULL ? derived_display(dl, le->event) : derived_name(dl, le->event);
        if (long_name != NULL)
            map_set(&m, "long_name", long_name, strlen(long_name));
        if (group >= 0) {
            snprintf(buf, sizeof(buf), "%lld", (long long)group);
            map_set(&m, "group_id", buf, strlen(buf));
        }
        if (de_step != NULL) {
            map_set(&m, "step_name", de_step, strlen(de_step));
            step_name = de_step;
            step_len = strlen(de_step);
        }
        if (la != NULL) {
            snprintf(buf, sizeof(buf), "%lld", (long long)la->num_launches);
            map_set(&m, "num_launches", buf, strlen(buf));
            snprintf(buf, sizeof(buf), "%g", la->max_launch_us);
            map_set(&m, "max_launch_time_us", buf, strlen(buf));
            snprintf(buf, sizeof(buf), "%g", la->avg_launch_us);
            map_set(&m, "avg_launch_time_us", buf, strlen(buf));
        }
        dur = tv_dur(lg->h, derived_event(lg, ll, le->event));
    } else {
        const struct xp_plane *pl = &lg->src->xs->planes[ll->plane];
        const struct xp_line *ln = &pl->lines[ll->file];
        const struct xp_event *ev = &ln->events[le->event];
        const struct xp_event_meta *md = &pl->emeta[ev->meta];
        struct xp_stat_iter it;
        struct xp_stat st;
        struct xsrc_extras x;
        int k;
        name = md->display_name[0] != '\0' ? md->display_name : md->name;
        if (md->display_name[0] != '\0')
            map_set(&m, "long_name", md->name, strlen(md->name));
        for (i = 0; i < md->nstats; i++)
            stat_set(&m, pl, &md->stats[i], &step_name, &step_len, step_buf);
        xp_stat_iter_init(&it, pl, ln, ev);
        while (xp_stat_next(&it, &st) == 1)
            stat_set(&m, pl, &st, &step_name, &step_len, step_buf);
        xsrc_extras(lg->src, ll->plane, (uint32_t)ll->file, le->event, &x);
        for (k = 0; k < x.nflows; k++) {
            snprintf(buf, sizeof(buf), "%llu", (unsigned long long)x.flows[k]);
            map_set(&m, "flow", buf, strlen(buf));
        }
        if (x.group >= 0) {
            snprintf(buf, sizeof(buf), "%lld", (long long)x.group);
            map_set(&m, "group_id", buf, strlen(buf));
        }
        if (x.step_name != NULL) {
            map_set(&m, "step_name", x.step_name, strlen(x.step_name));
            step_name = x.step_name;
            step_len = strlen(x.step_name);
        }
        dur = (uint64_t)ev->duration_ps;
    }
    name_len = strlen(name);
    if (step_name != NULL) {
        name = step_name;
        name_len = step_len;
    }
    if (m.oom)
        o->oom = 1;
    if (m.n > 1)
        xp_qsort(m.v, m.n, sizeof(*m.v), kv_cmp);
    out_putc(o, '{');
    if (m.n > 0) {
        out_puts(o, "\"args\": {");
        for (i = 0; i < m.n; i++) {
            if (i > 0)
                out_puts(o, ", ");
            tj_py_str(o, m.v[i].name, strlen(m.v[i].name));
            out_puts(o, ": ");
            tj_py_str(o, m.v[i].value, strlen(m.v[i].value));
        }
        out_puts(o, "}, ");
    }
    if (dur != 0) {
        out_puts(o, "\"dur\": ");
        tj_py_us(o, dur);
        out_puts(o, ", ");
    }
    out_puts(o, "\"name\": ");
    tj_py_str(o, name, name_len);
    out_printf(o, ", \"ph\": \"%s\", \"pid\": %u, ", dur != 0 ? "X" : "i", le->pid);
    if (dur == 0)
        out_puts(o, "\"s\": \"t\", ");
    out_printf(o, "\"tid\": %u, \"ts\": ", tid);
    tj_py_us(o, le->ts);
    out_puts(o, "},\n");
    map_free(&m);
}

static int event_ts_cmp(const void *a, const void *b)
{
    const struct legacy_event *x = a, *y = b;

    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Calls fn(arg, event) for every event XProf's legacy converter keeps, in
 * container order (seq counts them); stops at fn's first nonzero return. */
static int each_event(const struct legacy *lg, int (*fn)(void *arg, const struct legacy_event *le),
                      void *arg)
{
    struct legacy_event le;
    uint32_t n = 0, l, e;
    int rc;

    for (l = 0; l < lg->nlines; l++) {
        const struct legacy_line *ll = &lg->lines[l];
        uint32_t pid = lg->plane_pid[ll->plane];
        const struct xp_plane *pl = &lg->src->xs->planes[ll->plane];
        if (strcmp(line_name(lg, ll), "Async XLA Ops") == 0)
            continue;
        for (e = 0; e < line_nevents(lg, ll); e++) {
            if (ll->derived >= 0) {
                le.ts = derived_event(lg, ll, e)->ts;
            } else {
                const struct xp_line *ln = &pl->lines[ll->file];
                const char *mname = pl->emeta[ln->events[e].meta].name;
                if (xp_event_is_internal(mname))
                    continue;
                le.ts = (uint64_t)xp_event_start_ps(ln, &ln->events[e]);
            }
            le.line = l;
            le.event = e;
            le.pid = pid;
            le.seq = n++;
            rc = fn(arg, &le);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

static int count_event(void *arg, const struct legacy_event *le)
{
    (void)le;
    (*(uint64_t *)arg)++;
    return 0;
}

/* Writing every kept event as it comes: no list of them. */
struct event_writer {
    struct out *o;
    const struct legacy *lg;
};

static int write_each(void *arg, const struct legacy_event *le)
{
    struct event_writer *w = arg;

    write_event(w->o, w->lg, le);
    return 0;
}

/*
 * The cap earliest events by (ts, seq), kept in a max-heap of cap entries
 * as they come: a profile of any size needs only cap entries (24 MB for
 * XProf's 1,000,000), where a list of every event and its sort needed
 * 48 bytes an event.
 */
struct earliest {
    struct legacy_event *heap; /* max-heap by event_ts_cmp */
    uint32_t n;                /* entries in heap */
    uint32_t cap;              /* its size */
};

static void sift_down(struct earliest *k, uint32_t i)
{
    for (;;) {
        uint32_t big = i, c = 2 * i + 1;
        struct legacy_event t;
        if (c < k->n && event_ts_cmp(&k->heap[c], &k->heap[big]) > 0)
            big = c;
        if (c + 1 < k->n && event_ts_cmp(&k->heap[c + 1], &k->heap[big]) > 0)
            big = c + 1;
        if (big == i)
            return;
        t = k->heap[i];
        k->heap[i] = k->heap[big];
        k->heap[big] = t;
        i = big;
    }
}

static int keep_earliest(void *arg, const struct legacy_event *le)
{
    struct earliest *k = arg;
    uint32_t i;

    if (k->n < k->cap) {
        k->heap[k->n] = *le;
        for (i = k->n++; i > 0 && event_ts_cmp(&k->heap[(i - 1) / 2], &k->heap[i]) < 0;
             i = (i - 1) / 2) {
            struct legacy_event t = k->heap[i];
            k->heap[i] = k->heap[(i - 1) / 2];
            k->heap[(i - 1) / 2] = t;
        }
    } else if (k->cap > 0 && event_ts_cmp(le, &k->heap[0]) < 0) {
        k->heap[0] = *le;
        sift_down(k, 0);
    }
    return 0;
}

/* Writes the kept events: all in container order when at most cap, else
 * the cap earliest in start order (XProf's cap). 0 or -ENOMEM. */
static int write_events(struct out *o, const struct legacy *lg, uint64_t cap)
{
    struct event_writer w = {o, lg};
    struct earliest k = {NULL, 0, 0};
    uint64_t n = 0;
    uint32_t i;

    (void)each_event(lg, count_event, &n);
    if (n <= cap)
        return each_event(lg, write_each, &w);
    k.cap = (uint32_t)cap;
    k.heap = malloc((k.cap ? k.cap : 1) * sizeof(*k.heap));
    if (k.heap == NULL)
        return -ENOMEM;
    (void)each_event(lg, keep_earliest, &k);
    xp_qsort(k.heap, k.n, sizeof(*k.heap), event_ts_cmp);
    for (i = 0; i < k.n; i++)
        write_event(o, lg, &k.heap[i]);
    free(k.heap);
    return 0;
}

static uint64_t max_events(void)
{
    const char *env = getenv("TF_PROFILER_TRACE_VIEWER_MAX_EVENTS");

    return env != NULL ? strtoull(env, NULL, 10) : DEFAULT_MAX_EVENTS;
}

/* The whole container of host h as XProf's compressed delta-series proto. */
static int write_pb(struct tool_ctx *ctx, const struct tv_host *h, struct out *o)
{
    struct tv_part part = {.h = h, .all = 1};
    struct tpb_options opt = {TPB_LEGACY, 0};
    int rc = trace_pb_write(&part, 1, &opt, o);

    if (rc != 0)
        return xp_err_set(ctx->err, rc, "%s writing the trace as format=pb",
                          rc == -ENOMEM ? "out of memory" : "zstd failed");
    return 0;
}

static int legacy_produce(struct tool_ctx *ctx, struct out *o)
{
    const struct tv_host *h;
    struct legacy lg;
    uint64_t cap = max_events();
    const char *format = query_get(ctx->q, "format");
    int rc;

    if (format != NULL && strcmp(format, "json") != 0 && strcmp(format, "pb") != 0)
        return xp_err_set(ctx->err, -EINVAL, "format=%s: format is json or pb", format);
    if (tool_host_count(ctx) != 1)
        return xp_err_set(ctx->err, -EINVAL,
                          "XProf's trace_viewer takes one host and this run has %d: read "
                          "hosts/<host>/trace_viewer_legacy.json",
                          tool_host_count(ctx));
    if (snapshot_host_file(ctx->snap, tool_host(ctx, 0), SRC_XPLANE) == NULL)
        return xp_err_set(ctx->err, -ENOENT, "%s has no xplane for the legacy trace viewer",
                          tool_host(ctx, 0));
    rc = snapshot_trace_index(ctx->snap, tool_host(ctx, 0), NULL, &h, ctx->err);
    if (rc != 0)
        return rc;
    if (format != NULL && strcmp(format, "pb") == 0)
        return write_pb(ctx, h, o);
    memset(&lg, 0, sizeof(lg));
    lg.src = h->source;
    lg.h = h;
    rc = collect(&lg);
    if (rc == 0)
        rc = index_derived(&lg);
    if (rc == 0) {
        out_puts(o, "{\"displayTimeUnit\":\"ns\",\"metadata\":{\"highres-ticks\":true},\n"
                    "\"traceEvents\":[\n");
        write_metadata(o, &lg);
        rc = write_events(o, &lg, cap);
        out_puts(o, "{}]}\n");
    }
    if (rc != 0) {
        free(lg.lines);
        free(lg.plane_pid);
        free(lg.derived_at);
        return xp_err_set(ctx->err, rc, "out of memory");
    }
    free(lg.lines);
    free(lg.plane_pid);
    free(lg.derived_at);
    return 0;
}

const struct tool tool_trace_viewer_legacy_json = {
    .file = "trace_viewer_legacy.json",
    .tag = "trace_viewer",
    .scope = TOOL_RUN | TOOL_HOST,
    .flags = TOOL_ONE_HOST,
    .keys = legacy_keys,
    .listed = tool_listed_xplane,
    .produce = legacy_produce,
};
