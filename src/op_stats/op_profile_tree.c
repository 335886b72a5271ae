/*
 * op_profile_tree.c - XProf's op_profile tree (OpProfileBuilder of
 * xprof/convert/op_profile_builder.cc, BuildOpProfileNodeTree of
 * op_stats_to_op_profile.cc), ported to plain C.
 *
 * Every op row is added in storage order: the root (and the program node)
 * accumulate its self time (UpdateNodeMetrics), the category, dedup and op
 * nodes its whole metrics (CombineOpMetrics). Finalize resets the root's
 * time to the total, fills every node's Metrics, sorts and prunes twice and
 * folds the dedup groups. Sorting is deterministic where XProf's
 * std::partial_sort is not: equal keys keep creation order (the order the
 * rows first made the nodes). Our op_stats have no TPU fused children
 * (OpMetrics.children), so no op has children nodes and every op with
 * children time (time > self) is skipped below the program, as XProf skips
 * an op with children none of which is a SparseCore op.
 */
#include "op_profile_tree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hash.h"
#include "base/sort.h"
#include "hlo/hlo_kernel_metadata.h"

/* What a node groups; programs, categories, dedup groups and provenance
 * parts are looked up by (parent, kind, key). */
enum {
    K_ROOT,
    K_PROGRAM,  /* programs_map_ (key_id: program id) */
    K_CATEGORY, /* program->categories / category_map_ */
    K_PCAT,     /* provenance_category_map_ (a category below a provenance path) */
    K_DEDUP,    /* category->deduplicated_nodes */
    K_PROV,     /* provenance_children_map_ */
    K_LEAF,     /* an op (never looked up) */
};

/* tsl::profiler::IsFusion: the category ends in " fusion". */
static int is_fusion(const char *category)
{
    size_t n = strlen(category);

    return n >= 7 && memcmp(category + n - 7, " fusion", 7) == 0;
}

/* A new node named name under parent (NULL: the root). NULL when out of
 * memory. */
static struct op_profile_node *new_node(struct op_profile_tree *t, struct op_profile_node *parent,
                                        int kind, const char *name)
{
    struct op_profile_node *n = arena_alloc(&t->arena, sizeof(*n));

    if (n == NULL || xp_grow((void **)&t->all, &t->all_cap, t->nall, sizeof(*t->all)) != 0)
        return NULL;
    if (parent != NULL && xp_grow((void **)&parent->children, &parent->cap, parent->nchildren,
                                  sizeof(*parent->children)) != 0)
        return NULL;
    memset(n, 0, sizeof(*n));
    n->name = name;
    n->kind = kind;
    n->parent = parent;
    n->seq = t->nall;
    t->all[t->nall++] = n;
    if (parent != NULL)
        parent->children[parent->nchildren++] = n;
    return n;
}

static uint64_t key_hash(const struct op_profile_node *parent, int kind, uint64_t id,
                         const char *key, size_t len)
{
    uint64_t h = fnv64_add_word(FNV64_OFFSET, (uint64_t)(uintptr_t)parent);

    h = fnv64_add_word(h, (uint64_t)kind);
    h = fnv64_add_word(h, id);
    return fnv64_add(h, key, len);
}

static int key_equal(const struct op_profile_node *n, const struct op_profile_node *parent,
                     int kind, uint64_t id, const char *key, size_t len)
{
    return n->parent == parent && n->kind == kind && n->key_id == id &&
           strncmp(n->key, key, len) == 0 && n->key[len] == '\0';
}

/* Double the lookup table. Returns 0 or -ENOMEM. */
static int grow_slots(struct op_profile_tree *t)
{
    uint32_t cap = t->slot_cap ? t->slot_cap * 2 : 64, i;
    struct op_profile_node **s = calloc(cap, sizeof(*s));

    if (s == NULL)
        return -ENOMEM;
    for (i = 0; i < t->slot_cap; i++) {
        const struct op_profile_node *n = t->slot[i];
        uint32_t j;
        if (n == NULL)
            continue;
        j = (uint32_t)key_hash(n->parent, n->kind, n->key_id, n->key, strlen(n->key)) & (cap - 1);
        while (s[j] != NULL)
            j = (j + 1) & (cap - 1);
        s[j] = t->slot[i];
    }
    free(t->slot);
    t->slot = s;
    t->slot_cap = cap;
    return 0;
}

/* The grouping node (parent, kind, id, key[0..len)), made on first use and
 * named name (NULL: the key). NULL when out of memory. */
static struct op_profile_node *lookup(struct op_profile_tree *t, struct op_profile_node *parent,
                                      int kind, uint64_t id, const char *key, size_t len,
                                      const char *name)
{
    struct op_profile_node *n;
    uint32_t j;
    char *k;

    if ((t->nslot + 1) * 2 > t->slot_cap && grow_slots(t) != 0)
        return NULL;
    j = (uint32_t)key_hash(parent, kind, id, key, len) & (t->slot_cap - 1);
    for (; t->slot[j] != NULL; j = (j + 1) & (t->slot_cap - 1)) {
        if (key_equal(t->slot[j], parent, kind, id, key, len))
            return t->slot[j];
    }
    if ((k = arena_strndup(&t->arena, key, len)) == NULL)
        return NULL;
    if ((n = new_node(t, parent, kind, name != NULL ? name : k)) == NULL)
        return NULL;
    n->key = k;
    n->key_id = id;
    t->slot[j] = n;
    t->nslot++;
    return n;
}

/* Bytes of o's memory breakdown into a, as BytesAccessedPerCore splits them:
 * HBM (memory space 1) or on-chip (any other), read or written (entries of
 * an UNKNOWN operation type count for neither). */
static void add_memory(struct op_profile_acc *a, const struct op_metrics *o)
{
    uint32_t i, n = o->nmem < sizeof(o->mem) / sizeof(o->mem[0])
                        ? o->nmem
                        : sizeof(o->mem) / sizeof(o->mem[0]);

    for (i = 0; i < n; i++) {
        const struct op_mem_access *m = &o->mem[i];
        int hbm = m->memory_space == 1;
        if (m->op_type == OP_MEM_READ)
            *(hbm ? &a->hbm_rd : &a->chip_rd) += m->bytes;
        else if (m->op_type == OP_MEM_WRITE)
            *(hbm ? &a->hbm_wr : &a->chip_wr) += m->bytes;
    }
}

/* UpdateNodeMetrics: a parent above the grouping (root, program,
 * provenance) takes the self time, and the flops and bytes of ops without
 * children time. */
static void update_node(struct op_profile_acc *a, const struct op_metrics *o)
{
    a->time_ps += o->self_time_ps;
    a->normalized_time_ps += o->normalized_time_ps;
    a->self_time_ps += o->self_time_ps;
    if (o->time_ps - o->self_time_ps == 0) {
        a->flops_v2 += o->flops_v2;
        a->model_flops_v2 += o->model_flops_v2;
        add_memory(a, o);
    }
}

/* CombineOpMetrics (the fields Metrics reads). */
static void combine(struct op_profile_acc *a, const struct op_metrics *o)
{
    a->occurrences += (uint32_t)o->occurrences;
    a->time_ps += o->time_ps;
    a->self_time_ps += o->self_time_ps;
    a->normalized_time_ps += o->normalized_time_ps;
    a->flops_v2 += o->flops_v2;
    a->model_flops_v2 += o->model_flops_v2;
    add_memory(a, o);
}

static const char *str_or_empty(const char *s)
{
    return s != NULL ? s : "";
}

/* PopulateSymbolNode of an op. Returns 0 or -ENOMEM. */
static int populate_symbol(struct op_profile_tree *t, struct op_profile_node *n,
                           const struct op_metrics *o)
{
    struct op_profile_xla *x = &n->xla;
    char *meta = NULL;

    n->has_xla = 1;
    x->program_id = o->hlo_module_id;
    x->expression = str_or_empty(o->long_name);
    x->has_kernel_metadata = 1;
    x->kernel_metadata = "";
    if (x->expression[0] != 0 &&
        hlo_kernel_metadata(x->expression, strlen(x->expression), &meta) != 0)
        return -ENOMEM;
    if (meta != NULL) {
        x->kernel_metadata = arena_strndup(&t->arena, meta, strlen(meta));
        free(meta);
        if (x->kernel_metadata == NULL)
            return -ENOMEM;
    }
    x->fingerprint = 0;
    x->category = str_or_empty(o->category);
    x->provenance = str_or_empty(o->provenance);
    x->has_source_info = 1;
    x->source_file = str_or_empty(o->source_file);
    x->source_line = o->source_line;
    x->stack_frame = str_or_empty(o->stack_frame);
    return 0;
}

/* The program node of o's program id under the root: "name(id)"
 * (HloModuleNameWithProgramId), "main" when the module is unknown. */
static struct op_profile_node *program_node(struct op_profile_tree *t, const struct op_metrics *o,
                                            op_profile_name_fn names, void *arg)
{
    uint32_t before = t->nall;
    struct op_profile_node *n = lookup(t, t->root, K_PROGRAM, o->hlo_module_id, "", 0, "main");
    const char *mod;
    char *name;
    size_t len;

    if (n == NULL || t->nall == before || names == NULL)
        return n;
    if ((mod = names(arg, o->hlo_module_id)) == NULL)
        return n;
    len = strlen(mod) + 24;
    if ((name = arena_alloc(&t->arena, len)) == NULL)
        return NULL;
    snprintf(name, len, "%s(%llu)", mod, (unsigned long long)o->hlo_module_id);
    n->name = name;
    return n;
}

/* GetOrAddProvenanceParentNode: one node per part of o's provenance below
 * parent (ParseProvenance: split on '/', empty parts skipped, the last part
 * cut at its first ':'), each taking o's self time. The last one, or
 * parent when there is no part. */
static struct op_profile_node *provenance_path(struct op_profile_tree *t,
                                               struct op_profile_node *parent,
                                               const struct op_metrics *o)
{
    const char *p = o->provenance, *end = p + strlen(p);

    while (p < end) {
        const char *q = memchr(p, '/', (size_t)(end - p));
        const char *part_end = q != NULL ? q : end;
        size_t len = (size_t)(part_end - p);
        const char *next = q != NULL ? q + 1 : end;
        const char *rest = next;

        if (len == 0) {
            p = next;
            continue;
        }
        /* the last non-empty part is cut at its first ':' */
        while (rest < end && *rest == '/')
            rest++;
        if (rest == end) {
            const char *colon = memchr(p, ':', len);
            if (colon != NULL)
                len = (size_t)(colon - p);
        }
        parent = lookup(t, parent, K_PROV, 0, p, len, NULL);
        if (parent == NULL)
            return NULL;
        update_node(&parent->acc, o);
        p = next;
    }
    return parent;
}

/* OpProfileBuilder::AddOp. Returns 0 or -ENOMEM. */
static int add_op(struct op_profile_tree *t, const struct op_metrics *o,
                  const struct op_profile_options *opt, op_profile_name_fn names, void *arg)
{
    struct op_profile_node *program = NULL, *parent, *cat, *dedup, *leaf;
    const char *dname, *category = str_or_empty(o->category), *name = str_or_empty(o->name);
    int idle = op_is_idle(o);

    update_node(&t->root->acc, o);
    if (!idle && opt->group_by != OPP_BY_CATEGORY) {
        if ((program = program_node(t, o, names, arg)) == NULL)
            return -ENOMEM;
        update_node(&program->acc, o);
    }
    /* an op with children time is not a leaf (no SparseCore children here) */
    if (o->time_ps - o->self_time_ps != 0)
        return 0;
    if (idle) {
        if ((leaf = new_node(t, t->root, K_LEAF, name)) == NULL)
            return -ENOMEM;
        if (populate_symbol(t, leaf, o) != 0)
            return -ENOMEM;
        combine(&leaf->acc, o);
        return 0;
    }
    parent = program != NULL ? program : t->root;
    if (opt->group_by == OPP_BY_PROVENANCE && o->provenance != NULL && o->provenance[0]) {
        if ((parent = provenance_path(t, parent, o)) == NULL)
            return -ENOMEM;
        cat = lookup(t, parent, K_PCAT, 0, category, strlen(category), category);
    } else {
        cat = lookup(t, parent, K_CATEGORY, 0, category, strlen(category), category);
    }
    if (cat == NULL)
        return -ENOMEM;
    dname = o->deduplicated_name != NULL && o->deduplicated_name[0] ? o->deduplicated_name : name;
    if ((dedup = lookup(t, cat, K_DEDUP, 0, dname, strlen(dname), NULL)) == NULL)
        return -ENOMEM;
    if ((leaf = new_node(t, dedup, K_LEAF, name)) == NULL)
        return -ENOMEM;
    if (populate_symbol(t, leaf, o) != 0)
        return -ENOMEM;
    combine(&cat->acc, o);
    combine(&dedup->acc, o);
    combine(&leaf->acc, o);
    return 0;
}

/* std::min(u, 1.0) (NaN stays NaN, as std::min returns its first argument). */
static double cap_util(double u)
{
    return 1.0 < u ? 1.0 : u;
}

/* PopulateOpMetricsNode. peak_gib has 3 entries (0 where unknown). */
static void fill_metrics(struct op_profile_node *n, double peak_gflops, const double *peak_gib,
                         uint64_t total_ps)
{
    const struct op_profile_acc *a = &n->acc;
    struct op_profile_metrics *m = &n->metrics;
    double t_ns = (double)a->time_ps / 1e3;
    double gflops, u, frac, hbm, rd, wr;

    m->raw_time = (double)a->time_ps;
    m->raw_flops = a->model_flops_v2;
    m->bf16_flops = a->flops_v2;
    m->occurrences = a->occurrences;
    m->avg_time_ps = op_safe_div((double)a->time_ps, (double)a->occurrences);
    /* GigaFlopsPerSecondPerCoreNormalizedOnDvfs */
    gflops = op_safe_div(a->flops_v2, t_ns);
    if (a->normalized_time_ps != 0)
        gflops = gflops * op_safe_div((double)a->time_ps, (double)a->normalized_time_ps);
    u = op_safe_div(gflops, peak_gflops);
    frac = op_safe_div((double)a->time_ps, (double)total_ps);
    m->flops = cap_util(u) * frac;
    m->uncapped_flops = u * frac;
    m->normalized_time_ps = (double)a->normalized_time_ps;
    hbm = op_giga_to_gibi(op_safe_div((double)a->hbm_rd, t_ns)) +
          op_giga_to_gibi(op_safe_div((double)a->hbm_wr, t_ns));
    m->bandwidth_utils[0] = cap_util(op_safe_div(hbm, peak_gib[0]));
    rd = op_giga_to_gibi(op_safe_div((double)a->chip_rd, t_ns));
    m->bandwidth_utils[1] = cap_util(op_safe_div(rd, peak_gib[1]));
    wr = op_giga_to_gibi(op_safe_div((double)a->chip_wr, t_ns));
    m->bandwidth_utils[2] = cap_util(op_safe_div(wr, peak_gib[2]));
    m->raw_bytes_accessed_array[0] = op_gibi_to_giga(hbm) * t_ns;
    m->raw_bytes_accessed_array[1] = op_gibi_to_giga(rd) * t_ns;
    m->raw_bytes_accessed_array[2] = op_gibi_to_giga(wr) * t_ns;
}

/* Sort order of children: descending key (raw_flops under a fusion op,
 * raw_time elsewhere), ties in creation order. */
static int by_key_desc(const void *pa, const void *pb, void *ctx)
{
    const struct op_profile_node *a = *(struct op_profile_node *const *)pa;
    const struct op_profile_node *b = *(struct op_profile_node *const *)pb;
    int flops = *(const int *)ctx;
    double ka = flops ? a->metrics.raw_flops : a->metrics.raw_time;
    double kb = flops ? b->metrics.raw_flops : b->metrics.raw_time;

    if (ka > kb)
        return -1;
    if (kb > ka)
        return 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The node's own part of SortAndPruneChildren, after its children's. */
static void sort_prune_node(struct op_profile_node *n, int k, int level)
{
    uint32_t keep = level > 0 ? n->nchildren : (uint32_t)(k > 0 ? k : 0);
    int flops;

    if (n->nchildren <= 1)
        return;
    flops = n->has_xla && is_fusion(n->xla.category);
    xp_qsort_r(n->children, n->nchildren, sizeof(*n->children), by_key_desc, &flops);
    if (keep < n->nchildren)
        n->nchildren = keep;
}

struct sort_frame {
    struct op_profile_node *n; /* the node */
    int level;                 /* its level */
    uint32_t next;             /* its next child to visit */
};

/* SortAndPruneChildren(k, level, root) without recursion (a provenance path
 * can be as deep as its string is long). stack holds t->nall frames. */
static void sort_prune(struct op_profile_node *root, int k, int level, struct sort_frame *stack)
{
    uint32_t sp = 0;

    root->num_children = (int32_t)root->nchildren;
    stack[sp++] = (struct sort_frame){root, level, 0};
    while (sp > 0) {
        struct sort_frame *f = &stack[sp - 1];
        if (f->next < f->n->nchildren) {
            struct op_profile_node *c = f->n->children[f->next++];
            c->num_children = (int32_t)c->nchildren;
            stack[sp++] = (struct sort_frame){c, f->level - 1, 0};
            continue;
        }
        sort_prune_node(f->n, k, f->level);
        sp--;
    }
}

/* CopySymbolDetailsToDeduplicatedNode from the group's first op. Returns 0
 * or -ENOMEM. */
static int name_group(struct op_profile_tree *t, struct op_profile_node *n)
{
    const struct op_profile_node *c = n->children[0];
    static const char suffix[] = " and its duplicate(s)";
    size_t len = strlen(c->name);
    char *name = arena_alloc(&t->arena, len + sizeof(suffix));

    if (name == NULL)
        return -ENOMEM;
    memcpy(name, c->name, len);
    memcpy(name + len, suffix, sizeof(suffix));
    n->name = name;
    n->has_xla = 1;
    memset(&n->xla, 0, sizeof(n->xla));
    n->xla.program_id = c->xla.program_id;
    n->xla.expression = c->xla.expression;
    n->xla.has_kernel_metadata = c->xla.has_kernel_metadata;
    n->xla.kernel_metadata = c->xla.kernel_metadata;
    n->xla.has_source_info = c->xla.has_source_info;
    n->xla.source_file = c->xla.source_file;
    n->xla.source_line = c->xla.source_line;
    n->xla.stack_frame = c->xla.stack_frame;
    n->xla.fingerprint = c->xla.fingerprint;
    n->xla.category = c->xla.category;
    n->xla.provenance = "";
    if (is_fusion(c->xla.category))
        return 0;
    n->xla.provenance = c->xla.provenance;
    n->xla.has_layout = 1; /* *mutable_layout() = the op's (empty) layout */
    return 0;
}

/* FinalizeDeduplicatedNodes without recursion: a node without xla whose
 * children all have xla is a dedup group; one child replaces it, several
 * name it. Returns 0 or -ENOMEM. */
static int fold_groups(struct op_profile_tree *t)
{
    struct op_profile_node ***stack = malloc((t->nall + 1) * sizeof(*stack));
    uint32_t sp = 0, i;
    int rc = 0;

    if (stack == NULL)
        return -ENOMEM;
    stack[sp++] = &t->root;
    while (sp > 0 && rc == 0) {
        struct op_profile_node **slot = stack[--sp], *n = *slot;
        int group = n->nchildren > 0 && !n->has_xla;

        for (i = 0; group && i < n->nchildren; i++)
            group = n->children[i]->has_xla;
        if (!group) {
            for (i = n->nchildren; i > 0; i--)
                stack[sp++] = &n->children[i - 1];
        } else if (n->nchildren == 1) {
            *slot = n->children[0];
        } else {
            rc = name_group(t, n);
        }
    }
    free(stack);
    return rc;
}

/* OpProfileBuilder::Finalize. Returns 0 or -ENOMEM. */
static int finalize(struct op_profile_tree *t, const struct op_profile_options *opt,
                    double peak_tflops, const double *peak_bws, uint32_t npeak, uint64_t total_ps)
{
    double peak_gib[3] = {0, 0, 0};
    struct sort_frame *stack;
    int level, i;
    uint32_t j;

    for (i = 0; i < 3 && (uint32_t)i < npeak; i++)
        peak_gib[i] = op_giga_to_gibi(peak_bws[i]);
    t->root->acc.time_ps = total_ps;
    for (j = 0; j < t->nall; j++)
        fill_metrics(t->all[j], peak_tflops * 1e3, peak_gib, total_ps);
    level = opt->group_by == OPP_BY_PROGRAM ? 2 : opt->group_by == OPP_BY_CATEGORY ? 1 : 100;
    if ((stack = malloc((t->nall + 1) * sizeof(*stack))) == NULL)
        return -ENOMEM;
    sort_prune(t->root, opt->children_per_node, level, stack);
    sort_prune(t->root, opt->children_per_node, level, stack);
    free(stack);
    return fold_groups(t);
}

static const char *root_name(enum op_profile_group g)
{
    return g == OPP_BY_CATEGORY     ? "by_category"
           : g == OPP_BY_PROVENANCE ? "by_provenance"
                                    : "by_program";
}

int op_profile_tree_build(struct op_profile_tree *t, const struct op_metrics_db *db,
                          const struct op_profile_options *opt, double peak_tflops,
                          const double *peak_bws, uint32_t npeak, op_profile_name_fn names,
                          void *names_arg)
{
    uint32_t i;
    int rc = 0;

    memset(t, 0, sizeof(*t));
    arena_init(&t->arena);
    if (db->nrows == 0)
        return 0;
    if ((t->root = new_node(t, NULL, K_ROOT, root_name(opt->group_by))) == NULL)
        rc = -ENOMEM;
    for (i = 0; rc == 0 && i < db->nrows; i++) {
        const struct op_metrics *o = &db->rows[i];
        /* ops that cannot be symbolized */
        if (o->name != NULL && strncmp(o->name, "region", 6) == 0)
            continue;
        if (opt->exclude_idle && op_is_idle(o))
            continue;
        rc = add_op(t, o, opt, names, names_arg);
    }
    if (rc == 0)
        rc = finalize(t, opt, peak_tflops, peak_bws, npeak,
                      opt->exclude_idle ? db->total_op_time_ps : db->total_time_ps);
    if (rc != 0)
        op_profile_tree_free(t);
    return rc;
}

void op_profile_tree_free(struct op_profile_tree *t)
{
    uint32_t i;

    for (i = 0; i < t->nall; i++)
        free(t->all[i]->children);
    free(t->all);
    free(t->slot);
    arena_free(&t->arena);
    memset(t, 0, sizeof(*t));
    arena_init(&t->arena);
}

double op_profile_dvfs_multiplier(const struct op_metrics_db *db)
{
    uint64_t normalized = 0;
    uint32_t i;

    /* uint64 += double, row by row, as XEventsOpMetricsDbBuilder::Finalize */
    for (i = 0; i < db->nrows; i++) {
        const struct op_metrics *o = &db->rows[i];
        normalized =
            (uint64_t)((double)normalized +
                       (double)o->self_time_ps *
                           op_safe_div((double)o->normalized_time_ps * 1.0, (double)o->time_ps));
    }
    return op_safe_div((double)normalized, (double)db->total_op_time_ps);
}
