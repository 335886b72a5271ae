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

/* A request with its position in the concatenation (for a stable order). */
struct placed {
    const struct inf_request *r;
    uint32_t pos;
};

static int placed_cmp(const void *x, const void *y)
{
    const struct placed *a = x, *b = y;
    uint64_t da = a->r->end_ps - a->r->start_ps, db = b->r->end_ps - b->r->start_ps;

    if (da != db)
        return da < db ? -1 : 1;
    if (a->r->start_ps != b->r->start_ps)
        return a->r->start_ps < b->r->start_ps ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* ComputeThroughputAndAverageLatencyUs. */
static void model_rates(struct inf_model *m)
{
    uint64_t first = UINT64_MAX, last = 0, total = 0;
    uint32_t i;

    if (m->nrequests == 0)
        return;
    for (i = 0; i < m->nrequests; i++) {
        const struct inf_request *r = &m->requests[i];
        if (r->start_ps < first)
            first = r->start_ps;
        if (r->end_ps > last)
            last = r->end_ps;
        total += r->end_ps - r->start_ps;
    }
    m->request_throughput = (double)m->nrequests / ((double)(last - first) / 1e12);
    m->request_average_latency_us = (double)total / 1e6 / m->nrequests;
}

void inference_stats_free(struct inference_stats *st)
{
    uint32_t i;

    if (st == NULL)
        return;
    for (i = 0; i < st->nmodels; i++)
        free(st->models[i].requests);
    free(st->models);
    arena_free(&st->arena);
    memset(st, 0, sizeof(*st));
}

int inference_combine(const struct inf_host *hosts, uint32_t n, struct inference_stats *out)
{
    const char **ids = NULL;
    int32_t **remap = NULL; /* [host][src model index] -> combined index */
    struct placed *all = NULL;
    uint32_t nids = 0, total = 0, h, i, m, nall;
    int rc = -ENOMEM;

    memset(out, 0, sizeof(*out));
    arena_init(&out->arena);
    if (n == 0)
        return 0;
    remap = calloc(n, sizeof(*remap));
    for (h = 0; h < n; h++)
        total += hosts[h].nmodel_ids;
    ids = malloc((total ? total : 1) * sizeof(*ids));
    if (remap == NULL || ids == NULL)
        goto out;
    /* CombineModelIdDatabases */
    for (h = 0; h < n; h++) {
        const struct inf_host *s = &hosts[h];
        remap[h] = malloc((s->nmodel_ids ? s->nmodel_ids : 1) * sizeof(int32_t));
        if (remap[h] == NULL)
            goto out;
        for (i = 0; i < s->nmodel_ids; i++) {
            int32_t k = find_id(ids, nids, s->model_ids[i]);
            if (k < 0) {
                k = (int32_t)nids;
                ids[nids++] = s->model_ids[i];
            }
            remap[h][i] = k;
        }
    }
    /* RegroupDataByModelId */
    out->nmodels = nids ? nids : 1;
    out->models = calloc(out->nmodels, sizeof(*out->models));
    total = 0;
    for (h = 0; h < n; h++)
        total += hosts[h].nrequests;
    all = malloc((total ? total : 1) * sizeof(*all));
    if (out->models == NULL || all == NULL)
        goto out;
    for (m = 0; m < out->nmodels; m++) {
        struct inf_model *md = &out->models[m];
        const char *id = nids ? ids[m] : "ALL";
        md->id = arena_strndup(&out->arena, id, strlen(id));
        if (md->id == NULL)
            goto out;
        nall = 0;
        for (h = 0; h < n; h++) {
            const struct inf_host *s = &hosts[h];
            for (i = 0; i < s->nrequests; i++) {
                const struct inf_request *r = &s->requests[i];
                int32_t k = 0;
                if (nids > 0) {
                    if (r->model_index < 0)
                        continue; /* no model: left out of the per-model stats */
                    /* a host with no ids keeps its (zero) index unchanged */
                    k = (uint32_t)r->model_index < s->nmodel_ids ? remap[h][r->model_index]
                                                                 : r->model_index;
                }
                if ((uint32_t)k != m)
                    continue;
                all[nall].r = r;
                all[nall].pos = nall;
                nall++;
            }
        }
        xp_qsort(all, nall, sizeof(*all), placed_cmp);
        md->requests = malloc((nall ? nall : 1) * sizeof(*md->requests));
        if (md->requests == NULL)
            goto out;
        for (i = 0; i < nall; i++) {
            md->requests[i] = *all[i].r;
            md->requests[i].model_index = (int32_t)m;
        }
        md->nrequests = nall;
        model_rates(md);
    }
    rc = 0;
out:
    if (remap != NULL) {
        for (h = 0; h < n; h++)
            free(remap[h]);
    }
    free(remap);
    free(ids);
    free(all);
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
 * Payload (store_codec.h): "INFHOST1", u32 model ids and each id, u32
 * requests and per request its id, model index, start, end, device time,
 * reads and writes (the host index is the snapshot's, set on loading). */

#define INF_MAGIC "INFHOST1"

static void save(const struct inf_host *h, struct out *o)
{
    out_write(o, INF_MAGIC, 8);
    sc_put_u32(o, h->nmodel_ids);
    for (uint32_t i = 0; i < h->nmodel_ids; i++)
        sc_put_str(o, h->model_ids[i]);
    sc_put_u32(o, h->nrequests);
    for (uint32_t i = 0; i < h->nrequests; i++) {
        const struct inf_request *r = &h->requests[i];
        sc_put_u64(o, (uint64_t)r->request_id);
        sc_put_u32(o, (uint32_t)r->model_index);
        sc_put_u64(o, r->start_ps);
        sc_put_u64(o, r->end_ps);
        sc_put_u64(o, r->device_time_ps);
        sc_put_u64(o, r->read_from_device_time_ps);
        sc_put_u64(o, r->write_to_device_time_ps);
    }
}

static int load(const void *p, size_t size, int32_t host_id, struct inf_host *h)
{
    struct sc_cur c;
    uint32_t i;

    memset(h, 0, sizeof(*h));
    arena_init(&h->arena);
    sc_init(&c, p, size, &h->arena);
    sc_magic(&c, INF_MAGIC);
    h->nmodel_ids = sc_u32(&c);
    if (c.bad || (uint64_t)h->nmodel_ids * 4 > c.left ||
        (h->model_ids = calloc(h->nmodel_ids ? h->nmodel_ids : 1, sizeof(char *))) == NULL)
        c.bad = 1;
    else
        h->model_ids_cap = h->nmodel_ids ? h->nmodel_ids : 1;
    for (i = 0; !c.bad && i < h->nmodel_ids; i++) {
        if ((h->model_ids[i] = sc_str(&c)) == NULL)
            c.bad = 1;
    }
    h->nrequests = sc_u32(&c);
    if (c.bad || (uint64_t)h->nrequests * 52 > c.left ||
        (h->requests = calloc(h->nrequests ? h->nrequests : 1, sizeof(*h->requests))) == NULL)
        c.bad = 1;
    for (i = 0; !c.bad && i < h->nrequests; i++) {
        struct inf_request *r = &h->requests[i];
        r->request_id = (int64_t)sc_u64(&c);
        r->model_index = (int32_t)sc_u32(&c);
        r->host_id = host_id;
        r->start_ps = sc_u64(&c);
        r->end_ps = sc_u64(&c);
        r->device_time_ps = sc_u64(&c);
        r->read_from_device_time_ps = sc_u64(&c);
        r->write_to_device_time_ps = sc_u64(&c);
        if (r->model_index < -1 ||
            (r->model_index >= 0 && (uint32_t)r->model_index >= h->nmodel_ids))
            c.bad = 1;
    }
    if (sc_done(&c) != 0) {
        inf_host_free(h);
        return -EIO;
    }
    return 0;
}

static char *persist_key(const struct snapshot *snap, const char *host)
{
    size_t n = strlen(host) + 32;
    char *what = malloc(n), *key;

    if (what == NULL)
        return NULL;
    snprintf(what, n, "intermediate inference %s", host);
    key = snapshot_key_text(snap, what);
    free(what);
    return key;
}

/* One host's requests (host_id: its index among the xplane hosts), from the
 * persistent cache when it has them. */
static int host_stats(struct snapshot *snap, const char *host, int32_t host_id, struct inf_host *h,
                      struct xp_err *err)
{
    struct store *st = store_shared();
    char *key = st != NULL ? persist_key(snap, host) : NULL;
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
