/*
 * group.h - XProf's step grouping of one host's events (group_id).
 *
 * A port of openxla/xla xla/tsl/profiler/utils/group_events.cc as described in
 * ../shared/spec/xplane-and-trace-viewer.md section 2.5 and stats-tools.md
 * section 2: the event forest (nesting on a line, producer/consumer links,
 * KernelLaunch <-> KernelExecute by correlation_id), root events, group ids
 * numbered in XProf's order, group names ("train 7"), and the GPU rule that
 * ungrouped device events inherit the latest preceding group id.
 *
 * Computed once per (snapshot, host) through snapshot_groups(); read-only
 * afterwards and shared by the trace viewer (args.group_id, step_name), the
 * op_stats tools (step events) and any other tool.
 */
#ifndef XPROFS_GROUP_H
#define XPROFS_GROUP_H

#include <stdint.h>

#include "base/err.h"
#include "session/session.h"
#include "reader/xspace.h"

struct xp_group {
    int64_t id;          /* group id (0, 1, 2 ...) */
    const char *name;    /* group name: "train 7", or the id as text */
    int64_t step_num;    /* step_num / iter_num of the root, or -1 */
    uint32_t root_plane; /* plane index of the root event */
    uint32_t root_line;  /* line index of the root event */
    uint32_t root_event; /* event index of the root event */
    int named_root;      /* 1: XProf adds step_name = name to the root event */
};

/* One event of a device plane's derived "Steps" line: a maximal run of
 * consecutive (in time order) events of one group on that device. */
struct xp_step_marker {
    int64_t group_id; /* the group */
    int64_t begin_ps; /* absolute start */
    int64_t end_ps;   /* absolute end */
};

/* GroupMetadata's parents/children: group `parent`'s propagation reached
 * events already in group `child` (a request and the batches that ran it). */
struct xp_group_link {
    int32_t parent; /* group id */
    int32_t child;  /* group id */
};

struct xp_groups {
    const struct xspace *xs; /* the profile the ids refer to */
    int32_t ***event_group;  /* [plane][line][event] -> group id, or -1 */
    struct xp_group *groups; /* by id */
    uint32_t ngroups;        /* entries in groups */
    /* Extensions (op_stats): */
    int pre_grouped;               /* 1: the file already carried group_id stats */
    uint8_t ***event_eager;        /* [plane][line][event] -> 1 if run eagerly; NULL if none */
    struct xp_step_marker **steps; /* [plane] -> Steps markers: GPU planes the derived
                                      line's; TPU planes (ungrouped files) their Steps
                                      line merged per group, as device timespans */
    uint32_t *nsteps;              /* [plane] -> entries in steps[plane] */
    uint8_t *steps_derived;        /* [plane] -> 1: steps[plane] were derived here from
                                      the plane's events (GPU planes), every one of them
                                      starting at or after 0 */
    /* TPU planes of ungrouped files: their Steps line after MergeHostSteps,
     * per event of that line (tpu_step_line[plane], -1 if none) its end as
     * XProf keeps it, or XP_STEP_DROPPED; tpu_step_end[plane] NULL if none */
    int32_t *tpu_step_line;
    int64_t **tpu_step_end;
    int has_metadata;            /* 1: XProf's GroupMetadataMap holds every group (the
                                    grouping ran here; not for pre-grouped files) */
    struct xp_group_link *links; /* sorted by (parent, child), unique */
    uint32_t nlinks;             /* entries in links */
    void *mem;                   /* private storage */
};

#define XP_STEP_DROPPED INT64_MIN /* a Steps event merged into the one before, or ungrouped */

/* The end of a TPU Steps event after MergeHostSteps (its own end when the
 * grouping did not touch it); XP_STEP_DROPPED if the event is gone. */
static inline int64_t xp_tpu_step_end(const struct xp_groups *g, uint32_t plane, uint32_t line,
                                      uint32_t event, int64_t own_end)
{
    if (g == 0 || g->tpu_step_end == 0 || g->tpu_step_end[plane] == 0 ||
        g->tpu_step_line[plane] != (int32_t)line)
        return own_end;
    return g->tpu_step_end[plane][event];
}

/* The grouping of host's profile in snap (decodes the profile if needed). */
int snapshot_groups(struct snapshot *snap, const char *host, const struct xp_groups **gp,
                    struct xp_err *err);

/* Group a decoded profile without a snapshot (tests, tools that hold an
 * xspace). Returns 0 and *gp (free with xp_groups_free), or a negative errno. */
int xp_groups_build(const struct xspace *xs, struct xp_groups **gp, struct xp_err *err);

/* 1 if a line id is one of XProf's derived lines ((int32)id in
 * [0xdeadbeef, 0xdeadbeef + 389]; 0xdeadbeef itself is the Steps line). */
int xp_line_id_is_derived(int64_t id);

/* Release a grouping made by xp_groups_build. NULL is a no-op. */
void xp_groups_free(struct xp_groups *g);

/* 1 if the event was marked as eagerly executed (is_eager), else 0. */
static inline int xp_group_is_eager(const struct xp_groups *g, uint32_t plane, uint32_t line,
                                    uint32_t event)
{
    if (g == 0 || g->event_eager == 0 || g->event_eager[plane] == 0 ||
        g->event_eager[plane][line] == 0)
        return 0;
    return g->event_eager[plane][line][event];
}

/* The group ids of every event (-1: none) in one array, events numbered
 * plane by plane, line by line in file order (the numbering of
 * xsrc_new and snapshot_groups' nodes), or NULL when the grouping made no
 * table (nothing to group: xp_group_of answers -1 for every event). */
const int32_t *xp_groups_flat(const struct xp_groups *g);

/* Group id of one event, or -1. */
static inline int32_t xp_group_of(const struct xp_groups *g, uint32_t plane, uint32_t line,
                                  uint32_t event)
{
    if (g == 0 || g->event_group == 0 || g->event_group[plane] == 0 ||
        g->event_group[plane][line] == 0)
        return -1;
    return g->event_group[plane][line][event];
}

#endif
