/*
 * summary.c - summary.json: what a run's profiles hold.
 *
 * Per host: the file, XSpace hostnames and errors, and per plane its id, name,
 * stat names and lines (id, names, event count, first start and last end in
 * ps); for a Chrome trace its processes and their threads (event count,
 * first start and last end in ps of the trace's µs clock); then the run's
 * time span. The first file computed by the reader: it decodes every
 * event, so it also checks that a profile reads cleanly. Each host's part
 * is kept in the cache (host_piece.h), so that the all-hosts file combines
 * from the hosts' entries.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "reader/ctrace.h"
#include "host_piece.h"
#include "reader/xspace.h"

/* ---- Chrome-trace hosts -------------------------------------------------- */

/* Event indices ordered by thread (pid kind, pid, tid), then file order. */
static int event_thread_cmp(const void *a, const void *b, void *ctx)
{
    const struct ctrace *ct = ctx;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const struct ctrace_event *x = &ct->events[i], *y = &ct->events[j];
    int px = (x->flags & CT_PID_STR) != 0, py = (y->flags & CT_PID_STR) != 0;
    int tx = (x->flags & CT_TID_STR) != 0, ty = (y->flags & CT_TID_STR) != 0;

    /* process (string or number, then its value), then thread: a process
     * with number and string tids keeps its threads together */
    if (px != py)
        return px < py ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (tx != ty)
        return tx < ty ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return i < j ? -1 : i > j;
}

static int same_thread(const struct ctrace_event *x, const struct ctrace_event *y)
{
    return x->pid == y->pid && x->tid == y->tid &&
           (x->flags & (CT_PID_STR | CT_TID_STR)) == (y->flags & (CT_PID_STR | CT_TID_STR));
}

/* A pid or tid: its string when the trace wrote one, else the number. */
static void put_id(struct out *o, const struct ctrace *ct, int64_t v, int is_str)
{
    if (is_str)
        out_json_cstr(o, ctrace_str(ct, (uint32_t)v));
    else
        out_i64(o, v);
}

/* The trace's µs in ps; 0 and no span for times past XP_TIME_LIMIT_PS
 * (a hostile "ts": 1e300), so that any difference of two fits. */
#define SPAN_LIMIT_US ((double)XP_TIME_LIMIT_PS / 1e6)

static int in_span_range(double us)
{
    return isfinite(us) && us <= SPAN_LIMIT_US && us >= -SPAN_LIMIT_US;
}

static int64_t us_to_ps(double us)
{
    return in_span_range(us) ? (int64_t)llround(us * 1e6) : 0;
}

/* The processes of a Chrome trace, each with its threads (event count,
 * first start, last end), as planes and lines are listed for an XSpace. */
static int write_ctrace_host(struct tool_ctx *ctx, struct out *o, const char *host, int64_t *lo,
                             int64_t *hi)
{
    const struct ctrace *ct;
    uint32_t *idx, n = 0, i, j;
    int64_t hlo = INT64_MAX, hhi = INT64_MIN;
    int rc, first_proc = 1;

    if ((rc = snapshot_ctrace(ctx->snap, host, &ct, ctx->err)) != 0)
        return rc;
    idx = malloc((ct->nevents ? ct->nevents : 1) * sizeof(*idx));
    if (idx == NULL)
        return xp_err_set(ctx->err, -ENOMEM, "summary: out of memory");
    for (i = 0; i < ct->nevents; i++) {
        if (ct->events[i].ph != 'M' && (ct->events[i].flags & CT_HAS_TS))
            idx[n++] = i;
    }
    xp_qsort_r(idx, n, sizeof(*idx), event_thread_cmp, (void *)ct);
    out_puts(o, ",\"event_count\":");
    out_u64(o, n);
    out_puts(o, ",\"processes\":[");
    for (i = 0; i < n; i = j) {
        const struct ctrace_event *ev = &ct->events[idx[i]];
        int new_proc = i == 0 || ct->events[idx[i - 1]].pid != ev->pid ||
                       (ct->events[idx[i - 1]].flags & CT_PID_STR) != (ev->flags & CT_PID_STR);
        double first = INFINITY, last = -INFINITY;
        int any;
        for (j = i; j < n && same_thread(&ct->events[idx[j]], ev); j++) {
            const struct ctrace_event *e = &ct->events[idx[j]];
            if (!in_span_range(e->ts) || !in_span_range(e->ts + e->dur))
                continue;
            if (e->ts < first)
                first = e->ts;
            if (e->ts + e->dur > last)
                last = e->ts + e->dur;
        }
        any = first <= last;
        if (new_proc) {
            out_puts(o, first_proc ? "{\"pid\":" : "]},{\"pid\":");
            first_proc = 0;
            put_id(o, ct, ev->pid, ev->flags & CT_PID_STR);
            out_puts(o, ",\"name\":");
            out_json_cstr(o, ctrace_event_process_name(ct, ev));
            out_puts(o, ",\"threads\":[");
        } else {
            out_putc(o, ',');
        }
        out_puts(o, "{\"tid\":");
        put_id(o, ct, ev->tid, ev->flags & CT_TID_STR);
        out_puts(o, ",\"name\":");
        out_json_cstr(o, ctrace_event_thread_name(ct, ev));
        out_puts(o, ",\"event_count\":");
        out_u64(o, j - i);
        out_puts(o, ",\"first_ps\":");
        if (any)
            out_i64(o, us_to_ps(first));
        else
            out_puts(o, "null");
        out_puts(o, ",\"last_ps\":");
        if (any)
            out_i64(o, us_to_ps(last));
        else
            out_puts(o, "null");
        out_putc(o, '}');
        if (any && us_to_ps(first) < hlo)
            hlo = us_to_ps(first);
        if (any && us_to_ps(last) > hhi)
            hhi = us_to_ps(last);
    }
    out_puts(o, first_proc ? "]" : "]}]");
    free(idx);
    if (hlo <= hhi) {
        out_puts(o, ",\"start_ps\":");
        out_i64(o, hlo);
        out_puts(o, ",\"end_ps\":");
        out_i64(o, hhi);
        if (hlo < *lo)
            *lo = hlo;
        if (hhi > *hi)
            *hi = hhi;
    }
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void write_stat_names(struct out *o, const struct xp_plane *pl)
{
    const char **names = malloc((pl->nsmeta ? pl->nsmeta : 1) * sizeof(*names));
    uint32_t i, n = 0;

    out_puts(o, "\"stat_names\":[");
    if (names == NULL) {
        o->oom = 1;
        out_puts(o, "]");
        return;
    }
    for (i = 0; i < pl->nsmeta; i++)
        names[n++] = pl->smeta[i].name;
    xp_qsort(names, n, sizeof(*names), name_cmp);
    for (i = 0; i < n; i++) {
        if (i > 0 && strcmp(names[i], names[i - 1]) == 0)
            continue;
        if (i > 0)
            out_putc(o, ',');
        out_json_cstr(o, names[i]);
    }
    out_puts(o, "]");
    free(names);
}

/* Write one line; widens *lo / *hi by its events. */
static void write_line(struct out *o, const struct xp_line *ln, int64_t *lo, int64_t *hi)
{
    int64_t first = INT64_MAX, last = INT64_MIN;
    uint32_t i;

    for (i = 0; i < ln->nevents; i++) {
        int64_t s = xp_event_start_ps(ln, &ln->events[i]);
        int64_t e = xp_event_end_ps(ln, &ln->events[i]);
        if (s < first)
            first = s;
        if (e > last)
            last = e;
    }
    out_puts(o, "{\"id\":");
    out_i64(o, ln->id);
    out_puts(o, ",\"display_id\":");
    out_i64(o, ln->display_id);
    out_puts(o, ",\"name\":");
    out_json_cstr(o, ln->name);
    out_puts(o, ",\"display_name\":");
    out_json_cstr(o, ln->display_name);
    out_puts(o, ",\"timestamp_ns\":");
    out_i64(o, ln->timestamp_ns);
    out_puts(o, ",\"duration_ps\":");
    out_i64(o, ln->duration_ps);
    out_puts(o, ",\"event_count\":");
    out_u64(o, ln->nevents);
    out_puts(o, ",\"first_ps\":");
    if (ln->nevents > 0)
        out_i64(o, first);
    else
        out_puts(o, "null");
    out_puts(o, ",\"last_ps\":");
    if (ln->nevents > 0)
        out_i64(o, last);
    else
        out_puts(o, "null");
    out_puts(o, "}");
    if (ln->nevents > 0) {
        if (first < *lo)
            *lo = first;
        if (last > *hi)
            *hi = last;
    }
}

static void write_plane(struct out *o, const struct xp_plane *pl, int64_t *lo, int64_t *hi)
{
    uint32_t i;

    out_puts(o, "{\"id\":");
    out_i64(o, pl->id);
    out_puts(o, ",\"name\":");
    out_json_cstr(o, pl->name);
    out_puts(o, ",\"event_count\":");
    out_u64(o, pl->nevents);
    out_puts(o, ",\"event_metadata_count\":");
    out_u64(o, pl->nemeta - 1);
    out_putc(o, ',');
    write_stat_names(o, pl);
    out_puts(o, ",\"lines\":[");
    for (i = 0; i < pl->nlines; i++) {
        if (i > 0)
            out_putc(o, ',');
        write_line(o, &pl->lines[i], lo, hi);
    }
    out_puts(o, "]}");
}

static void write_strings(struct out *o, const char *key, const char **v, uint32_t n)
{
    uint32_t i;

    out_printf(o, ",\"%s\":[", key);
    for (i = 0; i < n; i++) {
        if (i > 0)
            out_putc(o, ',');
        out_json_cstr(o, v[i]);
    }
    out_putc(o, ']');
}

static int write_host(struct tool_ctx *ctx, struct out *o, const char *host, int64_t *lo,
                      int64_t *hi)
{
    const struct source_file *f = snapshot_host_file(ctx->snap, host, SRC_XPLANE);
    struct xspace *xs;
    int64_t hlo = INT64_MAX, hhi = INT64_MIN;
    uint32_t i;
    int rc;

    out_puts(o, "{\"host\":");
    out_json_cstr(o, host);
    if (f == NULL) {
        /* A trace-JSON host: its events are read by the trace tools. */
        uint32_t k;
        for (k = 0; k < ctx->snap->nfiles; k++) {
            if (strcmp(ctx->snap->files[k].host, host) == 0) {
                out_puts(o, ",\"file\":");
                out_json_cstr(o, ctx->snap->files[k].name);
                out_puts(o, ",\"file_size\":");
                out_i64(o, ctx->snap->files[k].size);
                break;
            }
        }
        out_puts(o, ",\"format\":\"chrome_trace_json\"");
        if ((rc = write_ctrace_host(ctx, o, host, lo, hi)) != 0)
            return rc;
        out_puts(o, ",\"planes\":[]}");
        return 0;
    }
    rc = snapshot_xspace_decoded(ctx->snap, host, &xs, ctx->err);
    if (rc != 0)
        return rc;
    out_puts(o, ",\"file\":");
    out_json_cstr(o, f->name);
    out_puts(o, ",\"file_size\":");
    out_i64(o, f->size);
    out_puts(o, ",\"format\":\"xplane\",\"event_count\":");
    out_u64(o, xs->nevents);
    /* Epoch-time line starts were shifted to the earliest (xspace.h). */
    if (xs->time_shift_ns != 0) {
        out_puts(o, ",\"line_starts_shifted_by_ns\":");
        out_i64(o, xs->time_shift_ns);
    }
    write_strings(o, "hostnames", xs->hostnames, xs->nhostnames);
    write_strings(o, "errors", xs->errors, xs->nerrors);
    out_puts(o, ",\"planes\":[");
    for (i = 0; i < xs->nplanes; i++) {
        if (i > 0)
            out_putc(o, ',');
        write_plane(o, &xs->planes[i], &hlo, &hhi);
    }
    out_puts(o, "]");
    if (hlo <= hhi) {
        out_puts(o, ",\"start_ps\":");
        out_i64(o, hlo);
        out_puts(o, ",\"end_ps\":");
        out_i64(o, hhi);
        if (hlo < *lo)
            *lo = hlo;
        if (hhi > *hi)
            *hi = hhi;
    }
    out_puts(o, "}");
    return 0;
}

/* host's part of the file, with its time span (empty: lo > hi). */
static int host_part(struct tool_ctx *ctx, const char *host, struct out *o, int64_t *lo,
                     int64_t *hi)
{
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    return write_host(ctx, o, host, lo, hi);
}

static int summary_produce(struct tool_ctx *ctx, struct out *o)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    int i, n = tool_host_count(ctx), rc;

    out_puts(o, "{\"run\":");
    out_json_cstr(o, ctx->snap->session->name);
    out_puts(o, ",\"hosts\":[");
    for (i = 0; i < n; i++) {
        if (i > 0)
            out_putc(o, ',');
        int64_t hlo, hhi;
        rc = host_piece(ctx, "summary", tool_host(ctx, i), host_part, o, &hlo, &hhi);
        if (rc != 0)
            return rc;
        if (hlo <= hhi) {
            lo = hlo < lo ? hlo : lo;
            hi = hhi > hi ? hhi : hi;
        }
    }
    out_puts(o, "]");
    if (lo <= hi) {
        out_puts(o, ",\"start_ps\":");
        out_i64(o, lo);
        out_puts(o, ",\"end_ps\":");
        out_i64(o, hi);
        out_puts(o, ",\"duration_ps\":");
        out_i64(o, hi - lo);
    }
    out_puts(o, "}\n");
    return 0;
}

const struct tool tool_summary_json = {
    .file = "summary.json",
    .scope = TOOL_RUN | TOOL_HOST,
    .produce = summary_produce,
};
