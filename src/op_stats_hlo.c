/*
 * op_stats_hlo.c - HLO modules of /host:metadata, read at the wire level
 * (see op_stats_hlo.h).
 *
 * Field numbers (xla/service/hlo.proto, xla/xla_data.proto):
 *   HloProto.hlo_module = 1
 *   HloModuleProto: name = 1, computations = 3
 *   HloComputationProto: instructions = 2
 *   HloInstructionProto: name = 1, opcode = 2, metadata = 7, fusion_kind = 9,
 *                        window = 15
 *   OpMetadata: op_type = 1, op_name = 2, deduplicated_name = 12
 *   Window.dimensions = 1; WindowDimension: window_dilation = 5,
 *                                           base_dilation = 6
 */
#include "sort.h"
#include "op_stats_hlo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hlo_cost.h"
#include "hlo_module.h"
#include "op_stats_tfop.h"
#include "wire.h"

struct sv {
    const char *p; /* bytes (not NUL-terminated) */
    size_t n;      /* length */
};

/* One instruction as read from the wire. */
struct raw_instr {
    struct sv name, opcode, fusion_kind, op_type, op_name, dedup;
    int base_dilated;   /* a window dimension has base_dilation != 1 */
    int window_dilated; /* ... window_dilation != 1 */
};

static int read_window(struct wire w, struct raw_instr *ri)
{
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire dim;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f == 1 && t == WIRE_LEN) {
            if (wire_bytes(&w, &dim) != 0)
                return -1;
            while (!wire_eof(&dim)) {
                uint32_t df;
                int dt;
                uint64_t v;
                if (wire_key(&dim, &df, &dt) != 0)
                    return -1;
                if ((df == 5 || df == 6) && dt == WIRE_VARINT) {
                    if (wire_varint(&dim, &v) != 0)
                        return -1;
                    if (v != 1 && df == 5)
                        ri->window_dilated = 1;
                    if (v != 1 && df == 6)
                        ri->base_dilated = 1;
                } else if (wire_skip(&dim, dt) != 0) {
                    return -1;
                }
            }
        } else if (wire_skip(&w, t) != 0) {
            return -1;
        }
    }
    return 0;
}

static int read_metadata(struct wire w, struct raw_instr *ri)
{
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (t == WIRE_LEN && (f == 1 || f == 2 || f == 12)) {
            if (wire_bytes(&w, &s) != 0)
                return -1;
            struct sv v = {(const char *)s.p, (size_t)(s.end - s.p)};
            if (f == 1)
                ri->op_type = v;
            else if (f == 2)
                ri->op_name = v;
            else
                ri->dedup = v;
        } else if (wire_skip(&w, t) != 0) {
            return -1;
        }
    }
    return 0;
}

static int read_instr(struct wire w, struct raw_instr *ri)
{
    memset(ri, 0, sizeof(*ri));
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (t != WIRE_LEN || (f != 1 && f != 2 && f != 7 && f != 9 && f != 15)) {
            if (wire_skip(&w, t) != 0)
                return -1;
            continue;
        }
        if (wire_bytes(&w, &s) != 0)
            return -1;
        struct sv v = {(const char *)s.p, (size_t)(s.end - s.p)};
        if (f == 1)
            ri->name = v;
        else if (f == 2)
            ri->opcode = v;
        else if (f == 9)
            ri->fusion_kind = v;
        else if (f == 7 && read_metadata(s, ri) != 0)
            return -1;
        else if (f == 15 && read_window(s, ri) != 0)
            return -1;
    }
    return 0;
}

static int sv_eq(struct sv v, const char *s)
{
    return v.n == strlen(s) && memcmp(v.p, s, v.n) == 0;
}

/* HloInstruction::IsElementwise by opcode (the opcode list XProf's category
 * relies on). */
static int is_elementwise(struct sv op)
{
    const char *const *ops = hc_elementwise_ops;
    int i;

    for (i = 0; ops[i] != NULL; i++) {
        if (sv_eq(op, ops[i]))
            return 1;
    }
    return 0;
}

static char *dup_sv(struct arena *a, struct sv v)
{
    return arena_strndup(a, v.p ? v.p : "", v.n);
}

/* ToCategory. */
static const char *category_of(struct arena *a, const struct raw_instr *ri)
{
    if (sv_eq(ri->opcode, "fusion")) {
        if (sv_eq(ri->fusion_kind, "kLoop"))
            return "loop fusion";
        if (sv_eq(ri->fusion_kind, "kInput"))
            return "input fusion";
        if (sv_eq(ri->fusion_kind, "kOutput"))
            return "output fusion";
        return "custom fusion";
    }
    if (sv_eq(ri->opcode, "convolution")) {
        if (ri->base_dilated && ri->window_dilated)
            return "convolution base-dilated window-dilated";
        if (ri->base_dilated)
            return "convolution base-dilated";
        if (ri->window_dilated)
            return "convolution window-dilated";
        return "convolution";
    }
    if (sv_eq(ri->opcode, "transpose") || sv_eq(ri->opcode, "copy") ||
        sv_eq(ri->opcode, "reshape") || sv_eq(ri->opcode, "dynamic-reshape"))
        return "data formatting";
    if (is_elementwise(ri->opcode))
        return "non-fusion elementwise";
    return dup_sv(a, ri->opcode);
}

/* TfOpFullname(op_type, op_name) = "op_name:op_type"; "" when both empty;
 * XLA_Args / XLA_Retvals use the name as type. */
static const char *provenance_of(struct arena *a, const struct raw_instr *ri)
{
    struct sv type = ri->op_type;
    char *s;

    if (type.n == 0) {
        if (ri->op_name.n == 0)
            return "";
        if (sv_eq(ri->op_name, "XLA_Args") || sv_eq(ri->op_name, "XLA_Retvals"))
            type = ri->op_name;
    }
    s = arena_alloc(a, ri->op_name.n + type.n + 2);
    if (s == NULL)
        return NULL;
    if (ri->op_name.n)
        memcpy(s, ri->op_name.p, ri->op_name.n);
    s[ri->op_name.n] = ':';
    if (type.n)
        memcpy(s + ri->op_name.n + 1, type.p, type.n);
    s[ri->op_name.n + 1 + type.n] = '\0';
    return s;
}

static int instr_cmp(const void *a, const void *b)
{
    const struct hlo_instr *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    if (c != 0)
        return c;
    return x < y ? -1 : x > y; /* keep the first of equal names first */
}

/* Run XLA's GPU cost analysis over the module (HloModuleProto bytes w) and
 * give each instruction of mod, still in proto order, its costs. A module
 * the analysis fails on keeps zero costs, as XProf drops its cost analysis.
 * Returns 0 or -ENOMEM. */
static int price_module(struct wire w, struct hlo_module *mod)
{
    struct hlo_graph g;
    struct hlo_cost *costs;
    uint32_t i;
    int rc = hlo_graph_read(w.p, (size_t)(w.end - w.p), &g);

    if (rc == -ENOMEM)
        return rc;
    if (rc != 0 || g.nnodes != mod->ninstrs) {
        hlo_graph_free(&g);
        return 0;
    }
    costs = calloc(g.nnodes ? g.nnodes : 1, sizeof(*costs));
    if (costs == NULL) {
        hlo_graph_free(&g);
        return -ENOMEM;
    }
    rc = hlo_cost_analyze(&g, costs);
    if (rc == 0) {
        for (i = 0; i < mod->ninstrs; i++) {
            struct hlo_instr *in = &mod->instrs[i];
            in->flops = costs[i].device_flops;
            in->model_flops = costs[i].model_flops;
            in->bytes_accessed = costs[i].bytes_accessed;
            in->hbm_read = (uint64_t)costs[i].hbm_read;
            in->hbm_write = (uint64_t)costs[i].hbm_write;
        }
    }
    free(costs);
    hlo_graph_free(&g);
    return rc == -ENOMEM ? rc : 0;
}

/* Parse one HloProto into mod. Returns 0, -1 (corrupt, skip) or -ENOMEM. */
static int parse_module(struct hlo_map *m, const uint8_t *p, size_t n, struct hlo_module *mod)
{
    struct wire w, mw, module_bytes;
    int have_module = 0, rc;
    size_t cap = 0;

    wire_init(&w, p, n);
    memset(mod, 0, sizeof(*mod));
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f == 1 && t == WIRE_LEN) {
            if (wire_bytes(&w, &mw) != 0)
                return -1;
            have_module = 1;
            break;
        }
        if (wire_skip(&w, t) != 0)
            return -1;
    }
    if (!have_module)
        return -1;
    module_bytes = mw;
    mod->name = "";
    while (!wire_eof(&mw)) {
        uint32_t f;
        int t;
        struct wire s;
        if (wire_key(&mw, &f, &t) != 0)
            return -1;
        if (t != WIRE_LEN || (f != 1 && f != 3)) {
            if (wire_skip(&mw, t) != 0)
                return -1;
            continue;
        }
        if (wire_bytes(&mw, &s) != 0)
            return -1;
        if (f == 1) {
            mod->name = arena_strndup(&m->arena, (const char *)s.p, (size_t)(s.end - s.p));
            if (mod->name == NULL)
                return -ENOMEM;
            continue;
        }
        while (!wire_eof(&s)) { /* a computation */
            uint32_t cf;
            int ct;
            struct wire iw;
            struct raw_instr ri;
            struct hlo_instr *in;
            if (wire_key(&s, &cf, &ct) != 0)
                return -1;
            if (cf != 2 || ct != WIRE_LEN) {
                if (wire_skip(&s, ct) != 0)
                    return -1;
                continue;
            }
            if (wire_bytes(&s, &iw) != 0 || read_instr(iw, &ri) != 0)
                return -1;
            if (mod->ninstrs == cap) {
                size_t nc = cap ? cap * 2 : 64;
                struct hlo_instr *v = realloc(mod->instrs, nc * sizeof(*v));
                if (v == NULL)
                    return -ENOMEM;
                mod->instrs = v;
                cap = nc;
            }
            in = &mod->instrs[mod->ninstrs];
            memset(in, 0, sizeof(*in));
            in->name = dup_sv(&m->arena, ri.name);
            in->opcode = dup_sv(&m->arena, ri.opcode);
            in->category = category_of(&m->arena, &ri);
            in->provenance = provenance_of(&m->arena, &ri);
            in->op_name = dup_sv(&m->arena, ri.op_name);
            in->op_type = dup_sv(&m->arena, ri.op_type);
            in->deduplicated_name = dup_sv(&m->arena, ri.dedup);
            in->expression = "";
            if (in->name == NULL || in->opcode == NULL || in->category == NULL ||
                in->provenance == NULL || in->op_name == NULL || in->op_type == NULL ||
                in->deduplicated_name == NULL)
                return -ENOMEM;
            if (!m->is_training &&
                tfop_is_training_op(ri.op_name.p ? ri.op_name.p : "", ri.op_name.n,
                                    ri.op_type.p ? ri.op_type.p : "", ri.op_type.n))
                m->is_training = 1;
            mod->ninstrs++;
        }
    }
    rc = price_module(module_bytes, mod);
    if (rc != 0)
        return rc;
    if (mod->ninstrs > 1)
        xp_qsort(mod->instrs, mod->ninstrs, sizeof(*mod->instrs), instr_cmp);
    return 0;
}

static int mod_cmp(const void *a, const void *b)
{
    uint64_t x = ((const struct hlo_module *)a)->program_id;
    uint64_t y = ((const struct hlo_module *)b)->program_id;

    return x < y ? -1 : x > y;
}

void hlo_map_free(struct hlo_map *m)
{
    uint32_t i;

    if (m == NULL)
        return;
    for (i = 0; i < m->nmods; i++)
        free(m->mods[i].instrs);
    free(m->mods);
    arena_free(&m->arena);
    free(m);
}

int hlo_map_build(const struct xspace *xs, struct hlo_map **mp, struct xp_err *err)
{
    struct hlo_map *m = calloc(1, sizeof(*m));
    uint32_t p, i, j, cap = 0;

    *mp = NULL;
    if (m == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    arena_init(&m->arena);
    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        int64_t proto_id = pl->stat_id[XS_HLO_PROTO];
        int64_t pid_id = pl->stat_id[XS_PROGRAM_ID];
        if (strcmp(pl->name, "/host:metadata") != 0)
            continue;
        if (proto_id == XP_NO_STAT)
            proto_id = xp_plane_stat_id_by_name(pl, "HLO Proto");
        if (proto_id == XP_NO_STAT)
            continue;
        for (i = 1; i < pl->nemeta; i++) {
            const struct xp_event_meta *em = &pl->emeta[i];
            const struct xp_stat *proto = NULL;
            uint64_t program_id = (uint64_t)em->id;
            struct hlo_module mod;
            int rc, dup = 0;
            for (j = 0; j < em->nstats; j++) {
                if (em->stats[j].meta_id == proto_id && proto == NULL)
                    proto = &em->stats[j];
            }
            if (proto == NULL || proto->kind != XP_STAT_BYTES)
                continue;
            for (j = 0; j < em->nstats; j++) {
                if (pid_id != XP_NO_STAT && em->stats[j].meta_id == pid_id) {
                    program_id = (uint64_t)xp_stat_int(&em->stats[j]);
                    break;
                }
            }
            for (j = 0; j < m->nmods; j++)
                dup |= m->mods[j].program_id == program_id;
            if (dup)
                continue;
            rc = parse_module(m, (const uint8_t *)proto->str, proto->len, &mod);
            if (rc == -ENOMEM) {
                free(mod.instrs);
                hlo_map_free(m);
                return xp_err_set(err, -ENOMEM, "out of memory");
            }
            if (rc != 0) {
                free(mod.instrs);
                continue;
            }
            mod.program_id = program_id;
            if (m->nmods == cap) {
                uint32_t nc = cap ? cap * 2 : 8;
                struct hlo_module *v = realloc(m->mods, nc * sizeof(*v));
                if (v == NULL) {
                    free(mod.instrs);
                    hlo_map_free(m);
                    return xp_err_set(err, -ENOMEM, "out of memory");
                }
                m->mods = v;
                cap = nc;
            }
            m->mods[m->nmods++] = mod;
        }
    }
    if (m->nmods > 1)
        xp_qsort(m->mods, m->nmods, sizeof(*m->mods), mod_cmp);
    *mp = m;
    return 0;
}

const struct hlo_instr *hlo_map_find(const struct hlo_map *m, uint64_t program_id, const char *name,
                                     size_t n)
{
    uint32_t lo = 0, hi;
    const struct hlo_module *mod = NULL;

    if (m == NULL)
        return NULL;
    hi = m->nmods;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->mods[mid].program_id < program_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == m->nmods || m->mods[lo].program_id != program_id)
        return NULL;
    mod = &m->mods[lo];
    lo = 0;
    hi = mod->ninstrs;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = strncmp(mod->instrs[mid].name, name, n);
        if (c == 0 && mod->instrs[mid].name[n] != '\0')
            c = 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < mod->ninstrs && strncmp(mod->instrs[lo].name, name, n) == 0 &&
        mod->instrs[lo].name[n] == '\0')
        return &mod->instrs[lo];
    return NULL;
}
