/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Name tables and the op list of the synthetic model: a small transformer
 * (embedding, N_LAYERS layers, head, backward pass with one gradient
 * all-reduce per layer overlapping the next layer's backward, Adam update),
 * plus a tiny metrics module. Fusion names follow XLA's "<kind>_<root>_fusion"
 * with ".N" suffixes; kernel names replace "." by "_" as XLA does.
 */
#include "program.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

#define N_LAYERS 8
#define MAX_OPS 1024
#define US 1000 /* ns per microsecond */
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* xla.PrimitiveType values */
enum { T_F32 = 11, T_BF16 = 16 };

/* Shape classes of fusion results. */
enum shape_class { SH_ACT, SH_ROW, SH_EMB, SH_PARAM, SH_SCALAR };

static const struct fusion_class {
    const char *name;       /* fusion base name */
    const char *kind;       /* HLO fusion_kind */
    const char *root;       /* root opcode of the fused computation */
    enum shape_class shape; /* result shape */
} fusions[] = {
    {"loop_add_fusion", "kLoop", "add", SH_ACT},
    {"loop_multiply_fusion", "kLoop", "multiply", SH_ACT},
    {"loop_convert_fusion", "kLoop", "convert", SH_ACT},
    {"input_reduce_fusion", "kInput", "reduce", SH_ROW},
    {"input_transpose_fusion", "kInput", "transpose", SH_ACT},
    {"loop_exponential_fusion", "kLoop", "exponential", SH_ACT},
    {"loop_divide_fusion", "kLoop", "divide", SH_ACT},
    {"loop_tanh_fusion", "kLoop", "tanh", SH_ACT},
    {"loop_subtract_fusion", "kLoop", "subtract", SH_ACT},
    {"loop_log_fusion", "kLoop", "log", SH_ROW},
    {"loop_broadcast_fusion", "kLoop", "broadcast", SH_ACT},
    {"loop_gather_fusion", "kLoop", "gather", SH_ACT},
    {"input_scatter_fusion", "kInput", "scatter", SH_EMB},
    {"loop_rsqrt_fusion", "kLoop", "rsqrt", SH_PARAM},
    {"loop_select_fusion", "kLoop", "select", SH_ACT},
};

static const struct gemm_class {
    const char *name; /* template key */
    int us;           /* forward duration */
    int64_t n;        /* output features (activations [8, 1024, n]) */
} gemms[] = {
    {"qkv", 260, 6144}, {"scores", 110, 1024}, {"values", 110, 2048},  {"out", 95, 2048},
    {"up", 330, 8192},  {"down", 330, 2048},   {"logits", 900, 32000},
};

/* One op of a template: kind f(usion), g(emm), c(ollective). */
struct tpl {
    char kind;         /* 'f', 'g' or 'c' */
    const char *what;  /* fusion base name or gemm class */
    int pass;          /* gemm: 0 forward, 1 dgrad, 2 wgrad */
    const char *scope; /* name scope suffix */
    int us;            /* base duration (fusions, collectives) */
};

static const struct tpl embed_fwd[] = {
    {'f', "loop_gather_fusion", 0, "embed/take", 22},
    {'f', "loop_add_fusion", 0, "embed/add", 12},
};

static const struct tpl layer_fwd[] = {
    {'f', "input_reduce_fusion", 0, "layer_norm_0/reduce_sum", 18},
    {'f', "loop_multiply_fusion", 0, "layer_norm_0/mul", 12},
    {'g', "qkv", 0, "attn/qkv/dot_general", 0},
    {'f', "input_transpose_fusion", 0, "attn/transpose", 14},
    {'g', "scores", 0, "attn/dot_general", 0},
    {'f', "input_reduce_fusion", 0, "attn/softmax/reduce_max", 10},
    {'f', "loop_exponential_fusion", 0, "attn/softmax/exp", 16},
    {'f', "input_reduce_fusion", 0, "attn/softmax/reduce_sum", 10},
    {'f', "loop_divide_fusion", 0, "attn/softmax/div", 12},
    {'g', "values", 0, "attn/dot_general_1", 0},
    {'f', "input_transpose_fusion", 0, "attn/transpose_1", 14},
    {'g', "out", 0, "attn/out/dot_general", 0},
    {'f', "loop_add_fusion", 0, "add", 10},
    {'f', "input_reduce_fusion", 0, "layer_norm_1/reduce_sum", 18},
    {'f', "loop_multiply_fusion", 0, "layer_norm_1/mul", 12},
    {'g', "up", 0, "mlp/up/dot_general", 0},
    {'f', "loop_tanh_fusion", 0, "mlp/gelu/tanh", 30},
    {'g', "down", 0, "mlp/down/dot_general", 0},
    {'f', "loop_add_fusion", 0, "add_1", 10},
};

static const struct tpl head_fwd_bwd[] = {
    {'f', "input_reduce_fusion", 0, "final_norm/reduce_sum", 18},
    {'f', "loop_multiply_fusion", 0, "final_norm/mul", 12},
    {'g', "logits", 0, "head/dot_general", 0},
    {'f', "input_reduce_fusion", 0, "log_softmax/reduce_max", 40},
    {'f', "loop_exponential_fusion", 0, "log_softmax/exp", 55},
    {'f', "input_reduce_fusion", 0, "log_softmax/reduce_sum", 40},
    {'f', "loop_log_fusion", 0, "log_softmax/log", 8},
    {'f', "loop_subtract_fusion", 0, "loss/sub", 50},
    {'f', "input_reduce_fusion", 0, "loss/mean", 20},
    {'f', "loop_broadcast_fusion", 0, "transpose(jvp(loss))/broadcast_in_dim", 30},
    {'f', "loop_select_fusion", 0, "transpose(jvp(loss))/select_n", 45},
    {'g', "logits", 1, "transpose(jvp(head))/dot_general", 0},
    {'g', "logits", 2, "transpose(jvp(head))/dot_general_1", 0},
    {'f', "input_reduce_fusion", 0, "transpose(jvp(final_norm))/reduce_sum", 18},
    {'f', "loop_multiply_fusion", 0, "transpose(jvp(final_norm))/mul", 12},
};

static const struct tpl layer_bwd[] = {
    {'f', "loop_add_fusion", 0, "add_1", 10},
    {'g', "down", 1, "mlp/down/dot_general", 0},
    {'g', "down", 2, "mlp/down/dot_general_1", 0},
    {'f', "loop_multiply_fusion", 0, "mlp/gelu/mul", 28},
    {'g', "up", 1, "mlp/up/dot_general", 0},
    {'g', "up", 2, "mlp/up/dot_general_1", 0},
    {'f', "input_reduce_fusion", 0, "layer_norm_1/reduce_sum", 20},
    {'f', "loop_multiply_fusion", 0, "layer_norm_1/mul", 14},
    {'f', "loop_add_fusion", 0, "add", 10},
    {'g', "out", 1, "attn/out/dot_general", 0},
    {'g', "out", 2, "attn/out/dot_general_1", 0},
    {'f', "input_transpose_fusion", 0, "attn/transpose_1", 14},
    {'g', "values", 1, "attn/dot_general_1", 0},
    {'g', "values", 2, "attn/dot_general_2", 0},
    {'f', "loop_multiply_fusion", 0, "attn/softmax/mul", 16},
    {'f', "input_reduce_fusion", 0, "attn/softmax/reduce_sum", 10},
    {'f', "loop_subtract_fusion", 0, "attn/softmax/sub", 12},
    {'g', "scores", 1, "attn/dot_general", 0},
    {'g', "scores", 2, "attn/dot_general_3", 0},
    {'f', "input_transpose_fusion", 0, "attn/transpose", 14},
    {'g', "qkv", 1, "attn/qkv/dot_general", 0},
    {'g', "qkv", 2, "attn/qkv/dot_general_1", 0},
    {'f', "input_reduce_fusion", 0, "layer_norm_0/reduce_sum", 20},
    {'f', "loop_multiply_fusion", 0, "layer_norm_0/mul", 14},
    {'f', "loop_convert_fusion", 0, "convert_element_type", 9},
    {'c', "all-reduce", 0, "psum", 900},
};

static const struct tpl embed_bwd[] = {
    {'f', "input_scatter_fusion", 0, "embed/scatter-add", 60},
    {'c', "all-reduce", 0, "psum", 1800},
};

static const struct tpl adam_group[] = {
    {'f', "loop_multiply_fusion", 0, "adam/mul", 24},
    {'f', "loop_add_fusion", 0, "adam/add", 24},
    {'f', "loop_rsqrt_fusion", 0, "adam/rsqrt", 18},
    {'f', "loop_divide_fusion", 0, "adam/div", 20},
    {'f', "loop_subtract_fusion", 0, "adam/sub", 24},
};

static const struct tpl metrics[] = {
    {'f', "input_reduce_fusion", 0, "reduce_sum", 7},
    {'f', "loop_divide_fusion", 0, "div", 5},
    {'f', "loop_add_fusion", 0, "add", 5},
    {'f', "loop_convert_fusion", 0, "convert_element_type", 4},
};

static const struct tpl tiny[] = {
    {'f', "loop_add_fusion", 0, "add", 100},
    {'g', "up", 0, "dot_general", 0},
    {'f', "loop_multiply_fusion", 0, "mul", 150}, /* compare only */
};

/* State while ops of one module are appended. */
struct builder {
    struct program *pr;                                     /* program being built */
    const struct vendor *v;                                 /* name spellings */
    uint64_t seed;                                          /* duration variation */
    struct op *ops;                                         /* ops of the current module */
    size_t n_ops;                                           /* ops appended */
    int fusion_count[sizeof(fusions) / sizeof(fusions[0])]; /* per base name */
    int n_custom_calls;                                     /* custom-call.N counter */
    int n_all_reduce;                                       /* all-reduce-start.N counter */
    int pending[N_LAYERS + 2];                              /* OP_COLL indices not yet waited for */
    int n_pending;                                          /* entries of pending */
    int scalar; /* fusions produce f32[8] (metrics module) */
    int failed; /* out of memory */
};

/* Returns the fusion class called name (tables are static: never NULL in use). */
static const struct fusion_class *find_fusion(const char *name, size_t *index)
{
    size_t i;

    for (i = 0; i < sizeof(fusions) / sizeof(fusions[0]); i++) {
        if (strcmp(fusions[i].name, name) == 0) {
            *index = i;
            return &fusions[i];
        }
    }
    *index = 0;
    return &fusions[0];
}

/* Returns the gemm class called name, and its index through *index. */
static const struct gemm_class *find_gemm(const char *name, int *index)
{
    int i;

    for (i = 0; i < (int)(sizeof(gemms) / sizeof(gemms[0])); i++) {
        if (strcmp(gemms[i].name, name) == 0) {
            *index = i;
            return &gemms[i];
        }
    }
    *index = 0;
    return &gemms[0];
}

/* Sets the result shape of op from a shape class. */
static void set_shape(struct op *op, enum shape_class sc, int64_t n)
{
    static const int64_t act[3] = {8, 1024, 2048};

    op->elem_type = T_BF16;
    op->n_dims = 3;
    memcpy(op->dims, act, sizeof(act));
    switch (sc) {
    case SH_ACT:
        op->dims[2] = n;
        break;
    case SH_ROW:
        op->elem_type = T_F32;
        op->n_dims = 2;
        break;
    case SH_EMB:
        op->elem_type = T_F32;
        op->n_dims = 2;
        op->dims[0] = 32000;
        op->dims[1] = 2048;
        break;
    case SH_PARAM:
        op->elem_type = T_F32;
        op->n_dims = 2;
        op->dims[0] = 2048;
        op->dims[1] = 8192;
        break;
    case SH_SCALAR:
        op->elem_type = T_F32;
        op->n_dims = 1;
        op->dims[0] = 8;
        break;
    }
}

/* Number of elements of op's result. */
static int64_t n_elems(const struct op *op)
{
    int64_t n = 1;
    int i;

    for (i = 0; i < op->n_dims; i++)
        n *= op->dims[i];
    return n;
}

/* Returns a new zeroed op at the end of the module, or NULL. */
static struct op *new_op(struct builder *b)
{
    if (b->failed || b->n_ops == MAX_OPS) {
        b->failed = 1;
        return NULL;
    }
    memset(&b->ops[b->n_ops], 0, sizeof(b->ops[0]));
    return &b->ops[b->n_ops++];
}

/* Base duration in ns: the template's, varied by +-15% with the seed. */
static int64_t vary(const struct builder *b, int us)
{
    uint64_t h = rng_key(b->seed, 0x6475726174696f6eULL, b->n_ops, (uint64_t)us);

    return (int64_t)us * US * rng_range(h, 850, 1150) / 1000;
}

/* Appends a fusion op. */
static void add_fusion(struct builder *b, const struct tpl *t, const char *scope, int line)
{
    struct pool *p = &b->pr->pool;
    size_t fi;
    const struct fusion_class *fc = find_fusion(t->what, &fi);
    int k = b->fusion_count[fi]++;
    struct op *op = new_op(b);

    if (op == NULL)
        return;
    op->kind = OP_FUSION;
    op->hlo = k ? pool_printf(p, "%s.%d", fc->name, k) : fc->name;
    op->kernel = k ? pool_printf(p, "%s_%d%s", fc->name, k, b->v->kernel_suffix)
                   : pool_printf(p, "%s%s", fc->name, b->v->kernel_suffix);
    op->opcode = "fusion";
    op->fusion_kind = fc->kind;
    op->root_opcode = fc->root;
    op->launch_api = b->v->launch_fusion;
    op->scope = scope;
    op->dur_ns = vary(b, t->us);
    op->source_line = line;
    set_shape(op, b->scalar ? SH_SCALAR : fc->shape, 2048);
    /* 256 threads of 8 elements per block */
    op->details = vendor_kernel_details(b->v, p, (int)((n_elems(op) + 2047) / 2048), 256,
                                        fc->shape == SH_ROW ? 1024 : 0);
    if (op->hlo == NULL || op->kernel == NULL || op->details == NULL)
        b->failed = 1;
}

/* Appends a BLAS gemm op (forward, dgrad or wgrad of a gemm class). */
static void add_gemm(struct builder *b, const struct tpl *t, const char *scope, int line)
{
    struct pool *p = &b->pr->pool;
    int gi;
    const struct gemm_class *gc = find_gemm(t->what, &gi);
    int ki = (gi * 3 + t->pass) % vendor_n_gemm_kernels();
    struct op *op = new_op(b);

    if (op == NULL)
        return;
    op->kind = OP_GEMM;
    op->hlo = pool_printf(p, "custom-call.%d", ++b->n_custom_calls);
    op->kernel = vendor_gemm_kernel(b->v, p, ki);
    op->opcode = "custom-call";
    op->launch_api = b->v->launch_gemm;
    op->scope = scope;
    op->dur_ns = vary(b, t->pass == 2 ? gc->us * 11 / 10 : gc->us);
    op->source_line = line;
    set_shape(op, SH_ACT, t->pass == 1 ? 2048 : gc->n);
    if (t->pass == 2) {
        op->n_dims = 2;
        op->dims[0] = 2048;
        op->dims[1] = gc->n;
    }
    /* one block per 256 x 128 output tile */
    op->details = vendor_kernel_details(b->v, p, (int)((n_elems(op) + 32767) / 32768), 256, 65536);
    if (op->hlo == NULL || op->kernel == NULL || op->details == NULL)
        b->failed = 1;
}

/* Appends an all-reduce-start op and remembers it until its done is added. */
static void add_coll(struct builder *b, const struct tpl *t, const char *scope, int line)
{
    struct pool *p = &b->pr->pool;
    struct op *op = new_op(b);

    if (op == NULL)
        return;
    op->kind = OP_COLL;
    op->hlo = pool_printf(p, "all-reduce-start.%d", ++b->n_all_reduce);
    op->kernel = b->v->coll_kernel;
    op->opcode = "all-reduce-start";
    op->launch_api = b->v->launch_coll;
    op->scope = scope;
    op->dur_ns = vary(b, t->us);
    op->source_line = line;
    set_shape(op, SH_PARAM, 0);
    op->details = vendor_kernel_details(b->v, p, 64, 256, 0);
    if (op->hlo == NULL || op->details == NULL)
        b->failed = 1;
    if ((size_t)b->n_pending < sizeof(b->pending) / sizeof(b->pending[0]))
        b->pending[b->n_pending++] = (int)(op - b->ops);
    else
        b->failed = 1;
}

/* Appends the all-reduce-done of the oldest pending all-reduce-start. */
static void add_wait(struct builder *b)
{
    struct op *op;
    const struct op *start;
    int coll;

    if (b->n_pending == 0)
        return;
    coll = b->pending[0];
    memmove(b->pending, b->pending + 1, (size_t)(b->n_pending - 1) * sizeof(b->pending[0]));
    b->n_pending--;
    op = new_op(b);
    if (op == NULL)
        return;
    start = &b->ops[coll];
    op->kind = OP_WAIT;
    op->coll = coll;
    /* all-reduce-start.N is completed by all-reduce-done.N */
    op->hlo = pool_printf(&b->pr->pool, "all-reduce-done.%s", strrchr(start->hlo, '.') + 1);
    op->opcode = "all-reduce-done";
    op->scope = start->scope;
    op->source_line = start->source_line;
    set_shape(op, SH_PARAM, 0);
    if (op->hlo == NULL)
        b->failed = 1;
}

/* Appends every op of a template under the scope "<prefix>/<tpl scope>". */
static void add_tpl(struct builder *b, const struct tpl *t, size_t n, const char *prefix, int line)
{
    size_t i;

    for (i = 0; i < n && !b->failed; i++) {
        char *scope = pool_printf(&b->pr->pool, "%s/%s", prefix, t[i].scope);

        if (scope == NULL) {
            b->failed = 1;
            return;
        }
        if (t[i].kind == 'f')
            add_fusion(b, &t[i], scope, line + (int)i);
        else if (t[i].kind == 'g')
            add_gemm(b, &t[i], scope, line + (int)i);
        else
            add_coll(b, &t[i], scope, line + (int)i);
    }
}

/* Ops of jit_train_step: forward, loss, backward with overlapped all-reduces, Adam. */
static void build_train(struct builder *b)
{
    const char *fwd = "jit(train_step)/jit(main)";
    const char *bwd = "jit(train_step)/jit(main)/transpose(jvp(transformer))";
    char *prefix;
    int l;

    add_tpl(b, embed_fwd, N_OF(embed_fwd), fwd, 31);
    for (l = 0; l < N_LAYERS; l++) {
        prefix = pool_printf(&b->pr->pool, "%s/transformer/layer_%d", fwd, l);
        if (prefix == NULL)
            b->failed = 1;
        else
            add_tpl(b, layer_fwd, N_OF(layer_fwd), prefix, 52);
    }
    add_tpl(b, head_fwd_bwd, N_OF(head_fwd_bwd), fwd, 88);
    for (l = N_LAYERS - 1; l >= 0; l--) {
        /* the done of an all-reduce comes two layers after its start */
        if (b->n_pending >= 2)
            add_wait(b);
        prefix = pool_printf(&b->pr->pool, "%s/layer_%d", bwd, l);
        if (prefix == NULL)
            b->failed = 1;
        else
            add_tpl(b, layer_bwd, N_OF(layer_bwd), prefix, 52);
    }
    add_tpl(b, embed_bwd, N_OF(embed_bwd), bwd, 31);
    while (b->n_pending > 0)
        add_wait(b);
    for (l = 0; l < 4; l++)
        add_tpl(b, adam_group, N_OF(adam_group), "jit(train_step)/jit(main)/optimizer", 140);
}

/* Allocates the op array of module m and runs `fill` into it. */
static void build_module(struct builder *b, size_t m, const char *name, const char *fn,
                         int64_t program_id, void (*fill)(struct builder *, const void *),
                         const void *arg)
{
    struct module *mod = &b->pr->mods[m];
    size_t i;

    memset(b->fusion_count, 0, sizeof(b->fusion_count));
    b->n_custom_calls = 0;
    b->n_all_reduce = 0;
    b->n_pending = 0;
    b->scalar = 0;
    b->n_ops = 0;
    b->ops = pool_alloc(&b->pr->pool, MAX_OPS * sizeof(struct op));
    if (b->ops == NULL) {
        b->failed = 1;
        return;
    }
    fill(b, arg);
    mod->name = name;
    mod->fn = fn;
    mod->program_id = program_id;
    mod->ops = b->ops;
    mod->n_ops = b->n_ops;
    for (i = 0; i < b->n_ops; i++)
        if (b->ops[i].kind != OP_WAIT)
            mod->n_launches++;
    b->pr->n_ops += b->n_ops;
    b->pr->n_mods = m + 1;
}

static void fill_train(struct builder *b, const void *arg)
{
    (void)arg;
    build_train(b);
}

static void fill_metrics(struct builder *b, const void *arg)
{
    (void)arg;
    b->scalar = 1;
    add_tpl(b, metrics, N_OF(metrics), "jit(update_metrics)/jit(main)", 160);
}

/* arg: the number of tiny's ops to add. */
static void fill_tiny(struct builder *b, const void *arg)
{
    add_tpl(b, tiny, *(const size_t *)arg, "jit(learner_step)/jit(main)", 12);
}

int program_build(struct program *pr, enum program_shape shape, const struct vendor *v,
                  uint64_t seed)
{
    struct builder b;

    memset(pr, 0, sizeof(*pr));
    memset(&b, 0, sizeof(b));
    b.pr = pr;
    b.v = v;
    b.seed = seed;
    if (shape == PROGRAM_TINY || shape == PROGRAM_COMPARE) {
        /* learner_plan.c lays out their times; dur_ns is unused there */
        size_t n = shape == PROGRAM_TINY ? 2 : N_OF(tiny);
        build_module(&b, 0, "jit_learner_step", "learner_step", 1, fill_tiny, &n);
    } else {
        build_module(&b, 0, "jit_train_step", "train_step", 7, fill_train, NULL);
        build_module(&b, 1, "jit_update_metrics", "update_metrics", 9, fill_metrics, NULL);
    }
    if (b.failed) {
        program_release(pr);
        return -ENOMEM;
    }
    return 0;
}

void program_release(struct program *pr)
{
    pool_release(&pr->pool);
    memset(pr, 0, sizeof(*pr));
}
