/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The learner_step timelines (see learner_plan.h and README.md): steps4's
 * fixed table, compare's seeded plan with its injected changes, and the
 * plan written as JSON for tests to compute expected numbers from.
 */
#include "learner_plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

/* steps4: every time fixed (README.md's tables). */
static const struct learner_step steps4[4] = {
    {100, 1100, 110, 310, 320, 1070, {380, 490}, {100, 300}},
    {1200, 2000, 1200, 1300, 1300, 2000, {1360, 1470}, {100, 300}},
    {2100, 3300, 2150, 2550, 2600, 3200, {2660, 2770}, {100, 300}},
    {3400, 4000, 3410, 3460, 3470, 3990, {3530, 3640}, {100, 300}},
};

/* compare: base kernel time of each op (program order), input_wait's base
 * and its jitter; kernels vary by up to 1/COMPARE_JITTER of their time. */
static const int64_t compare_kernel_us[LEARNER_MAX_OPS] = {100, 300, 150};
#define COMPARE_IW_US 200
#define COMPARE_IW_JITTER_US 40
#define COMPARE_JITTER 25

/* The index of the op whose HLO name is name, or -1 (message printed). */
static int op_named(const struct program *pr, const char *name, const char *opt)
{
    const struct module *m = &pr->mods[0];
    size_t i;

    for (i = 0; i < m->n_ops; i++) {
        if (strcmp(m->ops[i].hlo, name) == 0)
            return (int)i;
    }
    fprintf(stderr, "xprofs-synth: %s: no op '%s' (", opt, name);
    for (i = 0; i < m->n_ops; i++)
        fprintf(stderr, "%s%s", i ? ", " : "", m->ops[i].hlo);
    fprintf(stderr, ")\n");
    return -1;
}

/* Step k of the compare plan starting at s; returns its end. */
static int64_t compare_step(struct learner_step *st, const struct synth_opts *opt, int nops,
                            int64_t k, int64_t s, int drop, int slow)
{
    int64_t t, iw;
    int i;

    iw = COMPARE_IW_US +
         rng_range(rng_key(opt->seed, (uint64_t)k, 0x6977ULL, 0), 0, COMPARE_IW_JITTER_US);
    if (opt->slow_region != NULL && strcmp(opt->slow_region, "input_wait") == 0)
        iw += opt->slow_region_us;
    if (k == 0)
        iw += opt->cold_first_us; /* a warm-up step */
    st->step0 = s;
    st->iw0 = s + 10;
    st->iw1 = st->iw0 + iw;
    st->mw0 = st->iw1 + 10;
    t = st->mw0 + 60;
    for (i = 0; i < nops; i++) {
        int64_t base = compare_kernel_us[i], j = base / COMPARE_JITTER;
        if (i == drop)
            continue;
        st->kernel0[i] = t;
        st->kernel_us[i] =
            base + rng_range(rng_key(opt->seed, (uint64_t)k, 0x6b6eULL, (uint64_t)i), -j, j);
        if (i == slow)
            st->kernel_us[i] *= opt->slow_op_factor;
        t += st->kernel_us[i] + 10;
    }
    st->mw1 = t - 10 + 30;
    if (st->mw1 < st->mw0 + 70 + 30 * nops) /* the execute thread's work fits */
        st->mw1 = st->mw0 + 70 + 30 * nops;
    if (opt->slow_region != NULL && strcmp(opt->slow_region, "model_and_wait") == 0)
        st->mw1 += opt->slow_region_us;
    st->step1 = st->mw1 + 10;
    return st->step1;
}

static int build_compare(struct learner_plan *lp, const struct synth_opts *opt,
                         const struct program *pr)
{
    int drop = -1, slow = -1;
    int64_t k, s = 100;

    if (opt->slow_region != NULL && strcmp(opt->slow_region, "input_wait") != 0 &&
        strcmp(opt->slow_region, "model_and_wait") != 0) {
        fprintf(stderr,
                "xprofs-synth: --slow-region: no region '%s' (input_wait, "
                "model_and_wait)\n",
                opt->slow_region);
        return -EINVAL;
    }
    if (opt->drop_op != NULL && (drop = op_named(pr, opt->drop_op, "--drop-op")) < 0)
        return -EINVAL;
    if (opt->slow_op != NULL && (slow = op_named(pr, opt->slow_op, "--slow-op")) < 0)
        return -EINVAL;
    lp->nsteps = opt->n_steps;
    lp->steps = calloc((size_t)lp->nsteps, sizeof(*lp->steps));
    if (lp->steps == NULL)
        return -ENOMEM;
    for (k = 0; k < lp->nsteps; k++)
        s = compare_step(&lp->steps[k], opt, lp->nops, k, s, drop, slow) + 100;
    lp->stop_us = s;
    return 0;
}

int learner_plan_build(struct learner_plan *lp, const struct synth_opts *opt,
                       const struct program *pr)
{
    memset(lp, 0, sizeof(*lp));
    lp->nops = (int)pr->mods[0].n_ops;
    if (lp->nops > LEARNER_MAX_OPS)
        return -EINVAL;
    if (opt->compare)
        return build_compare(lp, opt, pr);
    lp->nsteps = 4;
    lp->steps = malloc(sizeof(steps4));
    if (lp->steps == NULL)
        return -ENOMEM;
    memcpy(lp->steps, steps4, sizeof(steps4));
    lp->stop_us = 4100;
    return 0;
}

/* One region of a step in the JSON plan. */
static void json_region(FILE *f, const char *name, int64_t t0, int64_t t1, int first)
{
    fprintf(f, "%s{\"name\":\"%s\",\"start_us\":%lld,\"end_us\":%lld}", first ? "" : ",", name,
            (long long)t0, (long long)t1);
}

int learner_plan_write_json(const struct learner_plan *lp, const struct synth_opts *opt,
                            const struct program *pr, const char *path)
{
    const struct module *m = &pr->mods[0];
    FILE *f = fopen(path, "w");
    int64_t k;
    int i, first;

    if (f == NULL) {
        fprintf(stderr, "xprofs-synth: %s: %s\n", path, strerror(errno));
        return -errno;
    }
    fprintf(f, "{\"scenario\":\"%s\",\"seed\":%llu,\"step_name\":\"learner_step\",\"ops\":[",
            opt->compare ? "compare" : "steps4", (unsigned long long)opt->seed);
    for (i = 0; i < lp->nops; i++)
        fprintf(f, "%s{\"hlo_op\":\"%s\",\"kernel\":\"%s\",\"framework_op\":\"%s\"}", i ? "," : "",
                m->ops[i].hlo, m->ops[i].kernel, m->ops[i].scope);
    fprintf(f, "],\"steps\":[");
    for (k = 0; k < lp->nsteps; k++) {
        const struct learner_step *st = &lp->steps[k];
        char pjit[96];
        fprintf(f, "%s\n{\"step_num\":%lld,\"start_us\":%lld,\"end_us\":%lld,\"regions\":[",
                k ? "," : "", (long long)k, (long long)st->step0, (long long)st->step1);
        snprintf(pjit, sizeof(pjit), "PjitFunction(%s)", m->fn);
        json_region(f, "input_wait", st->iw0, st->iw1, 1);
        json_region(f, "model_and_wait", st->mw0, st->mw1, 0);
        json_region(f, pjit, st->mw0 + 5, st->mw0 + 25, 0);
        json_region(f, "PjRtStreamExecutorLoadedExecutable::Execute", st->mw0 + 10, st->mw0 + 20,
                    0);
        fprintf(f, "],\"kernels\":[");
        for (i = 0, first = 1; i < lp->nops; i++) {
            if (st->kernel_us[i] == 0)
                continue;
            fprintf(f, "%s{\"hlo_op\":\"%s\",\"start_us\":%lld,\"dur_us\":%lld}", first ? "" : ",",
                    m->ops[i].hlo, (long long)st->kernel0[i], (long long)st->kernel_us[i]);
            first = 0;
        }
        fprintf(f, "]}");
    }
    fprintf(f, "],\"stop_us\":%lld}\n", (long long)lp->stop_us);
    if (fclose(f) != 0) {
        fprintf(stderr, "xprofs-synth: %s: %s\n", path, strerror(errno));
        return -EIO;
    }
    return 0;
}

void learner_plan_release(struct learner_plan *lp)
{
    free(lp->steps);
    memset(lp, 0, sizeof(*lp));
}
