/*
 * trace_xplane.h - the xplane side of a trace index: where each indexed
 * event came from (a file event or a derived one), and how its full args are
 * written for the event-details request (trace_xargs.c).
 */
#ifndef XPROFS_TRACE_XPLANE_H
#define XPROFS_TRACE_XPLANE_H

#include <stdint.h>

#include "xplane/derived.h"
#include "xplane/group.h"
#include "out/out.h"
#include "trace_index.h"
#include "reader/xspace.h"

/* A file line and the number of its first event in the global numbering. */
struct xsrc_line {
    uint32_t base;  /* number of the line's first event */
    uint32_t plane; /* plane index */
    uint32_t line;  /* line index */
};

struct xsrc {
    const struct xspace *xs;        /* the profile (a snapshot intermediate) */
    const struct xp_groups *groups; /* grouping, or NULL */
    int preprocess;                 /* XProf preprocessing applied */
    struct xsrc_line *lines;        /* every file line, ascending base */
    uint32_t nlines;                /* entries in lines */
    uint32_t *plane_first;          /* per plane: index in lines of its first line */
    uint32_t nfile;                 /* file events in all */
    struct derived *dv;             /* derived lines, or NULL */
    uint32_t *dv_base;              /* per derived line: number of its first event */
    uint64_t host_id;               /* key of synthesized flow ids */
};

/* A synthesized XFlow stat value (AddFlowsToXplane): id from (host, key,
 * kind), direction 1 in / 2 out, category. XProf hashes with a per-process
 * salt, so its ids change from run to run; ours are stable. */
uint64_t xsrc_flow(uint64_t host_id, uint64_t key, uint64_t kind, unsigned direction,
                   unsigned category);

/* The stats XProf's preprocessing appends to a file event: flows (in order),
 * group id (-1 if none), step_name (NULL if none). */
struct xsrc_extras {
    uint64_t flows[3];     /* XFlow values */
    int nflows;            /* entries in flows */
    int64_t group;         /* group_id */
    const char *step_name; /* step_name */
};

void xsrc_extras(const struct xsrc *src, uint32_t p, uint32_t l, uint32_t e, struct xsrc_extras *x);

/* Number the events of xs. Returns 0 or -ENOMEM. */
int xsrc_new(const struct xspace *xs, const struct xp_groups *groups, int preprocess,
             struct xsrc **srcp);

/* Number the derived events after the file ones (call once dv is set). */
int xsrc_index_derived(struct xsrc *src);

void xsrc_free(void *src);

/* Number of the first event of file line (p, l) / of derived line di (di =
 * number of derived lines: past the last derived event). */
uint32_t xsrc_line_base(const struct xsrc *src, uint32_t p, uint32_t l);
uint32_t xsrc_derived_base(const struct xsrc *src, uint32_t di);

/* tv_args_fn, tv_counter_fn and tv_group_fn (derived events) of xplane
 * hosts. */
uint64_t xsrc_args(const struct tv_host *h, const struct tv_event *e, struct out *o, int *first);
int xsrc_counter(const struct tv_host *h, const struct tv_event *e, struct out *o,
                 const char **first_arg_name, struct tv_counter_value *first);
int32_t xsrc_group(const struct tv_host *h, const struct tv_event *e);

#endif
