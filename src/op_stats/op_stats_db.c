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
#include <stdio.h>
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
    m->source_file = m->stack_frame = "";
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
void op_mem_combine(struct op_mem_access *dst, uint32_t *ndst, const struct op_mem_access *src,
                    uint32_t n)
{
    uint32_t i, j;

    for (i = 0; i < n; i++) {
        for (j = 0; j < *ndst; j++) {
            if (dst[j].memory_space == src[i].memory_space && dst[j].op_type == src[i].op_type)
                break;
        }
        if (j == *ndst) {
            if (*ndst == 8)
                continue;
            dst[j] = src[i];
            dst[j].bytes = 0;
            (*ndst)++;
        }
        dst[j].bytes += src[i].bytes;
    }
}

void op_db_combine_mem(struct op_metrics *dst, const struct op_metrics *src)
{
    op_mem_combine(dst->mem, &dst->nmem, src->mem, src->nmem);
}

/* 1 if the len bytes at s are the NUL-terminated word. */
static int cat_is(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && memcmp(s, word, len) == 0;
}

/* 1 if the len bytes at s hold word. */
static int cat_has(const char *s, size_t len, const char *word)
{
    size_t n = strlen(word);

    for (size_t i = 0; i + n <= len; i++) {
        if (memcmp(s + i, word, n) == 0)
            return 1;
    }
    return 0;
}

int op_may_have_inner_ops(const char *category, size_t len)
{
    return cat_is(category, len, "call") || cat_is(category, len, "conditional") ||
           cat_is(category, len, "while") || cat_is(category, len, "megacore fusion");
}

int op_is_infeed_or_outfeed(const char *category, size_t len)
{
    return cat_has(category, len, "infeed") || cat_has(category, len, "outfeed");
}

void op_sums_add(struct op_sums *dst, const struct op_sums *src)
{
    dst->flops += src->flops;
    dst->model_flops += src->model_flops;
    dst->flops_v2 += src->flops_v2;
    dst->model_flops_v2 += src->model_flops_v2;
    dst->bytes_accessed += src->bytes_accessed;
    dst->time_ps += src->time_ps;
    op_mem_combine(dst->mem, &dst->nmem, src->mem, src->nmem);
}

void op_db_sums_add(struct op_db_sums *dst, const struct op_db_sums *src)
{
    dst->total_time_ps += src->total_time_ps;
    op_sums_add(&dst->ops, &src->ops);
    op_sums_add(&dst->feed, &src->feed);
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
        if (d->source_file[0] == '\0' && d->stack_frame[0] == '\0' && d->source_line == 0) {
            d->source_file = s->source_file;
            d->source_line = s->source_line;
            d->stack_frame = s->stack_frame;
        }
        if (d->core_type == OP_CORE_UNKNOWN)
            d->core_type = s->core_type;
        /* CombineOpMetrics */
        d->autotuned = d->autotuned || s->autotuned;
        d->normalized_time_ps += s->normalized_time_ps;
        d->dma_stall_ps += s->dma_stall_ps;
        d->vdd_energy_j += s->vdd_energy_j;
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
        op_db_combine_mem(d, s);
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

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);

    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

int op_is_rematerialization(const struct op_metrics *m)
{
    const char *e = m->long_name, *eq = strchr(e, '=');
    size_t n = eq != NULL ? (size_t)(eq - e) : strlen(e);

    if (memmem(e, n, ".remat", 6) != NULL)
        return 1;
    return strstr(m->provenance, "/rematted_computation/") != NULL;
}

int op_is_outside_compilation(const struct op_metrics *m)
{
    if (ends_with(m->provenance, ":XlaSendToHost") || ends_with(m->provenance, ":XlaRecvFromHost"))
        return 1;
    return strstr(m->long_name, "send-done") != NULL &&
           strstr(m->long_name, "is_host_transfer=true") != NULL;
}

/* EscapeHtml of s appended to b (room counted by the caller). */
static char *put_html(char *b, const char *s)
{
    for (; *s; s++) {
        const char *r = NULL;
        switch (*s) {
        case '&':
            r = "&amp;";
            break;
        case '<':
            r = "&lt;";
            break;
        case '>':
            r = "&gt;";
            break;
        case '"':
            r = "&quot;";
            break;
        case '\'':
            r = "&#39;";
            break;
        }
        if (r != NULL) {
            size_t n = strlen(r);
            memcpy(b, r, n);
            b += n;
        } else {
            *b++ = *s;
        }
    }
    return b;
}

char *op_source_info_html(const struct op_metrics *m)
{
    static const char head[] = "<div class='source-info-cell' title='";
    size_t n;
    char *s, *b;

    if (m->source_file[0] == '\0' || m->source_line == -1)
        return strdup("");
    /* every character escapes to at most 6 */
    n = sizeof(head) + 6 * (strlen(m->stack_frame) + strlen(m->source_file)) + 32;
    s = malloc(n);
    if (s == NULL)
        return NULL;
    b = s;
    memcpy(b, head, sizeof(head) - 1);
    b = put_html(b + sizeof(head) - 1, m->stack_frame);
    memcpy(b, "'>", 2);
    b = put_html(b + 2, m->source_file);
    snprintf(b, (size_t)(s + n - b), ":%d</div>", (int)m->source_line);
    return s;
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

double op_giga_to_gibi(double giga)
{
    return giga / (1073741824.0 / 1e9);
}

double op_gibi_to_giga(double gibi)
{
    return gibi * (1073741824.0 / 1e9);
}

double op_peak_bw(const struct op_stats *os, uint32_t i)
{
    if (os->npeak_bws > i)
        return os->peak_bws[i];
    return os->npeak_bws > 0 ? os->peak_bws[0] : 0;
}

/* One resource of the bound-by rule: it wins when strictly more used. */
static void bound_try(struct op_roofline *r, double *util, double u, const char *name, double oi)
{
    if (*util < u) {
        *util = u;
        r->bound_by = name;
        r->bottleneck_operational_intensity = oi;
    }
}

/* A memory of the TPU rule, tried when it saw bytes and has a peak. */
static void bound_try_mem(struct op_roofline *r, double *util, uint64_t bytes, double bw,
                          double peak, const char *name, double oi)
{
    if (bytes != 0 && peak != 0)
        bound_try(r, util, op_safe_div(bw, op_giga_to_gibi(peak)), name, oi);
}

void op_roofline(const struct op_metrics *m, const struct op_stats *os, struct op_roofline *r)
{
    double t_ns = (double)m->time_ps / 1e3;
    uint64_t hbm = 0, cmem_rd = 0, cmem_wr = 0, vmem_rd = 0, vmem_wr = 0;
    uint32_t i;
    double util = 0;

    memset(r, 0, sizeof(*r));
    r->measured_flop_rate = op_safe_div(m->flops_v2, t_ns);
    r->model_flop_rate = op_safe_div(m->model_flops_v2, t_ns);
    r->measured_memory_bw = op_giga_to_gibi(op_safe_div((double)m->bytes_accessed, t_ns));
    r->operational_intensity = op_safe_div(m->flops_v2, (double)m->bytes_accessed);
    for (i = 0; i < m->nmem; i++) {
        const struct op_mem_access *a = &m->mem[i];
        if (a->memory_space == 1)
            hbm += a->bytes;
        else if (a->memory_space == 2) {
            if (a->op_type == OP_MEM_READ)
                cmem_rd += a->bytes;
            else if (a->op_type == OP_MEM_WRITE)
                cmem_wr += a->bytes;
        } else if (a->memory_space == 3) {
            if (a->op_type == OP_MEM_READ)
                vmem_rd += a->bytes;
            else if (a->op_type == OP_MEM_WRITE)
                vmem_wr += a->bytes;
        }
    }
    if (m->nmem == 0)
        hbm = m->bytes_accessed; /* legacy profiles: every byte is HBM's */
    /* GibibytesPerSecond: bytes / 2^30 per second */
    r->hbm_bw = op_giga_to_gibi(op_safe_div((double)hbm, t_ns));
    r->cmem_read_bw = op_giga_to_gibi(op_safe_div((double)cmem_rd, t_ns));
    r->cmem_write_bw = op_giga_to_gibi(op_safe_div((double)cmem_wr, t_ns));
    r->vmem_read_bw = op_giga_to_gibi(op_safe_div((double)vmem_rd, t_ns));
    r->vmem_write_bw = op_giga_to_gibi(op_safe_div((double)vmem_wr, t_ns));
    r->hbm_operational_intensity = op_safe_div(m->flops_v2, (double)hbm);
    r->cmem_read_oi = op_safe_div(m->flops_v2, (double)cmem_rd);
    r->cmem_write_oi = op_safe_div(m->flops_v2, (double)cmem_wr);
    r->vmem_read_oi = op_safe_div(m->flops_v2, (double)vmem_rd);
    r->vmem_write_oi = op_safe_div(m->flops_v2, (double)vmem_wr);
    r->bound_by = "Unknown";
    bound_try(r, &util, op_safe_div(r->measured_flop_rate, os->peak_tflops * 1e3), "Compute",
              r->operational_intensity);
    bound_try(r, &util, op_safe_div(r->hbm_bw, op_giga_to_gibi(op_peak_bw(os, 0))), "HBM",
              r->hbm_operational_intensity);
    if (os->hardware_type == HW_TPU) {
        bound_try_mem(r, &util, cmem_rd, r->cmem_read_bw, op_peak_bw(os, 3), "CMEM Read",
                      r->cmem_read_oi);
        bound_try_mem(r, &util, cmem_wr, r->cmem_write_bw, op_peak_bw(os, 4), "CMEM Write",
                      r->cmem_write_oi);
        bound_try_mem(r, &util, vmem_rd, r->vmem_read_bw, op_peak_bw(os, 5), "VMEM Read",
                      r->vmem_read_oi);
        bound_try_mem(r, &util, vmem_wr, r->vmem_write_bw, op_peak_bw(os, 6), "VMEM Write",
                      r->vmem_write_oi);
    }
    if (os->hardware_type == HW_GPU && op_peak_bw(os, 2) != 0) {
        /* XProf compares the HBM rate against the SRAM peak here */
        bound_try(r, &util, op_safe_div(r->hbm_bw, op_giga_to_gibi(op_peak_bw(os, 2))), "Shm/L1",
                  r->hbm_operational_intensity);
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
