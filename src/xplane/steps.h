/*
 * steps.h - the steps of one host's trace and the named regions inside them.
 *
 * A step is one occurrence of a step annotation on a host thread (JAX
 * StepTraceAnnotation, TensorFlow step markers). Its regions are the events
 * of the same thread that start inside it, nested into a tree by full
 * containment (intervals.h): a region that leaves its parent is a sibling of
 * it, not a child, and only a step keeps children that cross its end (they
 * are flagged). Rows are numbered step first, then its regions in start
 * order, so a parent always precedes its children.
 *
 * Which annotation is the step, unless the caller names one: the event names
 * that carry a step_num stat; else XProf's explicit roots (events with the _r
 * stat, or TraceContext); else TensorFlow's implicit roots (FunctionRun,
 * SessionRun, RunGraph, ExecutorState::Process). A step event that starts
 * inside another step of the same thread is a region of that step.
 *
 * The model is built once per (snapshot, host, step choice) through
 * snapshot_steps() and is read-only afterwards; names point into the
 * snapshot's profile and stay valid while the snapshot is held. With a
 * persistent cache (store.h) the model is kept per host (steps_persist.c)
 * and a new process maps it back without reading the profile.
 */
#ifndef XPROFS_STEPS_H
#define XPROFS_STEPS_H

#include <stdint.h>

#include "reader/ctrace.h"
#include "base/arena.h"
#include "base/err.h"
#include "session/session.h"
#include "reader/xspace.h"

#define XP_STEPS_NONE UINT32_MAX /* no parent: a step row */

/* How the step annotation was chosen. */
enum xp_steps_source {
    XP_STEPS_NOTHING,       /* no step found (reason says why) */
    XP_STEPS_ASKED,         /* named by the caller (?step=NAME) */
    XP_STEPS_STEP_NUM,      /* events carrying step_num */
    XP_STEPS_ROOT,          /* XProf explicit roots: _r stat or TraceContext */
    XP_STEPS_TF_MARKER,     /* TensorFlow implicit roots */
    XP_STEPS_PROFILER_STEP, /* PyTorch's ProfilerStep#N (Chrome traces) */
};

struct xp_steps_thread {
    int64_t id;       /* XLine id, or the Chrome trace tid */
    const char *name; /* line / thread name */
};

/* One step or region occurrence. Times in picoseconds on the profile clock. */
struct xp_steps_row {
    int64_t start_ps;   /* start */
    int64_t dur_ps;     /* inclusive duration */
    int64_t self_ps;    /* dur minus the union of its children (clipped to it) */
    int64_t overlap_ps; /* regions: time covered by its siblings too; steps: 0 */
    const char *name;   /* event name */
    uint32_t parent;    /* row index of the parent, XP_STEPS_NONE for a step */
    uint32_t depth;     /* 0 for a step, 1 for its direct children, ... */
};

struct xp_steps_step {
    uint32_t row;         /* its row; its regions are rows (row, row + nrows) */
    uint32_t nrows;       /* rows of the step, itself included */
    uint32_t thread;      /* index into threads */
    int64_t step_num;     /* step_num, else iter_num, else ordinal per name */
    int64_t naive_sum_ps; /* dur of the step plus every region's dur */
};

struct xp_steps {
    enum xp_steps_source source;     /* how the steps were found */
    const char **step_names;         /* the step annotation names (sorted) */
    uint32_t nstep_names;            /* entries in step_names */
    double origin_us;                /* the source clock at start_ps 0 (us): a Chrome
                                      * trace's earliest event; 0 for an xplane */
    char reason[256];                /* why there are no steps ("" if there are) */
    struct xp_steps_row *rows;       /* every row */
    uint32_t nrows;                  /* entries in rows */
    struct xp_steps_step *steps;     /* sorted by start, then thread */
    uint32_t nsteps;                 /* entries in steps */
    struct xp_steps_thread *threads; /* threads holding steps */
    uint32_t nthreads;               /* entries in threads */
    struct arena *names;             /* a model loaded from the persistent cache:
                                      * its row and thread names; else NULL */
};

/* Build from a decoded profile. step: the annotation name, or NULL to detect.
 * Returns 0 and *sp (free with xp_steps_free), or -ENOMEM / -EIO with err. */
int xp_steps_from_xspace(const struct xspace *xs, const char *step, struct xp_steps **sp,
                         struct xp_err *err);

/* Build from a Chrome trace: complete ("X") events, one track per (pid, tid).
 * A step name may carry its number as the trace viewer writes it
 * ("learner_step 3"); that suffix is dropped from the step name. */
int xp_steps_from_ctrace(const struct ctrace *ct, const char *step, struct xp_steps **sp,
                         struct xp_err *err);

/* Release a model. NULL is a no-op. */
void xp_steps_free(struct xp_steps *m);

/* The model of host in snap for step (NULL: detect), built once per snapshot;
 * it belongs to the snapshot. A host without steps gets an empty model whose
 * reason is also logged to errors.txt. */
int snapshot_steps(struct snapshot *snap, const char *host, const char *step,
                   const struct xp_steps **sp, struct xp_err *err);

/* Name of a source ("step_num", "root", "tf_step_marker", "profiler_step",
 * "asked", "none"). */
const char *xp_steps_source_name(enum xp_steps_source s);

#endif
