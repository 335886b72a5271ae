/*
 * op_stats_inference_sample.c - the requests and batches an inference table
 * shows (XProf's inference_stats_sampler.cc): every one when a model has at
 * most 60, else up to 10 around each of the 50, 75, 90, 99, 99.9 and 99.99th
 * percentiles of the chosen column. XProf re-sorts with std::sort, which may
 * reorder equal values; here the sort is stable (equal values keep their
 * order by duration and start).
 */
#include "op_stats_inference.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"

/* The columns XProf's sampler knows (its labels). */
enum col {
    C_LATENCY,
    C_DELAY,
    C_SIZE,
    C_PRE,
    C_FORMATION,
    C_RUNTIME,
    C_H2D,
    C_D2H,
    C_DEVICE,
    C_POST,
    C_IDLE,
    C_BATCH_DELAY,
    C_PADDING,
    C_BATCH_SIZE,
    C_EFFICIENCY,
};

static const struct {
    const char *label;
    enum col col;
} request_cols[] =
    {
        {"Request delay for batching", C_DELAY},
        {"Request size", C_SIZE},
        {"Host preprocess", C_PRE},
        {"Host batch formation", C_FORMATION},
        {"Host runtime", C_RUNTIME},
        {"Data transfer H2D", C_H2D},
        {"Data transfer D2H", C_D2H},
        {"Device compute", C_DEVICE},
        {"Host postprocess", C_POST},
        {"Idle time", C_IDLE},
},
  batch_cols[] = {
      {"Batching delay", C_BATCH_DELAY},
      {"Padding amount", C_PADDING},
      {"Batch size after padding", C_BATCH_SIZE},
      {"Batching efficiency", C_EFFICIENCY},
};

double inference_batching_efficiency(const struct inf_batch *b)
{
    double den = (double)b->batch_size_after_padding;

    /* tsl::profiler::SafeDivide */
    if (den > -1e-10 && den < 1e-10)
        return 0.0;
    return (double)(b->batch_size_after_padding - b->padding_amount) / den;
}

struct sort_ctx {
    const struct inf_model *m;
    enum col col;
};

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b))

static int request_key_cmp(const void *x, const void *y, void *arg)
{
    const struct sort_ctx *c = arg;
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    const struct inf_request *a = &c->m->requests[i], *b = &c->m->requests[j];
    int r;

    switch (c->col) {
    case C_DELAY:
        r = CMP(a->batching_request_delay_ps, b->batching_request_delay_ps);
        break;
    case C_SIZE:
        r = CMP(a->batching_request_size, b->batching_request_size);
        break;
    case C_PRE:
        r = CMP(a->host_preprocessing_ps, b->host_preprocessing_ps);
        break;
    case C_FORMATION:
        r = CMP(a->host_batch_formation_ps, b->host_batch_formation_ps);
        break;
    case C_RUNTIME:
        r = CMP(a->host_runtime_ps, b->host_runtime_ps);
        break;
    case C_H2D:
        r = CMP(a->write_to_device_time_ps, b->write_to_device_time_ps);
        break;
    case C_D2H:
        r = CMP(a->read_from_device_time_ps, b->read_from_device_time_ps);
        break;
    case C_DEVICE:
        r = CMP(a->device_time_ps, b->device_time_ps);
        break;
    case C_POST:
        r = CMP(a->host_postprocessing_ps, b->host_postprocessing_ps);
        break;
    case C_IDLE:
        r = CMP(a->idle_time_ps, b->idle_time_ps);
        break;
    default:
        r = CMP(a->end_ps - a->start_ps, b->end_ps - b->start_ps);
        break;
    }
    return r != 0 ? r : CMP(i, j);
}

static int batch_key_cmp(const void *x, const void *y, void *arg)
{
    const struct sort_ctx *c = arg;
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    const struct inf_batch *a = &c->m->batches[i], *b = &c->m->batches[j];
    int r;

    switch (c->col) {
    case C_BATCH_DELAY:
        r = CMP(a->batch_delay_ps, b->batch_delay_ps);
        break;
    case C_PADDING:
        r = CMP(a->padding_amount, b->padding_amount);
        break;
    case C_BATCH_SIZE:
        r = CMP(a->batch_size_after_padding, b->batch_size_after_padding);
        break;
    case C_EFFICIENCY:
        r = CMP(inference_batching_efficiency(a), inference_batching_efficiency(b));
        break;
    default:
        r = CMP(a->end_ps - a->start_ps, b->end_ps - b->start_ps);
        break;
    }
    return r != 0 ? r : CMP(i, j);
}

/* PercentileSelector::Select over order[0..n) into picks (room for n). */
static uint32_t select_picks(const uint32_t *order, uint32_t n, struct inf_pick *picks)
{
    static const struct {
        double percentile, error;
    } wanted[6] = {{50.0, 1}, {75.0, 1}, {90.0, 1}, {99.0, 0.5}, {99.9, 0.05}, {99.99, 0.005}};
    uint32_t np = 0, next = 0, i, k;

    if (n <= 6 * 10) {
        for (i = 0; i < n; i++)
            picks[np++] = (struct inf_pick){order[i], 100.0 * i / n};
        return np;
    }
    for (i = 0; i < 6; i++) {
        uint32_t taken = 0;
        for (k = next; k < n; k++) {
            double pct = 100.0 * k / n;
            if (pct >= wanted[i].percentile + wanted[i].error) {
                next = k;
                break;
            }
            if (pct >= wanted[i].percentile && taken < 10) {
                picks[np++] = (struct inf_pick){order[k], pct};
                taken++;
            }
        }
    }
    return np;
}

/* The column of label in cols[0..ncols), C_LATENCY when unknown. */
static enum col col_of(const char *label, int batches)
{
    size_t i, n = batches ? sizeof(batch_cols) / sizeof(batch_cols[0])
                          : sizeof(request_cols) / sizeof(request_cols[0]);

    for (i = 0; label != NULL && i < n; i++) {
        const char *l = batches ? batch_cols[i].label : request_cols[i].label;
        if (strcmp(l, label) == 0)
            return batches ? batch_cols[i].col : request_cols[i].col;
    }
    return C_LATENCY;
}

static int sample(const struct inf_model *m, const char *column, int batches,
                  struct inf_pick **picks, uint32_t *np)
{
    uint32_t n = batches ? m->nbatches : m->nrequests, i;
    uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
    struct sort_ctx c = {m, col_of(column, batches)};

    *picks = malloc((n ? n : 1) * sizeof(**picks));
    *np = 0;
    if (order == NULL || *picks == NULL) {
        free(order);
        free(*picks);
        *picks = NULL;
        return -ENOMEM;
    }
    for (i = 0; i < n; i++)
        order[i] = i;
    /* by latency the data are in order already (by duration, then start) */
    if (c.col != C_LATENCY)
        xp_qsort_r(order, n, sizeof(*order), batches ? batch_key_cmp : request_key_cmp, &c);
    *np = select_picks(order, n, *picks);
    free(order);
    return 0;
}

int inference_sample_requests(const struct inf_model *m, const char *column,
                              struct inf_pick **picks, uint32_t *n)
{
    return sample(m, column, 0, picks, n);
}

int inference_sample_batches(const struct inf_model *m, const char *column, struct inf_pick **picks,
                             uint32_t *n)
{
    return sample(m, column, 1, picks, n);
}
