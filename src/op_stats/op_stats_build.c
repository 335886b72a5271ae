/*
 * op_stats_build.c - ConvertXSpaceToOpStats for one host, and the combined
 * op_stats of a run, as snapshot intermediates (see op_stats.h).
 *
 * Per host: grouping (snapshot_groups), the HLO map, then per GPU plane the
 * device op metrics / step events / kernel reports, the host plane, the
 * step db. The combined op_stats of a single-host run is that host's own.
 * Strings of a combined op_stats may point into the per-host op_stats it
 * was made from: all are intermediates of the same snapshot and go together.
 */
#include "op_stats_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"
#include "base/sort.h"
#include "store/store.h"

void op_stats_free(struct op_stats *os)
{
    if (os == NULL)
        return;
    op_db_free(&os->device_db);
    op_db_free(&os->host_db);
    free(os->steps);
    free(os->kernels);
    arena_free(&os->arena);
    for (uint32_t i = 0; i < os->nplane_arenas; i++)
        arena_free(&os->plane_arenas[i]);
    free(os->plane_arenas);
    free(os);
}

static struct op_stats *op_stats_new(void)
{
    struct op_stats *os = calloc(1, sizeof(*os));

    if (os == NULL)
        return NULL;
    arena_init(&os->arena);
    op_db_init(&os->device_db);
    op_db_init(&os->host_db);
    os->device_type = "";
    return os;
}

/* The work converted in parallel: every line of the host plane and every
 * GPU plane, each into its own output, biggest first; merged afterwards in
 * line and plane order. */
struct planes_job {
    struct host_ctx *ctx;
    struct host_plane_work *host; /* the host plane, or NULL */
    uint32_t nhost_lines;         /* its lines */
    uint32_t *gpus;               /* GPU plane indexes */
    struct gpu_plane_out *outs;   /* [gpu] */
    uint32_t ngpu;                /* entries in gpus */
    uint32_t *order;              /* items, biggest first */
    uint64_t *size;               /* [item] -> events */
};

/* Item i: a host line (i < nhost_lines) or GPU plane i - nhost_lines. */
static int convert_one(void *arg, size_t k)
{
    struct planes_job *job = arg;
    uint32_t i = job->order[k];

    if (i < job->nhost_lines)
        return host_plane_line(job->host, i);
    i -= job->nhost_lines;
    return op_stats_gpu_plane(job->ctx, job->gpus[i], &job->outs[i]);
}

/* The step events of every GPU plane united into ctx->steps for group g,
 * planes in order (UnionCombineStepEvents per plane, one group at a time). */
static int unite_steps(void *arg, size_t g)
{
    struct planes_job *job = arg;
    uint64_t nm = 0, ne = 0;
    uint32_t i;
    int rc;

    for (i = 0; i < job->ngpu; i++) {
        const struct step_events *src = &job->outs[i].steps;
        if (job->outs[i].any_event && g < src->n && src->by_group[g].present) {
            nm += src->by_group[g].nmarkers;
            ne += src->by_group[g].nevents;
        }
    }
    if (nm > UINT32_MAX || ne > UINT32_MAX ||
        step_details_reserve(&job->ctx->steps.by_group[g], (uint32_t)nm, (uint32_t)ne) != 0)
        return -ENOMEM;
    for (i = 0; i < job->ngpu; i++) {
        struct step_events *src = &job->outs[i].steps;
        if (!job->outs[i].any_event || g >= src->n || !src->by_group[g].present)
            continue;
        if ((rc = step_details_combine(&job->ctx->steps.by_group[g], &src->by_group[g])) != 0)
            return rc;
        /* copied: the plane's own arrays of this step are no longer read, and
         * their memory is reused by the step database */
        step_details_release(&src->by_group[g]);
    }
    return 0;
}

/* Two item indices, the bigger item first (ctx: the sizes). */
static int bigger_item_first(const void *a, const void *b, void *ctx)
{
    const uint64_t *item_size = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    if (item_size[x] != item_size[y])
        return item_size[x] > item_size[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

static int convert_planes(struct host_ctx *ctx, int host_plane, int has_device,
                          struct step_events *host_steps)
{
    const struct xspace *xs = ctx->xs;
    struct op_stats *os = ctx->os;
    struct planes_job job;
    uint32_t p, i, nitems;
    int rc = 0;

    memset(&job, 0, sizeof(job));
    job.ctx = ctx;
    if (host_plane >= 0) {
        if ((rc = host_plane_begin(ctx, (uint32_t)host_plane, &job.host)) != 0)
            goto out;
        job.nhost_lines = xs->planes[host_plane].nlines;
    }
    if (os->hardware_type == HW_GPU) {
        for (p = 0; p < xs->nplanes; p++) {
            if (strncmp(xs->planes[p].name, "/device:GPU:", 12) == 0)
                job.ngpu++;
        }
    }
    if (job.ngpu > 0) {
        job.gpus = malloc(job.ngpu * sizeof(*job.gpus));
        job.outs = calloc(job.ngpu, sizeof(*job.outs));
        os->plane_arenas = calloc(job.ngpu, sizeof(*os->plane_arenas));
        if (job.gpus == NULL || job.outs == NULL || os->plane_arenas == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        os->nplane_arenas = job.ngpu;
        for (p = 0, i = 0; p < xs->nplanes; p++) {
            if (strncmp(xs->planes[p].name, "/device:GPU:", 12) != 0)
                continue;
            job.gpus[i] = p;
            arena_init(&os->plane_arenas[i]);
            job.outs[i].arena = &os->plane_arenas[i];
            op_db_init(&job.outs[i].db);
            i++;
        }
    }
    nitems = job.nhost_lines + job.ngpu;
    job.order = malloc((nitems ? nitems : 1) * sizeof(*job.order));
    job.size = malloc((nitems ? nitems : 1) * sizeof(*job.size));
    if (job.order == NULL || job.size == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    for (i = 0; i < nitems; i++) {
        job.order[i] = i;
        job.size[i] = i < job.nhost_lines ? xs->planes[host_plane].lines[i].nevents
                                          : xs->planes[job.gpus[i - job.nhost_lines]].nevents;
    }
    xp_qsort_r(job.order, nitems, sizeof(*job.order), bigger_item_first, job.size);
    rc = parallel_for(nitems, 0, convert_one, &job);
    if (rc == 0 && job.host != NULL)
        rc = host_plane_end(job.host, has_device, host_steps);
    if (rc == 0 && job.ngpu > 0)
        rc = parallel_for(ctx->steps.n, 0, unite_steps, &job);
out:
    for (i = 0; i < job.ngpu && job.outs != NULL; i++) {
        if (rc == 0)
            rc = gpu_plane_merge(ctx, &job.outs[i]);
        gpu_plane_out_free(&job.outs[i]);
    }
    host_plane_free(job.host);
    free(job.gpus);
    free(job.outs);
    free(job.order);
    free(job.size);
    return rc;
}

/* A host without TPU planes: core_id_to_details holds its one core (the
 * GPU local core id 1) with the XSpace's hostname (XProf's Hostname). */
static int host_core_details(struct op_stats *os, const struct xspace *xs)
{
    const char *host = xs->nhostnames > 0 ? xs->hostnames[0] : "localhost";
    struct core_details *d = arena_alloc(&os->arena, sizeof(*d));

    if (d == NULL || (d->hostname = arena_strndup(&os->arena, host, strlen(host))) == NULL)
        return -ENOMEM;
    d->core_id = 1;
    d->device_ordinal = 0;
    os->core_details = d;
    os->ncore_details = 1;
    return 0;
}

/* ConvertXSpaceToOpStats (GPU / CPU; TPU: device op metrics and the TensorCore step db). */
static int convert_host(const struct xspace *xs, const struct xp_groups *groups,
                        const struct hlo_modules *modules, struct op_stats **osp,
                        struct xp_err *err)
{
    struct host_ctx ctx;
    struct hlo_map *hlo = NULL;
    struct step_events host_steps;
    struct op_stats *os = op_stats_new();
    uint32_t p;
    int rc, has_device = 0, has_tpu = 0, host_plane = -1;

    *osp = NULL;
    memset(&ctx, 0, sizeof(ctx));
    memset(&host_steps, 0, sizeof(host_steps));
    if (os == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    if ((rc = hlo_map_build(modules, &hlo, err)) != 0) {
        op_stats_free(os);
        return rc;
    }
    ctx.xs = xs;
    ctx.groups = groups;
    ctx.hlo = hlo;
    ctx.os = os;
    if ((rc = op_stats_env(&ctx)) != 0)
        goto fail;
    if ((rc = step_events_init(&ctx.steps, groups->ngroups)) != 0)
        goto fail;
    for (p = 0; p < xs->nplanes; p++) {
        const char *name = xs->planes[p].name;
        if (strncmp(name, "/device:TPU:", 12) == 0 ||
            (os->hardware_type == HW_GPU && strncmp(name, "/device:GPU:", 12) == 0))
            has_device = 1;
        has_tpu |= strncmp(name, "/device:TPU:", 12) == 0;
        if (strcmp(name, "/host:CPU") == 0 && host_plane < 0)
            host_plane = (int)p;
    }
    if (host_plane >= 0 && (rc = step_events_init(&host_steps, groups->ngroups)) != 0)
        goto fail;
    if ((rc = convert_planes(&ctx, host_plane, has_device, &host_steps)) != 0)
        goto fail;
    if (os->hardware_type == HW_TPU && (rc = op_stats_tpu_planes(&ctx)) != 0)
        goto fail;
    if ((rc = kernel_map_to_db(&ctx.kernels, os)) != 0)
        goto fail;
    if (!has_tpu && (rc = host_core_details(os, xs)) != 0)
        goto fail;
    if (host_plane >= 0 && !has_device && (rc = step_events_union(&ctx.steps, &host_steps)) != 0)
        goto fail;
    if ((rc = op_stats_step_db(os, &ctx.steps, has_device)) != 0)
        goto fail;
    if (os->hardware_type == HW_TPU && host_plane >= 0 &&
        (rc = ip_tpu_fix_steps(os, &host_steps)) != 0)
        goto fail;
    step_events_free(&ctx.steps);
    step_events_free(&host_steps);
    kernel_map_free(&ctx.kernels);
    hlo_map_free(hlo);
    *osp = os;
    return 0;
fail:
    step_events_free(&ctx.steps);
    step_events_free(&host_steps);
    kernel_map_free(&ctx.kernels);
    hlo_map_free(hlo);
    op_stats_free(os);
    if (rc == -ENOMEM)
        return xp_err_set(err, rc, "%s: op_stats: out of memory", xs->path);
    return xp_err_set(err, rc, "%s: op_stats failed", xs->path);
}

/* Keep host's op_stats in the persistent cache (failures only cost a
 * recomputation later). */
static void persist(struct store *st, const char *key, const struct op_stats *os)
{
    struct xp_err err = {0};
    struct blob *b;
    struct out o;

    out_init(&o);
    op_stats_save(os, &o);
    if (out_finish(&o, &b) == 0) {
        (void)store_put_blob(st, key, b, &err);
        blob_unref(b);
    }
}

static int build_host(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    const char *host = arg;
    struct xspace *xs;
    const struct xp_groups *groups;
    const struct hlo_modules *modules;
    struct op_stats *os;
    struct store *st = store_shared();
    char *key = st != NULL ? snapshot_intermediate_key(snap, "op_stats", host) : NULL;
    int rc;

    if (key != NULL) {
        /* From the persistent cache: no profile read. */
        struct blob *b = store_get(st, key);
        rc = b != NULL ? op_stats_load(b->mem, b->size, &os) : -ENOENT;
        blob_unref(b);
        if (rc == 0) {
            free(key);
            *value = os;
            return 0;
        }
    }
    if ((rc = snapshot_xspace_decoded(snap, host, &xs, err)) != 0 ||
        (rc = snapshot_groups(snap, host, &groups, err)) != 0 ||
        (rc = snapshot_hlo_modules(snap, host, &modules, err)) != 0) {
        free(key);
        return rc;
    }
    rc = convert_host(xs, groups, modules, &os, err);
    if (rc == 0 && key != NULL && !snapshot_is_fresh(snap, 2))
        persist(st, key, os);
    free(key);
    *value = os;
    return rc;
}

static void free_op_stats(void *value)
{
    op_stats_free(value);
}

/* The hosts of snap that have an xplane file, in host order. */
static uint32_t xplane_hosts(const struct snapshot *snap, const char **hosts)
{
    uint32_t i, n = 0;

    for (i = 0; i < snap->nhosts; i++) {
        if (snapshot_host_file(snap, snap->hosts[i], SRC_XPLANE) != NULL)
            hosts[n++] = snap->hosts[i];
    }
    return n;
}

static int build_all(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    const char **hosts = malloc((snap->nhosts ? snap->nhosts : 1) * sizeof(*hosts));
    const struct op_stats **parts;
    struct op_stats *os;
    uint32_t n, i;
    int rc;

    (void)arg;
    if (hosts == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    n = xplane_hosts(snap, hosts);
    parts = malloc((n ? n : 1) * sizeof(*parts));
    os = op_stats_new();
    if (parts == NULL || os == NULL) {
        free(hosts);
        free(parts);
        op_stats_free(os);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    for (i = 0; i < n; i++) {
        if ((rc = snapshot_op_stats(snap, hosts[i], &parts[i], err)) != 0) {
            free(hosts);
            free(parts);
            op_stats_free(os);
            return rc;
        }
    }
    rc = op_stats_combine(os, parts, n);
    free(hosts);
    free(parts);
    if (rc != 0) {
        op_stats_free(os);
        return xp_err_set(err, rc, "combining op_stats: out of memory");
    }
    *value = os;
    return 0;
}

/* One host's op_stats (arg: the host), or the combination of all (NULL). */
static int build(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    return arg != NULL ? build_host(snap, arg, value, err) : build_all(snap, arg, value, err);
}

static const struct snapshot_part op_stats_part = {"op_stats", build, free_op_stats};

int snapshot_op_stats(struct snapshot *snap, const char *host, const struct op_stats **osp,
                      struct xp_err *err)
{
    void *v;
    int rc;

    *osp = NULL;
    if (host == NULL) {
        const char **hosts = malloc((snap->nhosts ? snap->nhosts : 1) * sizeof(*hosts));
        uint32_t n;
        if (hosts == NULL)
            return xp_err_set(err, -ENOMEM, "out of memory");
        n = xplane_hosts(snap, hosts);
        if (n == 0) {
            free(hosts);
            return xp_err_set(err, -ENOENT, "no xplane profile in this run");
        }
        if (n == 1) {
            rc = snapshot_op_stats(snap, hosts[0], osp, err);
            free(hosts);
            return rc;
        }
        free(hosts);
    } else if (snapshot_host_file(snap, host, SRC_XPLANE) == NULL) {
        return xp_err_set(err, -ENOENT, "%s: no xplane profile for this host", host);
    }
    rc = snapshot_part(snap, &op_stats_part, host, NULL, host, &v, err);
    if (rc == 0)
        *osp = v;
    return rc;
}
