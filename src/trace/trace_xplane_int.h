/*
 * trace_xplane_int.h - what the pieces of building a trace index from an
 * xplane share (internal to trace_xplane*.c; the entry point
 * tv_build_xplane is in trace_index.h).
 *
 * trace_xplane.c          the build: planes declared, jobs counted, placed
 *                         and filled, the index finished
 * trace_xplane_planes.c   which planes and lines are shown, their pids,
 *                         names and threads; the jobs of their lines
 * trace_xplane_specials.c what stats mean to the trace viewer: the roles of
 *                         a plane's stat ids, the specials (flows, group
 *                         ids, async, step names, frames) of each metadata
 * trace_xplane_fill.c     the parallel jobs: counting, then filling the
 *                         slots with each event's own specials
 */
#ifndef XPROFS_TRACE_XPLANE_INT_H
#define XPROFS_TRACE_XPLANE_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "xplane/group.h"
#include "trace_index.h"
#include "trace_xplane.h"
#include "reader/xspace.h"

#define HOST_PID_FIRST 701
#define DEVICE_PID_FIRST 1
#define DEVICE_PID_LAST 500
#define CUSTOM_PID_FIRST 501
#define MAX_LONG_NAME 10000
#define ARG_INTERN_MIN 17 /* string args longer than 16 bytes are interned */
#define MAX_HLO_IDS 4     /* "hlo_text" stat metadata ids cached per plane */

enum { CTX_GPU_LAUNCH = 9, MAX_CONTEXT = 15 /* later context types read as generic */ };

/* What the stats of one event mean to the trace viewer. */
struct special {
    int has_flow;                     /* a flow stat (last one wins) */
    uint64_t flow;                    /* its XFlow value */
    int has_group;                    /* a group_id stat */
    int64_t group;                    /* its value */
    int is_async;                     /* an _a stat */
    const char *step_name;            /* step_name stat (last non-empty one) */
    size_t step_len;                  /* its length */
    int has_corr;                     /* correlation_id (for synthesized flows) */
    uint64_t corr;                    /* its uint64 value (0 if stored as int64) */
    int has_pt, has_p, has_ct, has_c; /* producer / consumer stats */
    int64_t pt, p, ct, c;             /* their values */
};

/* A plane the trace viewer shows, with its pid. */
struct shown_plane {
    uint32_t index; /* in xs->planes */
    uint32_t pid;   /* before the host offset */
};

/* Which well-known stats a stat metadata id stands for (bits). */
enum stat_role {
    R_CORR = 1 << 0,
    R_PT = 1 << 1,
    R_P = 1 << 2,
    R_CT = 1 << 3,
    R_C = 1 << 4,
    R_FLOW = 1 << 5,
    R_GROUP = 1 << 6,
    R_ASYNC = 1 << 7,
    R_STEP = 1 << 8,
    R_HLO = 1 << 9, /* named "hlo_text" */
};

#define ROLE_TABLE_MAX 65536 /* ids below this are looked up in a table */

/* Role lookup of one plane's stat ids. */
struct stat_roles {
    uint16_t *table; /* role bits by id, when every role id is small */
    uint32_t size;   /* entries in table (0: compare ids instead) */
    int64_t ids[9];  /* ids of the roles R_CORR..R_STEP, by bit */
    int64_t *hlo;    /* ids named "hlo_text" */
    uint32_t nhlo;   /* entries in hlo */
    int any;         /* some role exists: stats must be read */
    int only_group;  /* group_id is the only role (xp_line.gids may do) */
};

/* What an event's metadata stats set, folded once per metadata. */
struct meta_special {
    uint64_t flow;         /* XFlow value, when has_flow */
    int64_t group;         /* group_id, when has_group */
    const char *step_name; /* step_name stat, or NULL */
    size_t step_len;       /* its length */
    uint8_t has_flow;      /* a flow stat */
    uint8_t has_group;     /* a group_id stat */
    uint8_t is_async;      /* an _a stat */
};

/* Per plane: cached facts about each event metadata. */
struct meta_info {
    uint32_t name;    /* string id of the shown name (display or name) */
    uint32_t special; /* 1 + index into plane_state.specials, 0 if none */
    uint8_t internal; /* hidden event type */
    uint8_t used;     /* some shown event has it */
};

/* A shown plane while its events are added. */
struct plane_state {
    const struct xp_plane *pl;     /* the plane */
    uint32_t index;                /* in xs->planes */
    uint32_t pid;                  /* before the host offset */
    int is_host;                   /* a /host:CPU plane */
    struct meta_info *meta;        /* per event metadata */
    struct meta_special *specials; /* metadata with special stats */
    uint32_t nspecials;            /* entries in specials */
    struct stat_roles roles;       /* its stat ids */
};

/* A run of events of one file line or derived line, added by one worker. */
struct line_job {
    int derived;    /* 1: a derived line (line = its index in dv) */
    uint32_t plane; /* index into the plane states */
    uint32_t line;  /* line index in the plane, or derived line index */
    uint32_t first; /* first event */
    uint32_t end;   /* past the last event */
    uint32_t tid;   /* thread id */
    int counter;    /* a "_counters_" line */
    int64_t track;  /* thread track (-1 for counters) */
    uint32_t out;   /* its first slot, counted from builder.out */
    uint32_t count; /* events it adds */
    uint32_t nflow; /* of those, events with a flow on its track (once filled) */
};

/* Host-building state. */
struct builder {
    struct tv_host *h;              /* the index */
    struct xsrc *src;               /* the source record (kept for args) */
    const struct xspace *xs;        /* the profile */
    const struct xp_groups *groups; /* grouping, or NULL */
    int preprocess;                 /* 1: add flows, groups, derived lines */
    uint64_t host_id;               /* for synthesized flow ids */
    struct plane_state *planes;     /* shown planes */
    uint32_t nplanes;               /* entries in planes */
    struct line_job *jobs;          /* file line runs */
    uint32_t njobs;                 /* entries in jobs */
    uint32_t *fill_order;           /* jobs in the order they are filled */
    uint32_t out;                   /* first slot of the file events (tv_put_event) */
    pthread_mutex_t lock;           /* guards h's strings, frames, tracks */
    uint8_t *frame_done;            /* per string id: derived frame recorded */
    uint32_t *dv_jobs_left;         /* per derived line: its jobs not yet filled */
    uint32_t nframe_done;           /* entries in frame_done */
};

/* The role bits of stat metadata id in r. */
static inline uint16_t txp_role_of(const struct stat_roles *r, int64_t id)
{
    uint16_t bits = 0;
    uint32_t i;

    if (r->size > 0)
        return id >= 0 && id < (int64_t)r->size ? r->table[id] : 0;
    for (i = 0; i < 9; i++) {
        if (r->ids[i] == id)
            bits |= (uint16_t)(1u << i);
    }
    for (i = 0; i < r->nhlo; i++) {
        if (r->hlo[i] == id)
            bits |= R_HLO;
    }
    return bits;
}

/* hlo_text string stats of length > 16 are "@@" frames too. */
static inline int txp_is_frame_stat(const struct xp_stat *st, uint16_t role)
{
    return (role & R_HLO) && (st->kind == XP_STAT_STR || st->kind == XP_STAT_REF) &&
           st->len >= ARG_INTERN_MIN;
}

/* --- planes and lines (trace_xplane_planes.c) ------------------------------------ */

/* XProf's plane selection (ConvertXSpaceToTraceEventsContainer): the shown
 * planes with their pids, malloc'd into *outp. Returns 0 or -ENOMEM. */
int txp_select_planes(const struct xspace *xs, struct shown_plane **outp, uint32_t *np);

/* Declare one shown plane (process, threads, thread tracks) and queue its
 * file lines as jobs. *shown is set when the plane has something to show. */
int txp_declare_plane(struct builder *b, const struct shown_plane *sp, uint32_t *jobs_cap,
                      int *shown);

/* --- special stats (trace_xplane_specials.c) ---------------------------------------- */

/* The roles of pl's stat ids. Returns 0 or -ENOMEM. */
int txp_roles_init(struct stat_roles *r, const struct xp_plane *pl);
void txp_roles_free(struct stat_roles *r);

/* Fill the cached info of metadata mi of a plane (single-threaded). */
int txp_meta_fill(struct builder *b, struct plane_state *ps, uint32_t mi);

/* --- the jobs (trace_xplane_fill.c) -------------------------------------------------- */

/* Count the shown events of job j and mark the metadata they use
 * (parallel_for item over b's jobs). */
int txp_count_job(void *arg, size_t j);

/* Add the events of job j into its slots (parallel_for item). */
int txp_fill_job(void *arg, size_t j);

#endif
