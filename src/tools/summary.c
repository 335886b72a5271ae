/*
 * summary.c - summary.json: what a run's profiles hold.
 *
 * Per host: the file, XSpace hostnames and errors, and per plane its id, name,
 * stat names and lines (id, names, event count, first start and last end in
 * ps); then the run's time span. The first file computed by the reader: it
 * decodes every event, so it also checks that a profile reads cleanly.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "tool.h"

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
        out_puts(o, ",\"format\":\"chrome_trace_json\",\"planes\":[]}");
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
        rc = write_host(ctx, o, tool_host(ctx, i), &lo, &hi);
        if (rc != 0)
            return rc;
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
