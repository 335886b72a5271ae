/*
 * op_stats_hlo.c - the HLO program map of op_stats, built from the host's
 * parsed HLO modules (see op_stats_hlo.h and hlo_module.h).
 */
#include "op_stats_hlo.h"
#include "base/sort.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/hlo_cost.h"
#include "xplane/tfop.h"

/* HloInstruction::IsElementwise by opcode (the opcode list XProf's category
 * relies on). */
static int is_elementwise(const char *op)
{
    const char *const *ops = hc_elementwise_ops;
    int i;

    for (i = 0; ops[i] != NULL; i++) {
        if (strcmp(op, ops[i]) == 0)
            return 1;
    }
    return 0;
}

/* ToCategory (HloFusionInstruction::ToCategory for fusions). */
static const char *category_of(const struct hlo_node *nd)
{
    const char *op = nd->opcode;

    if (strcmp(op, "fusion") == 0) {
        if (strcmp(nd->fusion_kind, "kLoop") == 0)
            return "loop fusion";
        if (strcmp(nd->fusion_kind, "kInput") == 0)
            return "input fusion";
        if (strcmp(nd->fusion_kind, "kOutput") == 0)
            return "output fusion";
        return "custom fusion";
    }
    if (strcmp(op, "convolution") == 0) {
        if (nd->base_dilated && nd->window_dilated)
            return "convolution base-dilated window-dilated";
        if (nd->base_dilated)
            return "convolution base-dilated";
        if (nd->window_dilated)
            return "convolution window-dilated";
        return "convolution";
    }
    if (strcmp(op, "transpose") == 0 || strcmp(op, "copy") == 0 || strcmp(op, "reshape") == 0 ||
        strcmp(op, "dynamic-reshape") == 0)
        return "data formatting";
    if (is_elementwise(op))
        return "non-fusion elementwise";
    return op;
}

/* TfOpFullname(op_type, op_name) = "op_name:op_type"; "" when both empty;
 * XLA_Args / XLA_Retvals use the name as type. */
static const char *provenance_of(struct arena *a, const struct hlo_node *nd)
{
    const char *type = nd->op_type;
    size_t type_len = nd->op_type_len, name_len = nd->op_name_len;
    char *s;

    if (type_len == 0) {
        if (name_len == 0)
            return "";
        if ((name_len == 8 && memcmp(nd->op_name, "XLA_Args", 8) == 0) ||
            (name_len == 11 && memcmp(nd->op_name, "XLA_Retvals", 11) == 0)) {
            type = nd->op_name;
            type_len = name_len;
        }
    }
    s = arena_alloc(a, name_len + type_len + 2);
    if (s == NULL)
        return NULL;
    memcpy(s, nd->op_name, name_len);
    s[name_len] = ':';
    memcpy(s + name_len + 1, type, type_len);
    s[name_len + 1 + type_len] = '\0';
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

/* Give each instruction of mod, still in graph order, the costs XLA's GPU
 * cost analysis finds in g. A module that is not whole, or that the analysis
 * fails on, keeps zero costs, as XProf drops its cost analysis. Returns 0 or
 * -ENOMEM. */
static int price_module(const struct hlo_graph *g, struct hlo_module *mod)
{
    struct hlo_cost *costs;
    uint32_t i;
    int rc;

    if (!g->linked)
        return 0;
    costs = calloc(g->nnodes ? g->nnodes : 1, sizeof(*costs));
    if (costs == NULL)
        return -ENOMEM;
    rc = hlo_cost_analyze(g, costs);
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
    return rc == -ENOMEM ? rc : 0;
}

/* GetSourceInfo (xprof/utils/hlo_module_utils.cc): the metadata's source
 * file and line when a file is given, else file and line of the first stack
 * frame ("file:line:col"; the line stays -1 when it is not a number), else
 * none (line -1). Returns 0 or -ENOMEM. */
static int source_info_of(struct arena *a, const struct hlo_node *nd, struct hlo_instr *in)
{
    const char *st = nd->stack_frame, *nl, *c1, *c2;

    in->source_file = "";
    in->source_line = -1; /* OpSourceInfo's default: no line */
    in->stack_frame = st;
    if (nd->source_file[0] != '\0') {
        in->source_file = nd->source_file;
        in->source_line = nd->source_line;
        return 0;
    }
    if (st[0] == '\0')
        return 0;
    nl = strchr(st, '\n');
    if (nl == NULL)
        nl = st + strlen(st);
    c1 = memchr(st, ':', (size_t)(nl - st));
    if (c1 == NULL)
        return 0;
    c2 = memchr(c1 + 1, ':', (size_t)(nl - c1 - 1));
    if (c2 == NULL)
        c2 = nl;
    in->source_file = arena_strndup(a, st, (size_t)(c1 - st));
    if (in->source_file == NULL)
        return -ENOMEM;
    /* absl::SimpleAtoi: the whole field must be a number, else the line stays -1 */
    {
        char buf[16];
        size_t n = (size_t)(c2 - c1 - 1);
        char *end;
        long v;
        if (n > 0 && n < sizeof(buf)) {
            memcpy(buf, c1 + 1, n);
            buf[n] = '\0';
            v = strtol(buf, &end, 10);
            if (*end == '\0' && v >= INT32_MIN && v <= INT32_MAX)
                in->source_line = (int32_t)v;
        }
    }
    return 0;
}

/* The instructions of one module into mod. Returns 0 or -ENOMEM. */
static int add_instrs(struct hlo_map *m, const struct hlo_graph *g, struct hlo_module *mod)
{
    uint32_t i;
    int rc;

    mod->name = g->name;
    mod->instrs = calloc(g->nnodes ? g->nnodes : 1, sizeof(*mod->instrs));
    if (mod->instrs == NULL)
        return -ENOMEM;
    for (i = 0; i < g->nnodes; i++) {
        const struct hlo_node *nd = &g->nodes[i];
        struct hlo_instr *in = &mod->instrs[i];
        in->name = nd->name;
        in->opcode = nd->opcode;
        in->category = category_of(nd);
        in->provenance = provenance_of(&m->arena, nd);
        in->op_name = nd->op_name;
        in->op_type = nd->op_type;
        in->deduplicated_name = nd->dedup_name;
        in->expression = nd->text;
        if (source_info_of(&m->arena, nd, in) != 0)
            return -ENOMEM;
        if (in->provenance == NULL)
            return -ENOMEM;
        if (!m->is_training &&
            tfop_is_training_op(nd->op_name, nd->op_name_len, nd->op_type, nd->op_type_len))
            m->is_training = 1;
    }
    mod->ninstrs = g->nnodes;
    rc = price_module(g, mod);
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

/* Whether a module of program_id is in m already. */
static int has_program(const struct hlo_map *m, uint64_t program_id)
{
    uint32_t i;

    for (i = 0; i < m->nmods; i++) {
        if (m->mods[i].program_id == program_id)
            return 1;
    }
    return 0;
}

int hlo_map_build(const struct hlo_modules *mods, struct hlo_map **mp, struct xp_err *err)
{
    struct hlo_map *m = calloc(1, sizeof(*m));
    uint32_t i;

    *mp = NULL;
    if (m == NULL ||
        (mods->nmods > 0 && (m->mods = calloc(mods->nmods, sizeof(*m->mods))) == NULL)) {
        free(m);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    arena_init(&m->arena);
    for (i = 0; i < mods->nmods; i++) {
        const struct hlo_proto_module *pm = &mods->mods[i];
        struct hlo_module *mod = &m->mods[m->nmods];
        if (pm->window_corrupt || has_program(m, pm->program_id))
            continue;
        mod->program_id = pm->program_id;
        m->nmods++;
        if (add_instrs(m, &pm->g, mod) != 0) {
            hlo_map_free(m);
            return xp_err_set(err, -ENOMEM, "out of memory");
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
