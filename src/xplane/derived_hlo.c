/*
 * derived_hlo.c - the HLO instructions' framework ops and sources for the
 * derived GPU lines (see derived_hlo.h), from the host's parsed HLO modules.
 */
#include "derived_hlo.h"
#include "base/sort.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfop.h"
#include "base/hash.h"

/* --- framework op names (tf_op_utils.cc) ------------------------------------- */

const char *derived_tf_op_shown(const char *s, size_t n, size_t *len, int *iterator_prefix)
{
    struct tfop op;

    tfop_parse(s, n, &op);
    *iterator_prefix = 0;
    if (op.category == TFOP_UNKNOWN) {
        size_t k = op.name_len;
        while (k > 0 &&
               (op.name[k - 1] == ' ' || op.name[k - 1] == '\t' || op.name[k - 1] == '\n' ||
                op.name[k - 1] == '\r' || op.name[k - 1] == '\f' || op.name[k - 1] == '\v'))
            k--;
        *len = k;
        return op.name;
    }
    if (op.category == TFOP_TFDATA) {
        /* DatasetOpEventName: "Iterator::" and the last "::" part. */
        size_t i = op.name_len;
        while (i >= 2 && !(op.name[i - 1] == ':' && op.name[i - 2] == ':'))
            i--;
        if (i < 2)
            i = 0;
        *iterator_prefix = 1;
        *len = op.name_len - i;
        return op.name + i;
    }
    *len = op.type_len;
    return op.type;
}

int derived_tf_op_scopes(const char *s, size_t n, int (*fn)(void *, const char *, size_t),
                         void *ctx)
{
    struct tfop op;
    size_t i = 0;

    tfop_parse(s, n, &op);
    if (op.category != TFOP_TENSORFLOW && op.category != TFOP_JAX)
        return 0;
    /* Every '/'-separated part but the last, empty parts included. */
    while (i <= op.name_len) {
        const char *slash = memchr(op.name + i, '/', op.name_len - i);
        size_t end;
        int rc;
        if (slash == NULL)
            break;
        end = (size_t)(slash - op.name);
        rc = fn(ctx, op.name + i, end - i);
        if (rc != 0)
            return rc;
        i = end + 1;
    }
    return 0;
}

/* --- interned strings --------------------------------------------------------- */

/* The stored copy of s[0..n), or NULL when out of memory. */
static const char *intern(struct derived_hlo *h, const char *s, size_t n)
{
    uint32_t id;

    if (intern_add(&h->strings, s, n, &id) != 0)
        return NULL;
    return h->strings.text[id];
}

/* Collects the interned name scopes of one op. */
struct scope_list {
    struct derived_hlo *h; /* owner of the strings */
    const char **v;        /* scopes so far */
    uint32_t n;            /* entries */
    uint32_t cap;          /* allocated */
};

static int add_scope(void *arg, const char *s, size_t n)
{
    struct scope_list *sl = arg;
    const char *str;

    if (sl->n == sl->cap) {
        uint32_t cap = sl->cap ? sl->cap * 2 : 8;
        const char **v = realloc(sl->v, cap * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        sl->v = v;
        sl->cap = cap;
    }
    str = intern(sl->h, s, n);
    if (str == NULL)
        return -ENOMEM;
    sl->v[sl->n++] = str;
    return 0;
}

/* Fill in the resolved names of one instruction. */
static int resolve(struct derived_hlo *h, const struct hlo_node *nd, struct dh_instr *in,
                   struct scope_list *sl)
{
    size_t full_len = nd->op_name_len + 1 + nd->op_type_len, shown_len;
    char small[512];
    char *full = full_len + 16 <= sizeof(small) ? small : malloc(full_len + 16);
    const char *shown;
    int iter, rc = 0;

    if (full == NULL)
        return -ENOMEM;
    memcpy(full, nd->op_name, nd->op_name_len);
    full[nd->op_name_len] = ':';
    memcpy(full + nd->op_name_len + 1, nd->op_type, nd->op_type_len);
    full[full_len] = '\0';
    in->name = intern(h, nd->name, nd->name_len);
    in->name_len = nd->name_len;
    in->tf_op = intern(h, full, full_len);
    if (in->name == NULL || in->tf_op == NULL)
        rc = -ENOMEM;
    shown = derived_tf_op_shown(in->tf_op, full_len, &shown_len, &iter);
    if (rc == 0 && (shown_len > 0 || iter)) {
        if (iter) {
            char *s = malloc(shown_len + 11);
            if (s == NULL) {
                rc = -ENOMEM;
            } else {
                memcpy(s, "Iterator::", 10);
                memcpy(s + 10, shown, shown_len);
                in->tf_shown = intern(h, s, shown_len + 10);
                free(s);
            }
        } else {
            in->tf_shown = intern(h, shown, shown_len);
        }
        if (rc == 0 && in->tf_shown == NULL)
            rc = -ENOMEM;
    }
    if (rc == 0) {
        sl->n = 0;
        rc = derived_tf_op_scopes(in->tf_op, full_len, add_scope, sl);
    }
    if (rc == 0 && sl->n > 0) {
        in->scopes = arena_alloc(&h->arena, sl->n * sizeof(*in->scopes));
        if (in->scopes == NULL)
            rc = -ENOMEM;
        else
            memcpy(in->scopes, sl->v, sl->n * sizeof(*in->scopes));
        in->nscopes = sl->n;
    }
    if (rc == 0 && nd->source_file_len > 0) {
        /* tsl::io::Basename: the part after the last '/'. */
        const char *base = nd->source_file;
        size_t bn = nd->source_file_len, k;
        char *s;
        for (k = bn; k > 0 && base[k - 1] != '/'; k--)
            ;
        base += k;
        bn -= k;
        s = bn + 16 <= sizeof(small) ? small : malloc(bn + 16);
        if (s == NULL) {
            rc = -ENOMEM;
        } else {
            memcpy(s, base, bn);
            snprintf(s + bn, 16, ":%d", (int)nd->source_line);
            in->source = intern(h, s, strlen(s));
            if (in->source == NULL)
                rc = -ENOMEM;
            if (s != small)
                free(s);
        }
    }
    if (full != small)
        free(full);
    return rc;
}

static int instr_cmp(const void *a, const void *b)
{
    const struct dh_instr *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    if (c != 0)
        return c;
    return x < y ? -1 : x > y; /* keep the first of equal names first */
}

/* Hash the instruction names of mod (the first of equal names wins). */
static int index_module(struct dh_module *mod)
{
    uint32_t cap = 16, i, k;

    while (cap < 2 * mod->ninstrs)
        cap *= 2;
    mod->index = calloc(cap, sizeof(*mod->index));
    if (mod->index == NULL)
        return -ENOMEM;
    mod->index_cap = cap;
    for (i = 0; i < mod->ninstrs; i++) {
        const struct dh_instr *in = &mod->instrs[i];
        for (k = fnv32(in->name, in->name_len) & (cap - 1); mod->index[k] != 0;
             k = (k + 1) & (cap - 1)) {
            const struct dh_instr *o = &mod->instrs[mod->index[k] - 1];
            if (o->name_len == in->name_len && memcmp(o->name, in->name, in->name_len) == 0)
                break;
        }
        if (mod->index[k] == 0)
            mod->index[k] = i + 1;
    }
    return 0;
}

/* The instructions of one module into mod. Returns 0 or -ENOMEM. */
static int add_instrs(struct derived_hlo *h, const struct hlo_graph *g, struct dh_module *mod,
                      struct scope_list *sl)
{
    uint32_t i;
    int rc;

    mod->instrs = calloc(g->nnodes ? g->nnodes : 1, sizeof(*mod->instrs));
    if (mod->instrs == NULL)
        return -ENOMEM;
    for (i = 0; i < g->nnodes; i++) {
        rc = resolve(h, &g->nodes[i], &mod->instrs[i], sl);
        if (rc != 0)
            return rc;
        mod->ninstrs++;
    }
    if (mod->ninstrs > 1)
        xp_qsort(mod->instrs, mod->ninstrs, sizeof(*mod->instrs), instr_cmp);
    return index_module(mod);
}

static int mod_cmp(const void *a, const void *b)
{
    uint64_t x = ((const struct dh_module *)a)->program_id;
    uint64_t y = ((const struct dh_module *)b)->program_id;

    return x < y ? -1 : x > y;
}

void derived_hlo_free(struct derived_hlo *h)
{
    uint32_t i;

    if (h == NULL)
        return;
    for (i = 0; i < h->nmods; i++) {
        free(h->mods[i].instrs);
        free(h->mods[i].index);
    }
    free(h->mods);
    intern_free(&h->strings);
    arena_free(&h->arena);
    free(h);
}

/* Whether a module of program_id is in h already. */
static int has_program(const struct derived_hlo *h, uint64_t program_id)
{
    uint32_t i;

    for (i = 0; i < h->nmods; i++) {
        if (h->mods[i].program_id == program_id)
            return 1;
    }
    return 0;
}

int derived_hlo_build(const struct hlo_modules *mods, struct derived_hlo **hp, struct xp_err *err)
{
    struct derived_hlo *h = calloc(1, sizeof(*h));
    struct scope_list sl;
    uint32_t i;
    int rc = 0;

    *hp = NULL;
    if (h == NULL ||
        (mods->nmods > 0 && (h->mods = calloc(mods->nmods, sizeof(*h->mods))) == NULL)) {
        free(h);
        return xp_err_set(err, -ENOMEM, "out of memory reading HLO");
    }
    arena_init(&h->arena);
    if (intern_init(&h->strings) != 0) {
        derived_hlo_free(h);
        return xp_err_set(err, -ENOMEM, "out of memory reading HLO");
    }
    memset(&sl, 0, sizeof(sl));
    sl.h = h;
    for (i = 0; i < mods->nmods && rc == 0; i++) {
        const struct hlo_proto_module *pm = &mods->mods[i];
        struct dh_module *mod = &h->mods[h->nmods];
        if (has_program(h, pm->program_id))
            continue;
        mod->program_id = pm->program_id;
        h->nmods++;
        rc = add_instrs(h, &pm->g, mod, &sl);
    }
    free(sl.v);
    if (rc != 0) {
        derived_hlo_free(h);
        return xp_err_set(err, rc, "out of memory reading HLO");
    }
    if (h->nmods > 1)
        xp_qsort(h->mods, h->nmods, sizeof(*h->mods), mod_cmp);
    *hp = h;
    return 0;
}

const struct dh_instr *derived_hlo_find(const struct derived_hlo *h, uint64_t program_id,
                                        const char *name, size_t n)
{
    uint32_t lo = 0, hi, k;
    const struct dh_module *mod;

    if (h == NULL)
        return NULL;
    hi = h->nmods;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (h->mods[mid].program_id < program_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == h->nmods || h->mods[lo].program_id != program_id)
        return NULL;
    mod = &h->mods[lo];
    for (k = fnv32(name, n) & (mod->index_cap - 1); mod->index[k] != 0;
         k = (k + 1) & (mod->index_cap - 1)) {
        const struct dh_instr *in = &mod->instrs[mod->index[k] - 1];
        if (in->name_len == n && memcmp(in->name, name, n) == 0)
            return in;
    }
    return NULL;
}
