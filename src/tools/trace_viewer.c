/*
 * trace_viewer.c - trace_viewer.json: XProf's streaming trace viewer
 * (tag "trace_viewer@") over the shared trace index (trace_index.h).
 *
 * Three request kinds, as XProf's GetTraceViewOption tells them apart:
 *   event details  event_name= (with start_time_ms, duration_ms, unique_id):
 *                  that one event with its full args;
 *   search         search_prefix=: every event whose name starts with it;
 *   window         otherwise: the events overlapping [start_time_ms,
 *                  end_time_ms] (default: the whole trace), down-sampled to
 *                  `resolution` bins when the host has 500,000 events or more.
 * All hosts of the run (or those of hosts=a,b, in that order, as XProf's
 * plugin selects them) are merged as XProf merges them: host i's pids are
 * shifted by 1000 * (i + 1). The document is written straight into the
 * output chunks (trace_events_to_json.h's layout; the events' entries by
 * trace_write.c, in batches on all cores), or with
 * format=pb as XProf's compressed delta-series proto of the same events
 * (trace_pb.h); an event-details request is always JSON, as XProf's plugin
 * forces it. Our perfetto=1 writes each counter sample as a Trace Event
 * Format "C" event of its own instead of XProf's runs of "entries" rows,
 * which Perfetto's JSON importer rejects, and traceEvents before XProf's
 * other keys (the same keys and values otherwise).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "tool.h"
#include "trace/trace_index.h"
#include "trace/trace_json.h"
#include "trace/trace_pb.h"
#include "trace/trace_write.h"

#define MAX_DEVICES_PER_HOST 1000
#define MAX_COUNTER_EVENTS 10000000

/* clang-format off */
static const struct query_key trace_keys[] = {
    {"start_time_ms", Q_DOUBLE, 0, 1e12},
    {"end_time_ms", Q_DOUBLE, 0, 1e12},
    {"resolution", Q_DOUBLE, 0, 1e9},
    {"full_dma", Q_BOOL, 0, 1},
    {"search_prefix", Q_STRING, 0, 0},
    {"search_metadata", Q_BOOL, 0, 1},
    {"event_name", Q_STRING, 0, 0},
    {"duration_ms", Q_DOUBLE, 0, 1e12},
    {"unique_id", Q_INT, 0, 1e15},
    {"enable_legacy_dcn", Q_BOOL, 0, 1},
    {"format", Q_STRING, 0, 0},
    {"hosts", Q_STRING, 0, 0},
    {"perfetto", Q_BOOL, 0, 1}, /* ours: counter samples as Perfetto reads them */
    {NULL, 0, 0, 0},
};
/* clang-format on */

/* The request, as parsed from the query. */
struct request {
    struct tv_window win;   /* window (and full_dma) */
    const char *search;     /* search prefix, or NULL */
    int search_metadata;    /* search returns full args */
    const char *event_name; /* event-details request, or NULL */
    uint64_t detail_ts;     /* its start, ps */
    uint64_t detail_dur;    /* its duration, ps */
    uint64_t detail_uid;    /* its uid */
    int pb;                 /* format=pb: the compressed delta-series proto */
    int perfetto;           /* perfetto=1 (ours): counter samples as events of their own */
};

static double qnum(const struct query *q, const char *key, double def)
{
    double v;

    return query_num(q, key, &v) ? v : def;
}

/* Read and check the query; -EINVAL with a reason for a bad one. */
static int parse_request(const struct tool_ctx *ctx, struct request *r)
{
    const struct query *q = ctx->q;
    const char *s;
    double start, end;

    memset(r, 0, sizeof(*r));
    start = qnum(q, "start_time_ms", 0);
    end = qnum(q, "end_time_ms", 0);
    r->win.start_ms = start;
    r->win.end_ms = end;
    /* XProf truncates a fractional resolution to an integer. */
    r->win.resolution = floor(qnum(q, "resolution", 0));
    r->win.full_dma = qnum(q, "full_dma", 0) != 0;
    s = query_get(q, "format");
    if (s != NULL && strcmp(s, "json") != 0 && strcmp(s, "pb") != 0)
        return xp_err_set(ctx->err, -EINVAL, "format=%s: format is json or pb", s);
    /* XProf's plugin answers event_name= requests in JSON whatever the format. */
    r->pb = s != NULL && strcmp(s, "pb") == 0 && query_get(q, "event_name") == NULL;
    r->perfetto = qnum(q, "perfetto", 0) != 0;
    if (r->perfetto && r->pb)
        return xp_err_set(ctx->err, -EINVAL, "perfetto=1 is a JSON form: drop format=pb");
    s = query_get(q, "event_name");
    if (s != NULL && s[0] != '\0') {
        r->event_name = s;
        r->detail_ts = (uint64_t)llround(start * 1e9);
        r->detail_dur = (uint64_t)llround(qnum(q, "duration_ms", 0) * 1e9);
        r->detail_uid = (uint64_t)qnum(q, "unique_id", 0);
        return 0;
    }
    if (query_get(q, "duration_ms") != NULL || query_get(q, "unique_id") != NULL)
        return xp_err_set(ctx->err, -EINVAL,
                          "duration_ms and unique_id belong to an event-details request "
                          "(event_name=)");
    s = query_get(q, "search_prefix");
    if (s != NULL && s[0] != '\0') {
        r->search = s;
        r->search_metadata = qnum(q, "search_metadata", 0) != 0;
        return 0;
    }
    if (end != 0 && start > end)
        return xp_err_set(ctx->err, -EINVAL, "start_time_ms=%.17g is after end_time_ms=%.17g",
                          start, end);
    return 0;
}

/* Select one host's events for the request. */
static int select_host(const struct request *r, struct tv_part *p, struct xp_err *err)
{
    int rc;

    if (r->event_name != NULL) {
        int64_t i = tv_find_event(p->h, r->detail_ts, r->detail_uid, r->event_name, r->detail_dur);
        p->full_args = 1;
        if (i < 0)
            return 0;
        p->idx = malloc(sizeof(*p->idx));
        if (p->idx == NULL)
            return xp_err_set(err, -ENOMEM, "out of memory");
        p->idx[0] = (uint32_t)i;
        p->n = 1;
        return 0;
    }
    if (r->search != NULL) {
        p->full_args = r->search_metadata;
        rc = tv_select_search(p->h, r->search, r->win.full_dma, &p->idx, &p->n);
    } else if (r->win.start_ms == 0 && r->win.end_ms == 0 &&
               (r->win.resolution == 0 || p->h->nevents < TV_STREAMING_THRESHOLD) &&
               (r->win.full_dma || !p->h->tpu)) {
        /* The whole trace, not down-sampled: every stored event. */
        p->all = 1;
        p->n = (uint32_t)tv_num_events(p->h);
        return 0;
    } else {
        rc = tv_select_window(p->h, &r->win, &p->idx, &p->n);
    }
    if (rc != 0)
        return xp_err_set(err, rc, "%s: out of memory selecting events", p->h->hostname);
    return 0;
}

/* --- document pieces ------------------------------------------------------------ */

static int frame_cmp(const void *a, const void *b)
{
    const struct tv_frame *x = a, *y = b;

    return x->hash < y->hash ? -1 : x->hash > y->hash;
}

static int collect_frames(const struct tv_part *parts, int nparts, struct tv_frames *f)
{
    uint32_t total = 0, i, k = 0, j;
    int p;
    struct tv_frame *all;
    const struct tv_host **own;

    for (p = 0; p < nparts; p++)
        total += parts[p].h->nframes;
    all = malloc((total ? total : 1) * sizeof(*all));
    own = malloc((total ? total : 1) * sizeof(*own));
    if (all == NULL || own == NULL) {
        free(all);
        free(own);
        return -ENOMEM;
    }
    /* Tag each frame with its host through the text id's high bits: sort a
     * copy, then resolve owners by lookup. */
    for (p = 0; p < nparts; p++) {
        for (i = 0; i < parts[p].h->nframes; i++)
            all[k++] = parts[p].h->frames[i];
    }
    if (total > 1)
        xp_qsort(all, total, sizeof(*all), frame_cmp);
    for (i = 0, j = 0; i < total; i++) {
        if (j > 0 && all[j - 1].hash == all[i].hash)
            continue;
        all[j++] = all[i];
    }
    for (i = 0; i < j; i++) {
        own[i] = NULL;
        for (p = 0; p < nparts && own[i] == NULL; p++) {
            if (tv_frame_number(parts[p].h->frames, parts[p].h->nframes, all[i].hash) != 0)
                own[i] = parts[p].h;
        }
        /* The text id is per host: re-read it from the owner. */
        if (own[i] != NULL) {
            uint32_t nr = tv_frame_number(own[i]->frames, own[i]->nframes, all[i].hash);
            all[i].text = own[i]->frames[nr - 1].text;
        }
    }
    f->v = all;
    f->n = j;
    f->owner = own;
    return 0;
}

static void write_frames(struct out *o, const struct tv_frames *f)
{
    uint32_t i;

    out_puts(o, "\"stackFrames\":{");
    for (i = 0; i < f->n; i++) {
        if (i > 0)
            out_putc(o, ',');
        out_putc(o, '"');
        out_u64(o, i + 1);
        out_puts(o, "\":{\"name\":");
        tj_str(o, tv_text(f->owner[i], f->v[i].text), tv_len(f->owner[i], f->v[i].text));
        out_putc(o, '}');
    }
    out_puts(o, "},");
}

static void write_metadata_events(struct out *o, const struct tv_part *parts, int nparts,
                                  int *first)
{
    int p;
    uint32_t d, r;

    for (p = 0; p < nparts; p++) {
        const struct tv_host *h = parts[p].h;
        for (d = 0; d < h->ndevices; d++) {
            const struct tv_device *dev = &h->devices[d];
            uint32_t pid = dev->pid + parts[p].offset;
            if (!*first)
                out_putc(o, ',');
            *first = 0;
            out_puts(o, "{\"args\":{\"name\":");
            tj_str(o, tv_text(h, dev->name), tv_len(h, dev->name));
            out_puts(o, "},\"name\":\"process_name\",\"ph\":\"M\",\"pid\":");
            out_u64(o, pid);
            out_puts(o, ",\"thread_count\":");
            out_u64(o, dev->nres);
            out_puts(o, "},{\"args\":{\"sort_index\":");
            out_u64(o, pid);
            out_puts(o, "},\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":");
            out_u64(o, pid);
            out_putc(o, '}');
            for (r = 0; r < dev->nres; r++) {
                const struct tv_resource *res = &dev->res[r];
                out_puts(o, ",{\"args\":{\"name\":");
                tj_str(o, tv_text(h, res->name), tv_len(h, res->name));
                out_puts(o, "},\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":");
                out_u64(o, pid);
                out_puts(o, ",\"tid\":");
                out_u64(o, res->tid);
                out_puts(o, "},{\"args\":{\"sort_index\":");
                out_u64(o, res->tid);
                out_puts(o, "},\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":");
                out_u64(o, pid);
                out_puts(o, ",\"tid\":");
                out_u64(o, res->tid);
                out_putc(o, '}');
            }
        }
    }
}

/* XProf's keys from "metadata" through "stackFrames", each with its comma. */
static void write_head(struct out *o, const struct tv_frames *frames, uint64_t returned,
                       uint64_t lo, uint64_t hi, int tpu, int full_dma)
{
    out_puts(o, "\"metadata\":{\"highres-ticks\":true}, "
                "\"codeLink\":\"\",\"useNewBackend\": false,\"details\":[{\"name\":"
                "\"mpmd_pipeline_view\",\"value\":false}");
    if (tpu) {
        out_puts(o, ",{\"name\":\"full_dma\",\"value\":");
        out_puts(o, full_dma ? "true" : "false");
        out_putc(o, '}');
    }
    out_puts(o, "],\"returnedEventsSize\":");
    out_u64(o, returned);
    out_puts(o, ",\"filteredByVisibility\":true,\"fullTimespan\":[");
    tj_g6(o, (double)lo / 1000000000.0);
    out_putc(o, ',');
    tj_g6(o, (double)hi / 1000000000.0);
    out_puts(o, "],");
    write_frames(o, frames);
}

static int write_document(struct out *o, struct tv_part *parts, int nparts, int details,
                          int full_dma, int perfetto)
{
    struct tv_frames frames = {0};
    uint64_t returned = 0, counters = 0;
    uint64_t lo = 0, hi = 0;
    int p, has_span = 0, tpu = 0, first = 1;

    for (p = 0; p < nparts; p++) {
        const struct tv_host *h = parts[p].h;
        returned += parts[p].n;
        tpu |= h->tpu;
        if (h->has_span) {
            if (!has_span || h->min_ps < lo)
                lo = h->min_ps;
            if (!has_span || h->max_ps > hi)
                hi = h->max_ps;
            has_span = 1;
        }
    }
    if (details) {
        /* Only the frames the returned event references. */
        for (p = 0; p < nparts; p++) {
            if (parts[p].n > 0) {
                struct out scratch;
                int f = 1;
                uint64_t sf = 0;
                out_init(&scratch);
                if (parts[p].h->args != NULL)
                    sf = parts[p].h->args(parts[p].h, &parts[p].h->events[parts[p].idx[0]],
                                          &scratch, &f);
                out_discard(&scratch);
                if (sf != 0 && frames.n == 0) {
                    uint32_t k = tv_frame_number(parts[p].h->frames, parts[p].h->nframes, sf);
                    frames.v = malloc(sizeof(*frames.v));
                    frames.owner = malloc(sizeof(*frames.owner));
                    if (frames.v == NULL || frames.owner == NULL)
                        return -ENOMEM;
                    frames.v[0].hash = sf;
                    frames.v[0].text = k ? parts[p].h->frames[k - 1].text : 0;
                    frames.owner[0] = parts[p].h;
                    frames.n = k ? 1 : 0;
                }
            }
        }
    } else if (collect_frames(parts, nparts, &frames) != 0) {
        return -ENOMEM;
    }
    /* XProf's keys in its order; perfetto=1 puts traceEvents first, since
     * Perfetto releases before its tokenizer skipped unknown top-level keys
     * stop reading at the first one ("codeLink"). */
    out_puts(o, "{\"displayTimeUnit\":\"ns\",");
    if (!perfetto)
        write_head(o, &frames, returned, lo, hi, tpu, full_dma);
    out_puts(o, "\"traceEvents\":[");
    write_metadata_events(o, parts, nparts, &first);
    if (tw_write_events(o, parts, nparts, &frames, &first, &counters) != 0) {
        free(frames.v);
        free(frames.owner);
        return -ENOMEM;
    }
    out_putc(o, ']');
    if (perfetto) {
        out_putc(o, ',');
        write_head(o, &frames, returned, lo, hi, tpu, full_dma);
    } else {
        out_puts(o, ", ");
    }
    if (counters == MAX_COUNTER_EVENTS)
        out_puts(o, "\"showCounterMessage\": \"Only 10000000 counter events are shown. "
                    "Zoom in or pan to see more.\" ");
    else
        out_puts(o, "\"showCounterMessage\": \"\" ");
    out_puts(o, ",\"totalCounterEvents\":");
    out_u64(o, counters);
    out_putc(o, '}');
    free(frames.v);
    free(frames.owner);
    return 0;
}

/* The selection as XProf's compressed delta-series proto. */
static int write_pb(struct out *o, const struct tv_part *parts, int nparts, int full_dma)
{
    struct tpb_options opt = {TPB_STREAMING, full_dma};

    return trace_pb_write(parts, nparts, &opt, o);
}

/* XProf's hosts=a,b: the run's hosts named there, in that order (a name
 * may repeat). *hostsp is NULL without the option. */
static int pick_hosts(const struct tool_ctx *ctx, const char ***hostsp, int *np)
{
    const char *list = query_get(ctx->q, "hosts"), *p;
    const char **hosts;
    int n = 1, k = 0;
    uint32_t j;

    *hostsp = NULL;
    if (list == NULL || list[0] == '\0')
        return 0;
    for (p = list; *p != '\0'; p++)
        n += *p == ',';
    hosts = calloc((size_t)n, sizeof(*hosts));
    if (hosts == NULL)
        return xp_err_set(ctx->err, -ENOMEM, "out of memory");
    for (p = list; k < n; k++) {
        size_t len = strcspn(p, ",");
        for (j = 0; j < ctx->snap->nhosts; j++) {
            if (strlen(ctx->snap->hosts[j]) == len && memcmp(ctx->snap->hosts[j], p, len) == 0)
                break;
        }
        if (j == ctx->snap->nhosts) {
            free(hosts);
            return xp_err_set(ctx->err, -EINVAL, "hosts=%s: no host \"%.*s\" in the run", list,
                              (int)len, p);
        }
        hosts[k] = ctx->snap->hosts[j];
        p += len + (p[len] == ',');
    }
    *hostsp = hosts;
    *np = n;
    return 0;
}

static int trace_viewer_produce(struct tool_ctx *ctx, struct out *o)
{
    struct request r;
    int nhosts = tool_host_count(ctx), i, rc, found = 0;
    struct tv_part *parts;
    const char **picked;

    rc = parse_request(ctx, &r);
    if (rc == 0)
        rc = pick_hosts(ctx, &picked, &nhosts);
    if (rc != 0)
        return rc;
    if (nhosts == 0)
        return xp_err_set(ctx->err, -ENOENT, "the run has no trace");
    parts = calloc((size_t)nhosts, sizeof(*parts));
    if (parts == NULL) {
        free(picked);
        return xp_err_set(ctx->err, -ENOMEM, "out of memory");
    }
    for (i = 0; i < nhosts && rc == 0; i++) {
        const char *host = picked != NULL ? picked[i] : tool_host(ctx, i);
        int hi = ctx->host != NULL && picked == NULL ? 0 : i;
        /* A window needs the levels it reads; search and details all. */
        rc = snapshot_trace_index(ctx->snap, host,
                                  r.event_name == NULL && r.search == NULL ? &r.win : NULL,
                                  &parts[i].h, ctx->err);
        if (rc != 0)
            break;
        parts[i].offset = MAX_DEVICES_PER_HOST * (uint32_t)(hi + 1);
        parts[i].counter_samples = r.perfetto;
        rc = select_host(&r, &parts[i], ctx->err);
        found += parts[i].n > 0;
    }
    if (rc == 0 && r.event_name != NULL && found == 0)
        rc = xp_err_set(ctx->err, -ENOENT,
                        "no event named \"%s\" starts at %.17g ms with duration %.17g ms and "
                        "unique_id %llu",
                        r.event_name, (double)r.detail_ts / 1e9, (double)r.detail_dur / 1e9,
                        (unsigned long long)r.detail_uid);
    if (rc == 0 && r.pb) {
        rc = write_pb(o, parts, nhosts, r.win.full_dma);
        if (rc != 0)
            rc = xp_err_set(ctx->err, rc, "%s writing the trace as format=pb",
                            rc == -ENOMEM ? "out of memory" : "zstd failed");
    } else if (rc == 0 && write_document(o, parts, nhosts, r.event_name != NULL, r.win.full_dma,
                                         r.perfetto) != 0) {
        rc = xp_err_set(ctx->err, -ENOMEM, "out of memory writing the trace");
    }
    for (i = 0; i < nhosts; i++) {
        /* Answered: a coarse index may go on in the background (mount). */
        if (rc == 0)
            trace_index_answered(ctx->snap, parts[i].h);
        free(parts[i].idx);
    }
    free(parts);
    free(picked);
    return rc;
}

const struct tool tool_trace_viewer_json = {
    .file = "trace_viewer.json",
    .tag = "trace_viewer@",
    .scope = TOOL_RUN | TOOL_HOST,
    .keys = trace_keys,
    .listed = tool_listed_any_trace,
    .produce = trace_viewer_produce,
};
