/*
 * trace_pb.c - selected trace events as a zstd-compressed
 * xprof.TraceDataResponse (see trace_pb.h).
 *
 * XProf's converter walks the container's tracks (per process: its counter
 * and async channels, then its threads) and makes one series per non-empty
 * track: complete events (threads), async events (a channel whose first
 * event has a flow) or counter samples (the other channels). Strings are
 * interned in that walk's order, "" first. SerializeToString then writes
 * the fields in number order, so all complete series come first, then
 * counters, then async ones, and the interned strings only after them.
 *
 * Pass 1 walks the tracks in XProf's order: it interns the strings and
 * adds up every series' size. Pass 2 writes the fields in number order
 * through a zstd stream whose frame pledges the total. Memory is one record
 * per series and per string, never per event.
 */
#include "trace_pb.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_json.h"
#include "out/zstd_out.h"
#include "base/intern.h"

#define ZSTD_LEVEL 1 /* ZstdCompression::Compress */
#define NCATEGORIES 64

/* Protobuf wire types. */
#define WIRE_VARINT 0
#define WIRE_FIXED64 1
#define WIRE_LEN 2

/* TraceDataResponse field numbers. */
enum {
    F_COMPLETE = 1,
    F_COUNTER = 2,
    F_ASYNC = 3,
    F_METADATA = 4,
    F_STRINGS = 5,
    F_DETAILS = 6,
    F_SPAN_START = 7,
    F_SPAN_END = 8,
};

enum series_kind { SERIES_COMPLETE, SERIES_COUNTER, SERIES_ASYNC, SERIES_KINDS };

static const unsigned series_field[SERIES_KINDS] = {F_COMPLETE, F_COUNTER, F_ASYNC};

/* One series: a track's selected events. */
struct series {
    uint32_t part;      /* index into the parts */
    uint32_t track;     /* track of the part's host */
    uint32_t begin;     /* first position (in idx, or in h->events for `all`) */
    uint32_t end;       /* past the last position */
    uint32_t kind;      /* enum series_kind */
    uint32_t name_ref;  /* counter and async series: the channel name */
    uint64_t meta;      /* bytes of its TraceEventSeriesMetadata */
    uint64_t deltas;    /* bytes of the packed deltas */
    uint64_t durations; /* bytes of the packed durations */
    uint64_t names;     /* bytes of the packed name_refs */
    uint64_t size;      /* bytes of the whole TraceEventSeries */
};

/* One TraceEventMetadata. */
struct ev_meta {
    uint32_t flow_id;                /* 0: omitted */
    uint32_t category;               /* interned flow category, 0: omitted */
    uint32_t group;                  /* 0: omitted */
    uint32_t serial;                 /* 0: omitted */
    struct tv_counter_value counter; /* counter series only */
};

/* The conversion. */
struct pb {
    const struct tv_part *parts;   /* hosts */
    int nparts;                    /* entries in parts */
    const struct tpb_options *opt; /* options */
    struct intern strings;         /* interned strings: index i is id i + 1 */
    uint32_t **refs;               /* per part: string id -> interned index + 1 */
    uint32_t cat_ref[NCATEGORIES]; /* flow category -> interned index + 1 */
    struct series *series;         /* XProf's track order */
    uint32_t nseries;              /* entries in series */
    uint32_t cap;                  /* room in series */
    struct zstd_out z;             /* the output stream (pass 2) */
};

/* --- sizes ------------------------------------------------------------------- */

static unsigned varint_size(uint64_t v)
{
    unsigned n = 1;

    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Bytes of a length-delimited field (tag < 16) holding n bytes. */
static uint64_t len_field_size(uint64_t n)
{
    return 1 + varint_size(n) + n;
}

/* Bytes of a varint field (tag < 16), 0 when v is 0 and omitted. */
static uint64_t varint_field_size(uint64_t v)
{
    return v != 0 ? 1 + varint_size(v) : 0;
}

/* --- interning ------------------------------------------------------------- */

/* The index of s[0..n), interned at the end when new (MaybeInternString):
 * the table's id less one, ids starting at 1. Returns 0 or -ENOMEM. */
static int intern_ref(struct intern *t, const char *s, size_t n, uint32_t *ref)
{
    uint32_t id;
    int rc = intern_add(t, s, n, &id);

    if (rc != 0)
        return rc == -EIO ? -ENOMEM : rc;
    *ref = id - 1;
    return 0;
}

/* The interned index of string id of part p's host. */
static int intern_id(struct pb *pb, uint32_t p, uint32_t id, uint32_t *ref)
{
    const struct tv_host *h = pb->parts[p].h;
    int rc;

    if (pb->refs[p][id] != 0) {
        *ref = pb->refs[p][id] - 1;
        return 0;
    }
    rc = intern_ref(&pb->strings, tv_text(h, id), tv_len(h, id), ref);
    if (rc == 0)
        pb->refs[p][id] = *ref + 1;
    return rc;
}

/* The interned flow category of packed flow f, 0 when XProf leaves it out
 * (generic, legacy or unknown context types). */
static int intern_category(struct pb *pb, uint64_t flow, uint32_t *ref)
{
    unsigned cat = TV_FLOW_CAT(flow);
    const char *name = tj_context_name(cat);
    int rc;

    *ref = 0;
    if (name[0] == '\0' || cat >= NCATEGORIES)
        return 0;
    if (pb->cat_ref[cat] != 0) {
        *ref = pb->cat_ref[cat] - 1;
        return 0;
    }
    rc = intern_ref(&pb->strings, name, strlen(name), ref);
    if (rc == 0)
        pb->cat_ref[cat] = *ref + 1;
    return rc;
}

/* --- events ----------------------------------------------------------------- */

/* The next event of series s from position *pos; 0 when there is none. */
static int next_event(const struct pb *pb, const struct series *s, uint32_t *pos, uint32_t *ei)
{
    const struct tv_part *p = &pb->parts[s->part];

    while (*pos < s->end) {
        uint32_t i = p->all ? *pos : p->idx[*pos];
        (*pos)++;
        if (p->all && pb->opt->source == TPB_STREAMING && (p->h->events[i].flags & TV_EV_DROPPED))
            continue;
        *ei = i;
        return 1;
    }
    return 0;
}

/* The metadata XProf gives event e of a series (PopulateTraceEventMetadata,
 * or the counter value for counter series). */
static int event_meta(struct pb *pb, const struct series *s, const struct tv_event *e,
                      struct ev_meta *m)
{
    const struct tv_host *h = pb->parts[s->part].h;
    int32_t group;

    memset(m, 0, sizeof(*m));
    if (s->kind == SERIES_COUNTER) {
        if (h->counter != NULL)
            h->counter(h, e, NULL, NULL, &m->counter);
        return 0;
    }
    if (e->has_flow) {
        uint64_t flow = h->flows[e->src];
        /* TraceEventMetadata.flow_id is a uint32: the id's low bits. */
        m->flow_id = (uint32_t)TV_FLOW_ID(flow);
        if (intern_category(pb, flow, &m->category) != 0)
            return -ENOMEM;
    }
    group = tv_event_group(h, e);
    if (group != TV_NO_GROUP)
        m->group = (uint32_t)group;
    if (pb->opt->source == TPB_STREAMING)
        m->serial = e->serial;
    return 0;
}

static uint64_t event_meta_size(const struct ev_meta *m)
{
    uint64_t n = varint_field_size(m->flow_id) + varint_field_size(m->category) +
                 varint_field_size(m->group) + varint_field_size(m->serial);

    if (m->counter.kind == TV_COUNTER_DOUBLE)
        n += 1 + 8;
    else if (m->counter.kind == TV_COUNTER_UINT)
        n += 1 + varint_size(m->counter.u);
    return n;
}

/* --- pass 1: series and sizes ---------------------------------------------- */

/* Size series s (its kind set) and intern its strings, in XProf's order. */
static int size_series(struct pb *pb, struct series *s)
{
    const struct tv_part *p = &pb->parts[s->part];
    const struct tv_track *t = &p->h->tracks[s->track];
    uint64_t last = 0, metas = 0;
    uint32_t pos = s->begin, ei, pid = t->pid + p->offset;
    struct ev_meta m;
    int rc;

    if (s->kind != SERIES_COMPLETE) {
        rc = intern_id(pb, s->part, t->name, &s->name_ref);
        if (rc != 0)
            return rc;
    }
    s->meta =
        varint_field_size(pid) +
        (s->kind == SERIES_COMPLETE ? varint_field_size(t->tid) : varint_field_size(s->name_ref));
    while (next_event(pb, s, &pos, &ei)) {
        const struct tv_event *e = &p->h->events[ei];
        s->deltas += varint_size(e->ts - last);
        last = e->ts;
        if (s->kind != SERIES_COUNTER)
            s->durations += varint_size(tv_dur(p->h, e));
        if (s->kind == SERIES_COMPLETE) {
            uint32_t ref;
            rc = intern_id(pb, s->part, e->name, &ref);
            if (rc != 0)
                return rc;
            s->names += varint_size(ref);
        }
        rc = event_meta(pb, s, e, &m);
        if (rc != 0)
            return rc;
        metas += len_field_size(event_meta_size(&m));
    }
    s->size = len_field_size(s->meta) + len_field_size(s->deltas) + metas;
    if (s->kind != SERIES_COUNTER)
        s->size += len_field_size(s->durations);
    if (s->kind == SERIES_COMPLETE)
        s->size += len_field_size(s->names);
    return 0;
}

/* Append and size the series of positions [begin, end) of track t in part
 * p, unless no event is left there. */
static int add_series(struct pb *pb, uint32_t p, uint32_t t, uint32_t begin, uint32_t end)
{
    const struct tv_host *h = pb->parts[p].h;
    struct series s = {0};
    uint32_t pos = begin, ei;

    s.part = p;
    s.track = t;
    s.begin = begin;
    s.end = end;
    if (!next_event(pb, &s, &pos, &ei))
        return 0;
    if (h->tracks[t].has_tid)
        s.kind = SERIES_COMPLETE;
    else if (h->events[ei].has_flow)
        s.kind = SERIES_ASYNC;
    else
        s.kind = SERIES_COUNTER;
    if (pb->nseries == pb->cap) {
        uint32_t cap = pb->cap ? pb->cap * 2 : 64;
        struct series *v = realloc(pb->series, cap * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        pb->series = v;
        pb->cap = cap;
    }
    pb->series[pb->nseries] = s;
    if (size_series(pb, &pb->series[pb->nseries]) != 0)
        return -ENOMEM;
    pb->nseries++;
    return 0;
}

/* The series of every part, in XProf's track order. */
static int collect_series(struct pb *pb)
{
    int p, rc = 0;

    for (p = 0; p < pb->nparts && rc == 0; p++) {
        const struct tv_part *part = &pb->parts[p];
        const struct tv_host *h = part->h;
        uint32_t i, j, t;
        if (part->all) {
            for (t = 0; t < h->ntracks && rc == 0; t++)
                rc = add_series(pb, (uint32_t)p, t, h->tracks[t].first,
                                h->tracks[t].first + h->tracks[t].count);
            continue;
        }
        for (i = 0; i < part->n && rc == 0; i = j) {
            uint32_t track = tv_track_at(h, part->idx[i]);
            uint32_t end = h->tracks[track].first + h->tracks[track].count;
            /* idx lists tracks in order, each track's events together */
            for (j = i + 1; j < part->n && part->idx[j] < end; j++)
                ;
            rc = add_series(pb, (uint32_t)p, track, i, j);
        }
    }
    return rc;
}

/* --- metadata, details, span ------------------------------------------------ */

static uint64_t thread_size(const struct tv_host *h, const struct tv_resource *r)
{
    uint64_t n = tv_len(h, r->name);

    return (n > 0 ? len_field_size(n) : 0) + varint_field_size(r->tid) + 1 + varint_size(r->tid);
}

static uint64_t process_size(const struct tv_host *h, const struct tv_device *d, uint32_t pid)
{
    uint64_t n = tv_len(h, d->name), size;
    uint32_t r;

    size = (n > 0 ? len_field_size(n) : 0) + varint_field_size(pid) + 1 + varint_size(pid);
    for (r = 0; r < d->nres; r++)
        size += len_field_size(thread_size(h, &d->res[r]));
    return size;
}

/* TraceMetadata: processes in ascending id, threads in ascending id. */
static uint64_t metadata_size(const struct pb *pb)
{
    uint64_t size = 0;
    uint32_t d;
    int p;

    for (p = 0; p < pb->nparts; p++) {
        const struct tv_host *h = pb->parts[p].h;
        for (d = 0; d < h->ndevices; d++)
            size += len_field_size(
                process_size(h, &h->devices[d], h->devices[d].pid + pb->parts[p].offset));
    }
    return size;
}

/* The details (streaming viewer: TraceOptionsToDetails). */
struct detail {
    const char *name; /* DetailItem.name */
    int value;        /* DetailItem.value */
};

static int details_of(const struct pb *pb, struct detail *d)
{
    int p, tpu = 0;

    if (pb->opt->source != TPB_STREAMING)
        return 0;
    for (p = 0; p < pb->nparts; p++)
        tpu |= pb->parts[p].h->tpu;
    d[0].name = "mpmd_pipeline_view";
    d[0].value = 0;
    if (!tpu)
        return 1;
    d[1].name = "full_dma";
    d[1].value = pb->opt->full_dma != 0;
    return 2;
}

static uint64_t detail_size(const struct detail *d)
{
    return len_field_size(strlen(d->name)) + (d->value ? 2 : 0);
}

/* The full time span over the parts; 0 when no host has one. */
static int span_of(const struct pb *pb, uint64_t *lo, uint64_t *hi)
{
    int p, has = 0;

    for (p = 0; p < pb->nparts; p++) {
        const struct tv_host *h = pb->parts[p].h;
        if (!h->has_span)
            continue;
        if (!has || h->min_ps < *lo)
            *lo = h->min_ps;
        if (!has || h->max_ps > *hi)
            *hi = h->max_ps;
        has = 1;
    }
    return has;
}

/* --- pass 2: writing -------------------------------------------------------- */

static void put_varint(struct zstd_out *z, uint64_t v)
{
    unsigned char *b = zo_reserve(z, 10);
    size_t n = 0;

    if (b == NULL)
        return;
    while (v >= 0x80) {
        b[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    b[n++] = (unsigned char)v;
    zo_commit(z, n);
}

static void put_tag(struct zstd_out *z, unsigned field, unsigned wire)
{
    put_varint(z, (uint64_t)field << 3 | wire);
}

static void put_len(struct zstd_out *z, unsigned field, uint64_t n)
{
    put_tag(z, field, WIRE_LEN);
    put_varint(z, n);
}

static void put_uint_field(struct zstd_out *z, unsigned field, uint64_t v)
{
    if (v == 0)
        return;
    put_tag(z, field, WIRE_VARINT);
    put_varint(z, v);
}

static void put_bytes_field(struct zstd_out *z, unsigned field, const char *s, size_t n)
{
    put_len(z, field, n);
    zo_write(z, s, n);
}

static void put_double(struct zstd_out *z, double v)
{
    unsigned char b[8];
    uint64_t bits;
    int i;

    memcpy(&bits, &v, sizeof(bits));
    for (i = 0; i < 8; i++)
        b[i] = (unsigned char)(bits >> (8 * i));
    zo_write(z, b, 8);
}

static void put_event_meta(struct zstd_out *z, const struct ev_meta *m)
{
    put_len(z, 5, event_meta_size(m));
    put_uint_field(z, 1, m->flow_id);
    put_uint_field(z, 2, m->category);
    put_uint_field(z, 3, m->group);
    put_uint_field(z, 4, m->serial);
    if (m->counter.kind == TV_COUNTER_DOUBLE) {
        put_tag(z, 5, WIRE_FIXED64);
        put_double(z, m->counter.d);
    } else if (m->counter.kind == TV_COUNTER_UINT) {
        put_tag(z, 6, WIRE_VARINT);
        put_varint(z, m->counter.u);
    }
}

/* One TraceEventSeries, as field `field` of the response. */
static int put_series(struct pb *pb, const struct series *s)
{
    const struct tv_part *p = &pb->parts[s->part];
    const struct tv_host *h = p->h;
    const struct tv_track *t = &h->tracks[s->track];
    struct zstd_out *z = &pb->z;
    uint32_t pos, ei, ref;
    uint64_t last = 0;
    struct ev_meta m;

    put_len(z, series_field[s->kind], s->size);
    put_len(z, 1, s->meta);
    put_uint_field(z, 1, t->pid + p->offset);
    if (s->kind == SERIES_COMPLETE)
        put_uint_field(z, 2, t->tid);
    else
        put_uint_field(z, 3, s->name_ref);
    put_len(z, 2, s->deltas);
    for (pos = s->begin; next_event(pb, s, &pos, &ei);) {
        put_varint(z, h->events[ei].ts - last);
        last = h->events[ei].ts;
    }
    if (s->kind != SERIES_COUNTER) {
        put_len(z, 3, s->durations);
        for (pos = s->begin; next_event(pb, s, &pos, &ei);)
            put_varint(z, tv_dur(h, &h->events[ei]));
    }
    if (s->kind == SERIES_COMPLETE) {
        put_len(z, 4, s->names);
        for (pos = s->begin; next_event(pb, s, &pos, &ei);) {
            if (intern_id(pb, s->part, h->events[ei].name, &ref) != 0)
                return -ENOMEM;
            put_varint(z, ref);
        }
    }
    for (pos = s->begin; next_event(pb, s, &pos, &ei);) {
        if (event_meta(pb, s, &h->events[ei], &m) != 0)
            return -ENOMEM;
        put_event_meta(z, &m);
    }
    return 0;
}

static void put_metadata(struct pb *pb, uint64_t size)
{
    struct zstd_out *z = &pb->z;
    uint32_t d, r;
    int p;

    put_len(z, F_METADATA, size);
    for (p = 0; p < pb->nparts; p++) {
        const struct tv_host *h = pb->parts[p].h;
        for (d = 0; d < h->ndevices; d++) {
            const struct tv_device *dev = &h->devices[d];
            uint32_t pid = dev->pid + pb->parts[p].offset;
            put_len(z, 1, process_size(h, dev, pid));
            if (tv_len(h, dev->name) > 0)
                put_bytes_field(z, 1, tv_text(h, dev->name), tv_len(h, dev->name));
            put_uint_field(z, 2, pid);
            put_tag(z, 3, WIRE_VARINT); /* optional sort_index: written even when 0 */
            put_varint(z, pid);
            for (r = 0; r < dev->nres; r++) {
                const struct tv_resource *res = &dev->res[r];
                put_len(z, 4, thread_size(h, res));
                if (tv_len(h, res->name) > 0)
                    put_bytes_field(z, 1, tv_text(h, res->name), tv_len(h, res->name));
                put_uint_field(z, 2, res->tid);
                put_tag(z, 3, WIRE_VARINT);
                put_varint(z, res->tid);
            }
        }
    }
}

/* --- the whole response ----------------------------------------------------- */

static void pb_free(struct pb *pb)
{
    int p;

    for (p = 0; pb->refs != NULL && p < pb->nparts; p++)
        free(pb->refs[p]);
    free(pb->refs);
    free(pb->series);
    intern_free(&pb->strings);
}

/* Pass 1 and the response size. */
static int plan(struct pb *pb, uint64_t *total, uint64_t *meta_size)
{
    struct detail details[2];
    uint64_t size = 0, lo = 0, hi = 0;
    uint32_t i, ref;
    int p, nd;

    pb->refs = calloc((size_t)pb->nparts, sizeof(*pb->refs));
    if (pb->refs == NULL)
        return -ENOMEM;
    for (p = 0; p < pb->nparts; p++) {
        pb->refs[p] = calloc(tv_str_count(pb->parts[p].h) + 1, sizeof(**pb->refs));
        if (pb->refs[p] == NULL)
            return -ENOMEM;
    }
    /* Index 0 is "", so that an unset name_ref names nothing. */
    if (intern_init(&pb->strings) != 0 || intern_ref(&pb->strings, "", 0, &ref) != 0 ||
        collect_series(pb) != 0)
        return -ENOMEM;
    for (i = 0; i < pb->nseries; i++)
        size += len_field_size(pb->series[i].size);
    *meta_size = metadata_size(pb);
    size += len_field_size(*meta_size);
    for (i = 1; i < pb->strings.n; i++)
        size += len_field_size(pb->strings.len[i]);
    nd = details_of(pb, details);
    for (p = 0; p < nd; p++)
        size += len_field_size(detail_size(&details[p]));
    if (span_of(pb, &lo, &hi))
        size += 2 + varint_size(lo) + varint_size(hi);
    *total = size;
    return 0;
}

/* Pass 2. */
static int emit(struct pb *pb, uint64_t meta_size)
{
    struct zstd_out *z = &pb->z;
    struct detail details[2];
    uint64_t lo = 0, hi = 0;
    uint32_t i, kind;
    int d, nd;

    for (kind = 0; kind < SERIES_KINDS; kind++) {
        for (i = 0; i < pb->nseries; i++) {
            if (pb->series[i].kind == kind && put_series(pb, &pb->series[i]) != 0)
                return -ENOMEM;
        }
    }
    put_metadata(pb, meta_size);
    for (i = 1; i < pb->strings.n; i++)
        put_bytes_field(z, F_STRINGS, pb->strings.text[i], pb->strings.len[i]);
    nd = details_of(pb, details);
    for (d = 0; d < nd; d++) {
        put_len(z, F_DETAILS, detail_size(&details[d]));
        put_bytes_field(z, 1, details[d].name, strlen(details[d].name));
        put_uint_field(z, 2, (uint64_t)details[d].value);
    }
    if (span_of(pb, &lo, &hi)) {
        put_tag(z, F_SPAN_START, WIRE_VARINT);
        put_varint(z, lo);
        put_tag(z, F_SPAN_END, WIRE_VARINT);
        put_varint(z, hi);
    }
    return 0;
}

int trace_pb_write(const struct tv_part *parts, int nparts, const struct tpb_options *opt,
                   struct out *o)
{
    struct pb pb;
    uint64_t total = 0, meta_size = 0;
    int rc, rc_end;

    memset(&pb, 0, sizeof(pb));
    pb.parts = parts;
    pb.nparts = nparts;
    pb.opt = opt;
    rc = plan(&pb, &total, &meta_size);
    if (rc == 0)
        rc = zo_begin(&pb.z, o, ZSTD_LEVEL, total);
    if (rc == 0) {
        rc = emit(&pb, meta_size);
        /* zstd fails the frame when the bytes differ from the pledge. */
        rc_end = zo_end(&pb.z);
        if (rc == 0)
            rc = rc_end;
    }
    pb_free(&pb);
    return rc;
}
