/*
 * op_stats_db.c - op metrics databases: rows, combining, sorting, the
 * framework-op view of the device db, and roofline metrics.
 *
 * Ports of op_metrics_db_utils.cc, op_metrics_db_combiner.cc,
 * op_metrics_to_record.{h,cc} and kernel_stats_utils.cc (grouping by op).
 */
#include "base/sort.h"
#include "op_stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xplane/tfop.h"
#include "base/hash.h"

const char *const op_msg_no_step_marker =
    "No step marker observed and hence the step time is unknown. This may happen if (1) "
    "training steps are not instrumented (e.g., if you are not using Keras) or (2) the "
    "profiling duration is shorter than the step time. For (1), you need to add step "
    "instrumentation; for (2), you may try to profile longer.";
const char *const op_msg_empty_intersect =
    "Although there are steps observed on some host(s), the intersection of the steps over "
    "all hosts is empty (because the differences among individual host's step sequences are "
    "too big). Consequently, the overall step time is unknown.";
const char *const op_msg_incomplete_step =
    "Incomplete step observed and hence the step time is unknown.Instead, we use the trace "
    "duration as the step time. This may happen if your profiling duration is shorter than "
    "the step time. In this case, you may try to profile longer.";

double op_safe_div(double x, double y)
{
    if (y > -1e-10 && y < 1e-10)
        return 0.0;
    return x / y;
}

void op_db_init(struct op_metrics_db *db)
{
    memset(db, 0, sizeof(*db));
}

void op_db_free(struct op_metrics_db *db)
{
    free(db->rows);
    free(db->index);
    memset(db, 0, sizeof(*db));
}

static uint64_t key_hash(uint64_t module_id, const char *name, size_t n)
{
    uint64_t h = fnv64_add(FNV64_OFFSET ^ (module_id * 0x9e3779b97f4a7c15ULL), name, n);

    return h ^ (h >> 29);
}

static int rehash(struct op_metrics_db *db, uint32_t cap)
{
    uint32_t *ix = calloc(cap, sizeof(uint32_t));
    uint32_t i;

    if (ix == NULL)
        return -1;
    for (i = 0; i < db->nrows; i++) {
        const struct op_metrics *m = &db->rows[i];
        uint64_t h = key_hash(m->hlo_module_id, m->name, strlen(m->name));
        uint32_t s = (uint32_t)h & (cap - 1);
        while (ix[s] != 0)
            s = (s + 1) & (cap - 1);
        ix[s] = i + 1;
    }
    free(db->index);
    db->index = ix;
    db->index_cap = cap;
    return 0;
}

struct op_metrics *op_db_row(struct op_metrics_db *db, struct arena *arena, uint64_t module_id,
                             const char *name, size_t n)
{
    uint64_t h;
    uint32_t s;
    struct op_metrics *m;
    char *copy;

    if (db->oom)
        return NULL;
    if (db->index_cap == 0 || (db->nrows + 1) * 2 > db->index_cap) {
        if (rehash(db, db->index_cap ? db->index_cap * 2 : 8) != 0) {
            db->oom = 1;
            return NULL;
        }
    }
    h = key_hash(module_id, name, n);
    s = (uint32_t)h & (db->index_cap - 1);
    while (db->index[s] != 0) {
        m = &db->rows[db->index[s] - 1];
        if (m->hlo_module_id == module_id && strncmp(m->name, name, n) == 0 && m->name[n] == '\0')
            return m;
        s = (s + 1) & (db->index_cap - 1);
    }
    if (db->nrows == db->cap) {
        uint32_t cap = db->cap ? db->cap * 2 : 1; /* many dbs hold one row (IDLE) */
        struct op_metrics *rows = realloc(db->rows, cap * sizeof(*rows));
        if (rows == NULL) {
            db->oom = 1;
            return NULL;
        }
        db->rows = rows;
        db->cap = cap;
    }
    copy = arena_strndup(arena, name, n);
    if (copy == NULL) {
        db->oom = 1;
        return NULL;
    }
    m = &db->rows[db->nrows];
    memset(m, 0, sizeof(*m));
    m->hlo_module_id = module_id;
    m->name = copy;
    m->category = m->provenance = m->deduplicated_name = m->long_name = "";
    db->index[s] = ++db->nrows;
    return m;
}

int op_is_idle(const struct op_metrics *m)
{
    return strcmp(m->category, "IDLE") == 0;
}

void op_db_set_total_time(struct op_metrics_db *db, uint64_t t)
{
    db->total_time_ps = t > db->total_op_time_ps ? t : db->total_op_time_ps;
}

void op_db_add_idle(struct op_metrics_db *db, struct arena *arena)
{
    uint64_t idle = db->total_time_ps - db->total_op_time_ps;
    struct op_metrics *m;

    /* AddIdleOp appends a fresh row; rows are keyed by name, so an existing
     * IDLE row (only possible in a combined db) is reused. */
    m = op_db_row(db, arena, 0, "IDLE", 4);
    if (m == NULL)
        return;
    m->category = "IDLE";
    m->occurrences = 0;
    m->time_ps = idle;
    m->self_time_ps = idle;
}

/* CombineMemoryAccessedBreakdown. */
static void combine_mem(struct op_metrics *dst, const struct op_metrics *src)
{
    uint32_t i, j;

    for (i = 0; i < src->nmem; i++) {
        for (j = 0; j < dst->nmem; j++) {
            if (dst->mem[j].memory_space == src->mem[i].memory_space &&
                dst->mem[j].is_read == src->mem[i].is_read)
                break;
        }
        if (j == dst->nmem) {
            if (dst->nmem == sizeof(dst->mem) / sizeof(dst->mem[0]))
                continue;
            dst->mem[j] = src->mem[i];
            dst->mem[j].bytes = 0;
            dst->nmem++;
        }
        dst->mem[j].bytes += src->mem[i].bytes;
    }
}

void op_db_combine(struct op_metrics_db *dst, struct arena *arena, const struct op_metrics_db *src,
                   int update_num_cores)
{
    uint32_t i;

    dst->host_infeed_enq_ps += src->host_infeed_enq_ps;
    dst->host_infeed_enq_diff_ps += src->host_infeed_enq_diff_ps;
    dst->busy_time_ps += src->busy_time_ps;
    dst->idle_time_ps += src->idle_time_ps;
    dst->total_time_ps += src->total_time_ps;
    dst->total_op_time_ps += src->total_op_time_ps;
    dst->precision_16_ps += src->precision_16_ps;
    dst->precision_32_ps += src->precision_32_ps;
    for (i = 0; i < src->nrows; i++) {
        const struct op_metrics *s = &src->rows[i];
        struct op_metrics *d = op_db_row(dst, arena, s->hlo_module_id, s->name, strlen(s->name));
        if (d == NULL)
            return;
        /* CopyOpMetricsMetadata: strings of src live in arena too */
        if (d->long_name[0] == '\0')
            d->long_name = s->long_name;
        if (d->category[0] == '\0')
            d->category = s->category;
        if (d->provenance[0] == '\0')
            d->provenance = s->provenance;
        if (d->deduplicated_name[0] == '\0')
            d->deduplicated_name = s->deduplicated_name;
        /* CombineOpMetrics */
        if (d->occurrences == 0)
            d->min_time_ps = s->min_time_ps;
        else if (s->min_time_ps < d->min_time_ps)
            d->min_time_ps = s->min_time_ps;
        d->is_eager = d->is_eager || s->is_eager;
        d->occurrences += s->occurrences;
        d->time_ps += s->time_ps;
        d->self_time_ps += s->self_time_ps;
        d->flops += s->flops;
        d->model_flops += s->model_flops;
        d->flops_v2 += s->flops_v2;
        d->model_flops_v2 += s->model_flops_v2;
        d->bytes_accessed += s->bytes_accessed;
        if (update_num_cores)
            d->num_cores += s->num_cores;
        combine_mem(d, s);
    }
}

static int sorted_cmp(const void *a, const void *b)
{
    const struct op_metrics *x = *(const struct op_metrics *const *)a;
    const struct op_metrics *y = *(const struct op_metrics *const *)b;
    int c;

    if (x->self_time_ps != y->self_time_ps)
        return x->self_time_ps > y->self_time_ps ? -1 : 1;
    c = strcmp(x->name, y->name);
    if (c != 0)
        return c;
    return x < y ? -1 : x > y;
}

const struct op_metrics **op_db_sorted(const struct op_metrics_db *db, uint32_t max, uint32_t *n)
{
    const struct op_metrics **v = malloc((db->nrows ? db->nrows : 1) * sizeof(*v));
    uint32_t i;

    *n = 0;
    if (v == NULL)
        return NULL;
    for (i = 0; i < db->nrows; i++)
        v[i] = &db->rows[i];
    xp_qsort(v, db->nrows, sizeof(*v), sorted_cmp);
    *n = max != 0 && db->nrows > max ? max : db->nrows;
    return v;
}

/* DeviceTfOpMetricsDbBuilder::UpdateTfOpMetricsWithDeviceOpMetrics. */
static void tf_update(struct op_metrics_db *tf, struct arena *arena, const char *name, size_t nn,
                      const char *type, size_t tn, const struct op_metrics *d)
{
    struct op_metrics *m = op_db_row(tf, arena, 0, name, nn);

    if (m == NULL)
        return;
    if (m->category[0] == '\0') {
        if (tn == 0) {
            m->category = "Unknown";
        } else {
            char *c = arena_strndup(arena, type, tn);
            if (c == NULL) {
                tf->oom = 1;
                return;
            }
            m->category = c;
        }
    }
    m->is_eager = d->is_eager;
    if (d->occurrences > m->occurrences)
        m->occurrences = d->occurrences;
    m->time_ps += d->time_ps;
    m->self_time_ps += d->self_time_ps;
    m->flops += d->flops;
    m->flops_v2 += d->flops_v2;
    m->model_flops += d->model_flops;
    m->model_flops_v2 += d->model_flops_v2;
    m->bytes_accessed += d->bytes_accessed;
}

void op_db_tf_from_device(struct op_metrics_db *tf, struct arena *arena,
                          const struct op_metrics_db *device, int with_idle)
{
    uint32_t i;

    op_db_init(tf);
    for (i = 0; i < device->nrows; i++) {
        const struct op_metrics *d = &device->rows[i];
        if (op_is_idle(d)) {
            if (with_idle)
                tf_update(tf, arena, "IDLE", 4, "IDLE", 4, d);
        } else if (d->provenance[0] == '\0') {
            tf_update(tf, arena, d->name, strlen(d->name), "", 0, d);
        } else {
            struct tfop op;
            tfop_parse(d->provenance, strlen(d->provenance), &op);
            tf_update(tf, arena, op.name, op.name_len, op.type, op.type_len, d);
        }
    }
    tf->total_op_time_ps = device->total_op_time_ps;
    tf->total_time_ps = with_idle ? device->total_time_ps : device->total_op_time_ps;
}

enum hardware_type op_parse_hardware_type(const char *device_type)
{
    if (strstr(device_type, "GPU") != NULL)
        return HW_GPU;
    if (strcmp(device_type, "CPU") == 0)
        return HW_CPU_ONLY;
    if (strstr(device_type, "TPU") != NULL)
        return HW_TPU;
    return HW_UNKNOWN;
}

const char *op_hardware_type_name(enum hardware_type t)
{
    switch (t) {
    case HW_CPU_ONLY:
        return "CPU_ONLY";
    case HW_GPU:
        return "GPU";
    case HW_TPU:
        return "TPU";
    default:
        return "UNKNOWN_HARDWARE";
    }
}

#define GIGA_TO_GIBI(x) ((x) / (1073741824.0 / 1e9))

void op_roofline(const struct op_metrics *m, const struct op_stats *os, struct op_roofline *r)
{
    double t_ns = (double)m->time_ps / 1e3;
    uint64_t hbm_bytes = 0;
    uint32_t i;
    double util = 0, peak_flops, peak_hbm, u;

    memset(r, 0, sizeof(*r));
    r->measured_flop_rate = op_safe_div(m->flops_v2, t_ns);
    r->model_flop_rate = op_safe_div(m->model_flops_v2, t_ns);
    r->measured_memory_bw = GIGA_TO_GIBI(op_safe_div((double)m->bytes_accessed, t_ns));
    r->operational_intensity = op_safe_div(m->flops_v2, (double)m->bytes_accessed);
    for (i = 0; i < m->nmem; i++) {
        if (m->mem[i].memory_space == 1)
            hbm_bytes += m->mem[i].bytes;
    }
    if (m->nmem == 0)
        hbm_bytes = m->bytes_accessed;
    r->hbm_bw = GIGA_TO_GIBI(op_safe_div((double)hbm_bytes, t_ns));
    r->hbm_operational_intensity = op_safe_div(m->flops_v2, (double)hbm_bytes);
    r->bound_by = "Unknown";
    peak_flops = os->peak_tflops * 1e3;
    u = op_safe_div(r->measured_flop_rate, peak_flops);
    if (util < u) {
        r->bound_by = "Compute";
        util = u;
        r->bottleneck_operational_intensity = r->operational_intensity;
    }
    peak_hbm = os->npeak_bws > 0 ? os->peak_bws[0] : 0;
    u = op_safe_div(r->hbm_bw, GIGA_TO_GIBI(peak_hbm));
    if (util < u) {
        r->bound_by = "HBM";
        util = u;
        r->bottleneck_operational_intensity = r->hbm_operational_intensity;
    }
    if (os->hardware_type == HW_GPU) {
        double peak_shm = os->npeak_bws > 2 ? os->peak_bws[2] : 0;
        if (peak_shm != 0) {
            u = op_safe_div(r->hbm_bw, GIGA_TO_GIBI(peak_shm));
            if (util < u) {
                r->bound_by = "Shm/L1";
                util = u;
                r->bottleneck_operational_intensity = r->hbm_operational_intensity;
            }
        }
    }
}

static int group_cmp(const void *a, const void *b)
{
    return strcmp(((const struct op_kernel_group *)a)->op_name,
                  ((const struct op_kernel_group *)b)->op_name);
}

struct op_kernel_group *op_kernels_by_op(const struct op_stats *os, uint32_t *n)
{
    struct op_kernel_group *g = malloc((os->nkernels ? os->nkernels : 1) * sizeof(*g));
    uint32_t i, j, m = 0;

    *n = 0;
    if (g == NULL)
        return NULL;
    for (i = 0; i < os->nkernels; i++) {
        const struct kernel_report *k = &os->kernels[i];
        for (j = 0; j < m; j++) {
            if (strcmp(g[j].op_name, k->op_name) == 0)
                break;
        }
        if (j == m) {
            g[m].op_name = k->op_name;
            g[m].is_op_tensor_core_eligible = k->is_op_tensor_core_eligible;
            g[m].total_duration_ns = 0;
            g[m].tensor_core_duration_ns = 0;
            m++;
        }
        g[j].total_duration_ns += k->total_duration_ns;
        if (k->is_kernel_using_tensor_core)
            g[j].tensor_core_duration_ns += k->total_duration_ns;
    }
    xp_qsort(g, m, sizeof(*g), group_cmp);
    *n = m;
    return g;
}

const struct op_kernel_group *op_kernel_group_find(const struct op_kernel_group *g, uint32_t n,
                                                   const char *op_name)
{
    struct op_kernel_group key = {.op_name = op_name};

    return bsearch(&key, g, n, sizeof(*g), group_cmp);
}
