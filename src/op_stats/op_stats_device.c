/*
 * op_stats_device.c - one GPU plane: device op metrics, step events and
 * kernel reports, in a single pass that decodes each event's stats once.
 *
 * Ports of ConvertDeviceTraceXPlaneToOpMetricsDb
 * (xprof/convert/xplane_to_op_metrics_db.cc, with
 * DeviceOpMetricsDbBuilder::EnterOp of xprof/utils/op_utils.cc),
 * ConvertDeviceTraceXPlaneToStepEvents (xplane_to_step_events.cc) and
 * ConvertDeviceTraceXPlaneToKernelReports (xplane_to_kernel_stats_db.cc).
 */
#include "op_stats_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "xplane/tfop.h"
#include "base/hash.h"

/* The stats of a GPU event that the conversions read (GpuEventStats). */
struct gpu_stats {
    const char *tf_op; /* tf_op */
    size_t tf_op_len;
    const char *equation; /* equation */
    size_t equation_len;
    const char *shapes; /* shape (tensor shapes) */
    size_t shapes_len;
    const char *hlo_op; /* hlo_op (whole value) */
    size_t hlo_op_len;
    int has_hlo_op;
    const char *kernel_details; /* kernel_details */
    size_t kernel_details_len;
    const char *memcpy_details; /* memcpy_details */
    size_t memcpy_details_len;
    int has_program_id;
    uint64_t program_id;
    int has_corr;
    int64_t corr;
    int has_eager;
    int is_eager;
    int has_flops;
    uint64_t flops; /* stat named "flops" */
    int has_bytes;
    uint64_t bytes; /* stat named "bytes_accessed" */
};

/* Stat metadata ids of one plane. */
struct gpu_ids {
    int64_t tf_op, equation, shape, hlo_op, kernel_details, memcpy_details, program_id, corr,
        is_eager, flops, bytes;
};

static void str_of(const struct xp_stat *st, const char **s, size_t *n)
{
    if (st->kind == XP_STAT_STR || st->kind == XP_STAT_REF) {
        *s = st->str;
        *n = st->len;
    } else {
        *s = "";
        *n = 0;
    }
}

/* xp_pick slots of the stats read_gpu_stats takes. */
enum {
    GS_TF_OP,
    GS_EQUATION,
    GS_SHAPE,
    GS_HLO_OP,
    GS_KERNEL_DETAILS,
    GS_MEMCPY_DETAILS,
    GS_PROGRAM_ID,
    GS_CORR,
    GS_IS_EAGER,
    GS_FLOPS,
    GS_BYTES,
    GS_COUNT
};

static int gpu_pick_init(struct xp_pick *pk, const struct xp_plane *pl, const struct gpu_ids *ids)
{
    int64_t v[GS_COUNT];

    v[GS_TF_OP] = ids->tf_op;
    v[GS_EQUATION] = ids->equation;
    v[GS_SHAPE] = ids->shape;
    v[GS_HLO_OP] = ids->hlo_op;
    v[GS_KERNEL_DETAILS] = ids->kernel_details;
    v[GS_MEMCPY_DETAILS] = ids->memcpy_details;
    v[GS_PROGRAM_ID] = ids->program_id;
    v[GS_CORR] = ids->corr;
    v[GS_IS_EAGER] = ids->is_eager;
    v[GS_FLOPS] = ids->flops;
    v[GS_BYTES] = ids->bytes;
    /* the last stat of an id wins, as in a walk that overwrites */
    return xp_pick_init(pk, pl, v, GS_COUNT, 1);
}

static void read_gpu_stats(const struct xp_pick *pk, const struct xp_line *ln,
                           const struct xp_event *ev, struct gpu_stats *s)
{
    struct xp_stat st[GS_COUNT];
    uint32_t found = xp_pick_event(pk, ln, ev, st);

    /* Field by field: a memset of the struct (rep stos) costs more than
     * the rest of this per event. */
    s->tf_op = s->equation = s->shapes = s->hlo_op = s->kernel_details = s->memcpy_details = "";
    s->tf_op_len = s->equation_len = s->shapes_len = s->hlo_op_len = 0;
    s->kernel_details_len = s->memcpy_details_len = 0;
    s->has_hlo_op = s->has_program_id = s->has_corr = s->has_eager = s->is_eager = 0;
    s->has_flops = s->has_bytes = 0;
    s->program_id = s->flops = s->bytes = 0;
    s->corr = 0;
    if (found == 0)
        return;
    if (found & (1u << GS_TF_OP))
        str_of(&st[GS_TF_OP], &s->tf_op, &s->tf_op_len);
    if (found & (1u << GS_EQUATION))
        str_of(&st[GS_EQUATION], &s->equation, &s->equation_len);
    if (found & (1u << GS_SHAPE))
        str_of(&st[GS_SHAPE], &s->shapes, &s->shapes_len);
    if (found & (1u << GS_HLO_OP)) {
        str_of(&st[GS_HLO_OP], &s->hlo_op, &s->hlo_op_len);
        s->has_hlo_op = 1;
    }
    if (found & (1u << GS_KERNEL_DETAILS))
        str_of(&st[GS_KERNEL_DETAILS], &s->kernel_details, &s->kernel_details_len);
    if (found & (1u << GS_MEMCPY_DETAILS))
        str_of(&st[GS_MEMCPY_DETAILS], &s->memcpy_details, &s->memcpy_details_len);
    if (found & (1u << GS_PROGRAM_ID)) {
        s->has_program_id = 1;
        s->program_id = (uint64_t)xp_stat_int(&st[GS_PROGRAM_ID]);
    }
    if (found & (1u << GS_CORR)) {
        s->has_corr = 1;
        s->corr = xp_stat_int(&st[GS_CORR]);
    }
    if (found & (1u << GS_IS_EAGER)) {
        s->has_eager = 1;
        s->is_eager = xp_stat_int(&st[GS_IS_EAGER]) != 0;
    }
    if (found & (1u << GS_FLOPS)) {
        s->has_flops = 1;
        s->flops = (uint64_t)xp_stat_int(&st[GS_FLOPS]);
    }
    if (found & (1u << GS_BYTES)) {
        s->has_bytes = 1;
        s->bytes = (uint64_t)xp_stat_int(&st[GS_BYTES]);
    }
}

/* The last "::"-separated component of the hlo_op value. */
static void hlo_op_name(const struct gpu_stats *s, const char **name, size_t *n)
{
    size_t i;

    *name = s->hlo_op;
    *n = s->hlo_op_len;
    for (i = s->hlo_op_len; i >= 2; i--) {
        if (s->hlo_op[i - 1] == ':' && s->hlo_op[i - 2] == ':') {
            *name = s->hlo_op + i;
            *n = s->hlo_op_len - i;
            return;
        }
    }
}

/* ---- device op metrics ---- */

/* A run of consecutive events of one HLO op and group (HLOTracker). */
struct run {
    const struct hlo_instr *instr; /* NULL: empty */
    uint64_t program_id;
    const char *name;
    size_t name_len;
    uint64_t group;
    int is_eager;
    uint64_t occurrences;
    uint64_t duration;
    uint64_t flops;
    uint64_t bytes;
};

static char *copy_str(struct arena *arena, struct op_metrics_db *db, const char *s)
{
    char *c = arena_strndup(arena, s, strlen(s));

    if (c == NULL)
        db->oom = 1;
    return c != NULL ? c : "";
}

/* DeviceOpMetricsDbBuilder::EnterOp. */
/* Add occurrences of an op to its row m of db. */
static void add_to_row(struct arena *arena, struct op_metrics_db *db, struct op_metrics *m,
                       const char *category, const char *provenance, const char *dedup,
                       const char *long_name, int is_eager, uint64_t occurrences, uint64_t time_ps,
                       const struct hlo_instr *perf, int64_t ev_flops, int64_t ev_bytes)
{
    int64_t flops, bytes, model_flops;

    if (m->occurrences == 0 && m->category[0] == '\0' && m->provenance[0] == '\0') {
        m->category = copy_str(arena, db, category[0] ? category : "unknown");
        m->provenance = copy_str(arena, db, provenance);
        if (dedup[0])
            m->deduplicated_name = copy_str(arena, db, dedup);
        if (long_name[0])
            m->long_name = copy_str(arena, db, long_name);
        m->is_eager = m->is_eager || is_eager;
        if (perf != NULL) {
            if (perf->source_file[0])
                m->source_file = copy_str(arena, db, perf->source_file);
            m->source_line = perf->source_line;
            if (perf->stack_frame[0])
                m->stack_frame = copy_str(arena, db, perf->stack_frame);
        }
    }
    m->num_cores = 1;
    m->occurrences += occurrences;
    m->time_ps += time_ps;
    m->self_time_ps += time_ps;
    flops = perf != NULL && perf->flops > 0 ? perf->flops : ev_flops;
    bytes = perf != NULL && perf->bytes_accessed > 0 ? perf->bytes_accessed : ev_bytes;
    model_flops = perf != NULL && perf->model_flops > 0 ? perf->model_flops : ev_flops;
    m->flops += (uint64_t)flops * occurrences;
    m->flops_v2 += (double)flops * (double)occurrences;
    if (model_flops == 0) {
        m->model_flops = m->flops;
        m->model_flops_v2 = m->flops_v2;
    } else {
        m->model_flops += (uint64_t)model_flops * occurrences;
        m->model_flops_v2 += (double)model_flops * (double)occurrences;
    }
    m->bytes_accessed += (uint64_t)bytes * occurrences;
    if (perf != NULL && (perf->hbm_read > 0 || perf->hbm_write > 0)) {
        struct op_metrics tmp;
        memset(&tmp, 0, sizeof(tmp));
        if (perf->hbm_read > 0)
            tmp.mem[tmp.nmem++] =
                (struct op_mem_access){1, OP_MEM_READ, perf->hbm_read * occurrences};
        if (perf->hbm_write > 0)
            tmp.mem[tmp.nmem++] =
                (struct op_mem_access){1, OP_MEM_WRITE, perf->hbm_write * occurrences};
        for (uint32_t i = 0; i < tmp.nmem; i++) {
            uint32_t j;
            for (j = 0; j < m->nmem; j++) {
                if (m->mem[j].memory_space == tmp.mem[i].memory_space &&
                    m->mem[j].op_type == tmp.mem[i].op_type)
                    break;
            }
            if (j == m->nmem && m->nmem < 8)
                m->mem[m->nmem++] =
                    (struct op_mem_access){tmp.mem[i].memory_space, tmp.mem[i].op_type, 0};
            if (j < 8)
                m->mem[j].bytes += tmp.mem[i].bytes;
        }
    }
    db->total_op_time_ps += time_ps;
}

static void enter_op(struct arena *arena, struct op_metrics_db *db, uint64_t program_id,
                     const char *name, size_t name_len, const char *category,
                     const char *provenance, const char *dedup, const char *long_name, int is_eager,
                     uint64_t occurrences, uint64_t time_ps, const struct hlo_instr *perf,
                     int64_t ev_flops, int64_t ev_bytes)
{
    struct op_metrics *m = op_db_row(db, arena, program_id, name, name_len);

    if (m != NULL)
        add_to_row(arena, db, m, category, provenance, dedup, long_name, is_eager, occurrences,
                   time_ps, perf, ev_flops, ev_bytes);
}

/* The rows of recent HLO ops in one plane's db, by instruction and
 * program: a run of an op seen before skips hashing its name. The caches
 * of a plane hold up to this many slots, fewer on a plane with fewer
 * events (cache_slots): a profile of 20,000 one-event planes must not
 * clear 20,000 full caches. */
#define ROW_CACHE 4096

struct row_cache_slot {
    const struct hlo_instr *instr; /* NULL: empty */
    uint64_t program_id;           /* its program */
    uint32_t row;                  /* its row in the db */
};

static struct op_metrics *run_row(struct arena *arena, struct op_metrics_db *db,
                                  struct row_cache_slot *cache, uint32_t mask, const struct run *r)
{
    uintptr_t k = (uintptr_t)r->instr ^ (uintptr_t)(r->program_id * 0x9e3779b97f4a7c15ULL);
    struct row_cache_slot *slot = &cache[(k >> 4) & mask];
    struct op_metrics *m;

    if (slot->instr == r->instr && slot->program_id == r->program_id && slot->row < db->nrows)
        return &db->rows[slot->row];
    m = op_db_row(db, arena, r->program_id, r->name, r->name_len);
    if (m != NULL)
        *slot = (struct row_cache_slot){r->instr, r->program_id, (uint32_t)(m - db->rows)};
    return m;
}

static void flush_run(struct arena *arena, struct op_metrics_db *db, struct row_cache_slot *cache,
                      uint32_t mask, struct run *r)
{
    struct op_metrics *m;

    if (r->instr != NULL && (m = run_row(arena, db, cache, mask, r)) != NULL)
        add_to_row(arena, db, m, r->instr->category, r->instr->provenance,
                   r->instr->deduplicated_name, r->instr->expression, r->is_eager, r->occurrences,
                   r->duration, r->instr, (int64_t)r->flops, (int64_t)r->bytes);
    memset(r, 0, sizeof(*r));
}

/* ---- step events ---- */

/* ClassifyGpuEvent, the name-only part: a type, or 0xff for "compute,
 * decided by the shapes"; bit 0x80 set means the name says 16 bit. */
static uint8_t classify_gpu_name(const char *name)
{
    struct tfop op;
    size_t n = strlen(name);

    tfop_parse(name, n, &op);
    if (op.category == TFOP_MEMCPY_HTOD)
        return EV_HOST_TO_DEVICE / 10;
    if (op.category == TFOP_MEMCPY_DTOH)
        return EV_DEVICE_TO_HOST / 10;
    if (op.category == TFOP_MEMCPY_DTOD)
        return EV_DEVICE_TO_DEVICE / 10;
    if (n >= 4 && strncasecmp(name, "nccl", 4) == 0)
        return EV_DEVICE_COLLECTIVES / 10;
    return (strstr(name, "half") || strstr(name, "fp16")) ? 0x80 : 0x40;
}

static uint8_t classify_gpu_event(uint8_t by_name, const struct gpu_stats *s)
{
    if (by_name < 0x40)
        return by_name;
    if (s->shapes_len == 0)
        return by_name == 0x80 ? EV_DEVICE_COMPUTE_16 / 10 : EV_DEVICE_COMPUTE_32 / 10;
    return memmem(s->shapes, s->shapes_len, "half", 4) ? EV_DEVICE_COMPUTE_16 / 10
                                                       : EV_DEVICE_COMPUTE_32 / 10;
}

/* ---- per-plane caches ---- */

/* HLO instruction lookups by (program id, hlo_op bytes); hlo_op values are
 * mostly shared stat-metadata strings, so the pointer usually repeats. */
struct hlo_cache_slot {
    const char *ptr;
    size_t len;
    uint64_t program_id;
    const struct hlo_instr *instr;
};

/* c holds two tables of mask + 1 slots: by pointer, then by content. */
static const struct hlo_instr *cached_instr(struct hlo_cache_slot *c, uint32_t mask,
                                            const struct hlo_map *m, const struct gpu_stats *s,
                                            const char *hn, size_t hl)
{
    size_t ix = (((uintptr_t)s->hlo_op >> 3) ^ (size_t)s->program_id) & mask, cx;

    if (c[ix].ptr == s->hlo_op && c[ix].len == s->hlo_op_len && c[ix].program_id == s->program_id)
        return c[ix].instr;
    /* the same bytes elsewhere (string stats are not shared): by content */
    cx =
        (size_t)mask + 1 +
        ((size_t)fnv64_add(s->program_id * 0x9e3779b97f4a7c15ULL, s->hlo_op, s->hlo_op_len) & mask);
    if (c[cx].ptr != NULL && c[cx].len == s->hlo_op_len && c[cx].program_id == s->program_id &&
        memcmp(c[cx].ptr, s->hlo_op, s->hlo_op_len) == 0) {
        c[ix] = c[cx];
        return c[cx].instr;
    }
    c[ix].ptr = s->hlo_op;
    c[ix].len = s->hlo_op_len;
    c[ix].program_id = s->program_id;
    c[ix].instr = hlo_map_find(m, s->program_id, hn, hl);
    c[cx] = c[ix];
    return c[ix].instr;
}

/* Kernel reports of one plane, pre-merged by what decides their key (the
 * event's metadata, kernel_details, tf_op, equation and HLO instruction),
 * so launch parameters are parsed once per distinct kernel. */
struct kernel_slot {
    uint32_t meta;
    const char *kd, *tf, *eq;
    size_t kd_len, tf_len, eq_len;
    const struct hlo_instr *instr;
    uint64_t hash;
    struct kernel_report rep;
};

/* The slot last found for a key made of the same pointers (stat values
 * that are refs share their bytes), so most events skip hashing the strings. */
struct kernel_recent {
    uint32_t meta;
    const char *kd, *tf, *eq;
    size_t kd_len, tf_len, eq_len;
    const struct hlo_instr *instr;
    uint32_t slot; /* index + 1 into v; 0 = empty */
};

struct kernel_cache {
    struct kernel_slot *v;
    uint32_t n, cap;
    uint32_t *slot;
    uint32_t nslots;
    struct kernel_recent *recent; /* recent_mask + 1 entries (cache_slots) */
    uint32_t recent_mask;
};

static int kc_grow(struct kernel_cache *kc)
{
    uint32_t ns = kc->nslots ? kc->nslots * 2 : 256, i;
    uint32_t *slot = calloc(ns, sizeof(uint32_t));

    if (slot == NULL)
        return -ENOMEM;
    for (i = 0; i < kc->n; i++) {
        uint32_t s = (uint32_t)(kc->v[i].hash >> 20) & (ns - 1);
        while (slot[s] != 0)
            s = (s + 1) & (ns - 1);
        slot[s] = i + 1;
    }
    free(kc->slot);
    kc->slot = slot;
    kc->nslots = ns;
    return 0;
}

static int same(const char *a, size_t an, const char *b, size_t bn)
{
    return an == bn && (a == b || memcmp(a, b, an) == 0);
}

/* kc_slot by the contents of the key. */
static struct kernel_slot *kc_slot_hashed(struct kernel_cache *kc, uint32_t meta,
                                          const struct gpu_stats *s, const struct hlo_instr *instr,
                                          int *fresh)
{
    uint64_t h = fnv64_add(fnv64_add(fnv64_add(FNV64_OFFSET ^ meta, s->kernel_details,
                                               s->kernel_details_len),
                                     s->tf_op, s->tf_op_len),
                           s->equation, s->equation_len) ^
                 ((uintptr_t)instr * 0x9e3779b97f4a7c15ULL);
    uint32_t i;
    struct kernel_slot *e;

    *fresh = 0;
    if ((kc->n + 1) * 2 > kc->nslots && kc_grow(kc) != 0)
        return NULL;
    i = (uint32_t)(h >> 20) & (kc->nslots - 1);
    while (kc->slot[i] != 0) {
        e = &kc->v[kc->slot[i] - 1];
        if (e->hash == h && e->meta == meta && e->instr == instr &&
            same(e->kd, e->kd_len, s->kernel_details, s->kernel_details_len) &&
            same(e->tf, e->tf_len, s->tf_op, s->tf_op_len) &&
            same(e->eq, e->eq_len, s->equation, s->equation_len))
            return e;
        i = (i + 1) & (kc->nslots - 1);
    }
    if (kc->n == kc->cap) {
        uint32_t cap = kc->cap ? kc->cap * 2 : 64;
        struct kernel_slot *v = realloc(kc->v, cap * sizeof(*v));
        if (v == NULL)
            return NULL;
        kc->v = v;
        kc->cap = cap;
    }
    e = &kc->v[kc->n];
    memset(e, 0, sizeof(*e));
    e->meta = meta;
    e->kd = s->kernel_details;
    e->kd_len = s->kernel_details_len;
    e->tf = s->tf_op;
    e->tf_len = s->tf_op_len;
    e->eq = s->equation;
    e->eq_len = s->equation_len;
    e->instr = instr;
    e->hash = h;
    kc->slot[i] = ++kc->n;
    *fresh = 1;
    return e;
}

/* The slot of this kernel event; *fresh = 1 when new (fill rep). */
static struct kernel_slot *kc_slot(struct kernel_cache *kc, uint32_t meta,
                                   const struct gpu_stats *s, const struct hlo_instr *instr,
                                   int *fresh)
{
    struct kernel_slot *e;
    uint64_t ph = ((uintptr_t)s->kernel_details ^ ((uintptr_t)s->tf_op << 1) ^
                   ((uintptr_t)s->equation << 2) ^ (uintptr_t)instr ^ meta) *
                  0x9e3779b97f4a7c15ULL;
    struct kernel_recent *rc = &kc->recent[(ph >> 40) & kc->recent_mask];

    *fresh = 0;
    if (rc->slot != 0 && rc->meta == meta && rc->instr == instr && rc->kd == s->kernel_details &&
        rc->kd_len == s->kernel_details_len && rc->tf == s->tf_op && rc->tf_len == s->tf_op_len &&
        rc->eq == s->equation && rc->eq_len == s->equation_len)
        return &kc->v[rc->slot - 1];
    e = kc_slot_hashed(kc, meta, s, instr, fresh);
    if (e != NULL)
        *rc = (struct kernel_recent){meta,
                                     s->kernel_details,
                                     s->tf_op,
                                     s->equation,
                                     s->kernel_details_len,
                                     s->tf_op_len,
                                     s->equation_len,
                                     instr,
                                     (uint32_t)(e - kc->v) + 1};
    return e;
}

/* ParseNumBytesFromMemcpyDetail: "num_bytes:<n>" among ":"/"\n"-split pairs. */
static uint64_t memcpy_num_bytes(const char *s, size_t n)
{
    size_t i = 0, k = 0, start = 0;
    const char *key = NULL;
    size_t key_len = 0;

    for (i = 0; i <= n; i++) {
        if (i < n && s[i] != ':' && s[i] != '\n')
            continue;
        if (k % 2 == 0) {
            key = s + start;
            key_len = i - start;
        } else if (key_len == 9 && memcmp(key, "num_bytes", 9) == 0) {
            uint64_t v = 0;
            size_t j;
            if (i == start)
                return 0;
            for (j = start; j < i; j++) {
                if (s[j] < '0' || s[j] > '9')
                    return 0;
                v = v * 10 + (uint64_t)(s[j] - '0');
            }
            return v;
        }
        k++;
        start = i + 1;
    }
    /* a trailing key without a value: XProf reads past the pairs; none */
    return 0;
}

/* ---- kernel reports ---- */

/* absl::SimpleAtoi into uint32. */
static int atou32(const char *s, size_t n, uint32_t *v)
{
    uint64_t x = 0;
    size_t i = 0;

    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    while (n > i && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (i < n && s[i] == '+')
        i++;
    if (i == n)
        return 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        x = x * 10 + (uint64_t)(s[i] - '0');
        if (x > UINT32_MAX)
            return 0;
    }
    *v = (uint32_t)x;
    return 1;
}

static int parse_dims(const char *s, size_t n, uint32_t out[3])
{
    uint32_t tmp[3];
    size_t i, start = 0;
    int k = 0;

    for (i = 0; i <= n; i++) {
        if (i < n && s[i] != ',')
            continue;
        if (k == 3 || !atou32(s + start, i - start, &tmp[k]))
            return 0;
        k++;
        start = i + 1;
    }
    if (k != 3)
        return 0;
    memcpy(out, tmp, sizeof(tmp));
    return 1;
}

/* ParseKernelLaunchParams. */
static void parse_launch_params(const char *s, size_t n, struct kernel_report *k)
{
    size_t i, start = 0;

    for (i = 0; i < 3; i++)
        k->block_dim[i] = k->grid_dim[i] = 1;
    for (i = 0; i <= n; i++) {
        const char *tok, *colon;
        size_t tn, kl;
        if (i < n && s[i] != ' ' && s[i] != '\n')
            continue;
        tok = s + start;
        tn = i - start;
        start = i + 1;
        colon = memchr(tok, ':', tn);
        if (colon == NULL || memchr(colon + 1, ':', tn - (size_t)(colon - tok) - 1) != NULL)
            continue;
        kl = (size_t)(colon - tok);
        const char *val = colon + 1;
        size_t vl = tn - kl - 1;
        uint32_t v;
        if (kl == 4 && memcmp(tok, "regs", 4) == 0) {
            if (atou32(val, vl, &v))
                k->registers_per_thread = v;
        } else if (kl == 13 && memcmp(tok, "static_shared", 13) == 0) {
            if (atou32(val, vl, &v))
                k->static_shmem_bytes = v;
        } else if (kl == 14 && memcmp(tok, "dynamic_shared", 14) == 0) {
            if (atou32(val, vl, &v))
                k->dynamic_shmem_bytes = v;
        } else if (kl == 5 && memcmp(tok, "block", 5) == 0) {
            parse_dims(val, vl, k->block_dim);
        } else if (kl == 4 && memcmp(tok, "grid", 4) == 0) {
            parse_dims(val, vl, k->grid_dim);
        } else if (kl == 7 && memcmp(tok, "occ_pct", 7) == 0) {
            char buf[64];
            char *end;
            double d;
            if (vl > 0 && vl < sizeof(buf)) {
                memcpy(buf, val, vl);
                buf[vl] = '\0';
                d = strtod(buf, &end);
                if (*end == '\0')
                    k->occupancy_pct = d;
            }
        }
    }
}

static int kernel_uses_tc(const char *name)
{
    static const char *const pats[] = {"16816",
                                       "c1688",
                                       "conv1x1",
                                       "conv2d_c1_k1",
                                       "dgrad_1x1_stride_2x2",
                                       "direct_group",
                                       "first_layer_wgrad_kernel",
                                       "h1688",
                                       "h884",
                                       "hmma",
                                       "i16832",
                                       "i8816",
                                       "s884",
                                       "s1688",
                                       "xmma_gemm",
                                       "xmma_implicit_gemm",
                                       "xmma_sparse_conv",
                                       "xmma_sparse_gemm",
                                       "xmma_warp_specialized_implicit_gemm",
                                       NULL};
    int i;

    for (i = 0; pats[i] != NULL; i++) {
        if (strstr(name, pats[i]) != NULL)
            return 1;
    }
    return 0;
}

/* Slots of each cache of a plane with n events: a power of two from 16 up
 * to ROW_CACHE, for the row, HLO (twice) and recent-kernel caches alike. */
static uint32_t cache_slots(uint64_t n)
{
    uint32_t slots = 16;

    while (slots < ROW_CACHE && slots < n)
        slots *= 2;
    return slots;
}

/* ---- the plane ---- */

/* The state of one pass over a GPU plane. */
struct plane_walk {
    const struct host_ctx *ctx;
    const struct xp_plane *pl;
    uint32_t p;                    /* the plane's index */
    struct gpu_plane_out *out;     /* results */
    struct arena *arena;           /* out->arena */
    struct op_metrics_db *db;      /* &out->db */
    struct gpu_ids ids;            /* the stat ids read */
    struct xp_pick pick;           /* their walk */
    uint32_t mask;                 /* cache slots - 1 */
    struct hlo_cache_slot *hcache; /* 2 * slots: HLO instructions by (program, name) */
    struct row_cache_slot *rows;   /* slots: op rows */
    uint8_t *by_name;              /* [event metadata] -> name class + 1, 0 unknown */
    struct kernel_cache kc;        /* kernel reports */
    struct run run;                /* consecutive events of one HLO op */
    char *name_buf;                /* a TF op's row name */
    size_t name_cap;               /* its room */
    uint32_t ng;                   /* step groups */
    uint8_t *has_marker;           /* [group] a step marker on this plane */
    uint8_t *has_event;            /* [group] an event on this plane */
    int any_event;                 /* some event belongs to a step */
    int64_t first, last;           /* the plane's span, ps from the line starts */
};

static void walk_free(struct plane_walk *w)
{
    free(w->kc.v);
    free(w->kc.slot);
    free(w->kc.recent);
    xp_pick_free(&w->pick);
    free(w->hcache);
    free(w->rows);
    free(w->by_name);
    free(w->name_buf);
    free(w->has_marker);
    free(w->has_event);
}

/* The walk of plane p into out; on failure too, walk_free releases it. */
static int walk_init(struct plane_walk *w, const struct host_ctx *ctx, uint32_t p,
                     struct gpu_plane_out *out)
{
    const struct xp_plane *pl = &ctx->xs->planes[p];
    uint32_t slots = cache_slots(pl->nevents), ng = ctx->steps.n;
    int rc;

    memset(w, 0, sizeof(*w));
    w->ctx = ctx;
    w->pl = pl;
    w->p = p;
    w->out = out;
    w->arena = out->arena;
    w->db = &out->db;
    w->ng = ng;
    w->first = INT64_MAX;
    w->ids.tf_op = pl->stat_id[XS_TF_OP];
    w->ids.equation = xp_plane_stat_id_by_name(pl, "equation");
    w->ids.shape = xp_plane_stat_id_by_name(pl, "shape");
    w->ids.hlo_op = pl->stat_id[XS_HLO_OP];
    w->ids.kernel_details = pl->stat_id[XS_KERNEL_DETAILS];
    w->ids.memcpy_details = pl->stat_id[XS_MEMCPY_DETAILS];
    w->ids.program_id = pl->stat_id[XS_PROGRAM_ID];
    w->ids.corr = pl->stat_id[XS_CORRELATION_ID];
    w->ids.is_eager = pl->stat_id[XS_IS_EAGER];
    w->ids.flops = pl->stat_id[XS_FLOPS];
    w->ids.bytes = pl->stat_id[XS_BYTES_ACCESSED];
    w->mask = slots - 1;
    w->hcache = calloc(2 * (size_t)slots, sizeof(*w->hcache));
    w->rows = calloc(slots, sizeof(*w->rows));
    w->by_name = calloc(pl->nemeta ? pl->nemeta : 1, 1);
    w->kc.recent = calloc(slots, sizeof(*w->kc.recent));
    w->kc.recent_mask = w->mask;
    if (w->hcache == NULL || w->rows == NULL || w->by_name == NULL || w->kc.recent == NULL ||
        gpu_pick_init(&w->pick, pl, &w->ids) != 0)
        return -ENOMEM;
    if ((rc = step_events_init(&out->steps, ng)) != 0)
        return rc;
    w->has_marker = calloc(ng ? ng : 1, 1);
    w->has_event = calloc(ng ? ng : 1, 1);
    if (w->has_marker == NULL || w->has_event == NULL)
        return -ENOMEM;
    return 0;
}

/* Device op metrics: an HLO op's event joins the run of its op (a run is
 * one row entry of consecutive events of one op and step); an event with
 * a TF op only is a row of "<op name>/<event name>" at once. */
static int add_op_event(struct plane_walk *w, const struct xp_event *ev, const char *ev_name,
                        const struct gpu_stats *s, int32_t group, int is_eager)
{
    struct run *run = &w->run;

    if (s->has_hlo_op) {
        const struct hlo_instr *instr = NULL;
        const char *hn;
        size_t hl;
        hlo_op_name(s, &hn, &hl);
        if (s->has_program_id)
            instr = cached_instr(w->hcache, w->mask, w->ctx->hlo, s, hn, hl);
        if (instr == NULL)
            return 0;
        if (run->instr != NULL && (hl != run->name_len || memcmp(hn, run->name, hl) != 0 ||
                                   group < 0 || (uint64_t)group != run->group))
            flush_run(w->arena, w->db, w->rows, w->mask, run);
        if (run->occurrences == 0) {
            run->instr = instr;
            run->name = instr->name;
            run->name_len = strlen(instr->name);
            run->program_id = s->program_id;
            run->group = group >= 0 ? (uint64_t)group : 0;
            run->is_eager = is_eager;
        }
        run->occurrences++;
        run->duration += (uint64_t)ev->duration_ps;
        if (s->has_flops)
            run->flops = s->flops;
        if (s->has_bytes)
            run->bytes = s->bytes;
    } else if (s->tf_op_len > 0) {
        struct tfop op;
        size_t nl, evl = strlen(ev_name);
        char cat[512];
        char prov[1024];
        flush_run(w->arena, w->db, w->rows, w->mask, run);
        tfop_parse(s->tf_op, s->tf_op_len, &op);
        nl = op.name_len + 1 + evl;
        if (nl + 1 > w->name_cap) {
            char *nb = realloc(w->name_buf, nl + 1);
            if (nb == NULL)
                return -ENOMEM;
            w->name_buf = nb;
            w->name_cap = nl + 1;
        }
        memcpy(w->name_buf, op.name, op.name_len);
        w->name_buf[op.name_len] = '/';
        memcpy(w->name_buf + op.name_len + 1, ev_name, evl + 1);
        snprintf(cat, sizeof(cat), "%.*s", (int)op.type_len, op.type);
        snprintf(prov, sizeof(prov), "%.*s", (int)s->tf_op_len, s->tf_op);
        enter_op(w->arena, w->db, 0, w->name_buf, nl, cat, prov, "", "", is_eager, 1,
                 (uint64_t)ev->duration_ps, NULL, 0, 0);
    }
    return 0;
}

/* Step events: an event of a step (its group) with a correlation id, by
 * its type, and the transfers' counts, times and bytes. */
static int add_step_event(struct plane_walk *w, const struct xp_line *ln, const struct xp_event *ev,
                          const char *ev_name, const struct gpu_stats *s, int32_t group)
{
    struct step_details *d;
    uint8_t type;
    int64_t b;
    int rc;

    if (!s->has_corr || s->corr < 0 || group < 0 || (uint32_t)group >= w->ng)
        return 0;
    if (w->by_name[ev->meta] == 0)
        w->by_name[ev->meta] = classify_gpu_name(ev_name) + 1;
    type = classify_gpu_event((uint8_t)(w->by_name[ev->meta] - 1), s);
    d = &w->out->steps.by_group[group];
    b = xp_event_start_ps(ln, ev);
    if ((rc = step_add_event(d, b, b + ev->duration_ps, type)) != 0)
        return rc;
    w->has_event[group] = 1;
    w->any_event = 1;
    if (type == EV_HOST_TO_DEVICE / 10 || type == EV_DEVICE_TO_HOST / 10 ||
        type == EV_DEVICE_TO_DEVICE / 10) {
        int ix = type == EV_HOST_TO_DEVICE / 10 ? 0 : type == EV_DEVICE_TO_HOST / 10 ? 1 : 2;
        d->xfer_occurrence[ix]++;
        d->xfer_time_us[ix] += (double)ev->duration_ps / 1000000.0;
        d->xfer_bytes[ix] += memcpy_num_bytes(s->memcpy_details, s->memcpy_details_len);
    }
    return 0;
}

/* A kernel's first report: its launch parameters, op name and tensor-core
 * facts. */
static int new_kernel_report(struct plane_walk *w, struct kernel_report *k, const char *ev_name,
                             const struct gpu_stats *s, const struct hlo_instr *instr, uint64_t ns)
{
    k->name = ev_name;
    k->is_kernel_using_tensor_core = kernel_uses_tc(ev_name);
    parse_launch_params(s->kernel_details, s->kernel_details_len, k);
    k->op_name = "";
    if (s->tf_op_len > 0) {
        struct tfop op;
        char *nm;
        tfop_parse(s->tf_op, s->tf_op_len, &op);
        nm = arena_strndup(w->arena, op.name, op.name_len);
        if (nm == NULL)
            return -ENOMEM;
        k->op_name = nm;
        k->is_op_tensor_core_eligible = tfop_einsum_tc_eligible(s->equation, s->equation_len) ||
                                        tfop_tc_eligible(op.name, op.name_len) ||
                                        k->is_kernel_using_tensor_core;
    }
    if (instr != NULL) {
        k->op_name = instr->provenance;
        k->is_op_tensor_core_eligible =
            tfop_tc_eligible(instr->provenance, strlen(instr->provenance)) ||
            k->is_op_tensor_core_eligible;
    }
    k->occurrences = 1;
    k->total_duration_ns = k->min_duration_ns = k->max_duration_ns = ns;
    return 0;
}

/* Kernel reports: a kernel event (it has kernel details) counted into the
 * report of its name, launch and op. */
static int add_kernel_event(struct plane_walk *w, const struct xp_event *ev, const char *ev_name,
                            const struct gpu_stats *s)
{
    const struct hlo_instr *instr = NULL;
    struct kernel_report *k;
    struct kernel_slot *ks;
    uint64_t ns = (uint64_t)(ev->duration_ps / 1000);
    int fresh;

    if (ev->duration_ps == 0 || s->kernel_details_len == 0)
        return 0;
    if (s->has_hlo_op && s->has_program_id) {
        const char *hn;
        size_t hl;
        hlo_op_name(s, &hn, &hl);
        instr = cached_instr(w->hcache, w->mask, w->ctx->hlo, s, hn, hl);
    }
    ks = kc_slot(&w->kc, ev->meta, s, instr, &fresh);
    if (ks == NULL)
        return -ENOMEM;
    k = &ks->rep;
    if (fresh)
        return new_kernel_report(w, k, ev_name, s, instr, ns);
    k->occurrences++;
    k->total_duration_ns += ns;
    if (ns < k->min_duration_ns)
        k->min_duration_ns = ns;
    if (ns > k->max_duration_ns)
        k->max_duration_ns = ns;
    return 0;
}

/* Every event of the plane's own lines, each stats walk done once for the
 * three conversions. */
static int walk_events(struct plane_walk *w)
{
    const struct xp_plane *pl = w->pl;
    uint32_t l, e;
    int rc;

    for (l = 0; l < pl->nlines; l++) {
        const struct xp_line *ln = &pl->lines[l];
        if (xp_line_id_is_derived(ln->id))
            continue;
        for (e = 0; e < ln->nevents; e++) {
            const struct xp_event *ev = &ln->events[e];
            const char *ev_name = xp_event_meta(pl, ev)->name;
            int32_t group = xp_group_of(w->ctx->groups, w->p, l, e);
            struct gpu_stats s;
            int is_eager;

            if (ev->offset_ps < w->first)
                w->first = ev->offset_ps;
            if (ev->offset_ps + ev->duration_ps > w->last)
                w->last = ev->offset_ps + ev->duration_ps;
            read_gpu_stats(&w->pick, ln, ev, &s);
            is_eager = s.has_eager ? s.is_eager : xp_group_is_eager(w->ctx->groups, w->p, l, e);
            if ((rc = add_op_event(w, ev, ev_name, &s, group, is_eager)) != 0 ||
                (rc = add_step_event(w, ln, ev, ev_name, &s, group)) != 0 ||
                (rc = add_kernel_event(w, ev, ev_name, &s)) != 0)
                return rc;
        }
        flush_run(w->arena, w->db, w->rows, w->mask, &w->run);
    }
    return 0;
}

/* The plane's step markers; then only the steps with both a marker and an
 * event stay present. */
static int mark_steps(struct plane_walk *w)
{
    const struct xp_step_marker *mk = w->ctx->groups->steps[w->p];
    uint32_t nm = w->ctx->groups->nsteps[w->p], i;
    struct step_events *steps = &w->out->steps;
    int rc;

    for (i = 0; i < nm; i++) {
        if (mk[i].group_id >= 0 && (uint64_t)mk[i].group_id < w->ng)
            w->has_marker[mk[i].group_id] = 1;
    }
    for (i = 0; i < nm; i++) {
        int64_t g = mk[i].group_id;
        if (g >= 0 && (uint64_t)g < w->ng && w->has_event[g] &&
            (rc = step_add_marker(&steps->by_group[g], mk[i].begin_ps, mk[i].end_ps, MK_DEVICE)) !=
                0)
            return rc;
    }
    for (i = 0; i < w->ng; i++) {
        if (!w->has_marker[i])
            steps->by_group[i].present = 0;
    }
    w->out->any_event = 1;
    return 0;
}

/* The kernel reports into out, in first-seen order, for gpu_plane_merge. */
static int take_kernels(struct plane_walk *w)
{
    uint32_t i;

    if (w->kc.n == 0)
        return 0;
    w->out->kernels = malloc(w->kc.n * sizeof(*w->out->kernels));
    if (w->out->kernels == NULL)
        return -ENOMEM;
    for (i = 0; i < w->kc.n; i++)
        w->out->kernels[i] = w->kc.v[i].rep;
    w->out->nkernels = w->kc.n;
    return 0;
}

int op_stats_gpu_plane(const struct host_ctx *ctx, uint32_t p, struct gpu_plane_out *out)
{
    struct plane_walk w;
    int rc = walk_init(&w, ctx, p, out);

    if (rc == 0)
        rc = walk_events(&w);
    if (rc == 0) {
        op_db_set_total_time(w.db, w.last ? (uint64_t)(w.last - w.first) : 0);
        op_db_add_idle(w.db, w.arena);
        if (w.db->oom)
            rc = -ENOMEM;
    }
    if (rc == 0 && w.any_event)
        rc = mark_steps(&w);
    if (rc == 0)
        rc = take_kernels(&w);
    walk_free(&w);
    return rc;
}

int gpu_plane_merge(struct host_ctx *ctx, struct gpu_plane_out *out)
{
    struct op_stats *os = ctx->os;
    uint32_t i;
    int rc = 0;

    for (i = 0; rc == 0 && i < out->nkernels; i++)
        rc = kernel_map_add(&ctx->kernels, &os->arena, &out->kernels[i]);
    if (rc != 0)
        return rc;
    op_db_combine(&os->device_db, &os->arena, &out->db, 1);
    return os->device_db.oom ? -ENOMEM : 0;
}

void gpu_plane_out_free(struct gpu_plane_out *out)
{
    op_db_free(&out->db);
    step_events_free(&out->steps);
    free(out->kernels);
    out->kernels = NULL;
    out->nkernels = 0;
}
