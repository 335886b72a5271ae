/*
 * op_stats_inference_combine.c - the inference stats of a snapshot: every
 * host's requests (op_stats_inference.c) combined as XProf's
 * ConvertMultiXSpaceToInferenceStats does (CombineInferenceStatsResult, then
 * RegroupInferenceStatsByModel), computed once per snapshot.
 *
 * Model ids: the first host's list is taken as is; a later host's new ids are
 * appended and its requests renumbered. XProf walks the later host's ids in
 * protobuf map order; here they go in index order, which only changes the
 * numbering of models, never which requests a model holds. Requests are then
 * grouped by model (all in one model "ALL" when no host names a model; a
 * request without a model is dropped when some host names one), each model's
 * requests ordered by (duration, start) with hosts in snapshot order on ties,
 * and request_throughput = requests / (last end - first start) in seconds.
 * With a persistent cache each host's requests are kept there, so a new
 * process combines them without reading the profiles.
 */
#include "op_stats_inference.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "store/store_codec.h"

/* The index of id in ids[0..n), or -1. */
static int32_t find_id(const char *const *ids, uint32_t n, const char *id)
{
    uint32_t i;

    for (i = 0; i < n; i++) {
        if (strcmp(ids[i], id) == 0)
            return (int32_t)i;
    }
    return -1;
}

/* A request or batch with its position in the concatenation (for a stable
 * order). */
struct placed {
    uint64_t start, end;
    const void *r;
    uint32_t pos;
    uint32_t host;
};

static int placed_cmp(const void *x, const void *y)
{
    const struct placed *a = x, *b = y;
    uint64_t da = a->end - a->start, db = b->end - b->start;

    if (da != db)
        return da < db ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* ComputeThroughputAndAverageLatencyUs over n spans start/end (stride
 * size): per second over their whole span, and the mean in us. */
static void rates(const void *v, uint32_t n, size_t size, size_t start_off, double *throughput,
                  double *latency_us)
{
    uint64_t first = UINT64_MAX, last = 0, total = 0;
    uint32_t i;

    *throughput = 0;
    *latency_us = 0;
    if (n == 0)
        return;
    for (i = 0; i < n; i++) {
        const uint64_t *se = (const uint64_t *)((const char *)v + i * size + start_off);
        if (se[0] < first)
            first = se[0];
        if (se[1] > last)
            last = se[1];
        total += se[1] - se[0];
    }
    *throughput = (double)n / ((double)(last - first) / 1e12);
    *latency_us = (double)total / 1e6 / n;
}

void inference_stats_free(struct inference_stats *st)
{
    uint32_t i;

    if (st == NULL)
        return;
    for (i = 0; i < st->nmodels; i++) {
        free(st->models[i].requests);
        free(st->models[i].batches);
        free(st->models[i].sizes);
        free(st->models[i].tensors);
    }
    free(st->models);
    free(st->related);
    free(st->patterns);
    free(st->params);
    arena_free(&st->arena);
    memset(st, 0, sizeof(*st));
}

/* What combining needs besides the result. */
struct comb {
    const struct inf_host *hosts;
    uint32_t n;
    const char **ids;   /* combined model ids */
    uint32_t nids;      /* entries in ids */
    int32_t **remap;    /* [host][src model index] -> combined index */
    uint32_t **premap;  /* [host][src pattern index] -> combined index */
    uint32_t *roff;     /* [host] offset of its related ids in the pool */
    struct placed *all; /* scratch */
};

/* CombineModelIdDatabases, with the batching parameters (the first host
 * with model ids gives them all; later hosts add those of new model ids). */
static int combine_ids(struct comb *c, struct inference_stats *out)
{
    uint32_t h, i, j, total = 0, ptotal = 0;

    for (h = 0; h < c->n; h++) {
        total += c->hosts[h].nmodel_ids;
        ptotal += c->hosts[h].nparams;
    }
    c->ids = malloc((total ? total : 1) * sizeof(*c->ids));
    out->params = malloc((ptotal ? ptotal : 1) * sizeof(*out->params));
    if (c->ids == NULL || out->params == NULL)
        return -ENOMEM;
    for (h = 0; h < c->n; h++) {
        const struct inf_host *s = &c->hosts[h];
        if (c->nids == 0) {
            /* dst = src */
            out->nparams = 0;
        }
        for (j = 0; j < s->nparams; j++) {
            for (i = 0; i < out->nparams; i++) {
                if (strcmp(out->params[i].model_id, s->params[j].model_id) == 0)
                    break;
            }
            if (i == out->nparams)
                out->params[out->nparams++] = s->params[j];
        }
        c->remap[h] = malloc((s->nmodel_ids ? s->nmodel_ids : 1) * sizeof(int32_t));
        if (c->remap[h] == NULL)
            return -ENOMEM;
        for (i = 0; i < s->nmodel_ids; i++) {
            int32_t k = find_id(c->ids, c->nids, s->model_ids[i]);
            if (k < 0) {
                k = (int32_t)c->nids;
                c->ids[c->nids++] = s->model_ids[i];
            }
            c->remap[h][i] = k;
        }
    }
    /* the strings live in the hosts' arenas: copy what is kept */
    for (i = 0; i < out->nparams; i++) {
        struct inf_params *pr = &out->params[i];
        pr->model_id = arena_strndup(&out->arena, pr->model_id, strlen(pr->model_id));
        pr->allowed_batch_sizes =
            arena_strndup(&out->arena, pr->allowed_batch_sizes, strlen(pr->allowed_batch_sizes));
        if (pr->model_id == NULL || pr->allowed_batch_sizes == NULL)
            return -ENOMEM;
    }
    return 0;
}

/* CombineTensorPatternDatabase (new patterns appended) and the related
 * batch id pool. */
static int combine_pools(struct comb *c, struct inference_stats *out)
{
    uint32_t h, i, total = 0, rtotal = 0;

    for (h = 0; h < c->n; h++) {
        total += c->hosts[h].npatterns;
        rtotal += c->hosts[h].nrelated;
    }
    out->patterns = malloc((total ? total : 1) * sizeof(*out->patterns));
    out->related = malloc((rtotal ? rtotal : 1) * sizeof(*out->related));
    if (out->patterns == NULL || out->related == NULL)
        return -ENOMEM;
    for (h = 0; h < c->n; h++) {
        const struct inf_host *s = &c->hosts[h];
        c->premap[h] = malloc((s->npatterns ? s->npatterns : 1) * sizeof(uint32_t));
        if (c->premap[h] == NULL)
            return -ENOMEM;
        for (i = 0; i < s->npatterns; i++) {
            int32_t k = find_id(out->patterns, out->npatterns, s->patterns[i]);
            if (k < 0) {
                const char *copy =
                    arena_strndup(&out->arena, s->patterns[i], strlen(s->patterns[i]));
                if (copy == NULL)
                    return -ENOMEM;
                k = (int32_t)out->npatterns;
                out->patterns[out->npatterns++] = copy;
            }
            c->premap[h][i] = (uint32_t)k;
        }
        c->roff[h] = out->nrelated;
        if (s->nrelated > 0)
            memcpy(out->related + out->nrelated, s->related, s->nrelated * sizeof(int64_t));
        out->nrelated += s->nrelated;
    }
    return 0;
}

/* A pattern field of host h in the combined numbering. */
static uint32_t pattern_in(const struct comb *c, uint32_t h, uint32_t pattern)
{
    if (pattern == 0 || pattern > c->hosts[h].npatterns)
        return 0;
    return c->premap[h][pattern - 1] + 1;
}

/* The requests of model m, ordered (RegroupDataByModelId). */
static int model_requests(struct comb *c, uint32_t m, struct inf_model *md)
{
    uint32_t h, i, nall = 0;

    for (h = 0; h < c->n; h++) {
        const struct inf_host *s = &c->hosts[h];
        for (i = 0; i < s->nrequests; i++) {
            const struct inf_request *r = &s->requests[i];
            int32_t k = 0;
            if (c->nids > 0) {
                if (r->model_index < 0)
                    continue; /* no model: left out of the per-model stats */
                /* a host with no ids keeps its (zero) index unchanged */
                k = (uint32_t)r->model_index < s->nmodel_ids ? c->remap[h][r->model_index]
                                                             : r->model_index;
            }
            if ((uint32_t)k != m)
                continue;
            c->all[nall] = (struct placed){r->start_ps, r->end_ps, r, nall, h};
            nall++;
        }
    }
    xp_qsort(c->all, nall, sizeof(*c->all), placed_cmp);
    md->requests = malloc((nall ? nall : 1) * sizeof(*md->requests));
    if (md->requests == NULL)
        return -ENOMEM;
    for (i = 0; i < nall; i++) {
        const struct inf_request *r = c->all[i].r;
        struct inf_request *d = &md->requests[i];
        h = c->all[i].host;
        *d = *r;
        d->model_index = (int32_t)m;
        d->tensor_pattern = pattern_in(c, h, r->tensor_pattern);
        d->related_first += c->roff[h];
    }
    md->nrequests = nall;
    rates(md->requests, nall, sizeof(*md->requests), offsetof(struct inf_request, start_ps),
          &md->request_throughput, &md->request_average_latency_us);
    return 0;
}

/* The batches of model m, ordered. XProf renumbers no batch's model index
 * across hosts: a batch keeps its host's index (0 when it found no request). */
static int model_batches(struct comb *c, uint32_t m, struct inf_model *md)
{
    uint32_t h, i, nall = 0;

    for (h = 0; h < c->n; h++) {
        const struct inf_host *s = &c->hosts[h];
        for (i = 0; i < s->nbatches; i++) {
            const struct inf_batch *b = &s->batches[i];
            int32_t k = c->nids > 0 ? b->model_index : 0;
            if (k < 0 || (uint32_t)k != m)
                continue;
            c->all[nall] = (struct placed){b->start_ps, b->end_ps, b, nall, h};
            nall++;
        }
    }
    xp_qsort(c->all, nall, sizeof(*c->all), placed_cmp);
    md->batches = malloc((nall ? nall : 1) * sizeof(*md->batches));
    if (md->batches == NULL)
        return -ENOMEM;
    for (i = 0; i < nall; i++) {
        const struct inf_batch *b = c->all[i].r;
        h = c->all[i].host;
        md->batches[i] = *b;
        md->batches[i].tensor_pattern = pattern_in(c, h, b->tensor_pattern);
    }
    md->nbatches = nall;
    rates(md->batches, nall, sizeof(*md->batches), offsetof(struct inf_batch, start_ps),
          &md->batch_throughput, &md->batch_average_latency_us);
    return 0;
}

static void comb_release(struct comb *c)
{
    uint32_t h;

    for (h = 0; h < c->n; h++) {
        if (c->remap != NULL)
            free(c->remap[h]);
        if (c->premap != NULL)
            free(c->premap[h]);
    }
    free(c->remap);
    free(c->premap);
    free(c->roff);
    free(c->ids);
    free(c->all);
}

int inference_combine(const struct inf_host *hosts, uint32_t n, struct inference_stats *out)
{
    struct comb c;
    uint32_t total = 0, h, m;
    int rc = -ENOMEM;

    memset(out, 0, sizeof(*out));
    arena_init(&out->arena);
    if (n == 0)
        return 0;
    memset(&c, 0, sizeof(c));
    c.hosts = hosts;
    c.n = n;
    c.remap = calloc(n, sizeof(*c.remap));
    c.premap = calloc(n, sizeof(*c.premap));
    c.roff = calloc(n, sizeof(*c.roff));
    for (h = 0; h < n; h++)
        total += hosts[h].nrequests > hosts[h].nbatches ? hosts[h].nrequests : hosts[h].nbatches;
    c.all = malloc((total ? total : 1) * sizeof(*c.all));
    if (c.remap == NULL || c.premap == NULL || c.roff == NULL || c.all == NULL)
        goto out;
    if ((rc = combine_ids(&c, out)) != 0 || (rc = combine_pools(&c, out)) != 0)
        goto out;
    rc = -ENOMEM;
    out->nmodels = c.nids ? c.nids : 1;
    out->models = calloc(out->nmodels, sizeof(*out->models));
    if (out->models == NULL)
        goto out;
    for (m = 0; m < out->nmodels; m++) {
        struct inf_model *md = &out->models[m];
        const char *id = c.nids ? c.ids[m] : "ALL";
        md->id = arena_strndup(&out->arena, id, strlen(id));
        if (md->id == NULL || model_requests(&c, m, md) != 0 || model_batches(&c, m, md) != 0)
            goto out;
    }
    rc = inference_aggregate(out);
out:
    comb_release(&c);
    if (rc != 0)
        inference_stats_free(out);
    return rc;
}

/* What an intermediate holds: the stats (or NULL for none). */
static void free_stats(void *value)
{
    inference_stats_free(value);
    free(value);
}

/* ---- one host's requests, kept in the persistent cache --------------------
 * Payload (store_codec.h): "INFHOST2", then u32 counts each followed by its
 * entries: model ids (strings), related batch ids (u64), tensor patterns
 * (strings), batching parameters (model id, four u64, allowed sizes),
 * requests (every field of struct inf_request but the host index, which is
 * the snapshot's, set on loading) and batches (likewise). */

#define INF_MAGIC "INFHOST2"

static void save_request(const struct inf_request *r, struct out *o)
{
    sc_put_u64(o, (uint64_t)r->request_id);
    sc_put_u32(o, (uint32_t)r->model_index);
    sc_put_u64(o, r->start_ps);
    sc_put_u64(o, r->end_ps);
    sc_put_u64(o, r->device_time_ps);
    sc_put_u64(o, r->read_from_device_time_ps);
    sc_put_u64(o, r->write_to_device_time_ps);
    sc_put_u64(o, r->batching_request_delay_ps);
    sc_put_u32(o, (uint32_t)r->batching_request_size);
    sc_put_u32(o, r->tensor_pattern);
    sc_put_u64(o, r->tensor_time_ps);
    sc_put_u64(o, r->host_preprocessing_ps);
    sc_put_u64(o, r->host_batch_formation_ps);
    sc_put_u64(o, r->host_runtime_ps);
    sc_put_u64(o, r->host_postprocessing_ps);
    sc_put_f64(o, r->idle_time_ps);
    sc_put_u32(o, r->related_first);
    sc_put_u32(o, r->nrelated);
}

static void save_batch(const struct inf_batch *b, struct out *o)
{
    sc_put_u64(o, (uint64_t)b->batch_id);
    sc_put_u32(o, (uint32_t)b->model_index);
    sc_put_u64(o, b->start_ps);
    sc_put_u64(o, b->end_ps);
    sc_put_u64(o, b->batch_delay_ps);
    sc_put_u64(o, b->device_time_ps);
    sc_put_u32(o, (uint32_t)b->padding_amount);
    sc_put_u32(o, (uint32_t)b->batch_size_after_padding);
    sc_put_u32(o, b->tensor_pattern);
    sc_put_u64(o, b->tensor_time_ps);
}

static void save(const struct inf_host *h, struct out *o)
{
    uint32_t i;

    out_write(o, INF_MAGIC, 8);
    sc_put_u32(o, h->nmodel_ids);
    for (i = 0; i < h->nmodel_ids; i++)
        sc_put_str(o, h->model_ids[i]);
    sc_put_u32(o, h->nrelated);
    for (i = 0; i < h->nrelated; i++)
        sc_put_u64(o, (uint64_t)h->related[i]);
    sc_put_u32(o, h->npatterns);
    for (i = 0; i < h->npatterns; i++)
        sc_put_str(o, h->patterns[i]);
    sc_put_u32(o, h->nparams);
    for (i = 0; i < h->nparams; i++) {
        const struct inf_params *p = &h->params[i];
        sc_put_str(o, p->model_id);
        sc_put_u64(o, (uint64_t)p->num_batch_threads);
        sc_put_u64(o, (uint64_t)p->batch_timeout_micros);
        sc_put_u64(o, (uint64_t)p->max_batch_size);
        sc_put_u64(o, (uint64_t)p->max_enqueued_batches);
        sc_put_str(o, p->allowed_batch_sizes);
    }
    sc_put_u32(o, h->nrequests);
    for (i = 0; i < h->nrequests; i++)
        save_request(&h->requests[i], o);
    sc_put_u32(o, h->nbatches);
    for (i = 0; i < h->nbatches; i++)
        save_batch(&h->batches[i], o);
}

/* A count, then room for that many entries of size bytes (each at least min
 * bytes in the payload), malloc'd into *v; 0 entries gives one. */
static uint32_t load_count(struct sc_cur *c, void **v, size_t size, size_t min)
{
    uint32_t n = sc_u32(c);

    if (c->bad || (uint64_t)n * min > c->left || (*v = calloc(n ? n : 1, size)) == NULL) {
        c->bad = 1;
        return 0;
    }
    return n;
}

static void load_request(struct sc_cur *c, const struct inf_host *h, struct inf_request *r)
{
    r->request_id = (int64_t)sc_u64(c);
    r->model_index = (int32_t)sc_u32(c);
    r->start_ps = sc_u64(c);
    r->end_ps = sc_u64(c);
    r->device_time_ps = sc_u64(c);
    r->read_from_device_time_ps = sc_u64(c);
    r->write_to_device_time_ps = sc_u64(c);
    r->batching_request_delay_ps = sc_u64(c);
    r->batching_request_size = (int32_t)sc_u32(c);
    r->tensor_pattern = sc_u32(c);
    r->tensor_time_ps = sc_u64(c);
    r->host_preprocessing_ps = sc_u64(c);
    r->host_batch_formation_ps = sc_u64(c);
    r->host_runtime_ps = sc_u64(c);
    r->host_postprocessing_ps = sc_u64(c);
    r->idle_time_ps = sc_f64(c);
    r->related_first = sc_u32(c);
    r->nrelated = sc_u32(c);
    if (r->model_index < -1 || (r->model_index >= 0 && (uint32_t)r->model_index >= h->nmodel_ids) ||
        r->tensor_pattern > h->npatterns || (uint64_t)r->related_first + r->nrelated > h->nrelated)
        c->bad = 1;
}

static void load_batch(struct sc_cur *c, const struct inf_host *h, struct inf_batch *b)
{
    b->batch_id = (int64_t)sc_u64(c);
    b->model_index = (int32_t)sc_u32(c);
    b->start_ps = sc_u64(c);
    b->end_ps = sc_u64(c);
    b->batch_delay_ps = sc_u64(c);
    b->device_time_ps = sc_u64(c);
    b->padding_amount = (int32_t)sc_u32(c);
    b->batch_size_after_padding = (int32_t)sc_u32(c);
    b->tensor_pattern = sc_u32(c);
    b->tensor_time_ps = sc_u64(c);
    if (b->tensor_pattern > h->npatterns)
        c->bad = 1;
}

static int load(const void *p, size_t size, int32_t host_id, struct inf_host *h)
{
    struct sc_cur c;
    uint32_t i;

    memset(h, 0, sizeof(*h));
    arena_init(&h->arena);
    sc_init(&c, p, size, &h->arena);
    sc_magic(&c, INF_MAGIC);
    h->nmodel_ids = load_count(&c, (void **)&h->model_ids, sizeof(char *), 4);
    h->model_ids_cap = h->nmodel_ids ? h->nmodel_ids : 1;
    for (i = 0; !c.bad && i < h->nmodel_ids; i++) {
        if ((h->model_ids[i] = sc_str(&c)) == NULL)
            c.bad = 1;
    }
    h->nrelated = c.bad ? 0 : load_count(&c, (void **)&h->related, sizeof(int64_t), 8);
    for (i = 0; !c.bad && i < h->nrelated; i++)
        h->related[i] = (int64_t)sc_u64(&c);
    h->npatterns = c.bad ? 0 : load_count(&c, (void **)&h->patterns, sizeof(char *), 4);
    for (i = 0; !c.bad && i < h->npatterns; i++) {
        if ((h->patterns[i] = sc_str(&c)) == NULL)
            c.bad = 1;
    }
    h->nparams = c.bad ? 0 : load_count(&c, (void **)&h->params, sizeof(*h->params), 40);
    for (i = 0; !c.bad && i < h->nparams; i++) {
        struct inf_params *pr = &h->params[i];
        pr->model_id = sc_str(&c);
        pr->num_batch_threads = (int64_t)sc_u64(&c);
        pr->batch_timeout_micros = (int64_t)sc_u64(&c);
        pr->max_batch_size = (int64_t)sc_u64(&c);
        pr->max_enqueued_batches = (int64_t)sc_u64(&c);
        pr->allowed_batch_sizes = sc_str(&c);
        if (pr->model_id == NULL || pr->allowed_batch_sizes == NULL)
            c.bad = 1;
    }
    h->nrequests = c.bad ? 0 : load_count(&c, (void **)&h->requests, sizeof(*h->requests), 124);
    for (i = 0; !c.bad && i < h->nrequests; i++) {
        load_request(&c, h, &h->requests[i]);
        h->requests[i].host_id = host_id;
    }
    h->nbatches = c.bad ? 0 : load_count(&c, (void **)&h->batches, sizeof(*h->batches), 64);
    for (i = 0; !c.bad && i < h->nbatches; i++) {
        load_batch(&c, h, &h->batches[i]);
        h->batches[i].host_id = host_id;
    }
    if (sc_done(&c) != 0) {
        inf_host_free(h);
        return -EIO;
    }
    return 0;
}

/* One host's requests (host_id: its index among the xplane hosts), from the
 * persistent cache when it has them. */
static int host_stats(struct snapshot *snap, const char *host, int32_t host_id, struct inf_host *h,
                      struct xp_err *err)
{
    struct store *st = store_shared();
    char *key = st != NULL ? snapshot_intermediate_key(snap, "inference", host) : NULL;
    struct xspace *xs;
    const struct xp_groups *g;
    int rc;

    if (key != NULL) {
        struct blob *b = store_get(st, key);
        rc = b != NULL ? load(b->mem, b->size, host_id, h) : -ENOENT;
        blob_unref(b);
        if (rc == 0) {
            free(key);
            return 0;
        }
    }
    if ((rc = snapshot_xspace_decoded(snap, host, &xs, err)) != 0 ||
        (rc = snapshot_groups(snap, host, &g, err)) != 0) {
        free(key);
        return rc;
    }
    rc = inference_host_stats(xs, g, host_id, h);
    if (rc != 0) {
        free(key);
        return xp_err_set(err, rc, "inference stats: out of memory");
    }
    if (key != NULL && !snapshot_is_fresh(snap, 2)) {
        struct out o;
        out_init(&o);
        save(h, &o);
        sc_persist(st, key, &o);
    }
    free(key);
    return 0;
}

/* Build the stats of one host (arg = host name) or of all xplane hosts (arg =
 * NULL). */
static int build(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    const char *only = arg;
    struct inf_host *hosts = calloc(snap->nhosts ? snap->nhosts : 1, sizeof(*hosts));
    struct inference_stats *st = calloc(1, sizeof(*st));
    uint32_t i, n = 0;
    int rc = 0;

    if (hosts == NULL || st == NULL) {
        free(hosts);
        free(st);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    for (i = 0; i < snap->nhosts && rc == 0; i++) {
        const char *host = snap->hosts[i];
        if (snapshot_host_file(snap, host, SRC_XPLANE) == NULL ||
            (only != NULL && strcmp(only, host) != 0))
            continue;
        if ((rc = host_stats(snap, host, (int32_t)n, &hosts[n], err)) == 0)
            n++;
    }
    if (rc == 0 && (rc = inference_combine(hosts, n, st)) != 0)
        xp_err_set(err, rc, "inference stats: out of memory");
    for (i = 0; i < n; i++)
        inf_host_free(&hosts[i]);
    free(hosts);
    if (rc != 0) {
        free(st);
        return rc;
    }
    *value = st;
    return 0;
}

static const struct snapshot_part inference_part = {"inference", build, free_stats};

int snapshot_inference_stats(struct snapshot *snap, const char *host,
                             const struct inference_stats **stp, struct xp_err *err)
{
    void *v;
    int rc;

    *stp = NULL;
    rc = snapshot_part(snap, &inference_part, host, NULL, host, &v, err);
    if (rc == 0)
        *stp = v;
    return rc;
}
