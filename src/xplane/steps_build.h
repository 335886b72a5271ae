/*
 * steps_build.h - private to steps*.c: the builder both sources feed.
 *
 * A source (steps_xspace.c, steps_ctrace.c) picks the step names, then hands
 * the builder one thread's events at a time (st_track); the builder finds the
 * steps on that thread, nests their regions (intervals.h) and appends rows.
 * st_finish sorts the steps and numbers the ones that carry no number.
 */
#ifndef XPROFS_STEPS_BUILD_H
#define XPROFS_STEPS_BUILD_H

#include <stdint.h>

#include "base/intervals.h"
#include "out/out.h"
#include "steps.h"

/* One event of a thread as the builder sees it. */
struct st_ev {
    int64_t lo;       /* start, ps */
    int64_t hi;       /* end, ps */
    const char *name; /* name shown in the rows */
    uint32_t src;     /* the source's handle, passed back to st_num_fn */
    uint32_t step;    /* 1 if this is a step annotation */
};

/* Finds the number of step event src: 1 and *num if it has one, else 0. */
typedef int (*st_num_fn)(void *ctx, uint32_t src, int64_t *num);

struct st_builder {
    struct xp_steps *m;         /* the model being built */
    uint32_t cap_rows;          /* slots in m->rows */
    uint32_t cap_steps;         /* slots in m->steps */
    uint32_t cap_threads;       /* slots in m->threads */
    uint32_t cap_names;         /* slots in m->step_names */
    uint8_t *numbered;          /* per step: 1 if st_num_fn found a number */
    struct xp_nest_work work;   /* nesting stack */
    struct xp_span *spans;      /* one step's regions */
    struct xp_nest_node *nodes; /* their nesting */
    uint32_t cap_tmp;           /* slots in spans and nodes */
};

/* Start a builder with an empty model. 0 or -ENOMEM. */
int st_begin(struct st_builder *b, struct xp_err *err);

/* Add a step name (copied; duplicates ignored). 0 or -ENOMEM. */
int st_add_name(struct st_builder *b, const char *name, size_t len, struct xp_err *err);

/* Sort the step names (call once, before st_has_name / st_track). */
void st_sort_names(struct st_builder *b);

/* The model's copy of name[0..len) if it is a step name, else NULL. */
const char *st_has_name(const struct st_builder *b, const char *name, size_t len);

/* Sort a thread's events as st_track needs (start, longer first, steps
 * first, then src); a no-op when they already are. */
void st_sort_events(struct st_ev *ev, uint32_t n);

/* Find the steps among ev[0..n) (sorted by st_sort_events) of one thread and
 * append their rows. 0, or -ENOMEM / -EFBIG with err. */
int st_track(struct st_builder *b, int64_t thread_id, const char *thread_name,
             const struct st_ev *ev, uint32_t n, st_num_fn num, void *ctx, struct xp_err *err);

/* Finish: sort steps, number the unnumbered, set the reason when there are
 * none; hands the model to *sp. 0 or -ENOMEM (then everything is freed). */
int st_finish(struct st_builder *b, enum xp_steps_source source, const char *none_reason,
              struct xp_steps **sp, struct xp_err *err);

/* Free everything of an unfinished builder. */
void st_abort(struct st_builder *b);

/* The TensorFlow implicit step markers (XProf's implicit root events). */
extern const char *const st_tf_markers[];
#define ST_N_TF_MARKERS 4

/* The model as bytes (steps_persist.c), and back: 0 and *mp (free with
 * xp_steps_free), -EIO for bytes of another layout or cut short, -ENOMEM. */
void st_save(const struct xp_steps *m, struct out *o);
int st_load(const void *p, size_t n, struct xp_steps **mp);

#endif
