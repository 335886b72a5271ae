/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The timeline of the small learner_step scenarios: every step's start and
 * end, its input_wait and model_and_wait regions and the start and length of
 * each op's kernel, in microseconds since the profile start. steps4's is a
 * fixed table; compare's is drawn from the seed (jitter) with at most one
 * injected change per kind (a region made longer, an op's kernel left out,
 * an op made slower), so that two runs differ by exactly what was asked.
 */
#ifndef SYNTH_LEARNER_PLAN_H
#define SYNTH_LEARNER_PLAN_H

#include <stdint.h>

#include "program.h"
#include "synth.h"

#define LEARNER_MAX_OPS 3

struct learner_step {
    int64_t step0, step1;               /* learner_step */
    int64_t iw0, iw1;                   /* input_wait */
    int64_t mw0, mw1;                   /* model_and_wait */
    int64_t kernel0[LEARNER_MAX_OPS];   /* kernel start of each op */
    int64_t kernel_us[LEARNER_MAX_OPS]; /* its duration; 0: the op does not run */
};

struct learner_plan {
    int nops;                   /* ops of the module (program order) */
    int64_t nsteps;             /* entries in steps */
    struct learner_step *steps; /* allocated */
    int64_t stop_us;            /* Task Environment stop, after the last step */
};

/* The plan of the scenario opt selects (steps4 or compare) for program pr.
 * Returns 0, -EINVAL (message printed: an injected name that is no region
 * or op) or -ENOMEM. */
int learner_plan_build(struct learner_plan *lp, const struct synth_opts *opt,
                       const struct program *pr);

/* Writes the plan as JSON to path (the --plan file); 0 or -errno (printed). */
int learner_plan_write_json(const struct learner_plan *lp, const struct synth_opts *opt,
                            const struct program *pr, const char *path);

void learner_plan_release(struct learner_plan *lp);

#endif
