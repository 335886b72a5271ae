/*
 * trace_index.h - one host's trace as XProf's trace viewer sees it, indexed
 * for windows.
 *
 * This is our in-memory form of XProf's per-host trace container and its
 * SSTable (trace_events.{h,cc}): processes (pid before the multi-host offset)
 * with their threads, tracks (one per thread, one per counter or async
 * channel), and every event as a 24-byte record (start, duration, name,
 * source record, uid, zoom level; its track is where it stands); flows,
 * group ids and the rare durations over 281 s are kept beside, by source
 * record. It is built once per snapshot and
 * host as a snapshot part (snapshot_trace_index, in
 * trace_index_get.c) from an xplane (trace_xplane.c) or a Chrome-trace JSON
 * file (trace_ctrace.c) into the structures of trace_index.c, and is
 * read-only afterwards: requests read it in trace_select.c.
 *
 * Two orders are kept: events[] is grouped by track in output order and
 * sorted inside a track by XProf's TraceEventsComparator (so a full response
 * is one pass), and the level index (struct tv_levels) lists event indices
 * per zoom level in comparator order (XProf's SSTable key order), so a
 * window reads only the levels and time ranges it needs: its cost follows
 * what it returns.
 *
 * The first request decides how far levels are assigned: a zoomed-out
 * window reads only the coarse levels, so the index is first finished up to
 * the deepest level that window reads (tv_finish_for), and completed when a
 * request needs more (tv_complete, from another thread while windows read
 * the coarse levels: it writes only the events it places and publishes a
 * new level index).
 */
#ifndef XPROFS_TRACE_INDEX_H
#define XPROFS_TRACE_INDEX_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "out/out.h"
#include "session/session.h"

#define TV_LEVELS 13                  /* XProf's zoom levels */
#define TV_STREAMING_THRESHOLD 500000 /* fewer events: no down-sampling */
#define TV_NO_GROUP (-1)

/* XProf's flow entry types (TraceEvent::FlowEntryType). */
enum tv_flow_type { TV_FLOW_NONE, TV_FLOW_START, TV_FLOW_MID, TV_FLOW_END };

/* struct tv_event.flags */
enum tv_event_flags {
    TV_EV_DROPPED = 1, /* uid would be >= 256: XProf cannot store it */
    TV_EV_COUNTER = 2, /* counter sample (track without tid, no flow) */
    TV_EV_ASYNC = 4,   /* async event (track without tid, with flow) */
};

/* 24 bytes: an index holds one per event (76 M for a 1.6 GB profile). Its
 * track is implied by its place (tv_track_at): events are grouped by track
 * once built. A duration of TV_DUR_LONG ps or more is kept beside, by
 * source record (tv_dur). */
struct tv_event {
    uint64_t ts;           /* start, ps */
    uint64_t dur48 : 48;   /* duration, ps (0 for counters), or TV_DUR_LONG */
    uint64_t serial : 8;   /* uid among events with the same start (XProf "serial") */
    uint64_t level : 4;    /* zoom level 0..12 */
    uint64_t flags : 3;    /* enum tv_event_flags */
    uint64_t has_flow : 1; /* 1: tv_host.flows[src] is its flow */
    uint32_t name;         /* string id */
    uint32_t src;          /* builder's record of the source event, one per event
                              (args; indexes tv_host.flows and tv_host.groups) */
};

#define TV_DUR_LONG ((1ull << 48) - 1) /* 281 s: longer ones are kept beside */
#define TV_TRACK_BLOCK_SHIFT 12        /* tv_host.track_block: 4,096 events a block */

/* tv_event.level of an event not placed yet: finer than every level the
 * level index lists so far (struct tv_levels). */
#define TV_LEVEL_FINER 15

/* An event as a builder gives it (tv_add_event, tv_put_event). */
struct tv_new_event {
    uint64_t ts;      /* start, ps */
    uint64_t dur;     /* duration, ps (0 for counters) */
    uint32_t name;    /* string id */
    uint32_t track;   /* index into tv_host.tracks */
    uint32_t src;     /* builder's record of the source event, unique */
    uint8_t flags;    /* enum tv_event_flags */
    uint8_t has_flow; /* 1: tv_host.flows[src] is (or will be) its flow */
};

/* A duration of TV_DUR_LONG ps or more. */
struct tv_long_dur {
    uint32_t src; /* the event's source record */
    uint64_t dur; /* its duration, ps */
};

/* A flow: id (56 bits) | entry type << 56 | category << 58. */
#define TV_FLOW_ID(f) ((f) & ((1ull << 56) - 1))
#define TV_FLOW_TYPE(f) ((unsigned)(((f) >> 56) & 3))
#define TV_FLOW_CAT(f) ((unsigned)((f) >> 58))

struct tv_resource {
    uint32_t tid;  /* thread id (low 32 bits of the line's display id) */
    uint32_t name; /* string id of the thread name */
};

struct tv_device {
    uint32_t pid;            /* process id before the host offset */
    uint32_t name;           /* string id of "<host> <plane name>" */
    struct tv_resource *res; /* threads, ascending tid (once built) */
    uint32_t nres;           /* entries in res */
    uint32_t res_cap;        /* allocated entries */
    int tpu;                 /* 1: TPU core or non-core device (full_dma) */
};

struct tv_track {
    uint32_t pid;   /* process */
    uint32_t tid;   /* thread, when has_tid */
    uint32_t name;  /* counter / async channel name when !has_tid */
    int has_tid;    /* 1: a thread; 0: counter or async channel */
    uint32_t first; /* index of its first event in tv_host.events */
    uint32_t count; /* number of events */
    int flows;      /* 1: may hold an event with a flow (tv_host.flows_marked) */
};

/* A stack frame: an interned "@@" string (long_name, hlo_text). */
struct tv_frame {
    uint64_t hash; /* std::hash of "@@" + text: orders and numbers frames */
    uint32_t text; /* string id of the text without "@@" */
};

/* The level index: stored events per zoom level in comparator order, for
 * levels 0..known; every event's level up to known is assigned (the others
 * hold TV_LEVEL_FINER). known is TV_LEVELS - 1 once complete. A completed
 * index replaces a coarse one, which stays (older) until the host is freed,
 * since windows may still be reading it. */
struct tv_levels {
    uint32_t *by_level;            /* event indices, level by level */
    uint32_t start[TV_LEVELS + 1]; /* level L: by_level[start[L]..start[L + 1]) */
    int known;                     /* deepest level listed */
    struct tv_levels *older;       /* the index this one replaced, or NULL */
};

struct intern;   /* interned strings (base/intern.h) */
struct tv_build; /* building state (private) */
struct tv_rest;  /* what completing a coarse index needs (private) */
struct tv_host;

/* How a builder writes the full args of one of its events (event-details
 * request), in XProf's order, after "group_id" (written by the caller when
 * set). Returns the stack-frame hash the event references through "sf" (0
 * if none); *first is 1 while no arg has been written. */
typedef uint64_t (*tv_args_fn)(const struct tv_host *h, const struct tv_event *e, struct out *o,
                               int *first);

/* The first arg of a counter event as XProf's RawData holds it, when it is
 * a counter value (XProf's delta-series proto keeps double and unsigned
 * values only). */
enum tv_counter_kind { TV_COUNTER_NONE, TV_COUNTER_DOUBLE, TV_COUNTER_UINT };
struct tv_counter_value {
    int kind;   /* enum tv_counter_kind */
    double d;   /* TV_COUNTER_DOUBLE */
    uint64_t u; /* TV_COUNTER_UINT */
};

/* The values of a counter event, comma separated ("entries" row) and the
 * name of its first arg ("event_stats"); returns 0 if it has none. With o
 * NULL nothing is written and only *first (when not NULL) is filled. */
typedef int (*tv_counter_fn)(const struct tv_host *h, const struct tv_event *e, struct out *o,
                             const char **first_arg_name, struct tv_counter_value *first);

/* The group id of an event whose source record has no entry in
 * tv_host.groups (TV_NO_GROUP if none). */
typedef int32_t (*tv_group_fn)(const struct tv_host *h, const struct tv_event *e);

struct tv_host {
    char *hostname;                /* host (file name stem) */
    struct intern *strings;        /* names */
    struct tv_device *devices;     /* ascending pid */
    uint32_t ndevices;             /* entries in devices */
    struct tv_track *tracks;       /* output order: pid, then channels, then tid */
    uint32_t ntracks;              /* entries in tracks */
    struct tv_event *events;       /* by track, comparator order inside */
    uint32_t nevents;              /* entries in events (dropped ones included) */
    struct tv_levels *levels;      /* level index (read it with tv_levels_of) */
    struct tv_rest *rest;          /* state for tv_complete, NULL once complete */
    pthread_mutex_t complete_lock; /* one tv_complete at a time */
    int background;                /* a background completion was started */
    int flows_marked;              /* a track without tv_track.flows holds no event
                                      with a flow (tv_flows_marked) */
    uint64_t *flows;               /* packed flows by source record (has_flow) */
    uint32_t nflows;               /* entries in flows */
    const int32_t *groups;         /* group ids by source record, or NULL */
    int32_t *groups_own;           /* groups when allocated here (tv_alloc_groups),
                                      NULL when shared (tv_share_groups) */
    uint32_t ngroups;              /* entries in groups */
    struct tv_long_dur *long_durs; /* ascending src (once built) */
    uint32_t nlong_durs;           /* entries in long_durs */
    uint32_t *track_block;         /* track of the first event of every block of
                                      2^TV_TRACK_BLOCK_SHIFT, then of the last
                                      event (tv_track_at starts there) */
    struct tv_frame *frames;       /* ascending hash, no duplicates */
    uint32_t nframes;              /* entries in frames */
    int has_span;                  /* 0 when the trace has no event */
    uint64_t min_ps;               /* trace start (XProf min_timestamp_ps) */
    uint64_t max_ps;               /* trace end */
    int tpu;                       /* some device is a TPU core (details[full_dma]) */
    uint32_t *name_rank;           /* string id -> rank for XProf's name tie-break */
    struct tv_build *build;        /* state used while building (trace_levels.h) */
    tv_args_fn args;               /* builder's args writer */
    tv_counter_fn counter;         /* builder's counter writer */
    tv_group_fn group_of;          /* builder's group ids past ngroups, or NULL */
    void *source;                  /* builder's data (freed by source_free) */
    void (*source_free)(void *source);
};

/* --- strings ------------------------------------------------------------ */

/* Intern s[0..n); returns its id (>= 1), or 0 when out of memory. */
uint32_t tv_str(struct tv_host *h, const char *s, size_t n);
uint32_t tv_cstr(struct tv_host *h, const char *s);

/* Number of ids in use (ids run below this). */
uint32_t tv_str_count(const struct tv_host *h);

/* Text and length of id. */
const char *tv_text(const struct tv_host *h, uint32_t id);
size_t tv_len(const struct tv_host *h, uint32_t id);

/* --- building (used by the builders) ------------------------------------- */

/* An empty host; NULL when out of memory. */
struct tv_host *tv_host_new(const char *hostname);

/* Declare a process; returns its index or -1 (no memory). Idempotent per pid:
 * a second call renames it. */
int tv_add_device(struct tv_host *h, uint32_t pid, const char *name);

/* Declare (or rename) thread tid of process pid. */
int tv_add_resource(struct tv_host *h, uint32_t pid, uint32_t tid, uint32_t name);

/* The track of a thread or channel; created on first use. Returns its index
 * or -1. */
int64_t tv_track_thread(struct tv_host *h, uint32_t pid, uint32_t tid);
int64_t tv_track_channel(struct tv_host *h, uint32_t pid, uint32_t name);

/* Make room for n events in all. Returns 0 or -ENOMEM. */
int tv_reserve(struct tv_host *h, size_t n);

/* Append an event (serial and level are computed by tv_finish; src must
 * differ between events). Returns 0 or -ENOMEM. */
int tv_add_event(struct tv_host *h, const struct tv_new_event *e);

/* Record the flow of the event with source record src (whose has_flow the
 * caller sets). Returns 0 or -ENOMEM. */
int tv_set_flow(struct tv_host *h, uint32_t src, uint64_t id, unsigned type, unsigned category);

/* For builders filling events from several threads: n new event slots
 * after the current ones (contents undefined; tv_put_event fills them);
 * flows and groups for source records below n, written directly
 * (tv_host.flows[src], .groups_own[src]; contents undefined: an entry no
 * event refers to is never read). Return the first new slot in *first; 0
 * or -ENOMEM. */
int tv_alloc_events(struct tv_host *h, size_t n, uint32_t *first);
int tv_alloc_flows(struct tv_host *h, size_t n);
int tv_alloc_groups(struct tv_host *h, size_t n);

/* Instead of tv_alloc_groups: the group ids of source records below n are
 * groups[src] (a negative one: none), a table that outlives h (a
 * session's grouping, read in place: no copy, no fresh memory). */
void tv_share_groups(struct tv_host *h, const int32_t *groups, uint32_t n);

/* Fill slot i (from tv_alloc_events) with e; safe from several threads on
 * different slots. Returns 0 or -ENOMEM. */
int tv_put_event(struct tv_host *h, uint32_t i, const struct tv_new_event *e);

/* Builders that fill slots in runs of one track (a job's slots) declare the
 * runs instead of every event's track, which saves 4 bytes an event while
 * the index is built: tv_runs_begin before anything is reserved, then
 * tv_add_run for runs that together cover every slot once (from one thread),
 * tv_put_event (whose e->track is then not read), and tv_move_event for an
 * event whose track is not its run's (safe from several threads). Return 0
 * or -ENOMEM. */
int tv_runs_begin(struct tv_host *h);
int tv_add_run(struct tv_host *h, uint32_t first, uint32_t n, uint32_t track);
int tv_move_event(struct tv_host *h, uint32_t i, uint32_t track);

/* tv_add_run's track of a run all of whose events are moved. */
#define TV_RUN_MOVED UINT32_MAX

/* The tracks that hold events with a flow: tv_add_event marks its events'
 * tracks (tv_track.flows), a builder filling slots marks them itself (from
 * one thread, once filled); either says so with tv_flows_marked, and the
 * flows' order then reads only the marked tracks. */
void tv_mark_flows(struct tv_host *h, uint32_t track);
void tv_flows_marked(struct tv_host *h);

/* The packed form of a flow (see TV_FLOW_ID). */
uint64_t tv_flow_pack(uint64_t id, unsigned type, unsigned category);

/* Record a stack frame "@@" + text[0..n). */
int tv_add_frame(struct tv_host *h, const char *text, size_t n);

/* Sort, number uids, assign zoom levels and build the level index, with up
 * to nthreads threads. Returns 0 or -ENOMEM with err. */
int tv_finish(struct tv_host *h, int nthreads, struct xp_err *err);

struct tv_window;

/* tv_finish as far as window w reads (every level when w is NULL): zoom
 * levels, uids and the level index down to tv_window_level(h, w), where
 * that is cheaper than the whole (tv_complete adds the rest later). */
int tv_finish_for(struct tv_host *h, int nthreads, const struct tv_window *w, struct xp_err *err);

/* Assign the levels a coarse finish left, number every uid and publish the
 * complete level index; safe while other threads read the coarse levels,
 * and a no-op on a complete index. Returns 0 or -ENOMEM with err. */
int tv_complete(struct tv_host *h, int nthreads, struct xp_err *err);

void tv_host_free(struct tv_host *h);

/* --- reading ------------------------------------------------------------- */

/* XProf's zoom level resolution R[L] in ps (1e12 ... 1). */
uint64_t tv_level_resolution(int level);

/* A duration kept beside its event (e->dur48 == TV_DUR_LONG). */
uint64_t tv_long_dur(const struct tv_host *h, const struct tv_event *e);

/* The duration of e, ps. */
static inline uint64_t tv_dur(const struct tv_host *h, const struct tv_event *e)
{
    return e->dur48 != TV_DUR_LONG ? e->dur48 : tv_long_dur(h, e);
}

/* The track of event i of a built index (the tracks hold it in turn). */
uint32_t tv_track_at(const struct tv_host *h, uint32_t i);

/* The group id of e (TV_NO_GROUP if none). */
int32_t tv_event_group(const struct tv_host *h, const struct tv_event *e);

/* The current level index. */
static inline const struct tv_levels *tv_levels_of(const struct tv_host *h)
{
    return __atomic_load_n(&h->levels, __ATOMIC_ACQUIRE);
}

/* Events stored (not dropped) on a complete index: XProf's num_events
 * counts all. */
uint64_t tv_num_events(const struct tv_host *h);

/* A window request (XProf TraceViewOption): times in ms, resolution as
 * parsed. */
struct tv_window {
    double start_ms;   /* 0 = trace start */
    double end_ms;     /* 0 = trace end */
    double resolution; /* bins across the window; 0 = no down-sampling */
    int full_dma;      /* keep TPU FLOW_MID events */
};

/* The deepest zoom level window w reads from h (XProf reads levels 0, 1,
 * ... until one is at least as coarse as the window's resolution):
 * TV_LEVELS - 1 when it reads them all (no down-sampling). */
int tv_window_level(const struct tv_host *h, const struct tv_window *w);

/* The events of one host a window returns, as indices into h->events in
 * output order (track order, comparator order inside a track); the level
 * index must list tv_window_level(h, w). *idxp is malloc'd (free it).
 * Returns 0, -ENOMEM, or -EINVAL if the index is not that deep. */
int tv_select_window(const struct tv_host *h, const struct tv_window *w, uint32_t **idxp,
                     uint32_t *np);

/* Search request (complete index): stored events whose name starts with
 * prefix, in XProf's order (track order, then level, start, uid inside a
 * track). */
int tv_select_search(const struct tv_host *h, const char *prefix, int full_dma, uint32_t **idxp,
                     uint32_t *np);

/* One host's part of an answer: the events a request selected. */
struct tv_part {
    const struct tv_host *h; /* the index */
    uint32_t offset;         /* added to its pids (host i of a multi-host answer: 1000 (i + 1)) */
    uint32_t *idx;           /* selected events in output order (unless all) */
    uint32_t n;              /* entries in idx (events, if all) */
    int full_args;           /* JSON: write full args (details, search_metadata) */
    int all;                 /* idx unused: every stored event, in order */
    int counter_samples;     /* JSON: each counter sample an event of its own, with its
                                ts and named args (perfetto=1), instead of XProf's runs
                                of "entries" rows */
};

/* Event-details request (complete index): the stored event with this
 * start, uid, name and duration; -1 if none. */
int64_t tv_find_event(const struct tv_host *h, uint64_t ts, uint64_t uid, const char *name,
                      uint64_t dur);

/* Stack-frame number (1-based, ascending hash) within frames[0..n), or 0. */
uint32_t tv_frame_number(const struct tv_frame *frames, uint32_t n, uint64_t hash);

/* --- the shared index ---------------------------------------------------- */

/* The trace index of host in snap (xplane or Chrome-trace JSON source),
 * built once per snapshot, with the levels window w reads (every level
 * when w is NULL): the first request finishes it that far, a later one
 * that reads deeper completes it. The host belongs to the snapshot. */
int snapshot_trace_index(struct snapshot *snap, const char *host, const struct tv_window *w,
                         const struct tv_host **hp, struct xp_err *err);

/* Background completion, for a long-lived process (the mount): once a
 * request has been answered from a coarse index, the rest of it is built
 * on a thread of its own, so that the zoom that usually follows finds it
 * complete. Off by default: a one-shot `xprofs cat` has no next request.
 * trace_index_answered starts it for h (once; nothing if off or complete),
 * trace_index_drain waits until every such completion has ended. */
void trace_index_background(int on);
void trace_index_answered(struct snapshot *snap, const struct tv_host *h);
void trace_index_drain(void);

/* Builders (trace_xplane.c, trace_ctrace.c): finished for w as
 * tv_finish_for. */
int tv_build_xplane(struct snapshot *snap, const char *host, const struct tv_window *w,
                    struct tv_host **hp, struct xp_err *err);
int tv_build_ctrace(struct snapshot *snap, const char *host, const struct tv_window *w,
                    struct tv_host **hp, struct xp_err *err);

#endif
