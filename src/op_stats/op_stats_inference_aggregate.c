/*
 * op_stats_inference_aggregate.c - the per-model results of XProf's
 * inference_stats_grouping.cc after the regrouping by model: the average
 * request and batch (AggregatePerModelInferenceStats, integer division as
 * XProf's uint64 fields do, the idle time a double), the averages per batch
 * size with their share of the throughput, and the linearize/delinearize
 * time percentiles of each tensor pattern
 * (GenerateTensorTransferAggregatedResult; results in ascending pattern
 * index, where XProf walks a hash map).
 */
#include "op_stats_inference.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/idmap.h"
#include "base/sort.h"

/* AggregateRequest: sums, the duration summed into end_ps. */
static void add_request(struct inf_request *a, const struct inf_request *r)
{
    a->end_ps += r->end_ps - r->start_ps;
    a->device_time_ps += r->device_time_ps;
    a->read_from_device_time_ps += r->read_from_device_time_ps;
    a->write_to_device_time_ps += r->write_to_device_time_ps;
    a->batching_request_delay_ps += r->batching_request_delay_ps;
    a->batching_request_size =
        (int32_t)((uint32_t)a->batching_request_size + (uint32_t)r->batching_request_size);
    a->host_preprocessing_ps += r->host_preprocessing_ps;
    a->host_batch_formation_ps += r->host_batch_formation_ps;
    a->host_runtime_ps += r->host_runtime_ps;
    a->host_postprocessing_ps += r->host_postprocessing_ps;
    a->idle_time_ps += r->idle_time_ps;
}

/* GetAverageRequestDetails: a zero request for n = 0. */
static struct inf_request avg_request(const struct inf_request *a, uint64_t n)
{
    struct inf_request r;

    memset(&r, 0, sizeof(r));
    r.request_id = -1;
    r.model_index = -1;
    if (n == 0)
        return r;
    r.end_ps = a->end_ps / n;
    r.device_time_ps = a->device_time_ps / n;
    r.write_to_device_time_ps = a->write_to_device_time_ps / n;
    r.read_from_device_time_ps = a->read_from_device_time_ps / n;
    r.batching_request_delay_ps = a->batching_request_delay_ps / n;
    r.batching_request_size = (int32_t)((int64_t)a->batching_request_size / (int64_t)n);
    r.host_preprocessing_ps = a->host_preprocessing_ps / n;
    r.host_batch_formation_ps = a->host_batch_formation_ps / n;
    r.host_runtime_ps = a->host_runtime_ps / n;
    r.host_postprocessing_ps = a->host_postprocessing_ps / n;
    r.idle_time_ps = a->idle_time_ps / (double)n;
    return r;
}

/* AggregateBatch. */
static void add_batch(struct inf_batch *a, const struct inf_batch *b)
{
    a->end_ps += b->end_ps - b->start_ps;
    a->batch_delay_ps += b->batch_delay_ps;
    a->padding_amount = (int32_t)((uint32_t)a->padding_amount + (uint32_t)b->padding_amount);
    a->batch_size_after_padding =
        (int32_t)((uint32_t)a->batch_size_after_padding + (uint32_t)b->batch_size_after_padding);
    a->device_time_ps += b->device_time_ps;
}

/* GetAverageBatchDetails. */
static struct inf_batch avg_batch(const struct inf_batch *a, uint64_t n)
{
    struct inf_batch b;

    memset(&b, 0, sizeof(b));
    b.batch_id = -1;
    if (n == 0)
        return b;
    b.end_ps = a->end_ps / n;
    b.batch_delay_ps = a->batch_delay_ps / n;
    b.padding_amount = (int32_t)((int64_t)a->padding_amount / (int64_t)n);
    b.batch_size_after_padding = (int32_t)((int64_t)a->batch_size_after_padding / (int64_t)n);
    b.device_time_ps = a->device_time_ps / n;
    return b;
}

/* PerBatchSizeInfo while summing. */
struct size_sum {
    int32_t size;
    struct inf_request r;
    uint64_t nr;
    struct inf_batch b;
    uint64_t nb;
};

static int size_cmp(const void *x, const void *y)
{
    const struct size_sum *a = x, *b = y;

    return a->size < b->size ? -1 : a->size > b->size;
}

/* The entry of batch size k in *v (added if new). */
static struct size_sum *size_entry(struct idmap *at, struct size_sum **v, uint32_t *n,
                                   uint32_t *cap, int32_t k)
{
    uint32_t i = idmap_get(at, k);

    if (i != IDMAP_NONE)
        return &(*v)[i];
    if (*n == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 8;
        struct size_sum *p = realloc(*v, nc * sizeof(*p));
        if (p == NULL)
            return NULL;
        *v = p;
        *cap = nc;
    }
    if (idmap_set(at, k, *n) != 0)
        return NULL;
    memset(&(*v)[*n], 0, sizeof(**v));
    (*v)[*n].size = k;
    return &(*v)[(*n)++];
}

/* AggregatePerModelInferenceStats for one model. */
static int aggregate_model(const struct inference_stats *st, struct inf_model *m)
{
    struct idmap by_id = {0}, at = {0};
    struct inf_request ar;
    struct inf_batch ab;
    struct size_sum *sums = NULL, *e;
    uint32_t nsums = 0, cap = 0, i, k;
    int rc = -ENOMEM;

    memset(&ar, 0, sizeof(ar));
    memset(&ab, 0, sizeof(ab));
    /* batch ids as XProf's map<int, ...> keys them: the last one wins */
    for (i = 0; i < m->nbatches; i++) {
        if (idmap_set(&by_id, (int32_t)m->batches[i].batch_id, i) != 0)
            goto out;
    }
    for (i = 0; i < m->nrequests; i++) {
        const struct inf_request *r = &m->requests[i];
        add_request(&ar, r);
        for (k = 0; k < r->nrelated; k++) {
            uint32_t b = idmap_get(&by_id, (int32_t)st->related[r->related_first + k]);
            if (b == IDMAP_NONE)
                continue;
            e = size_entry(&at, &sums, &nsums, &cap, m->batches[b].batch_size_after_padding);
            if (e == NULL)
                goto out;
            add_request(&e->r, r);
            e->nr++;
        }
    }
    for (i = 0; i < m->nbatches; i++) {
        add_batch(&ab, &m->batches[i]);
        e = size_entry(&at, &sums, &nsums, &cap, m->batches[i].batch_size_after_padding);
        if (e == NULL)
            goto out;
        add_batch(&e->b, &m->batches[i]);
        e->nb++;
    }
    m->avg_request = avg_request(&ar, m->nrequests);
    m->avg_batch = avg_batch(&ab, m->nbatches);
    xp_qsort(sums, nsums, sizeof(*sums), size_cmp);
    m->sizes = calloc(nsums ? nsums : 1, sizeof(*m->sizes));
    if (m->sizes == NULL)
        goto out;
    for (i = 0; i < nsums; i++) {
        struct inf_batch_size *d = &m->sizes[i];
        d->batch_size = sums[i].size;
        d->request = avg_request(&sums[i].r, sums[i].nr);
        d->request_throughput = (double)sums[i].nr * m->request_throughput / (double)m->nrequests;
        d->batch = avg_batch(&sums[i].b, sums[i].nb);
        d->batch_throughput = (double)sums[i].nb * m->batch_throughput / (double)m->nbatches;
    }
    m->nsizes = nsums;
    rc = 0;
out:
    free(sums);
    idmap_free(&by_id);
    idmap_free(&at);
    return rc;
}

/* A pattern occurrence: its index and time. */
struct occ {
    uint32_t pattern;
    uint64_t time_ps;
};

static int occ_cmp(const void *x, const void *y)
{
    const struct occ *a = x, *b = y;

    if (a->pattern != b->pattern)
        return a->pattern < b->pattern ? -1 : 1;
    return a->time_ps < b->time_ps ? -1 : a->time_ps > b->time_ps;
}

/* GenerateTensorTransferAggregatedResult: the patterns requests own (not
 * those they inherit from their batch) and the batches' patterns. */
static int tensor_results(struct inf_model *m)
{
    static const double pct[INF_NTENSOR_PERCENTILES] = {50.0, 75.0, 90.0, 95.0, 99.0, 99.9};
    struct occ *v = malloc(((size_t)m->nrequests + m->nbatches + 1) * sizeof(*v));
    uint32_t n = 0, i, j, first;

    if (v == NULL)
        return -ENOMEM;
    for (i = 0; i < m->nrequests; i++) {
        if (m->requests[i].tensor_pattern != 0)
            v[n++] = (struct occ){m->requests[i].tensor_pattern - 1, m->requests[i].tensor_time_ps};
    }
    for (i = 0; i < m->nbatches; i++) {
        if (m->batches[i].tensor_pattern != 0)
            v[n++] = (struct occ){m->batches[i].tensor_pattern - 1, m->batches[i].tensor_time_ps};
    }
    xp_qsort(v, n, sizeof(*v), occ_cmp);
    m->tensors = calloc(n ? n : 1, sizeof(*m->tensors));
    if (m->tensors == NULL) {
        free(v);
        return -ENOMEM;
    }
    for (first = 0; first < n; first = i) {
        struct inf_tensor_result *t = &m->tensors[m->ntensors++];
        uint64_t count;
        for (i = first; i < n && v[i].pattern == v[first].pattern; i++)
            ;
        count = i - first;
        t->pattern = v[first].pattern;
        t->count = count;
        for (j = 0; j < INF_NTENSOR_PERCENTILES; j++)
            t->time_ps[j] = v[first + (uint64_t)(int)(pct[j] / 100.0 * (double)count)].time_ps;
    }
    free(v);
    return 0;
}

int inference_aggregate(struct inference_stats *st)
{
    uint32_t i;
    int rc;

    for (i = 0; i < st->nmodels; i++) {
        if ((rc = tensor_results(&st->models[i])) != 0 ||
            (rc = aggregate_model(st, &st->models[i])) != 0)
            return rc;
    }
    return 0;
}
