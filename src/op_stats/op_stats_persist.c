/*
 * op_stats_persist.c - one host's op_stats as bytes and back, so that the
 * persistent cache (store.h) keeps the per-host intermediate the all-hosts
 * files combine (op_stats_combine): a run's framework_op_stats, kernel_stats,
 * hlo_stats, roofline_model, pod_viewer... of a new process then combine the
 * hosts' op_stats from the cache without decoding their profiles.
 *
 * Format (native byte order, little-endian machines; a header names the
 * layout, so that bytes written by another build of different structs are
 * refused, not misread): "OPSTATS2", then u32 sizeof of op_metrics,
 * step_core, kernel_report and op_stats and EV_NTYPES; then every field in
 * declaration order. A string is u32 length and bytes, 0xffffffff for
 * NULL; an array its u32 count then its entries. Loading checks every
 * length against what remains.
 */
#include "op_stats_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PERSIST_MAGIC "OPSTATS2"
#define NULL_STR 0xffffffffu

/* ---- saving --------------------------------------------------------------- */

static void put_u32(struct out *o, uint32_t v)
{
    out_write(o, &v, sizeof(v));
}

static void put_u64(struct out *o, uint64_t v)
{
    out_write(o, &v, sizeof(v));
}

static void put_f64(struct out *o, double v)
{
    out_write(o, &v, sizeof(v));
}

static void put_str(struct out *o, const char *s)
{
    if (s == NULL) {
        put_u32(o, NULL_STR);
        return;
    }
    size_t n = strlen(s);
    put_u32(o, (uint32_t)n);
    out_write(o, s, n);
}

static void put_strs(struct out *o, const char *const *v, uint32_t n)
{
    put_u32(o, n);
    for (uint32_t i = 0; i < n; i++)
        put_str(o, v[i]);
}

static void put_metrics(struct out *o, const struct op_metrics *m)
{
    put_u64(o, m->hlo_module_id);
    put_str(o, m->name);
    put_str(o, m->category);
    put_str(o, m->provenance);
    put_str(o, m->deduplicated_name);
    put_str(o, m->long_name);
    put_u32(o, (uint32_t)m->is_eager);
    put_u64(o, m->occurrences);
    put_u64(o, m->time_ps);
    put_u64(o, m->self_time_ps);
    put_u64(o, m->min_time_ps);
    put_u64(o, m->flops);
    put_u64(o, m->model_flops);
    put_f64(o, m->flops_v2);
    put_f64(o, m->model_flops_v2);
    put_u64(o, m->bytes_accessed);
    put_u32(o, m->num_cores);
    put_u32(o, m->nmem);
    for (uint32_t i = 0; i < m->nmem && i < 8; i++) {
        put_u64(o, m->mem[i].memory_space);
        put_u32(o, (uint32_t)m->mem[i].op_type);
        put_u64(o, m->mem[i].bytes);
    }
    put_str(o, m->source_file);
    put_u32(o, (uint32_t)m->source_line);
    put_str(o, m->stack_frame);
    put_u32(o, (uint32_t)m->core_type);
    put_u32(o, (uint32_t)m->autotuned);
    put_u64(o, m->dma_stall_ps);
    put_u64(o, m->normalized_time_ps);
    put_f64(o, m->vdd_energy_j);
}

static void put_db(struct out *o, const struct op_metrics_db *db)
{
    put_u32(o, db->nrows);
    for (uint32_t i = 0; i < db->nrows; i++)
        put_metrics(o, &db->rows[i]);
    put_u64(o, db->total_time_ps);
    put_u64(o, db->total_op_time_ps);
    put_u64(o, db->precision_16_ps);
    put_u64(o, db->precision_32_ps);
    put_u64(o, db->host_infeed_enq_ps);
    put_u64(o, db->host_infeed_enq_diff_ps);
    put_u64(o, db->busy_time_ps);
    put_u64(o, db->idle_time_ps);
    put_u64(o, db->busy_time_hc_ps);
    put_u64(o, db->idle_time_hc_ps);
}

static void put_core(struct out *o, const struct step_core *c)
{
    put_u32(o, c->core_id);
    put_u32(o, c->step_num);
    put_str(o, c->step_name);
    put_u64(o, c->begin_ps);
    put_u64(o, c->duration_ps);
    for (int i = 0; i < EV_NTYPES; i++)
        put_u64(o, c->type_ps[i]);
    put_u32(o, c->type_present);
    put_u32(o, c->ncategories);
    for (uint32_t i = 0; i < c->ncategories; i++) {
        put_str(o, c->categories[i].name);
        put_u64(o, c->categories[i].ps);
    }
    put_u32(o, c->nall_reduce);
    for (uint32_t i = 0; i < c->nall_reduce; i++) {
        put_u64(o, c->all_reduce[i].id);
        put_u64(o, (uint64_t)c->all_reduce[i].begin_ps);
        put_u64(o, (uint64_t)c->all_reduce[i].end_ps);
    }
}

static void put_sums(struct out *o, const struct op_sums *s)
{
    put_u64(o, s->flops);
    put_u64(o, s->model_flops);
    put_f64(o, s->flops_v2);
    put_f64(o, s->model_flops_v2);
    put_u64(o, s->bytes_accessed);
    put_u64(o, s->time_ps);
    put_u32(o, s->nmem);
    for (uint32_t i = 0; i < s->nmem && i < 8; i++) {
        put_u64(o, s->mem[i].memory_space);
        put_u32(o, (uint32_t)s->mem[i].op_type);
        put_u64(o, s->mem[i].bytes);
    }
}

static void put_db_sums(struct out *o, const struct op_db_sums *d)
{
    put_u64(o, d->total_time_ps);
    put_sums(o, &d->ops);
    put_sums(o, &d->feed);
}

static void put_kernel(struct out *o, const struct kernel_report *k)
{
    put_str(o, k->name);
    put_u32(o, k->registers_per_thread);
    put_u32(o, k->static_shmem_bytes);
    put_u32(o, k->dynamic_shmem_bytes);
    for (int i = 0; i < 3; i++)
        put_u32(o, k->block_dim[i]);
    for (int i = 0; i < 3; i++)
        put_u32(o, k->grid_dim[i]);
    put_f64(o, k->occupancy_pct);
    put_u32(o, (uint32_t)k->is_kernel_using_tensor_core);
    put_u32(o, (uint32_t)k->is_op_tensor_core_eligible);
    put_str(o, k->op_name);
    put_u64(o, k->occurrences);
    put_u64(o, k->total_duration_ns);
    put_u64(o, k->min_duration_ns);
    put_u64(o, k->max_duration_ns);
}

void op_stats_save(const struct op_stats *os, struct out *o)
{
    out_write(o, PERSIST_MAGIC, 8);
    put_u32(o, sizeof(struct op_metrics));
    put_u32(o, sizeof(struct step_core));
    put_u32(o, sizeof(struct kernel_report));
    put_u32(o, sizeof(struct op_stats));
    put_u32(o, EV_NTYPES);
    put_db(o, &os->device_db);
    put_db(o, &os->host_db);
    put_u32(o, os->nsteps);
    for (uint32_t i = 0; i < os->nsteps; i++) {
        put_u32(o, os->steps[i].step_num);
        put_u32(o, os->steps[i].ncores);
        for (uint32_t j = 0; j < os->steps[i].ncores; j++)
            put_core(o, &os->steps[i].cores[j]);
        put_u32(o, os->steps[i].hlo != NULL);
        if (os->steps[i].hlo != NULL)
            put_db_sums(o, os->steps[i].hlo);
    }
    put_db_sums(o, &os->complete_steps);
    put_u32(o, (uint32_t)os->empty_intersect);
    put_u32(o, os->num_steps_dropped);
    put_u32(o, (uint32_t)os->use_incomplete_step);
    put_u32(o, os->nkernels);
    for (uint32_t i = 0; i < os->nkernels; i++)
        put_kernel(o, &os->kernels[i]);
    put_strs(o, os->hostnames, os->nhostnames);
    put_u32(o, (uint32_t)os->host_count);
    put_u32(o, (uint32_t)os->task_count);
    put_str(o, os->device_type);
    put_u32(o, (uint32_t)os->device_core_count);
    put_u32(o, (uint32_t)os->hardware_type);
    put_u32(o, (uint32_t)os->has_sparse_core);
    put_u32(o, os->ncore_details);
    for (uint32_t i = 0; i < os->ncore_details; i++) {
        put_u32(o, os->core_details[i].core_id);
        put_str(o, os->core_details[i].hostname);
        put_u32(o, os->core_details[i].device_ordinal);
    }
    put_u32(o, (uint32_t)os->is_training);
    put_u32(o, (uint32_t)os->host_trace_level);
    put_f64(o, os->peak_tflops);
    for (int i = 0; i < 7; i++)
        put_f64(o, os->peak_bws[i]);
    put_u32(o, os->npeak_bws);
    put_u32(o, (uint32_t)os->has_cmem);
    put_u32(o, (uint32_t)os->has_merged_vmem);
    put_u32(o, (uint32_t)os->has_megacore);
    put_f64(o, os->ridge_point);
    put_strs(o, os->errors, os->nerrors);
    put_strs(o, os->warnings, os->nwarnings);
    put_f64(o, os->mxu_utilization_percent);
    put_f64(o, os->hbm_utilization_percent);
}

/* ---- loading -------------------------------------------------------------- */

struct cur {
    const char *p;       /* next byte */
    size_t left;         /* bytes after it */
    struct arena *arena; /* where strings and small arrays go */
    int bad;             /* sticky: ran past the end, or out of memory */
};

static void get(struct cur *c, void *dst, size_t n)
{
    if (c->bad || c->left < n) {
        c->bad = 1;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, c->p, n);
    c->p += n;
    c->left -= n;
}

static uint32_t get_u32(struct cur *c)
{
    uint32_t v;
    get(c, &v, sizeof(v));
    return v;
}

static uint64_t get_u64(struct cur *c)
{
    uint64_t v;
    get(c, &v, sizeof(v));
    return v;
}

static double get_f64(struct cur *c)
{
    double v;
    get(c, &v, sizeof(v));
    return v;
}

static const char *get_str(struct cur *c)
{
    uint32_t n = get_u32(c);
    char *s;

    if (n == NULL_STR || c->bad)
        return NULL;
    if (c->left < n) {
        c->bad = 1;
        return NULL;
    }
    s = arena_strndup(c->arena, c->p, n);
    if (s == NULL)
        c->bad = 1;
    c->p += n;
    c->left -= n;
    return s;
}

/* An array of n entries of size bytes in the arena, n checked against
 * what remains (each entry takes at least min bytes). */
static void *get_array(struct cur *c, uint32_t n, size_t size, size_t min)
{
    void *v;

    if (c->bad || (uint64_t)n * min > c->left) {
        c->bad = 1;
        return NULL;
    }
    v = arena_alloc(c->arena, (n ? n : 1) * size);
    if (v == NULL)
        c->bad = 1;
    else
        memset(v, 0, (n ? n : 1) * size);
    return v;
}

static const char **get_strs(struct cur *c, uint32_t *n)
{
    const char **v;

    *n = get_u32(c);
    v = get_array(c, *n, sizeof(*v), 4);
    for (uint32_t i = 0; v != NULL && i < *n; i++)
        v[i] = get_str(c);
    if (c->bad)
        *n = 0;
    return v;
}

static void get_metrics(struct cur *c, struct op_metrics_db *db)
{
    uint64_t module = get_u64(c);
    const char *name = get_str(c);
    struct op_metrics *m;

    if (c->bad)
        return;
    m = op_db_row(db, c->arena, module, name ? name : "", name ? strlen(name) : 0);
    if (m == NULL || m->occurrences != 0 || m->time_ps != 0) {
        /* out of memory, or the same (module, name) twice: not ours */
        c->bad = 1;
        return;
    }
    m->name = name;
    m->category = get_str(c);
    m->provenance = get_str(c);
    m->deduplicated_name = get_str(c);
    m->long_name = get_str(c);
    m->is_eager = (int)get_u32(c);
    m->occurrences = get_u64(c);
    m->time_ps = get_u64(c);
    m->self_time_ps = get_u64(c);
    m->min_time_ps = get_u64(c);
    m->flops = get_u64(c);
    m->model_flops = get_u64(c);
    m->flops_v2 = get_f64(c);
    m->model_flops_v2 = get_f64(c);
    m->bytes_accessed = get_u64(c);
    m->num_cores = get_u32(c);
    m->nmem = get_u32(c);
    if (m->nmem > 8) {
        c->bad = 1;
        return;
    }
    for (uint32_t i = 0; i < m->nmem; i++) {
        m->mem[i].memory_space = get_u64(c);
        m->mem[i].op_type = (int)get_u32(c);
        m->mem[i].bytes = get_u64(c);
    }
    m->source_file = get_str(c);
    m->source_line = (int32_t)get_u32(c);
    m->stack_frame = get_str(c);
    m->core_type = (int)get_u32(c);
    m->autotuned = (int)get_u32(c);
    m->dma_stall_ps = get_u64(c);
    m->normalized_time_ps = get_u64(c);
    m->vdd_energy_j = get_f64(c);
}

static void get_db(struct cur *c, struct op_metrics_db *db)
{
    uint32_t n = get_u32(c);

    if ((uint64_t)n * 100 > c->left)
        c->bad = 1;
    for (uint32_t i = 0; i < n && !c->bad; i++)
        get_metrics(c, db);
    if (db->oom)
        c->bad = 1;
    db->total_time_ps = get_u64(c);
    db->total_op_time_ps = get_u64(c);
    db->precision_16_ps = get_u64(c);
    db->precision_32_ps = get_u64(c);
    db->host_infeed_enq_ps = get_u64(c);
    db->host_infeed_enq_diff_ps = get_u64(c);
    db->busy_time_ps = get_u64(c);
    db->idle_time_ps = get_u64(c);
    db->busy_time_hc_ps = get_u64(c);
    db->idle_time_hc_ps = get_u64(c);
}

static void get_core(struct cur *c, struct step_core *k)
{
    struct step_category *cats;
    struct all_reduce_info *ar;

    k->core_id = get_u32(c);
    k->step_num = get_u32(c);
    k->step_name = get_str(c);
    k->begin_ps = get_u64(c);
    k->duration_ps = get_u64(c);
    for (int i = 0; i < EV_NTYPES; i++)
        k->type_ps[i] = get_u64(c);
    k->type_present = get_u32(c);
    k->ncategories = get_u32(c);
    cats = get_array(c, k->ncategories, sizeof(*cats), 12);
    for (uint32_t i = 0; cats != NULL && i < k->ncategories; i++) {
        cats[i].name = get_str(c);
        cats[i].ps = get_u64(c);
    }
    k->categories = k->ncategories ? cats : NULL;
    k->nall_reduce = get_u32(c);
    ar = get_array(c, k->nall_reduce, sizeof(*ar), 24);
    for (uint32_t i = 0; ar != NULL && i < k->nall_reduce; i++) {
        ar[i].id = get_u64(c);
        ar[i].begin_ps = (int64_t)get_u64(c);
        ar[i].end_ps = (int64_t)get_u64(c);
    }
    k->all_reduce = k->nall_reduce ? ar : NULL;
}

static void get_sums(struct cur *c, struct op_sums *s)
{
    s->flops = get_u64(c);
    s->model_flops = get_u64(c);
    s->flops_v2 = get_f64(c);
    s->model_flops_v2 = get_f64(c);
    s->bytes_accessed = get_u64(c);
    s->time_ps = get_u64(c);
    s->nmem = get_u32(c);
    if (s->nmem > 8) {
        c->bad = 1;
        s->nmem = 0;
        return;
    }
    for (uint32_t i = 0; i < s->nmem; i++) {
        s->mem[i].memory_space = get_u64(c);
        s->mem[i].op_type = (int)get_u32(c);
        s->mem[i].bytes = get_u64(c);
    }
}

static void get_db_sums(struct cur *c, struct op_db_sums *d)
{
    d->total_time_ps = get_u64(c);
    get_sums(c, &d->ops);
    get_sums(c, &d->feed);
}

static void get_kernel(struct cur *c, struct kernel_report *k)
{
    k->name = get_str(c);
    k->registers_per_thread = get_u32(c);
    k->static_shmem_bytes = get_u32(c);
    k->dynamic_shmem_bytes = get_u32(c);
    for (int i = 0; i < 3; i++)
        k->block_dim[i] = get_u32(c);
    for (int i = 0; i < 3; i++)
        k->grid_dim[i] = get_u32(c);
    k->occupancy_pct = get_f64(c);
    k->is_kernel_using_tensor_core = (int)get_u32(c);
    k->is_op_tensor_core_eligible = (int)get_u32(c);
    k->op_name = get_str(c);
    k->occurrences = get_u64(c);
    k->total_duration_ns = get_u64(c);
    k->min_duration_ns = get_u64(c);
    k->max_duration_ns = get_u64(c);
}

int op_stats_load(const char *p, size_t n, struct op_stats **osp)
{
    struct op_stats *os = calloc(1, sizeof(*os));
    struct cur c = {p, n, NULL, 0};
    char magic[8];

    *osp = NULL;
    if (os == NULL)
        return -ENOMEM;
    arena_init(&os->arena);
    op_db_init(&os->device_db);
    op_db_init(&os->host_db);
    c.arena = &os->arena;
    get(&c, magic, sizeof(magic));
    if (c.bad || memcmp(magic, PERSIST_MAGIC, 8) != 0 || get_u32(&c) != sizeof(struct op_metrics) ||
        get_u32(&c) != sizeof(struct step_core) || get_u32(&c) != sizeof(struct kernel_report) ||
        get_u32(&c) != sizeof(struct op_stats) || get_u32(&c) != EV_NTYPES)
        c.bad = 1;
    get_db(&c, &os->device_db);
    get_db(&c, &os->host_db);
    os->nsteps = get_u32(&c);
    if (!c.bad && (uint64_t)os->nsteps * 8 > c.left)
        c.bad = 1;
    if (!c.bad) {
        os->steps = calloc(os->nsteps ? os->nsteps : 1, sizeof(*os->steps));
        if (os->steps == NULL)
            c.bad = 1;
    }
    for (uint32_t i = 0; !c.bad && i < os->nsteps; i++) {
        struct step_entry *s = &os->steps[i];
        s->step_num = get_u32(&c);
        s->ncores = get_u32(&c);
        s->cores = get_array(&c, s->ncores, sizeof(*s->cores), 40);
        for (uint32_t j = 0; s->cores != NULL && j < s->ncores && !c.bad; j++)
            get_core(&c, &s->cores[j]);
        if (get_u32(&c) != 0 && !c.bad) {
            s->hlo = get_array(&c, 1, sizeof(*s->hlo), 100);
            if (s->hlo != NULL)
                get_db_sums(&c, s->hlo);
        }
    }
    get_db_sums(&c, &os->complete_steps);
    os->empty_intersect = (int)get_u32(&c);
    os->num_steps_dropped = get_u32(&c);
    os->use_incomplete_step = (int)get_u32(&c);
    os->nkernels = get_u32(&c);
    if (!c.bad && (uint64_t)os->nkernels * 60 > c.left)
        c.bad = 1;
    if (!c.bad) {
        os->kernels = calloc(os->nkernels ? os->nkernels : 1, sizeof(*os->kernels));
        if (os->kernels == NULL)
            c.bad = 1;
    }
    for (uint32_t i = 0; !c.bad && i < os->nkernels; i++)
        get_kernel(&c, &os->kernels[i]);
    os->hostnames = get_strs(&c, &os->nhostnames);
    os->host_count = (int32_t)get_u32(&c);
    os->task_count = (int32_t)get_u32(&c);
    os->device_type = get_str(&c);
    os->device_core_count = (int32_t)get_u32(&c);
    os->hardware_type = (enum hardware_type)get_u32(&c);
    os->has_sparse_core = (int)get_u32(&c);
    os->ncore_details = get_u32(&c);
    os->core_details = get_array(&c, os->ncore_details, sizeof(*os->core_details), 12);
    for (uint32_t i = 0; os->core_details != NULL && i < os->ncore_details; i++) {
        os->core_details[i].core_id = get_u32(&c);
        os->core_details[i].hostname = get_str(&c);
        os->core_details[i].device_ordinal = get_u32(&c);
    }
    if (os->ncore_details == 0)
        os->core_details = NULL;
    os->is_training = (int)get_u32(&c);
    os->host_trace_level = (int32_t)get_u32(&c);
    os->peak_tflops = get_f64(&c);
    for (int i = 0; i < 7; i++)
        os->peak_bws[i] = get_f64(&c);
    os->npeak_bws = get_u32(&c);
    os->has_cmem = (int)get_u32(&c);
    os->has_merged_vmem = (int)get_u32(&c);
    os->has_megacore = (int)get_u32(&c);
    os->ridge_point = get_f64(&c);
    os->errors = get_strs(&c, &os->nerrors);
    os->warnings = get_strs(&c, &os->nwarnings);
    os->mxu_utilization_percent = get_f64(&c);
    os->hbm_utilization_percent = get_f64(&c);
    if (c.bad || c.left != 0 || os->npeak_bws > 7) {
        op_stats_free(os);
        return -EINVAL;
    }
    if (os->nhostnames == 0)
        os->hostnames = NULL;
    if (os->nerrors == 0)
        os->errors = NULL;
    if (os->nwarnings == 0)
        os->warnings = NULL;
    *osp = os;
    return 0;
}
