/*
 * hlo_module.c - HloModuleProto bytes into a struct hlo_graph (see
 * hlo_module.h). Two passes: the first counts computations and instructions,
 * the second reads them (each instruction through hlo_instr.c); operand ids
 * are then resolved within the computation of the instruction, called
 * computation ids within the module. The other parts of the reader are
 * listed in hlo_module_int.h.
 *
 * Errors come in two kinds. Bad framing of the messages every reader walks
 * (module, computations, instructions, their names, opcodes and metadata)
 * makes the module corrupt. Bad bytes inside what only the cost model reads
 * (shapes, packed id lists, dimension numbers, replica groups, windows) or
 * ids that do not resolve leave the names readable and the graph not
 * linked.
 */
#include "hlo_module.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hlo_module_int.h"
#include "base/sort.h"

/* (id, index) pairs (struct hlo_id_ix, hlo_text.h) sorted by id serve the
 * operand and computation lookups. */

/* Order of (id, index) pairs. */
static int id_cmp(const void *a, const void *b)
{
    const struct hlo_id_ix *x = a, *y = b;

    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->ix < y->ix ? -1 : x->ix > y->ix;
}

/* The index of id in v[0..n) (first of equal ids), or -1. */
static int64_t id_find(const struct hlo_id_ix *v, uint32_t n, int64_t id)
{
    uint32_t lo = 0, hi = n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo].id == id ? (int64_t)v[lo].ix : -1;
}

/* Per-computation data collected in the second pass. */
struct raw_comp {
    int64_t id;      /* computation id */
    int64_t root_id; /* root instruction id, or -1 */
};

/* Free the id lists of r[0..n) and r. */
static void free_raw(struct hlo_raw_ids *r, uint32_t n)
{
    uint32_t i;

    if (r == NULL)
        return;
    for (i = 0; i < n; i++) {
        free(r[i].operands.v);
        free(r[i].called.v);
    }
    free(r);
}

/* Count computations and instructions of the module. */
static int count_module(struct wire w, uint32_t *ncomps, uint32_t *nnodes)
{
    *ncomps = *nnodes = 0;
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire c;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f != 3 || t != WIRE_LEN) {
            if (wire_skip(&w, t) != 0)
                return -1;
            continue;
        }
        if (wire_bytes(&w, &c) != 0)
            return -1;
        (*ncomps)++;
        while (!wire_eof(&c)) {
            uint32_t cf;
            int ct;
            if (wire_key(&c, &cf, &ct) != 0 || wire_skip(&c, ct) != 0)
                return -1;
            *nnodes += cf == 2 && ct == WIRE_LEN;
        }
    }
    return 0;
}

/* Resolve ids into indices, fill roots, parameters and users. local (one
 * entry per node) receives each computation's nodes sorted by id. */
static int link_graph(struct hlo_graph *g, struct hlo_raw_ids *raw, struct raw_comp *rc,
                      int64_t entry_id, const char *entry_name, struct hlo_id_ix *local)
{
    struct hlo_id_ix *comp_ids = malloc((g->ncomps ? g->ncomps : 1) * sizeof(*comp_ids));
    uint32_t *nusers = calloc(g->nnodes ? g->nnodes : 1, sizeof(*nusers));
    uint32_t c, i, j;
    int ret = 0;

    if (comp_ids == NULL || nusers == NULL) {
        ret = -ENOMEM;
        goto out;
    }
    for (c = 0; c < g->ncomps; c++)
        comp_ids[c] = (struct hlo_id_ix){rc[c].id, c};
    xp_qsort(comp_ids, g->ncomps, sizeof(*comp_ids), id_cmp);
    g->entry = g->ncomps ? g->ncomps - 1 : 0;
    for (c = 0; c < g->ncomps; c++) {
        if (entry_id >= 0 ? rc[c].id == entry_id : strcmp(g->comps[c].name, entry_name) == 0) {
            g->entry = c;
            break;
        }
    }
    for (c = 0; c < g->ncomps; c++) {
        struct hlo_comp *cp = &g->comps[c];
        struct hlo_id_ix *loc = local + cp->first;
        uint32_t *params;
        uint32_t np = 0;
        for (i = 0; i < cp->n; i++)
            loc[i] = (struct hlo_id_ix){raw[cp->first + i].id, cp->first + i};
        xp_qsort(loc, cp->n, sizeof(*loc), id_cmp);
        if (cp->n == 0) {
            ret = -1;
            goto out;
        }
        cp->root = cp->first + cp->n - 1;
        if (rc[c].root_id >= 0) {
            int64_t r = id_find(loc, cp->n, rc[c].root_id);
            if (r < 0) {
                ret = -1;
                goto out;
            }
            cp->root = (uint32_t)r;
        }
        for (i = 0; i < cp->n; i++) {
            struct hlo_node *nd = &g->nodes[cp->first + i];
            struct hlo_raw_ids *ri = &raw[cp->first + i];
            uint32_t *ops = NULL, *called = NULL;
            if (strcmp(nd->opcode, "parameter") == 0 && nd->parameter_number >= 0 &&
                (uint64_t)nd->parameter_number + 1 > np)
                np = (uint32_t)nd->parameter_number + 1;
            if (ri->operands.n) {
                ops = arena_alloc(&g->arena, ri->operands.n * sizeof(*ops));
                if (ops == NULL) {
                    ret = -ENOMEM;
                    goto out;
                }
            }
            for (j = 0; j < ri->operands.n; j++) {
                int64_t r = id_find(loc, cp->n, ri->operands.v[j]);
                if (r < 0) {
                    ret = -1;
                    goto out;
                }
                ops[j] = (uint32_t)r;
                nusers[r]++;
            }
            if (ri->called.n) {
                called = arena_alloc(&g->arena, ri->called.n * sizeof(*called));
                if (called == NULL) {
                    ret = -ENOMEM;
                    goto out;
                }
            }
            for (j = 0; j < ri->called.n; j++) {
                int64_t r = id_find(comp_ids, g->ncomps, ri->called.v[j]);
                if (r < 0) {
                    ret = -1;
                    goto out;
                }
                called[j] = (uint32_t)r;
            }
            nd->operands = ops;
            nd->noperands = ri->operands.n;
            nd->called = called;
            nd->ncalled = ri->called.n;
        }
        params = np ? arena_alloc(&g->arena, np * sizeof(*params)) : NULL;
        if (np && params == NULL) {
            ret = -ENOMEM;
            goto out;
        }
        for (i = 0; i < np; i++)
            params[i] = UINT32_MAX;
        for (i = 0; i < cp->n; i++) {
            struct hlo_node *nd = &g->nodes[cp->first + i];
            if (strcmp(nd->opcode, "parameter") == 0 && nd->parameter_number >= 0 &&
                params[nd->parameter_number] == UINT32_MAX)
                params[nd->parameter_number] = cp->first + i;
        }
        for (i = 0; i < np; i++) {
            if (params[i] == UINT32_MAX) {
                ret = -1;
                goto out;
            }
        }
        cp->params = params;
        cp->nparams = np;
    }
    for (i = 0; i < g->nnodes; i++) {
        if (nusers[i] == 0)
            continue;
        g->nodes[i].users = arena_alloc(&g->arena, nusers[i] * sizeof(uint32_t));
        if (g->nodes[i].users == NULL) {
            ret = -ENOMEM;
            goto out;
        }
    }
    for (i = 0; i < g->nnodes; i++) {
        const struct hlo_node *nd = &g->nodes[i];
        for (j = 0; j < nd->noperands; j++) {
            struct hlo_node *op = &g->nodes[nd->operands[j]];
            /* a user is listed once (XLA's users()); users come in
             * ascending order, so a repeat can only be the last one */
            if (op->nusers == 0 || op->users[op->nusers - 1] != i)
                op->users[op->nusers++] = i;
        }
    }
out:
    free(comp_ids);
    free(nusers);
    return ret;
}

/* Free the read's scratch arrays. */
static void free_scratch(struct hlo_raw_ids *raw, uint32_t nnodes, struct raw_comp *rcomp,
                         struct hlo_instr_span *spans, struct hlo_id_ix *local)
{
    free_raw(raw, nnodes);
    free(rcomp);
    free(spans);
    free(local);
}

/* Read the computations of the module (the second pass) into g, the
 * instructions' ids into raw and bytes into spans, the computations' ids into
 * rcomp, the stack frame index into *frames. Returns 0, -1 or -ENOMEM. */
static int read_comps(struct wire w, struct hlo_graph *g, struct hlo_raw_ids *raw,
                      struct raw_comp *rcomp, struct hlo_instr_span *spans, struct wire *frames,
                      int64_t *entry_id, const char **entry_name, struct hlo_read_status *st)
{
    uint32_t c = 0, k = 0;
    int rc;

    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire cw;
        struct hlo_comp *cp;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f == 6 && t == WIRE_VARINT) {
            if (hlo_read_varint(&w, t, entry_id) != 0)
                return -1;
            continue;
        }
        if ((f != 1 && f != 2 && f != 3 && f != 17) || t != WIRE_LEN) {
            if (wire_skip(&w, t) != 0)
                return -1;
            continue;
        }
        if (wire_bytes(&w, &cw) != 0)
            return -1;
        if (f == 17) {
            *frames = cw;
            continue;
        }
        if (f == 1 || f == 2) {
            const char *v = hlo_keep_str(&g->arena, cw);
            if (v == NULL)
                return -ENOMEM;
            if (f == 1)
                g->name = v;
            else
                *entry_name = v;
            continue;
        }
        cp = &g->comps[c];
        memset(cp, 0, sizeof(*cp));
        cp->name = "";
        cp->first = k;
        rcomp[c].root_id = -1;
        while (!wire_eof(&cw)) {
            uint32_t cf;
            int ct;
            struct wire iw;
            if (wire_key(&cw, &cf, &ct) != 0)
                return -1;
            if (cf == 5 || cf == 6) {
                if (hlo_read_varint(&cw, ct, cf == 5 ? &rcomp[c].id : &rcomp[c].root_id) != 0)
                    return -1;
                continue;
            }
            if ((cf != 1 && cf != 2) || ct != WIRE_LEN) {
                if (wire_skip(&cw, ct) != 0)
                    return -1;
                continue;
            }
            if (wire_bytes(&cw, &iw) != 0)
                return -1;
            if (cf == 1) {
                cp->name = hlo_keep_str(&g->arena, iw);
                if (cp->name == NULL)
                    return -ENOMEM;
                continue;
            }
            raw[k].id = -1;
            rc = hlo_read_instr(&g->arena, iw, &g->nodes[k], &raw[k], st);
            if (rc != 0)
                return rc;
            if (raw[k].id < 0)
                raw[k].id = (int64_t)(k - cp->first);
            spans[k] = (struct hlo_instr_span){iw.p, (size_t)(iw.end - iw.p), raw[k].id};
            g->nodes[k].comp = c;
            k++;
        }
        cp->n = k - cp->first;
        c++;
    }
    g->ncomps = c;
    g->nnodes = k;
    return 0;
}

/* The budget b grown by the share of a module of n bytes. */
static void budget_add(struct hlo_text_budget *b, size_t n)
{
    size_t share;

    if (__builtin_mul_overflow(n, (size_t)4, &share) ||
        __builtin_add_overflow(b->left, share, &b->left))
        b->left = SIZE_MAX;
}

/* Read the module into g, linked when whole, as opts says. Returns 0, -1
 * (corrupt: g is empty) or -ENOMEM (g is empty). */
int hlo_read_module_opts(const uint8_t *p, size_t n, struct hlo_graph *g,
                         struct hlo_read_status *st, const struct hlo_read_opts *opts)
{
    static const struct hlo_read_opts none = {0, NULL, NULL};
    struct hlo_text_budget own, *budget;
    struct wire w, frames = {NULL, NULL};
    struct hlo_raw_ids *raw = NULL;
    struct raw_comp *rcomp = NULL;
    struct hlo_instr_span *spans = NULL;
    struct hlo_id_ix *local = NULL;
    uint32_t ncomps, nnodes;
    int64_t entry_id = -1;
    const char *entry_name = "";
    int rc;

    if (opts == NULL)
        opts = &none;
    budget = opts->budget != NULL ? opts->budget : &own;
    if (opts->budget == NULL)
        hlo_text_budget_init(&own);
    budget_add(budget, n);
    memset(g, 0, sizeof(*g));
    arena_init(&g->arena);
    g->name = "";
    wire_init(&w, p, n);
    rc = count_module(w, &ncomps, &nnodes);
    if (rc != 0)
        goto fail;
    g->comps = arena_alloc(&g->arena, (ncomps ? ncomps : 1) * sizeof(*g->comps));
    g->nodes = arena_alloc(&g->arena, (nnodes ? nnodes : 1) * sizeof(*g->nodes));
    raw = calloc(nnodes ? nnodes : 1, sizeof(*raw));
    rcomp = calloc(ncomps ? ncomps : 1, sizeof(*rcomp));
    spans = calloc(nnodes ? nnodes : 1, sizeof(*spans));
    local = malloc((nnodes ? nnodes : 1) * sizeof(*local));
    if (g->comps == NULL || g->nodes == NULL || raw == NULL || rcomp == NULL || spans == NULL ||
        local == NULL) {
        rc = -ENOMEM;
        goto fail;
    }
    rc = read_comps(w, g, raw, rcomp, spans, &frames, &entry_id, &entry_name, st);
    if (rc != 0)
        goto fail;
    rc = st->graph_bad ? -1 : link_graph(g, raw, rcomp, entry_id, entry_name, local);
    if (rc == -ENOMEM)
        goto fail;
    g->linked = rc == 0;
    rc = hlo_module_texts(g, spans, g->linked && (opts->flags & HLO_READ_TEXTS) ? local : NULL, raw,
                          frames,
                          opts->flags & HLO_READ_JOINED ? HLO_FRAMES_JOINED : HLO_FRAMES_OP_STATS,
                          budget, opts->scratch);
    if (rc != 0)
        goto fail;
    free_scratch(raw, nnodes, rcomp, spans, local);
    return 0;
fail:
    free_scratch(raw, nnodes, rcomp, spans, local);
    hlo_graph_free(g);
    return rc;
}

/* Read the module into g, linked when whole, without texts. */
int hlo_read_module(const uint8_t *p, size_t n, struct hlo_graph *g, struct hlo_read_status *st)
{
    return hlo_read_module_opts(p, n, g, st, NULL);
}

/* Read the module into g, linked when whole, printing with scratch. */
int hlo_read_module_with(const uint8_t *p, size_t n, struct hlo_graph *g,
                         struct hlo_read_status *st, struct out *scratch)
{
    struct hlo_read_opts opts = {HLO_READ_TEXTS, scratch, NULL};

    return hlo_read_module_opts(p, n, g, st, &opts);
}

/* Read a module that must link (with its texts): an unlinked one is -1. */
int hlo_graph_read(const uint8_t *p, size_t n, struct hlo_graph *g)
{
    struct hlo_read_status st = {0, 0};
    int rc = hlo_read_module_with(p, n, g, &st, NULL);

    if (rc == 0 && !g->linked) {
        hlo_graph_free(g);
        rc = -1;
    }
    return rc;
}

/* Free g and leave it empty; NULL is fine. */
void hlo_graph_free(struct hlo_graph *g)
{
    if (g == NULL)
        return;
    arena_free(&g->arena);
    memset(g, 0, sizeof(*g));
}
