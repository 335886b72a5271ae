/*
 * derived.h - XProf's derived GPU timelines (xprof/utils/derived_timeline.cc).
 *
 * Before the trace viewer converts a host that is not yet grouped, XProf adds
 * lines to each /device:GPU: plane: "Steps" (one event per run of events of
 * the same group, named by the group and carrying step_name), per stream
 * "XLA Modules - from #N" and "XLA Ops - from #N" (kernel events merged by
 * consecutive hlo_module / hlo_op, one level per "::"-separated op),
 * "Framework Name Scope - from #N" and "Framework Ops - from #N" (the
 * framework op of each XLA op, found in the HLO modules, or a TensorFlow
 * kernel's tf_op stat: one level per name scope, and the op shown by its
 * type), "Source code - from #N" (the XLA op's source file:line), and
 * "Launch Stats" (per group, from the host's launch events). Stream lines
 * and their derived lines are then renumbered 1..n by display id, so each
 * stream is followed by its derived lines.
 *
 * We never rewrite the profile: the derived lines live here, next to it, and
 * the trace builder reads both.
 */
#ifndef XPROFS_DERIVED_H
#define XPROFS_DERIVED_H

#include <stdint.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/intern.h"
#include "derived_hlo.h"
#include "group.h"
#include "reader/xspace.h"

/* A name and display name that events of a line share (a line repeats a
 * few hundred ops over every step). Names and display names are stored
 * strings (interned, or the line's own copies), so a pair is told apart by
 * its pointers. */
struct dv_ref {
    const char *name;    /* event metadata name */
    const char *display; /* its display name, or NULL */
};

/* 24 bytes: a 1.6 GB profile has 40 M derived events. Its names are its
 * line's pair refs[ref]; what only a few lines carry (the Steps line's step
 * names, the Launch Stats line's numbers) is found through the line
 * (derived_step_name, derived_launch). */
struct dv_event {
    uint64_t ts;   /* start, ps */
    uint64_t dur;  /* duration, ps */
    uint32_t ref;  /* index into its line's refs */
    int32_t group; /* group id, or -1 */
};

/* What remains of a derived event once its times live elsewhere
 * (derived_compact): 8 bytes, the tail of its dv_event. */
struct dv_kept {
    uint32_t ref;  /* as dv_event.ref */
    int32_t group; /* as dv_event.group */
};

/* The three launch stats of one Launch Stats event. */
struct dv_launch {
    int64_t num_launches; /* launches in the group */
    double max_launch_us; /* longest launch, µs */
    double avg_launch_us; /* mean launch, µs */
};

struct dv_line {
    uint32_t plane;                /* index of its plane in the xspace */
    int64_t id;                    /* XLine id (a derived thread id) */
    int64_t display_id;            /* display id (0: none, the id is shown) */
    const char *name;              /* line name */
    struct dv_event *ev;           /* events in creation order (NULL once compacted) */
    struct dv_kept *kept;          /* after derived_compact: the events without times */
    struct dv_ref *refs;           /* the name pairs the events refer to, first seen first */
    uint32_t nrefs;                /* entries in refs */
    uint32_t refs_cap;             /* allocated refs */
    uint32_t *ref_slots;           /* while built: open addressing over refs (ref + 1, 0:
                                      empty), NULL once compacted */
    uint32_t ref_slots_cap;        /* entries in ref_slots, a power of two */
    uint32_t nev;                  /* entries in ev */
    uint32_t cap;                  /* allocated entries */
    const struct xp_groups *steps; /* Steps line: events are named by these groups */
    struct dv_launch *launch;      /* Launch Stats line: [nlaunch] per event, or NULL */
    uint32_t nlaunch;              /* entries in launch */
};

struct derived {
    struct dv_line *lines;   /* all derived lines with events */
    uint32_t nlines;         /* entries in lines */
    int64_t **display_ids;   /* [plane][line]: new display id of a stream, 0 = unchanged */
    uint32_t nplanes;        /* entries in display_ids */
    struct arena arena;      /* names */
    struct derived_hlo *hlo; /* HLO instructions (their names are event names), or NULL */
    struct intern *intern;   /* event names stored once each (derived_line.c) */
    struct derived **parts;  /* the parts built in parallel (their names) */
    uint32_t nparts;         /* entries in parts */
};

/* Derive the lines of xs's GPU planes; g may be NULL (no groups); hlo is
 * the host's HLO modules (snapshot_hlo_modules), or NULL to read them from
 * xs here. Returns 0 and *dvp, or -ENOMEM with err. */
int derived_build(const struct xspace *xs, const struct xp_groups *g, const struct hlo_modules *hlo,
                  struct derived **dvp, struct xp_err *err);

void derived_free(struct derived *dv);

/* Drop the times of every derived event (a trace index holds them now):
 * ev becomes kept, a third of the size, and the rest is given back (the
 * functions below read both forms). After this only the functions below
 * read the events. */
void derived_compact(struct derived *dv);

/* derived_compact for one line (lines are independent: one thread may
 * compact a line while others read other lines). */
void derived_compact_line(struct dv_line *l);

/* The name pair of event k of line l, compacted or not. */
static inline const struct dv_ref *derived_ref(const struct dv_line *l, uint32_t k)
{
    return &l->refs[l->ev != 0 ? l->ev[k].ref : l->kept[k].ref];
}

/* Name, group (-1 if none) and full name when a display name is shown
 * (else NULL) of event k of line l, compacted or not. */
const char *derived_name(const struct dv_line *l, uint32_t k);
int32_t derived_group(const struct dv_line *l, uint32_t k);
const char *derived_long_name(const struct dv_line *l, uint32_t k);

/* The display name of event k of line l (metadata display name), or NULL. */
const char *derived_display(const struct dv_line *l, uint32_t k);

/* The index in l's refs of the pair (name, display), added if new; 0, or
 * -ENOMEM (l unchanged). While the line is built (before derived_compact). */
int derived_line_ref(struct dv_line *l, const char *name, const char *display, uint32_t *ref);

/* The step_name stat of event k of line l (a Steps event's group name), or
 * NULL. */
const char *derived_step_name(const struct dv_line *l, uint32_t k);

/* The launch stats of event k of line l, or NULL when it has none. */
const struct dv_launch *derived_launch(const struct dv_line *l, uint32_t k);

/* 1 if the XLine id is one of XProf's derived thread ids. */
int derived_is_thread_id(int64_t id);

#endif
