/*
 * op_stats_tpu.c - device op metrics of TPU TensorCore planes
 * (XProf's ConvertTensorCoreDeviceTraceXPlaneToOpMetricsDb).
 *
 * Per `/device:TPU:<n>` plane (SparseCore planes are skipped: XProf only
 * hangs their ops under the TensorCore offload ops, for op_profile), the
 * events of every op line (`XLA Ops`, `Framework Ops`, `Sparse Core Ops`) go
 * through an ancestor stack by device timespan: an event that includes the
 * next one is its parent, and when an event leaves the stack its op metrics
 * are made from the event and its metadata, with self time = span - sum of
 * its immediate children's spans. Ops merge by (program_id, symbol_id) of the metadata;
 * symbol 0 and ops without both ids are dropped. At the end flops, model
 * flops and bytes (per occurrence in the metadata) are multiplied by the
 * occurrences (custom-calls sum event stats instead), the total time is
 * last end - first begin over the `Steps` line and op lines, and an IDLE row
 * takes the rest. The planes' dbs are combined into the host's device db.
 * The duty cycle is in op_stats_tpu_duty.c, the TPU step db in
 * op_stats_tpu_steps.c.
 */
#include "op_stats_tpu_int.h"
#include "base/wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One op on the ancestor stack. */
struct tpu_frame {
    uint32_t event;    /* index in the line */
    int64_t begin;     /* device timespan */
    int64_t end;       /* device timespan end */
    uint64_t children; /* spans of the immediate children */
};

/* An op key and the row it accumulates in (rows are per plane). */
struct tpu_op {
    uint64_t program_id;
    uint64_t symbol_id;
    struct op_metrics m;
    int custom_call; /* m.category is "custom-call" (set at the first occurrence) */
};

struct tpu_plane_db {
    struct tpu_op *ops; /* in first-seen order */
    uint32_t n, cap;
    uint32_t *slot; /* open-addressing index of ops (+1), power of two */
    uint32_t slot_cap;
};

int tpu_is_op_line(const char *name)
{
    return strcmp(name, "XLA Ops") == 0 || strcmp(name, "Framework Ops") == 0 ||
           strcmp(name, "Sparse Core Ops") == 0;
}

/* A metadata stat by plane stat id: 1 and *st when present. */
int tpu_meta_stat(const struct xp_event_meta *md, int64_t id, struct xp_stat *st)
{
    uint32_t i;

    if (id == XP_NO_STAT)
        return 0;
    for (i = 0; i < md->nstats; i++) {
        if (md->stats[i].meta_id == id) {
            *st = md->stats[i];
            return 1;
        }
    }
    return 0;
}

/* Unsigned value of an int or uint stat (IntOrUintValue). */
uint64_t tpu_stat_u64(const struct xp_stat *st)
{
    if (st->kind == XP_STAT_UINT)
        return st->v.u;
    return (uint64_t)xp_stat_int(st);
}

static const char *arena_view(struct arena *arena, const struct xp_stat *st)
{
    if (st->kind != XP_STAT_STR && st->kind != XP_STAT_REF)
        return "";
    return arena_strndup(arena, st->str, st->len);
}

/* PopulateSourceInfo: "file:line" into m (nothing when the line is not a
 * number). Returns 0 or -ENOMEM. */
static int source_of(struct arena *arena, const struct xp_stat *st, struct op_metrics *m)
{
    const char *c;
    char buf[16];
    char *end;
    size_t n;
    long v;

    if ((st->kind != XP_STAT_STR && st->kind != XP_STAT_REF) ||
        (c = memchr(st->str, ':', st->len)) == NULL)
        return 0;
    n = st->len - (size_t)(c + 1 - st->str);
    if (n == 0 || n >= sizeof(buf))
        return 0;
    memcpy(buf, c + 1, n);
    buf[n] = '\0';
    v = strtol(buf, &end, 10);
    if (*end != '\0' || v < INT32_MIN || v > INT32_MAX)
        return 0;
    m->source_file = arena_strndup(arena, st->str, (size_t)(c - st->str));
    m->source_line = (int32_t)v;
    return m->source_file != NULL ? 0 : -ENOMEM;
}

void tpu_mem_breakdown(const struct xp_stat *st, struct op_mem_access *mem, uint32_t *nmem)
{
    struct wire w, e;
    uint32_t f;
    int t;

    if (st->kind != XP_STAT_BYTES && st->kind != XP_STAT_STR)
        return;
    wire_init(&w, (const uint8_t *)st->str, st->len);
    while (!wire_eof(&w)) {
        struct op_mem_access a = {0, 0, 0};
        uint64_t v;
        if (wire_key(&w, &f, &t) != 0)
            goto bad;
        if (f != 1 || t != WIRE_LEN) {
            if (wire_skip(&w, t) != 0)
                goto bad;
            continue;
        }
        if (wire_bytes(&w, &e) != 0)
            goto bad;
        while (!wire_eof(&e)) {
            if (wire_key(&e, &f, &t) != 0)
                goto bad;
            if (t == WIRE_VARINT && f >= 1 && f <= 3) {
                if (wire_varint(&e, &v) != 0)
                    goto bad;
                if (f == 1)
                    a.op_type = (int)v;
                else if (f == 2)
                    a.memory_space = v;
                else
                    a.bytes = v;
            } else if (wire_skip(&e, t) != 0) {
                goto bad;
            }
        }
        if (*nmem < 8)
            mem[(*nmem)++] = a;
    }
    return;
bad:
    *nmem = 0;
}

static uint32_t key_slot(uint64_t program, uint64_t symbol, uint32_t cap)
{
    uint64_t h = (program * 0x9e3779b97f4a7c15ULL) ^ (symbol + 0x632be59bd9b4e019ULL);

    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 32;
    return (uint32_t)h & (cap - 1);
}

/* Rebuilds the index with cap slots; 0 or -ENOMEM. */
static int plane_rehash(struct tpu_plane_db *db, uint32_t cap)
{
    uint32_t *slot = calloc(cap, sizeof(*slot));
    uint32_t i, s;

    if (slot == NULL)
        return -ENOMEM;
    for (i = 0; i < db->n; i++) {
        s = key_slot(db->ops[i].program_id, db->ops[i].symbol_id, cap);
        while (slot[s] != 0)
            s = (s + 1) & (cap - 1);
        slot[s] = i + 1;
    }
    free(db->slot);
    db->slot = slot;
    db->slot_cap = cap;
    return 0;
}

/* The row of (program, symbol) in db, appended zeroed if new. */
static struct tpu_op *plane_op(struct tpu_plane_db *db, uint64_t program, uint64_t symbol)
{
    uint32_t s;

    if ((db->n + 1) * 2 > db->slot_cap &&
        plane_rehash(db, db->slot_cap ? db->slot_cap * 2 : 64) != 0)
        return NULL;
    s = key_slot(program, symbol, db->slot_cap);
    while (db->slot[s] != 0) {
        struct tpu_op *op = &db->ops[db->slot[s] - 1];
        if (op->program_id == program && op->symbol_id == symbol)
            return op;
        s = (s + 1) & (db->slot_cap - 1);
    }
    if (db->n == db->cap) {
        uint32_t cap = db->cap ? db->cap * 2 : 64;
        struct tpu_op *v = realloc(db->ops, cap * sizeof(*v));
        if (v == NULL)
            return NULL;
        db->ops = v;
        db->cap = cap;
    }
    memset(&db->ops[db->n], 0, sizeof(db->ops[db->n]));
    db->ops[db->n].program_id = program;
    db->ops[db->n].symbol_id = symbol;
    db->slot[s] = ++db->n;
    return &db->ops[db->n - 1];
}

/* An event leaves the stack: its op metrics merged into its row. */
static int pop_op(const struct xp_plane *p, const struct xp_line *l, const struct tpu_ids *ids,
                  const struct tpu_frame *f, struct tpu_plane_db *db, struct arena *arena)
{
    const struct xp_event *e = &l->events[f->event];
    const struct xp_event_meta *md = xp_event_meta(p, e);
    struct xp_stat st, prog, sym;
    struct tpu_op *op;
    struct op_metrics *m;
    uint64_t time = (uint64_t)(f->end - f->begin);
    uint64_t min_time = (uint64_t)e->duration_ps;

    if (!tpu_meta_stat(md, ids->program_id, &prog) || !tpu_meta_stat(md, ids->symbol_id, &sym) ||
        tpu_stat_u64(&sym) == 0)
        return 0;
    if (xp_event_own_stat(p, l, e, ids->min_duration_ps, &st))
        min_time = (uint64_t)xp_stat_int(&st);
    op = plane_op(db, tpu_stat_u64(&prog), tpu_stat_u64(&sym));
    if (op == NULL)
        return -ENOMEM;
    m = &op->m;
    if (m->occurrences == 0) {
        /* SetOpMetadataFromHloEventMetadata */
        m->hlo_module_id = tpu_stat_u64(&prog);
        m->category = m->provenance = m->deduplicated_name = m->long_name = "";
        m->source_file = m->stack_frame = "";
        m->core_type = OP_CORE_TENSOR;
        if (md->display_name[0] != '\0') {
            m->name = arena_strndup(arena, md->display_name, strlen(md->display_name));
            m->long_name = arena_strndup(arena, md->name, strlen(md->name));
        } else {
            m->name = arena_strndup(arena, md->name, strlen(md->name));
        }
        if (tpu_meta_stat(md, ids->hlo_category, &st))
            m->category = arena_view(arena, &st);
        if (tpu_meta_stat(md, ids->tf_op, &st))
            m->provenance = arena_view(arena, &st);
        if (tpu_meta_stat(md, ids->deduplicated_name, &st))
            m->deduplicated_name = arena_view(arena, &st);
        if (tpu_meta_stat(md, ids->flops, &st)) {
            m->flops = tpu_stat_u64(&st);
            m->flops_v2 = (double)m->flops;
        }
        if (tpu_meta_stat(md, ids->model_flops, &st)) {
            m->model_flops = tpu_stat_u64(&st);
            m->model_flops_v2 = (double)m->model_flops;
        }
        if (tpu_meta_stat(md, ids->bytes_accessed, &st))
            m->bytes_accessed = tpu_stat_u64(&st);
        if (tpu_meta_stat(md, ids->memory_breakdown, &st))
            tpu_mem_breakdown(&st, m->mem, &m->nmem);
        if (tpu_meta_stat(md, ids->source, &st) && source_of(arena, &st, m) != 0)
            return -ENOMEM;
        if (tpu_meta_stat(md, ids->source_stack, &st))
            m->stack_frame = arena_view(arena, &st);
        if (m->name == NULL || m->stack_frame == NULL || m->category == NULL ||
            m->provenance == NULL || m->deduplicated_name == NULL || m->long_name == NULL)
            return -ENOMEM;
        m->occurrences = 1;
        m->time_ps = time;
        m->self_time_ps = time - f->children;
        m->min_time_ps = min_time;
        m->num_cores = 1;
    } else {
        /* MergeOpMetrics */
        m->occurrences++;
        m->time_ps += time;
        m->self_time_ps += time - f->children;
        if (min_time < m->min_time_ps)
            m->min_time_ps = min_time;
    }
    /* normalized_time_ps: the device time scaled by the event's DVFS factor (1) */
    {
        double factor = 1.0;
        if (xp_event_own_stat(p, l, e, ids->time_scale, &st))
            factor = st.kind == XP_STAT_DOUBLE ? st.v.d : (double)xp_stat_int(&st);
        m->normalized_time_ps += (uint64_t)((double)time * factor);
    }
    if (xp_event_own_stat(p, l, e, ids->dma_stall, &st))
        m->dma_stall_ps += (uint64_t)xp_stat_int(&st);
    if (xp_event_own_stat(p, l, e, ids->vdd_energy, &st))
        m->vdd_energy_j += st.kind == XP_STAT_DOUBLE ? st.v.d : (double)xp_stat_int(&st);
    if (m->occurrences == 1)
        op->custom_call = strcmp(m->category, "custom-call") == 0;
    if (op->custom_call) {
        /* every occurrence brings its metadata values too (MergeOpMetrics sums
         * custom-calls), then the event's own stats */
        if (m->occurrences > 1) {
            if (tpu_meta_stat(md, ids->bytes_accessed, &st))
                m->bytes_accessed += tpu_stat_u64(&st);
            if (tpu_meta_stat(md, ids->model_flops, &st)) {
                m->model_flops += tpu_stat_u64(&st);
                m->model_flops_v2 += (double)tpu_stat_u64(&st);
            }
            if (tpu_meta_stat(md, ids->flops, &st)) {
                m->flops += tpu_stat_u64(&st);
                m->flops_v2 += (double)tpu_stat_u64(&st);
            }
        }
        if (xp_event_own_stat(p, l, e, ids->bytes_accessed, &st))
            m->bytes_accessed += tpu_stat_u64(&st);
        if (xp_event_own_stat(p, l, e, ids->model_flops, &st)) {
            m->model_flops += tpu_stat_u64(&st);
            m->model_flops_v2 += (double)tpu_stat_u64(&st);
        }
        if (xp_event_own_stat(p, l, e, ids->flops, &st)) {
            m->flops += tpu_stat_u64(&st);
            m->flops_v2 += (double)tpu_stat_u64(&st);
        }
    }
    return 0;
}

static int tpu_plane_db(const struct xp_plane *p, const struct xp_step_marker *merged,
                        uint32_t nmerged, struct op_metrics_db *out, struct arena *arena)
{
    struct tpu_ids ids = {
        .program_id = p->stat_id[XS_PROGRAM_ID],
        .symbol_id = p->stat_id[XS_SYMBOL_ID],
        .hlo_category = p->stat_id[XS_HLO_CATEGORY],
        .tf_op = p->stat_id[XS_TF_OP],
        .flops = p->stat_id[XS_FLOPS],
        .model_flops = p->stat_id[XS_MODEL_FLOPS],
        .bytes_accessed = p->stat_id[XS_BYTES_ACCESSED],
        .deduplicated_name = p->stat_id[XS_DEDUPLICATED_NAME],
        .min_duration_ps = xp_plane_stat_id_by_name(p, "min_duration_ps"),
        .source = p->stat_id[XS_SOURCE],
        .source_stack = p->stat_id[XS_SOURCE_STACK],
        .memory_breakdown = xp_plane_stat_id_by_name(p, "memory_access_breakdown"),
        .dma_stall = xp_plane_stat_id_by_name(p, "dma_stall_duration_ps"),
        .vdd_energy = xp_plane_stat_id_by_name(p, "vdd_energy_j"),
        .time_scale = xp_plane_stat_id_by_name(p, "Time Scale Multiplier"),
    };
    struct tpu_plane_db db = {0};
    struct tpu_frame *stack = NULL;
    uint32_t nstack = 0, stack_cap = 0, li, i;
    int64_t first = INT64_MAX, last = 0, b, en;
    int rc = 0;

    for (li = 0; rc == 0 && li < p->nlines; li++) {
        const struct xp_line *l = &p->lines[li];
        int op_line = tpu_is_op_line(l->name);
        if (!op_line && !tpu_is_step_line(l->name))
            continue;
        if (op_line && l->nevents > stack_cap) {
            struct tpu_frame *v = realloc(stack, l->nevents * sizeof(*v));
            if (v == NULL) {
                rc = -ENOMEM;
                break;
            }
            stack = v;
            stack_cap = l->nevents;
        }
        nstack = 0;
        if (!op_line && merged != NULL) {
            /* the Steps line as the grouping merged it */
            for (i = 0; i < nmerged; i++) {
                first = merged[i].begin_ps < first ? merged[i].begin_ps : first;
                last = merged[i].end_ps > last ? merged[i].end_ps : last;
            }
            continue;
        }
        for (i = 0; rc == 0 && i < l->nevents; i++) {
            tpu_device_span(p, l, &l->events[i], &b, &en);
            if (b < first)
                first = b;
            if (en > last)
                last = en;
            if (!op_line)
                continue;
            /* AncestorStack::Push */
            while (nstack > 0 && !(stack[nstack - 1].begin <= b && en <= stack[nstack - 1].end)) {
                rc = pop_op(p, l, &ids, &stack[nstack - 1], &db, arena);
                nstack--;
                if (rc != 0)
                    break;
            }
            if (nstack > 0)
                stack[nstack - 1].children += (uint64_t)(en - b);
            stack[nstack++] = (struct tpu_frame){.event = i, .begin = b, .end = en};
        }
        /* AncestorStack::Flush */
        while (rc == 0 && nstack > 0) {
            rc = pop_op(p, l, &ids, &stack[nstack - 1], &db, arena);
            nstack--;
        }
    }
    /* XEventsOpMetricsDbBuilder::Finalize */
    for (i = 0; rc == 0 && i < db.n; i++) {
        struct op_metrics *s = &db.ops[i].m;
        struct op_metrics *d;
        uint64_t occ = s->occurrences;
        if (!db.ops[i].custom_call) {
            /* AdjustFlopsAndBytesAccessed */
            s->flops *= occ;
            s->flops_v2 *= (double)occ;
            if (s->model_flops > 0) {
                s->model_flops *= occ;
                s->model_flops_v2 *= (double)occ;
            } else {
                s->model_flops = s->flops;
                s->model_flops_v2 = s->flops_v2;
            }
            s->bytes_accessed *= occ;
        }
        for (uint32_t k = 0; k < s->nmem; k++)
            s->mem[k].bytes *= occ;
        out->total_op_time_ps += s->self_time_ps;
        d = op_db_row(out, arena, s->hlo_module_id, s->name, strlen(s->name));
        if (d == NULL) {
            rc = -ENOMEM;
            break;
        }
        if (d->occurrences == 0) {
            const char *name = d->name;
            *d = *s;
            d->name = name;
            continue;
        }
        /* two symbols under one display name: summed as the combiner does */
        d->occurrences += s->occurrences;
        d->time_ps += s->time_ps;
        d->self_time_ps += s->self_time_ps;
        if (s->min_time_ps < d->min_time_ps)
            d->min_time_ps = s->min_time_ps;
        d->flops += s->flops;
        d->flops_v2 += s->flops_v2;
        d->model_flops += s->model_flops;
        d->model_flops_v2 += s->model_flops_v2;
        d->bytes_accessed += s->bytes_accessed;
        d->dma_stall_ps += s->dma_stall_ps;
        d->normalized_time_ps += s->normalized_time_ps;
        d->vdd_energy_j += s->vdd_energy_j;
        op_db_combine_mem(d, s);
    }
    if (rc == 0) {
        op_db_set_total_time(out, first <= last && last > 0 ? (uint64_t)(last - first) : 0);
        op_db_add_idle(out, arena);
        if (out->oom)
            rc = -ENOMEM;
    }
    free(db.ops);
    free(db.slot);
    free(stack);
    return rc;
}

/* Every TensorCore plane's db, combined into the host's device db; then
 * the step db of the TensorCores. */
int op_stats_tpu_planes(struct host_ctx *ctx)
{
    const struct xspace *xs = ctx->xs;
    struct op_stats *os = ctx->os;
    uint32_t p;
    int rc = 0;

    for (p = 0; rc == 0 && p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        struct op_metrics_db db;
        if (strncmp(pl->name, "/device:TPU:", 12) != 0 ||
            tpu_plane_core(pl->name) == TPU_SPARSE_CORE)
            continue;
        op_db_init(&db);
        const struct xp_groups *g = ctx->groups;
        const struct xp_step_marker *merged = NULL;
        uint32_t nmerged = 0;
        /* an ungrouped file whose Steps line the grouping merged */
        if (g != NULL && !g->pre_grouped && g->tpu_step_line != NULL && g->tpu_step_line[p] >= 0 &&
            g->nsteps[p] > 0) {
            merged = g->steps[p];
            nmerged = g->nsteps[p];
        }
        rc = tpu_plane_db(pl, merged, nmerged, &db, &os->arena);
        if (rc == 0) {
            op_db_combine(&os->device_db, &os->arena, &db, 1);
            if (os->device_db.oom)
                rc = -ENOMEM;
        }
        op_db_free(&db);
    }
    if (rc == 0)
        rc = op_stats_tpu_duty(ctx);
    if (rc == 0)
        rc = op_stats_tpu_steps(ctx);
    return rc;
}
