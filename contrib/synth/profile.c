/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Training-loop XSpace in the corpus' plane order: /host:metadata,
 * /device:GPU:0..N-1 (compute, H2D, D2H and collective streams), /host:CPU
 * (Python, execute threads, thread pool), Task Environment, then hostnames.
 * Line sizes are counted step by step over all lines at once, so each step's
 * plan is computed once for counting; writing then goes line by line.
 */
#include "profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "alloc.h"
#include "lines.h"
#include "planes.h"
#include "xplane.h"

#define LINES_PER_GPU 4
#define NAME_LEN 80

/* Every timeline line of a host: GPU planes' streams, then the host threads. */
struct layout {
    struct xline_desc *lines; /* n_lines descriptors */
    char (*names)[NAME_LEN];  /* their names */
    uint64_t *event_bytes;    /* counted event bytes per line */
    size_t n_lines;           /* LINES_PER_GPU * gpus + gpus + 2 */
};

static int (*const stream_gens[LINES_PER_GPU])(void *, int, struct emit *) = {
    lines_compute, lines_h2d, lines_d2h, lines_collective};

/* Stream lines of GPU g at ld (ids unique over the host, like CUDA/HIP stream ids). */
static void device_lines(struct synth *sy, int g, struct xline_desc *ld, char (*names)[NAME_LEN])
{
    static const char *const kinds[LINES_PER_GPU] = {NULL, "MemcpyH2D", "MemcpyD2H", NULL};
    int k;

    for (k = 0; k < LINES_PER_GPU; k++) {
        int64_t id = 16 + LINES_PER_GPU * g + k;

        snprintf(names[k], NAME_LEN, "Stream #%lld(%s)", (long long)id,
                 kinds[k] ? kinds[k] : sy->v->compute_stream);
        ld[k] = (struct xline_desc){id, names[k], lines_device_ts(sy), stream_gens[k], sy, g};
    }
}

/* Host lines at ld: python, one execute thread per GPU, the pool thread. */
static void host_lines(struct synth *sy, struct xline_desc *ld, char (*names)[NAME_LEN])
{
    int64_t ts = lines_host_ts(sy);
    int n = sy->opt->n_gpus, g;

    ld[0] = (struct xline_desc){sy->tids.python, "python3", ts, lines_python, sy, 0};
    for (g = 0; g < n; g++) {
        int64_t tid = sy->tids.exec[g];

        snprintf(names[1 + g], NAME_LEN, "py_xla_execute/%lld", (long long)tid);
        ld[1 + g] = (struct xline_desc){tid, names[1 + g], ts + 300 + g, lines_execute, sy, g};
    }
    snprintf(names[1 + n], NAME_LEN, "tf_pjrt_thread_pool/%lld", (long long)sy->tids.pool);
    ld[1 + n] = (struct xline_desc){sy->tids.pool, names[1 + n], ts + 200, lines_pool, sy, 0};
    if (sy->opt->alloc_events > 0)
        ld[2 + n] = (struct xline_desc){999999, "allocator", ts, alloc_line, sy, 0};
}

/* Allocates and fills the layout of the current host; 0 or -ENOMEM. */
static int layout_init(struct layout *lo, struct synth *sy)
{
    int g, n = sy->opt->n_gpus;

    lo->n_lines = (size_t)(LINES_PER_GPU * n + n + 2 + (sy->opt->alloc_events > 0));
    lo->lines = calloc(lo->n_lines, sizeof(*lo->lines));
    lo->names = calloc(lo->n_lines, sizeof(*lo->names));
    lo->event_bytes = calloc(lo->n_lines, sizeof(*lo->event_bytes));
    if (lo->lines == NULL || lo->names == NULL || lo->event_bytes == NULL)
        return -ENOMEM;
    for (g = 0; g < n; g++)
        device_lines(sy, g, &lo->lines[LINES_PER_GPU * g], &lo->names[LINES_PER_GPU * g]);
    host_lines(sy, &lo->lines[LINES_PER_GPU * n], &lo->names[LINES_PER_GPU * n]);
    return 0;
}

static void layout_release(struct layout *lo)
{
    free(lo->lines);
    free(lo->names);
    free(lo->event_bytes);
}

/* Counts every line's events, one step at a time over all lines. */
static int count_events(struct synth *sy, struct layout *lo)
{
    struct emit em = {WBUF_INIT, WBUF_INIT, NULL, 0, 0};
    int64_t s0 = sy->s_begin, s1 = sy->s_end, s;
    size_t k;
    int rc = 0;

    for (s = s0; s < s1 && rc == 0; s++) {
        sy->s_begin = s;
        sy->s_end = s + 1;
        for (k = 0; k < lo->n_lines && rc == 0; k++)
            rc = xline_count(&em, &lo->lines[k], &lo->event_bytes[k]);
    }
    sy->s_begin = s0;
    sy->s_end = s1;
    emit_release(&em);
    return rc;
}

/* Writes (or sizes) the GPU planes and the host plane from a counted layout. */
static int write_timelines(struct synth *sy, struct layout *lo, struct sink *sink, uint64_t *bytes)
{
    size_t host = (size_t)LINES_PER_GPU * (size_t)sy->opt->n_gpus;
    struct xplane_desc pd;
    char plane_name[32];
    int g, rc = 0;

    for (g = 0; g < sy->opt->n_gpus && rc == 0; g++) {
        size_t first = (size_t)(LINES_PER_GPU * g);

        snprintf(plane_name, sizeof(plane_name), "/device:GPU:%d", g);
        pd = (struct xplane_desc){g,
                                  plane_name,
                                  &lo->lines[first],
                                  LINES_PER_GPU,
                                  &sy->dev_tail,
                                  &lo->event_bytes[first]};
        rc = xplane_write(sink, &pd, bytes);
    }
    if (rc == 0) {
        pd = (struct xplane_desc){0,
                                  "/host:CPU",
                                  &lo->lines[host],
                                  lo->n_lines - host,
                                  &sy->host_tail,
                                  &lo->event_bytes[host]};
        rc = xplane_write(sink, &pd, bytes);
    }
    return rc;
}

int profile_write(struct synth *sy, struct sink *sink, uint64_t *bytes)
{
    struct layout lo = {NULL, NULL, NULL, 0};
    uint64_t start = planes_wall_start(sy->host);
    int64_t end_ns = sy->t0_ns + sy->s_end * sy->period_ns;
    int rc;

    rc = layout_init(&lo, sy);
    if (rc == 0)
        rc = count_events(sy, &lo);
    if (rc == -ENOMEM)
        fprintf(stderr, "xprofs-synth: out of memory\n");
    if (rc == 0)
        rc = planes_write_metadata(sink, &sy->prog, bytes);
    if (rc == 0)
        rc = write_timelines(sy, &lo, sink, bytes);
    if (rc == 0)
        rc = planes_write_task_env(sink, start, start + (uint64_t)end_ns, bytes);
    if (rc == 0)
        rc = xspace_write_hostname(sink, sy->hostname, bytes);
    layout_release(&lo);
    return rc;
}

/* Counts the file size with steps [s0, s1). */
static int count(struct synth *sy, int64_t s0, int64_t s1, uint64_t *bytes)
{
    *bytes = 0;
    sy->s_begin = s0;
    sy->s_end = s1;
    return profile_write(sy, NULL, bytes);
}

/*
 * Size of everything but the steps, and of one step, measured around step s:
 * files with steps [s, s+1) and [s, s+2). Steps grow a little with time
 * (longer offsets, larger correlation ids), so s should be mid-run.
 */
static int measure(struct synth *sy, int64_t s, uint64_t *fixed, uint64_t *per_step)
{
    uint64_t one, two;
    int rc;

    rc = count(sy, s, s + 1, &one);
    if (rc == 0)
        rc = count(sy, s, s + 2, &two);
    if (rc != 0)
        return rc;
    *per_step = two > one ? two - one : 0;
    *fixed = one > *per_step ? one - *per_step : 0;
    return 0;
}

/* Mean size of one step over a run of n steps, from SAMPLES steps spread over it. */
#define SAMPLES 8
static int mean_step(struct synth *sy, int64_t n, uint64_t fixed, uint64_t *mean)
{
    uint64_t sum = 0, one;
    int j, rc;

    for (j = 0; j < SAMPLES; j++) {
        int64_t s = (int64_t)((2 * j + 1) * n / (2 * SAMPLES));

        rc = count(sy, s, s + 1, &one);
        if (rc != 0)
            return rc;
        sum += one > fixed ? one - fixed : 0;
    }
    *mean = sum / SAMPLES;
    return 0;
}

int profile_choose_steps(struct synth *sy, uint64_t target_bytes, int64_t *n_steps)
{
    uint64_t fixed, per_step;
    int64_t n;
    int round, rc;

    rc = measure(sy, 0, &fixed, &per_step);
    if (rc != 0)
        return rc;
    for (round = 0; round < 3; round++) {
        if (per_step == 0 || target_bytes <= fixed + per_step) {
            *n_steps = 1;
            return 0;
        }
        n = (int64_t)((target_bytes - fixed + per_step / 2) / per_step);
        if (n <= SAMPLES)
            break;
        if (round == 0)
            rc = measure(sy, n / 2, &fixed, &per_step);
        else
            rc = mean_step(sy, n, fixed, &per_step);
        if (rc != 0)
            return rc;
    }
    *n_steps = n < 1 ? 1 : n;
    return 0;
}
