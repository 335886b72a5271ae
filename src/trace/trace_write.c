/*
 * trace_write.c - the "traceEvents" entries of a trace viewer answer,
 * formatted in parallel batches (see trace_write.h).
 */
#include "trace_write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"
#include "trace_json.h"

/* Events a batch formats, and batches formatted at once. At about 200
 * bytes of JSON an event a batch fills one or two output chunks; each slot
 * keeps its writer's chunks from round to round. */
#define BATCH_EVENTS 8192
#define ROUND_BATCHES 4
#define ENTRY_BYTES 128 /* JSON of an event, at least (150-250 bytes typically) */

/* Writer state across events (counter grouping as XProf does it). */
struct event_writer {
    struct out *o;                  /* output */
    const struct tv_frames *frames; /* for "sf" numbers */
    int *first;                     /* no traceEvents entry yet */
    int prev_counter;               /* previous entry was a sample of a counter run */
    uint32_t last_pid;              /* key of the open counter track */
    const char *last_name;          /* its name ("" initially) */
    uint64_t counters;              /* counter samples written */
    struct out values;              /* a sample's values, rewound for each (a
                                       writer per sample cost a 2 MiB chunk) */
};

/* "args":{...} for a window response or full args; then "sf". */
static void write_args(struct event_writer *w, const struct tv_part *p, const struct tv_event *e,
                       int async_copy)
{
    struct out *o = w->o;
    int first = 1;
    uint64_t sf = 0;
    int32_t group = tv_event_group(p->h, e);

    if (async_copy) {
        if (group == TV_NO_GROUP)
            return;
        out_puts(o, ",\"args\":{\"group_id\":");
        out_i64(o, group);
        out_putc(o, '}');
        return;
    }
    out_puts(o, ",\"args\":{");
    if (group != TV_NO_GROUP) {
        out_puts(o, "\"group_id\":");
        out_i64(o, group);
        first = 0;
    }
    if (p->full_args) {
        if (p->h->args != NULL)
            sf = p->h->args(p->h, e, o, &first);
    } else {
        if (!first)
            out_putc(o, ',');
        out_puts(o, "\"uid\":");
        out_u64(o, e->serial);
    }
    out_putc(o, '}');
    if (sf != 0) {
        uint32_t k = tv_frame_number(w->frames->v, w->frames->n, sf);
        if (k != 0) {
            out_puts(o, ",\"sf\":");
            out_u64(o, k);
        }
    }
}

static void write_flow(struct out *o, uint64_t flow)
{
    unsigned cat = TV_FLOW_CAT(flow);

    out_puts(o, ",\"bind_id\":");
    out_u64(o, TV_FLOW_ID(flow));
    if (cat > 1 && tj_context_name(cat)[0] != '\0') {
        out_puts(o, ",\"cat\":\"");
        out_puts(o, tj_context_name(cat));
        out_putc(o, '"');
    }
    switch (TV_FLOW_TYPE(flow)) {
    case TV_FLOW_START:
        out_puts(o, ",\"flow_out\":true");
        break;
    case TV_FLOW_MID:
        out_puts(o, ",\"flow_in\":true,\"flow_out\":true");
        break;
    case TV_FLOW_END:
        out_puts(o, ",\"flow_in\":true");
        break;
    default:
        break;
    }
}

static void write_counter(struct event_writer *w, const struct tv_part *p, const struct tv_event *e,
                          uint32_t pid)
{
    struct out *o = w->o;
    const char *name = tv_text(p->h, e->name), *first_arg = "";
    struct out *values = &w->values;
    size_t i;

    w->counters++;
    out_rewind(values);
    if (p->h->counter != NULL && !p->h->counter(p->h, e, values, &first_arg, NULL))
        out_rewind(values);
    if (w->last_pid != pid || strcmp(w->last_name, name) != 0) {
        w->last_pid = pid;
        w->last_name = name;
        /* XProf writes the counter name and arg name unescaped. */
        out_puts(o, "{\"pid\":");
        out_u64(o, pid);
        out_puts(o, ",\"name\":\"");
        out_puts(o, name);
        out_puts(o, "\",\"ph\":\"C\"");
        if (first_arg[0] != '\0' || values->len > 0) {
            out_puts(o, ",\"event_stats\":\"");
            out_puts(o, first_arg);
            out_putc(o, '"');
        }
        out_puts(o, ",\"entries\":[");
    }
    if (values->len > 0) {
        size_t used = (values->len + OUT_CHUNK - 1) / OUT_CHUNK;
        out_putc(o, '[');
        tj_us(o, e->ts);
        out_putc(o, ',');
        for (i = 0; i < used; i++) {
            size_t n = i + 1 < used ? OUT_CHUNK : values->len - i * OUT_CHUNK;
            out_write(o, values->chunks[i], n);
        }
        out_putc(o, ']');
    }
    if (values->oom)
        o->oom = 1;
}

/* A counter sample as an event of its own, the Trace Event Format's
 * {"ph":"C","ts":...,"args":{name: value...}} that Perfetto reads (its JSON
 * importer fails a whole file at the first event holding an array before
 * its "ts", as XProf's "entries" runs do). */
static void write_counter_sample(struct event_writer *w, const struct tv_part *p,
                                 const struct tv_event *e, uint32_t pid)
{
    struct out *o = w->o;
    int first = 1;

    w->counters++;
    out_puts(o, "{\"pid\":");
    out_u64(o, pid);
    out_puts(o, ",\"name\":");
    tj_str(o, tv_text(p->h, e->name), tv_len(p->h, e->name));
    out_puts(o, ",\"ts\":");
    tj_us(o, e->ts);
    out_puts(o, ",\"ph\":\"C\",\"args\":{");
    if (p->h->args != NULL)
        (void)p->h->args(p->h, e, o, &first); /* a counter has no stack frame */
    out_puts(o, "}}");
}

/* 1 if the event is a sample of an XProf counter run ("entries" rows). */
static int in_counter_run(const struct tv_part *p, const struct tv_event *e)
{
    return (e->flags & TV_EV_COUNTER) != 0 && !p->counter_samples;
}

/* One event (XProf JsonEventWriter::WriteEvent / AddCounterEvent). */
static void write_event(struct event_writer *w, const struct tv_part *p, uint32_t ei)
{
    const struct tv_event *e = &p->h->events[ei];
    const struct tv_track *t = &p->h->tracks[tv_track_at(p->h, ei)];
    uint64_t dur = tv_dur(p->h, e);
    struct out *o = w->o;
    uint32_t pid = t->pid + p->offset;
    int in_run = in_counter_run(p, e);
    const char *name = tv_text(p->h, e->name);

    if ((w->prev_counter && !in_run) ||
        (in_run && w->prev_counter && (w->last_pid != pid || strcmp(w->last_name, name) != 0)))
        out_puts(o, "]}");
    if (!*w->first)
        out_putc(o, ',');
    *w->first = 0;
    w->prev_counter = in_run;
    if (in_run) {
        write_counter(w, p, e, pid);
        return;
    }
    if (e->flags & TV_EV_COUNTER) {
        write_counter_sample(w, p, e, pid);
        return;
    }
    out_puts(o, "{\"pid\":");
    out_u64(o, pid);
    if (t->has_tid) {
        out_puts(o, ",\"tid\":");
        out_u64(o, t->tid);
    }
    out_puts(o, ",\"name\":");
    tj_str(o, name, tv_len(p->h, e->name));
    out_puts(o, ",\"ts\":");
    tj_us(o, e->ts);
    if (t->has_tid) {
        out_puts(o, ",\"dur\":");
        tj_us(o, dur > 0 ? dur : 1);
        if (e->has_flow)
            write_flow(o, p->h->flows[e->src]);
        out_puts(o, ",\"ph\":\"X\"");
        write_args(w, p, e, 0);
    } else {
        uint64_t flow = p->h->flows[e->src];
        unsigned type = TV_FLOW_TYPE(flow);
        out_puts(o, ",\"id\":");
        out_u64(o, TV_FLOW_ID(flow));
        out_puts(o, ",\"cat\":\"");
        out_puts(o, tj_context_name(TV_FLOW_CAT(flow)));
        out_putc(o, '"');
        out_puts(o, type == TV_FLOW_END ? ",\"ph\":\"e\"" : ",\"ph\":\"b\"");
        write_args(w, p, e, 0);
    }
    if (e->serial > 0) {
        out_puts(o, ",\"z\":");
        out_u64(o, e->serial);
    }
    out_putc(o, '}');
    if (!t->has_tid && TV_FLOW_TYPE(p->h->flows[e->src]) == TV_FLOW_MID) {
        /* A MID async event closes itself with an "e" copy at its end. */
        uint64_t flow = p->h->flows[e->src];
        out_puts(o, ",{\"pid\":");
        out_u64(o, pid);
        out_puts(o, ",\"name\":");
        tj_str(o, name, tv_len(p->h, e->name));
        out_puts(o, ",\"ts\":");
        tj_us(o, e->ts + dur);
        out_puts(o, ",\"id\":");
        out_u64(o, TV_FLOW_ID(flow));
        out_puts(o, ",\"cat\":\"");
        out_puts(o, tj_context_name(TV_FLOW_CAT(flow)));
        out_puts(o, "\",\"ph\":\"e\"");
        write_args(w, p, e, 1);
        if (e->serial > 0) {
            out_puts(o, ",\"z\":");
            out_u64(o, e->serial);
        }
        out_putc(o, '}');
    }
}

/* The event at position i of a part. */
static uint32_t part_event(const struct tv_part *p, uint32_t i)
{
    return p->all ? i : p->idx[i];
}

/* Number of positions of a part (for `all`, dropped events included). */
static uint32_t part_positions(const struct tv_part *p)
{
    return p->all ? p->h->nevents : p->n;
}

/* 1 if the event at position i of a part is written. */
static int part_written(const struct tv_part *p, uint32_t i)
{
    return !p->all || !(p->h->events[i].flags & TV_EV_DROPPED);
}

/* A run of positions [lo, hi) of one part, and the writer state the entries
 * before it leave. */
struct batch {
    uint32_t part;         /* index into the parts */
    uint32_t lo, hi;       /* positions */
    int first;             /* no entry before it */
    int prev_counter;      /* the entry before it is in a counter run */
    uint32_t last_pid;     /* the last counter sample before it: its pid */
    const char *last_name; /* and name ("" if none) */
    struct out *out;       /* its bytes (its slot's writer) */
    uint64_t counters;     /* counter samples in it */
};

struct round {
    const struct tv_part *parts;
    const struct tv_frames *frames;
    struct batch *b; /* this round's batches */
};

static int format_batch(void *arg, size_t k)
{
    struct round *r = arg;
    struct batch *b = &r->b[k];
    const struct tv_part *p = &r->parts[b->part];
    struct event_writer w;
    uint32_t i;

    memset(&w, 0, sizeof(w));
    w.o = b->out;
    w.frames = r->frames;
    w.first = &b->first;
    w.prev_counter = b->prev_counter;
    w.last_pid = b->last_pid;
    w.last_name = b->last_name;
    out_init(&w.values);
    for (i = b->lo; i < b->hi; i++) {
        if (part_written(p, i))
            write_event(&w, p, part_event(p, i));
    }
    out_discard(&w.values);
    b->counters = w.counters;
    return b->out->oom ? -ENOMEM : 0;
}

/* Where the planner is: the next position, and the state before it. */
struct cursor {
    int part;              /* current part */
    uint32_t pos;          /* next position in it */
    int first;             /* no entry written before pos */
    int prev_counter;      /* the entry before pos is in a counter run */
    uint32_t last_pid;     /* last counter sample before pos */
    const char *last_name; /* "" if none */
};

/* Carry the cursor's state over positions [lo, hi) of part p: the last
 * written entry and the last counter sample among them. */
static void cursor_pass(struct cursor *c, const struct tv_part *p, uint32_t lo, uint32_t hi)
{
    uint32_t i = hi;
    int seen_entry = 0;

    while (i > lo) {
        const struct tv_event *e;
        uint32_t ei;
        i--;
        if (!part_written(p, i))
            continue;
        ei = part_event(p, i);
        e = &p->h->events[ei];
        if (!seen_entry) {
            seen_entry = 1;
            c->first = 0;
            c->prev_counter = in_counter_run(p, e);
        }
        if (in_counter_run(p, e)) {
            c->last_pid = p->h->tracks[tv_track_at(p->h, ei)].pid + p->offset;
            c->last_name = tv_text(p->h, e->name);
            return;
        }
    }
}

int tw_write_events(struct out *o, const struct tv_part *parts, int nparts,
                    const struct tv_frames *frames, int *first, uint64_t *counters)
{
    return tw_write_batched(o, parts, nparts, frames, first, counters, BATCH_EVENTS);
}

int tw_write_batched(struct out *o, const struct tv_part *parts, int nparts,
                     const struct tv_frames *frames, int *first, uint64_t *counters,
                     uint32_t batch_events)
{
    struct batch b[ROUND_BATCHES];
    struct out slot[ROUND_BATCHES];
    struct round r = {parts, frames, b};
    struct cursor c = {0, 0, *first, 0, 0, ""};
    size_t nb, k;
    int rc = 0;

    for (k = 0; k < ROUND_BATCHES; k++)
        out_init(&slot[k]);
    *counters = 0;
    while (rc == 0 && c.part < nparts && !out_failed(o)) {
        /* Plan a round: up to ROUND_BATCHES runs of at most batch_events. */
        for (nb = 0; nb < ROUND_BATCHES && c.part < nparts;) {
            const struct tv_part *p = &parts[c.part];
            uint32_t end = part_positions(p), hi;
            if (c.pos >= end) {
                c.part++;
                c.pos = 0;
                continue;
            }
            hi = end - c.pos > batch_events ? c.pos + batch_events : end;
            memset(&b[nb], 0, sizeof(b[nb]));
            b[nb].part = (uint32_t)c.part;
            b[nb].lo = c.pos;
            b[nb].hi = hi;
            b[nb].first = c.first;
            b[nb].prev_counter = c.prev_counter;
            b[nb].last_pid = c.last_pid;
            b[nb].last_name = c.last_name;
            b[nb].out = &slot[nb];
            out_rewind(b[nb].out);
            out_expect(b[nb].out, (size_t)(hi - c.pos) * ENTRY_BYTES);
            cursor_pass(&c, p, c.pos, hi);
            c.pos = hi;
            nb++;
        }
        rc = parallel_for(nb, nb > 1 ? 0 : 1, format_batch, &r);
        for (k = 0; rc == 0 && k < nb; k++) {
            out_append(o, b[k].out);
            *counters += b[k].counters;
        }
    }
    for (k = 0; k < ROUND_BATCHES; k++)
        out_discard(&slot[k]);
    if (rc == 0 && c.prev_counter)
        out_puts(o, "]}");
    *first = c.first;
    return rc;
}
