/*
 * pt_perf_vector.c - TraceLens's vector perf models (PerfModel/perf_model.py,
 * mapped by torch_op_mapping.py): aten_unary_elementwise,
 * aten_replication_pad and aten_upsample_nearest (UnaryElementwise sheet),
 * aten_binary_elementwise and liger_silu_mul_function (BinaryElementwise), BatchNorm, LayerNorm,
 * GroupNorm, InstanceNorm, RMSNorm and their Bwd classes (Normalization)
 * and aten_reduce (Reduce_fwd): the params get_param_details returns, str()'d
 * as pandas' astype(str) prints them, and flops() / bytes() with Python's
 * int and float arithmetic in the same order. Where the Python code would
 * raise (a missing arg, a bad shape, an unknown dtype where bytes() does not
 * check for one) the op is left out, as build_df_perf_metrics drops it.
 * Python's ints are int64 here; an op that overflows them is left out.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pt_perf_sheet_int.h"

#define VRANK 16

enum vkind {
    V_NONE,
    V_UNARY,
    V_PAD,
    V_UPSAMPLE,
    V_BINARY,
    V_LIGER, /* LigerSiLUMulFunction: a binary op without an out tensor */
    V_BATCH,
    V_BATCH_BWD,
    V_LAYER,
    V_LAYER_BWD,
    V_GROUP,
    V_GROUP_BWD,
    V_INSTANCE,
    V_INSTANCE_BWD,
    V_RMS,
    V_RMS_BWD,
    V_REDUCE,
};

static const struct {
    const char *name;
    enum vkind kind;
} vmodels[] = {
    {"aten::copy", V_UNARY},
    {"aten::copy_", V_UNARY},
    {"aten::clamp_min", V_UNARY},
    {"aten::clamp_min_", V_UNARY},
    {"aten::clamp_max", V_UNARY},
    {"aten::clamp_max_", V_UNARY},
    {"aten::sigmoid", V_UNARY},
    {"aten::rsqrt", V_UNARY},
    {"aten::silu", V_UNARY},
    {"aten::neg", V_UNARY},
    {"aten::pow", V_UNARY},
    {"aten::replication_pad1d", V_PAD},
    {"aten::replication_pad2d", V_PAD},
    {"aten::replication_pad3d", V_PAD},
    {"aten::upsample_nearest1d", V_UPSAMPLE},
    {"aten::upsample_nearest2d", V_UPSAMPLE},
    {"aten::upsample_nearest3d", V_UPSAMPLE},
    {"aten::div", V_BINARY},
    {"aten::div_", V_BINARY},
    {"aten::mul", V_BINARY},
    {"aten::mul_", V_BINARY},
    {"aten::add", V_BINARY},
    {"aten::add_", V_BINARY},
    {"aten::sigmoid_backward", V_BINARY},
    {"aten::threshold_backward", V_BINARY},
    {"LigerSiLUMulFunction", V_LIGER},
    {"aten::batch_norm", V_BATCH},
    {"aten::native_batch_norm", V_BATCH},
    {"aten::miopen_batch_norm", V_BATCH},
    {"aten::cudnn_batch_norm", V_BATCH},
    {"aten::layer_norm", V_LAYER},
    {"aten::native_layer_norm", V_LAYER},
    {"aten::miopen_layer_norm", V_LAYER},
    {"aten::cudnn_layer_norm", V_LAYER},
    {"aten::group_norm", V_GROUP},
    {"aten::native_group_norm", V_GROUP},
    {"aten::miopen_group_norm", V_GROUP},
    {"aten::cudnn_group_norm", V_GROUP},
    {"aten::instance_norm", V_INSTANCE},
    {"aten::native_instance_norm", V_INSTANCE},
    {"aten::miopen_instance_norm", V_INSTANCE},
    {"aten::cudnn_instance_norm", V_INSTANCE},
    {"aten::_fused_rms_norm", V_RMS},
    {"aten::batch_norm_backward", V_BATCH_BWD},
    {"aten::native_batch_norm_backward", V_BATCH_BWD},
    {"aten::miopen_batch_norm_backward", V_BATCH_BWD},
    {"aten::cudnn_batch_norm_backward", V_BATCH_BWD},
    {"aten::layer_norm_backward", V_LAYER_BWD},
    {"aten::native_layer_norm_backward", V_LAYER_BWD},
    {"aten::miopen_layer_norm_backward", V_LAYER_BWD},
    {"aten::cudnn_layer_norm_backward", V_LAYER_BWD},
    {"aten::group_norm_backward", V_GROUP_BWD},
    {"aten::native_group_norm_backward", V_GROUP_BWD},
    {"aten::miopen_group_norm_backward", V_GROUP_BWD},
    {"aten::cudnn_group_norm_backward", V_GROUP_BWD},
    {"aten::instance_norm_backward", V_INSTANCE_BWD},
    {"aten::native_instance_norm_backward", V_INSTANCE_BWD},
    {"aten::miopen_instance_norm_backward", V_INSTANCE_BWD},
    {"aten::cudnn_instance_norm_backward", V_INSTANCE_BWD},
    {"aten::rms_norm_backward", V_RMS_BWD},
    {"aten::native_rms_norm_backward", V_RMS_BWD},
    {"aten::miopen_rms_norm_backward", V_RMS_BWD},
    {"aten::cudnn_rms_norm_backward", V_RMS_BWD},
    {"aten::_fused_rms_norm_backward", V_RMS_BWD},
    {"aten::sum", V_REDUCE},
    {"aten::mean", V_REDUCE},
    {"aten::max", V_REDUCE},
    {"aten::min", V_REDUCE},
    {"aten::norm", V_REDUCE},
    {"aten::linalg_norm", V_REDUCE},
    {"aten::std", V_REDUCE},
    {"aten::var", V_REDUCE},
    {"aten::logsumexp", V_REDUCE},
    {"aten::cumsum", V_REDUCE},
    {"aten::cumprod", V_REDUCE},
    {"aten::amin", V_REDUCE},
    {"aten::amax", V_REDUCE},
};

/* Param indexes of each sheet (r->params), and their names. */
enum { U_OP_SHAPE, U_DTYPE, U_STRIDE_IN, U_STRIDE_OUT, U_IN_SHAPE, U_OUT_SHAPE, U_PADDING };
static const char *const unary_names[] = {
    "op_shape",    "dtype_in_out", "stride_input", "stride_output",
    "input_shape", "output_shape", "padding",      NULL};
enum { B_SHAPE1, B_SHAPE2, B_DTYPE, B_STRIDE1, B_STRIDE2, B_STRIDE_OUT };
static const char *const binary_names[] = {
    "shape_in1",     "shape_in2", "dtype_in1_in2_out", "stride_input1", "stride_input2",
    "stride_output", NULL};
enum {
    N_OP_SHAPE,
    N_DTYPE,
    N_STRIDE_IN,
    N_STRIDE_OUT,
    N_CHANNELS,
    N_HAS_BIAS,
    N_AFFINE,
    N_TRAINING,
    N_MASK
};
static const char *const norm_names[] = {
    "op_shape", "dtype_in_out", "stride_input", "stride_output", "num_channels",
    "has_bias", "is_affine",    "is_training",  "output_mask",   NULL};
enum { R_IN_ELEMS, R_OUT_ELEMS, R_DTYPE, R_TYPE };
static const char *const reduce_names[] = {"num_input_elems", "num_output_elems", "dtype_in_out",
                                           "reduce_type", NULL};

static enum vkind kind_of(const char *name)
{
    size_t i;

    for (i = 0; i < sizeof(vmodels) / sizeof(vmodels[0]); i++) {
        if (strcmp(vmodels[i].name, name) == 0)
            return vmodels[i].kind;
    }
    return V_NONE;
}

int pt_vector_known(const char *name)
{
    return kind_of(name) != V_NONE;
}

int pt_vector_not_implemented(const char *name)
{
    return kind_of(name) == V_INSTANCE_BWD;
}

const char *const *pt_vector_param_names(const char *sheet)
{
    if (strcmp(sheet, "UnaryElementwise") == 0)
        return unary_names;
    if (strcmp(sheet, "BinaryElementwise") == 0)
        return binary_names;
    if (strcmp(sheet, "Normalization") == 0)
        return norm_names;
    if (strcmp(sheet, "Reduce_fwd") == 0)
        return reduce_names;
    return NULL;
}

/* ---- Python values ------------------------------------------------------------ */

struct vshape {
    int64_t d[VRANK];
    int n;
};

/* tuple(x) of a JSON list of ints. */
static int shape_of(const cJSON *x, struct vshape *s)
{
    const cJSON *e;

    if (!cJSON_IsArray(x))
        return -EINVAL;
    s->n = 0;
    cJSON_ArrayForEach(e, x)
    {
        if (!cJSON_IsNumber(e) || s->n == VRANK ||
            e->valuedouble != (double)(int64_t)e->valuedouble)
            return -EINVAL;
        s->d[s->n++] = (int64_t)e->valuedouble;
    }
    return 0;
}

static int prod(const struct vshape *s, int64_t *r)
{
    int i;

    *r = 1;
    for (i = 0; i < s->n; i++) {
        if (__builtin_mul_overflow(*r, s->d[i], r))
            return -EINVAL;
    }
    return 0;
}

static int mul(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_mul_overflow(a, b, r) ? -EINVAL : 0;
}

static int add(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_add_overflow(a, b, r) ? -EINVAL : 0;
}

/* str() of a shape as a tuple ("(1, 2)", "(5,)", "()"). */
static void shape_repr(const struct vshape *s, char *buf, size_t n)
{
    size_t len = 0;
    int i;

    len += (size_t)snprintf(buf + len, n - len, "(");
    for (i = 0; i < s->n && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? ", " : "", (long long)s->d[i]);
    if (len < n)
        snprintf(buf + len, n - len, s->n == 1 ? ",)" : ")");
}

/* A dtype item: a string (*s) or null (NULL); 0, or -EINVAL for anything
 * else (name2bpe's name.lower() raises on it). */
static int dtype_item(const cJSON *types, int i, const char **s)
{
    const cJSON *x = cJSON_GetArrayItem(types, i);

    if (x == NULL)
        return -EINVAL; /* IndexError */
    if (cJSON_IsNull(x)) {
        *s = NULL;
        return 0;
    }
    if (!cJSON_IsString(x))
        return -EINVAL;
    *s = x->valuestring;
    return 0;
}

/* repr of a tuple of dtype names, NULL for None, into b (NUL-terminated). */
static void dtypes_repr(struct pt_buf *b, const char *const *t, int n)
{
    int i;

    b->n = 0;
    pt_buf_putc(b, '(');
    for (i = 0; i < n; i++) {
        if (i > 0)
            pt_buf_puts(b, ", ");
        if (t[i] == NULL)
            pt_buf_puts(b, "None");
        else
            pt_str_repr(b, t[i], strlen(t[i]));
    }
    pt_buf_puts(b, n == 1 ? ",)" : ")");
    pt_buf_putc(b, '\0');
}

/* parse_list(s, int) / parse_list(s, bool): ast.literal_eval of a list or
 * tuple literal of ints (or True / False), each through int() or bool(). */
static int parse_list(const char *s, int64_t *v, int *n, int max)
{
    const char *p = s;
    char close;
    int want_item = 1;

    while (*p == ' ')
        p++;
    if (*p != '[' && *p != '(')
        return -EINVAL;
    close = *p == '[' ? ']' : ')';
    p++;
    *n = 0;
    for (;;) {
        char *end;
        while (*p == ' ')
            p++;
        if (*p == close) {
            p++;
            break;
        }
        if (!want_item || *n == max)
            return -EINVAL;
        if (strncmp(p, "True", 4) == 0 || strncmp(p, "False", 5) == 0) {
            v[(*n)++] = *p == 'T';
            p += *p == 'T' ? 4 : 5;
        } else {
            long long x;
            errno = 0;
            x = strtoll(p, &end, 10);
            if (end == p || errno != 0)
                return -EINVAL;
            v[(*n)++] = x;
            p = end;
        }
        while (*p == ' ')
            p++;
        want_item = *p == ',';
        if (*p == ',')
            p++;
    }
    while (*p == ' ')
        p++;
    return *p == '\0' ? 0 : -EINVAL;
}

/* repr(list of bools). */
static void bools_repr(const int64_t *v, int n, char *buf, size_t size)
{
    size_t len = (size_t)snprintf(buf, size, "[");
    int i;

    for (i = 0; i < n && len < size; i++)
        len +=
            (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", v[i] ? "True" : "False");
    if (len < size)
        snprintf(buf + len, size - len, "]");
}

/* A Concrete Inputs string item i (IndexError / not a string: -EINVAL). */
static int ci_item(const cJSON *args, int i, const char **s)
{
    const cJSON *ci = cJSON_GetObjectItemCaseSensitive(args, "Concrete Inputs");
    const cJSON *x = cJSON_GetArrayItem(ci, i);

    if (!cJSON_IsString(x))
        return -EINVAL;
    *s = x->valuestring;
    return 0;
}

/* bool(Concrete Inputs[i]). */
static int ci_truth(const cJSON *args, int i, int *v)
{
    const cJSON *ci = cJSON_GetObjectItemCaseSensitive(args, "Concrete Inputs");
    const cJSON *x = cJSON_GetArrayItem(ci, i);

    if (x == NULL)
        return -EINVAL;
    if (cJSON_IsString(x))
        *v = x->valuestring[0] != '\0';
    else if (cJSON_IsNumber(x))
        *v = x->valuedouble != 0;
    else
        *v = cJSON_IsTrue(x);
    return 0;
}

static int setp(struct grow *r, int idx, const char *s)
{
    return r == NULL ? 0 : pt_sheet_set_param(r, idx, s);
}

static int set_shape(struct grow *r, int idx, const struct vshape *s)
{
    char buf[VRANK * 24 + 8];

    if (r == NULL)
        return 0;
    shape_repr(s, buf, sizeof(buf));
    return pt_sheet_set_param(r, idx, buf);
}

static int set_int(struct grow *r, int idx, int64_t v)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "%lld", (long long)v);
    if (r != NULL)
        r->kind[idx] = PK_INT;
    return setp(r, idx, buf);
}

static int set_dtypes(struct grow *r, int idx, const char *const *t, int n)
{
    struct pt_buf b;
    int rc;

    if (r == NULL)
        return 0;
    memset(&b, 0, sizeof(b));
    dtypes_repr(&b, t, n);
    rc = b.oom ? -ENOMEM : pt_sheet_set_param(r, idx, b.p);
    pt_buf_free(&b);
    return rc;
}

/* The precision of dtype (get_compute_precision) on p. */
static void vector_spec(struct pt_perf *p, const char *dtype)
{
    p->maf = "vector";
    p->precision = dtype != NULL && dtype[0] != '\0' ? pt_torch_dtype_map(dtype) : NULL;
}

/* The member key of args as a JSON array, or NULL. */
static const cJSON *member(const cJSON *args, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(args, key);
}

/* ---- UnaryElementwise ----------------------------------------------------------- */

static int unary(enum vkind k, const cJSON *args, struct pt_perf *p, struct grow *r)
{
    const cJSON *dims = member(args, "Input Dims"), *types = member(args, "Input type");
    const cJSON *strides = member(args, "Input Strides"), *d1;
    struct vshape in, out, st_in, st_out;
    const char *dt[2] = {NULL, NULL}, *ci;
    int has_out = 0, bpe_in, bpe_out, rc, npad = 0, i;
    int64_t nelems, nin, pad[2 * VRANK], t, u;
    char padtxt[VRANK * 48 + 4];

    if (shape_of(cJSON_GetArrayItem(dims, 0), &in) != 0 || dtype_item(types, 0, &dt[0]) != 0 ||
        shape_of(cJSON_GetArrayItem(strides, 0), &st_in) != 0)
        return -EINVAL;
    out = in;
    if (k == V_UNARY) {
        d1 = cJSON_GetArrayItem(dims, 1);
        if (d1 != NULL && cJSON_IsArray(d1) && cJSON_GetArraySize(d1) > 0) {
            has_out = 1;
            if (dtype_item(types, 1, &dt[1]) != 0 ||
                shape_of(cJSON_GetArrayItem(strides, 1), &st_out) != 0)
                return -EINVAL;
        } else if (d1 != NULL && !cJSON_IsArray(d1) && !cJSON_IsNull(d1)) {
            return -EINVAL; /* a truthy non-list: not a trace TraceLens reads */
        }
    } else if (k == V_PAD) {
        /* [int(x) for x in pad_str.strip("[]").replace(" ", "").split(",")] */
        char buf[512], *q, *comma;
        size_t len;
        if (ci_item(args, 1, &ci) != 0)
            return -EINVAL;
        while (*ci == '[' || *ci == ']')
            ci++;
        len = strlen(ci);
        while (len > 0 && (ci[len - 1] == '[' || ci[len - 1] == ']'))
            len--;
        if (len >= sizeof(buf))
            return -EINVAL;
        for (i = 0, q = buf; (size_t)i < len; i++) {
            if (ci[i] != ' ')
                *q++ = ci[i];
        }
        *q = '\0';
        for (q = buf;; q = comma + 1) {
            char *end;
            comma = strchr(q, ',');
            if (comma != NULL)
                *comma = '\0';
            errno = 0;
            if (npad == 2 * VRANK)
                return -EINVAL;
            pad[npad++] = strtoll(q, &end, 10);
            if (end == q || *end != '\0' || errno != 0)
                return -EINVAL;
            if (comma == NULL)
                break;
        }
        for (i = 0; i < npad / 2; i++) {
            int di = in.n - 1 - i;
            if (di < 0)
                di += in.n; /* Python's negative index */
            if (di < 0 || add(out.d[di], pad[2 * i], &t) || add(t, pad[2 * i + 1], &out.d[di]))
                return -EINVAL;
        }
    } else { /* V_UPSAMPLE: input_shape[:2] + tuple(literal_eval(Concrete Inputs[1])) */
        int64_t sp[VRANK];
        int nsp;
        if (ci_item(args, 1, &ci) != 0 || parse_list(ci, sp, &nsp, VRANK) != 0)
            return -EINVAL;
        out.n = in.n < 2 ? in.n : 2;
        if (out.n + nsp > VRANK)
            return -EINVAL;
        for (i = 0; i < nsp; i++)
            out.d[out.n++] = sp[i];
    }
    if (k != V_UNARY)
        dt[1] = dt[0];
    if (prod(&out, &nelems) != 0 || prod(&in, &nin) != 0)
        return -EINVAL;
    bpe_in = pt_name2bpe(dt[0]);
    bpe_out = dt[1] != NULL ? pt_name2bpe(dt[1]) : bpe_in;
    p->flops = (double)nelems;
    if (k == V_UNARY) {
        p->has_bytes = bpe_in != 0 && bpe_out != 0;
        if (p->has_bytes && (mul(nelems, bpe_in, &t) || mul(nelems, bpe_out, &u) || add(t, u, &t)))
            return -EINVAL;
    } else { /* no None check: an unknown dtype raises */
        if (bpe_in == 0 || bpe_out == 0 || mul(nin, bpe_in, &t) || mul(nelems, bpe_out, &u) ||
            add(t, u, &t))
            return -EINVAL;
        p->has_bytes = 1;
    }
    p->bytes = p->has_bytes ? (double)t : 0;
    p->category = "elementwise";
    p->sheet = "UnaryElementwise";
    vector_spec(p, dt[0]);
    if (r == NULL)
        return 0;
    rc = 0;
    if (k != V_UNARY) {
        size_t len = (size_t)snprintf(padtxt, sizeof(padtxt), "[");
        for (i = 0; i < npad && len < sizeof(padtxt); i++)
            len += (size_t)snprintf(padtxt + len, sizeof(padtxt) - len, "%s%lld", i ? ", " : "",
                                    (long long)pad[i]);
        if (len < sizeof(padtxt))
            snprintf(padtxt + len, sizeof(padtxt) - len, "]");
        rc = set_shape(r, U_IN_SHAPE, &in);
        rc = rc ? rc : set_shape(r, U_OUT_SHAPE, &out);
        if (k == V_PAD)
            rc = rc ? rc : setp(r, U_PADDING, padtxt);
    }
    rc = rc ? rc : set_shape(r, U_OP_SHAPE, &out);
    rc = rc ? rc : set_dtypes(r, U_DTYPE, dt, 2);
    rc = rc ? rc : set_shape(r, U_STRIDE_IN, &st_in);
    if (has_out)
        rc = rc ? rc : set_shape(r, U_STRIDE_OUT, &st_out);
    else
        rc = rc ? rc : setp(r, U_STRIDE_OUT, "None");
    return rc;
}

/* ---- BinaryElementwise ---------------------------------------------------------- */

static int binary(enum vkind k, const cJSON *args, struct pt_perf *p, struct grow *r)
{
    const cJSON *dims = member(args, "Input Dims"), *types = member(args, "Input type");
    const cJSON *strides = member(args, "Input Strides"), *d2;
    struct vshape s1, s2, st1, st2, sto, bc;
    const char *dt[3] = {NULL, NULL, NULL};
    int has_out = 0, b1, b2, bo, i, nd, rc;
    int64_t n1, n2, no, t, u;

    if (shape_of(cJSON_GetArrayItem(dims, 0), &s1) || shape_of(cJSON_GetArrayItem(dims, 1), &s2) ||
        dtype_item(types, 0, &dt[0]) || dtype_item(types, 1, &dt[1]) ||
        shape_of(cJSON_GetArrayItem(strides, 0), &st1) ||
        shape_of(cJSON_GetArrayItem(strides, 1), &st2))
        return -EINVAL;
    d2 = k == V_LIGER ? NULL : cJSON_GetArrayItem(dims, 2);
    if (d2 != NULL && cJSON_IsArray(d2) && cJSON_GetArraySize(d2) > 0) {
        has_out = 1;
        if (dtype_item(types, 2, &dt[2]) || shape_of(cJSON_GetArrayItem(strides, 2), &sto))
            return -EINVAL;
    } else if (d2 != NULL && !cJSON_IsArray(d2) && !cJSON_IsNull(d2)) {
        return -EINVAL;
    }
    /* get_broadcast_shape: right-aligned, 1s prepended */
    nd = s1.n > s2.n ? s1.n : s2.n;
    bc.n = nd;
    for (i = 0; i < nd; i++) {
        int64_t a = i - (nd - s1.n) >= 0 ? s1.d[i - (nd - s1.n)] : 1;
        int64_t c = i - (nd - s2.n) >= 0 ? s2.d[i - (nd - s2.n)] : 1;
        if (a != c && a != 1 && c != 1)
            return -EINVAL;
        bc.d[i] = a > c ? a : c;
    }
    if (prod(&s1, &n1) || prod(&s2, &n2) || prod(&bc, &no))
        return -EINVAL;
    b1 = pt_name2bpe(dt[0]);
    b2 = pt_name2bpe(dt[1]);
    if (dt[2] != NULL)
        bo = pt_name2bpe(dt[2]);
    else if (b1 && b2)
        bo = s1.n > 0 && s2.n > 0 ? (b1 > b2 ? b1 : b2) : b1;
    else
        bo = 0;
    p->flops = (double)no;
    p->has_bytes = b1 && b2 && bo;
    if (p->has_bytes) {
        if (mul(n1, b1, &t) || mul(n2, b2, &u) || add(t, u, &t) || mul(no, bo, &u) || add(t, u, &t))
            return -EINVAL;
        p->bytes = (double)t;
    }
    p->category = "elementwise";
    p->sheet = "BinaryElementwise";
    vector_spec(p, dt[0]);
    rc = set_shape(r, B_SHAPE1, &s1);
    rc = rc ? rc : set_shape(r, B_SHAPE2, &s2);
    rc = rc ? rc : set_dtypes(r, B_DTYPE, dt, 3);
    rc = rc ? rc : set_shape(r, B_STRIDE1, &st1);
    rc = rc ? rc : set_shape(r, B_STRIDE2, &st2);
    if (has_out)
        rc = rc ? rc : set_shape(r, B_STRIDE_OUT, &sto);
    else
        rc = rc ? rc : setp(r, B_STRIDE_OUT, "None");
    return rc;
}

/* ---- Normalization -------------------------------------------------------------- */

/* Normalization.flops_func (forward). */
static int norm_flops(int training, int64_t n, int64_t c, double *f)
{
    int64_t pc, t;

    if (mul(c, 3, &pc) || (training && (mul(n, 3, &t) || add(pc, t, &pc))) || mul(c, 3, &t) ||
        add(pc, t, &pc) || mul(n, 2, &t) || add(pc, t, &pc))
        return -EINVAL;
    *f = (double)pc;
    return 0;
}

/* Normalization.bytes_func (forward). */
static int norm_bytes(int has_bias, int affine, int training, int64_t n, int64_t c, int bi, int bo,
                      double *b)
{
    int64_t nw = 2 + (affine ? 1 + (has_bias ? 1 : 0) : 0) + (training ? 2 : 0), x, y;

    if (mul(n, bi, &x) || mul(n, bo, &y) || add(x, y, &x) || mul(nw, c, &y) || mul(y, bi, &y) ||
        add(x, y, &x))
        return -EINVAL;
    *b = (double)x;
    return 0;
}

/* Normalization.flops_func_bwd; c is num_channels as Python has it (an int
 * unless c_float). */
static int norm_flops_bwd(int training, int64_t n, double c, int mask0, double *f)
{
    double epc, fpc;

    if (c == 0)
        return -EINVAL; /* ZeroDivisionError */
    epc = (double)n / c;
    fpc = training ? 0 : 3;
    fpc += 4 * epc;
    if (mask0) {
        if (training)
            fpc += 5 * epc;
    } else {
        fpc += 2 * epc;
    }
    *f = c * fpc;
    return 0;
}

/* Normalization.bytes_func_bwd. */
static int norm_bytes_bwd(int has_bias, int affine, int training, int64_t n, int64_t ci, double cf,
                          int c_float, int bi, int bo, int mask0, double *b)
{
    int64_t x, y;

    if (mul(n, bo, &x) || mul(n, bi, &y) || mul(y, mask0 && training ? 2 : 1, &y) || add(x, y, &x))
        return -EINVAL;
    if (c_float) {
        double v = (double)x;
        if (training)
            v += cf * bi;
        if (affine) {
            v += cf * bi;
            if (training)
                v += cf * bi * (has_bias ? 2 : 1);
        }
        *b = v;
        return 0;
    }
    if (training && (mul(ci, bi, &y) || add(x, y, &x)))
        return -EINVAL;
    if (affine) {
        if (mul(ci, bi, &y) || add(x, y, &x))
            return -EINVAL;
        if (training && (mul(ci, bi, &y) || mul(y, has_bias ? 2 : 1, &y) || add(x, y, &x)))
            return -EINVAL;
    }
    *b = (double)x;
    return 0;
}

static int is_none(const cJSON *x)
{
    return cJSON_IsNull(x);
}

static int norm(enum vkind k, const char *name, const cJSON *args, struct pt_perf *p,
                struct grow *r)
{
    const cJSON *dims = member(args, "Input Dims"), *types = member(args, "Input type");
    const cJSON *strides = member(args, "Input Strides");
    int idx = 0, affine = 0, has_bias = 1, training = 1, c_float = 0, bi, nmask = 0, rc, i;
    int has_mask = 0;
    struct vshape shape, st;
    const char *dt[2] = {NULL, NULL}, *ci;
    int64_t n, c = 0, mask[VRANK], lst[VRANK], x, y;
    double cf = 0;
    char buf[VRANK * 8 + 8];

    if (k == V_INSTANCE_BWD)
        return -EINVAL; /* NotImplementedError */
    if (k == V_BATCH_BWD) {
        int cud = strcmp(name, "aten::cudnn_batch_norm_backward") == 0 ||
                  strcmp(name, "aten::miopen_batch_norm_backward") == 0;
        const cJSON *d0 = cJSON_GetArrayItem(dims, 0);
        if (d0 == NULL)
            return -EINVAL;
        idx = cud ? 0 : 1;
        mask[0] = cud ? 1 : !is_none(d0);
        nmask = 1;
        has_mask = 1;
        if (cud)
            training = 0;
        else if (ci_truth(args, 7, &training) != 0)
            return -EINVAL;
    } else if (k == V_LAYER_BWD || k == V_GROUP_BWD || k == V_RMS_BWD) {
        idx = 1;
    }
    if (shape_of(cJSON_GetArrayItem(dims, idx), &shape) != 0 ||
        dtype_item(types, idx, &dt[0]) != 0 || shape_of(cJSON_GetArrayItem(strides, idx), &st) != 0)
        return -EINVAL;
    switch (k) {
    case V_BATCH:
    case V_INSTANCE:
        if (cJSON_GetArrayItem(dims, 2) == NULL || ci_truth(args, 5, &training) != 0 || shape.n < 2)
            return -EINVAL;
        affine = !is_none(cJSON_GetArrayItem(dims, 2));
        c = shape.d[1];
        break;
    case V_GROUP:
        if (cJSON_GetArrayItem(dims, 2) == NULL || shape.n < 2)
            return -EINVAL;
        affine = !is_none(cJSON_GetArrayItem(dims, 2));
        c = shape.d[1];
        break;
    case V_BATCH_BWD:
        if (cJSON_GetArrayItem(dims, 2) == NULL || shape.n < 2)
            return -EINVAL;
        affine = !is_none(cJSON_GetArrayItem(dims, 2));
        c = shape.d[1];
        break;
    case V_LAYER:
    case V_RMS:
        if (ci_item(args, 1, &ci) != 0 || parse_list(ci, lst, &i, VRANK) != 0)
            return -EINVAL;
        c = 1;
        while (i-- > 0) {
            if (mul(c, lst[i], &c))
                return -EINVAL;
        }
        if (cJSON_GetArrayItem(dims, 2) == NULL ||
            (k == V_LAYER && cJSON_GetArrayItem(dims, 3) == NULL))
            return -EINVAL;
        affine = !is_none(cJSON_GetArrayItem(dims, 2));
        if (k == V_LAYER) {
            has_bias = !is_none(cJSON_GetArrayItem(dims, 3));
        } else {
            has_bias = 0;
            training = 0;
        }
        break;
    case V_LAYER_BWD:
    case V_RMS_BWD:
        if (ci_item(args, 2, &ci) != 0 || parse_list(ci, lst, &i, VRANK) != 0)
            return -EINVAL;
        c = 1;
        while (i-- > 0) {
            if (mul(c, lst[i], &c))
                return -EINVAL;
        }
        if (ci_item(args, k == V_LAYER_BWD ? 7 : 5, &ci) != 0 ||
            parse_list(ci, mask, &nmask, VRANK) != 0)
            return -EINVAL;
        for (i = 0; i < nmask; i++)
            mask[i] = mask[i] != 0;
        has_mask = 1;
        if (k == V_LAYER_BWD) {
            if (nmask < 3)
                return -EINVAL;
            affine = (int)mask[1];
            has_bias = (int)mask[2];
        } else {
            if (cJSON_GetArrayItem(dims, 4) == NULL || nmask < 2)
                return -EINVAL;
            affine = !is_none(cJSON_GetArrayItem(dims, 4));
            has_bias = 0;
            training = 0;
        }
        break;
    case V_GROUP_BWD: {
        int64_t groups;
        if (cJSON_GetArrayItem(dims, 5) == NULL || shape.n < 2 || ci_item(args, 8, &ci) != 0)
            return -EINVAL;
        {
            char *end;
            errno = 0;
            groups = strtoll(ci, &end, 10);
            while (*end == ' ')
                end++;
            if (end == ci || *end != '\0' || errno != 0 || groups == 0)
                return -EINVAL;
        }
        affine = !is_none(cJSON_GetArrayItem(dims, 5));
        if (ci_item(args, 9, &ci) != 0 || parse_list(ci, mask, &nmask, VRANK) != 0)
            return -EINVAL;
        for (i = 0; i < nmask; i++)
            mask[i] = mask[i] != 0;
        has_mask = 1;
        c_float = 1;
        cf = (double)shape.d[1] / (double)groups;
        break;
    }
    default:
        return -EINVAL;
    }
    if (prod(&shape, &n) != 0)
        return -EINVAL;
    bi = pt_name2bpe(dt[0]);
    if (bi == 0)
        return -EINVAL; /* bytes() multiplies by None */
    if (has_mask && nmask < 1)
        return -EINVAL; /* output_mask[0] */
    if (k == V_RMS) {
        double nn, f;
        if (c == 0)
            return -EINVAL;
        nn = (double)n / (double)c;
        if (mul(c, 2, &x) || add(x, 2, &x))
            return -EINVAL;
        f = nn * (double)x;
        if (mul(n, affine ? 2 : 1, &y))
            return -EINVAL;
        f += (double)y;
        p->flops = f;
        if (mul(n, 2 * bi, &x) || (affine && (mul(c, bi, &y) || add(x, y, &x))))
            return -EINVAL;
        p->bytes = (double)x;
    } else if (k == V_RMS_BWD) {
        int64_t f = affine ? n : 0;
        double nn;
        if (c == 0 || n > INT64_MAX / 16)
            return -EINVAL;
        nn = (double)n / (double)c;
        f += n;
        if (mask[0])
            f += 6 * n;
        if (mask[1] && affine) {
            f += n;
            if (nn > 1)
                f += n;
        }
        p->flops = (double)f;
        if (mul(n, 3 * bi, &x) || (affine && (mul(c, 2 * bi, &y) || add(x, y, &x))))
            return -EINVAL;
        p->bytes = (double)x;
    } else if (k == V_BATCH_BWD || k == V_LAYER_BWD || k == V_GROUP_BWD) {
        if (norm_flops_bwd(training, n, c_float ? cf : (double)c, (int)mask[0], &p->flops) ||
            norm_bytes_bwd(has_bias, affine, training, n, c, cf, c_float, bi, bi, (int)mask[0],
                           &p->bytes))
            return -EINVAL;
    } else {
        if (norm_flops(training, n, c, &p->flops) ||
            norm_bytes(has_bias, affine, training, n, c, bi, bi, &p->bytes))
            return -EINVAL;
    }
    p->has_bytes = 1;
    p->category = k == V_BATCH_BWD || k == V_LAYER_BWD || k == V_GROUP_BWD || k == V_RMS_BWD
                      ? "NORM_bwd"
                      : "NORM_fwd";
    p->sheet = "Normalization";
    vector_spec(p, dt[0]);
    rc = set_shape(r, N_OP_SHAPE, &shape);
    rc = rc ? rc : set_dtypes(r, N_DTYPE, dt, 2);
    rc = rc ? rc : set_shape(r, N_STRIDE_IN, &st);
    rc = rc ? rc : setp(r, N_STRIDE_OUT, "None");
    if (c_float) {
        pt_float_repr(cf, buf, sizeof(buf));
        rc = rc ? rc : setp(r, N_CHANNELS, buf);
        if (r != NULL)
            r->kind[N_CHANNELS] = PK_FLOAT;
    } else {
        rc = rc ? rc : set_int(r, N_CHANNELS, c);
    }
    rc = rc ? rc : setp(r, N_HAS_BIAS, has_bias ? "True" : "False");
    rc = rc ? rc : setp(r, N_AFFINE, affine ? "True" : "False");
    rc = rc ? rc : setp(r, N_TRAINING, training ? "True" : "False");
    if (has_mask) {
        bools_repr(mask, nmask, buf, sizeof(buf));
        rc = rc ? rc : setp(r, N_MASK, buf);
    }
    return rc;
}

/* ---- Reduce --------------------------------------------------------------------- */

/* aten_reduce's dim from Concrete Inputs[1:]: the last bool is keepdim, the
 * last int or list of ints before it (skipping None and strings) is dim. */
static void reduce_dims(const cJSON *ci, int64_t *dim, int *ndim, int *has_dim, int *keepdim)
{
    int n = cJSON_GetArraySize(ci), i, kidx = -1;

    *has_dim = 0;
    *keepdim = 0;
    if (!cJSON_IsArray(ci) || n < 2)
        return;
    for (i = n - 1; i >= 1; i--) {
        const cJSON *x = cJSON_GetArrayItem(ci, i);
        if (cJSON_IsBool(x)) {
            *keepdim = cJSON_IsTrue(x);
            kidx = i;
            break;
        }
    }
    for (i = n - 1; i >= 1; i--) {
        const cJSON *x = cJSON_GetArrayItem(ci, i), *e;
        int ok = 1;
        if (i == kidx || cJSON_IsNull(x) || cJSON_IsString(x))
            continue;
        if (cJSON_IsArray(x)) {
            *ndim = 0;
            cJSON_ArrayForEach(e, x)
            {
                if (*ndim == VRANK || !(cJSON_IsNumber(e) || cJSON_IsBool(e))) {
                    ok = 0;
                    break;
                }
                dim[(*ndim)++] = cJSON_IsBool(e) ? cJSON_IsTrue(e) : (int64_t)e->valuedouble;
            }
            if (ok) {
                *has_dim = 1;
                return;
            }
        } else if (cJSON_IsNumber(x) && x->valuedouble == (double)(int64_t)x->valuedouble) {
            dim[0] = (int64_t)x->valuedouble;
            *ndim = 1;
            *has_dim = 1;
            return;
        }
    }
}

static int reduce(const char *name, const cJSON *args, struct pt_perf *p, struct grow *r)
{
    const cJSON *dims = member(args, "Input Dims"), *types = member(args, "Input type");
    const cJSON *otype = member(args, "Output type"), *d0 = cJSON_GetArrayItem(dims, 0);
    const char *dt[2] = {NULL, NULL}, *rtype = "sum";
    struct vshape shape;
    int64_t nin = 0, nout = 0, dim[VRANK], t;
    int ndim = 0, has_dim, keepdim, bi, bo, i, rc, empty = d0 == NULL || cJSON_IsNull(d0);

    if (!empty) {
        const cJSON *x;
        if (shape_of(d0, &shape) != 0 || prod(&shape, &nin) != 0)
            return -EINVAL;
        if (cJSON_IsArray(types) && cJSON_GetArraySize(types) > 0 && dtype_item(types, 0, &dt[0]))
            return -EINVAL;
        x = cJSON_GetArrayItem(otype, 0);
        if (cJSON_IsArray(otype) && x != NULL && !cJSON_IsNull(x)) {
            if (!cJSON_IsString(x))
                return -EINVAL;
            dt[1] = x->valuestring;
        }
        reduce_dims(member(args, "Concrete Inputs"), dim, &ndim, &has_dim, &keepdim);
        if (strstr(name, "cumsum") != NULL || strstr(name, "cumprod") != NULL) {
            nout = nin;
        } else if (has_dim && ndim > 0) {
            struct vshape out = shape;
            int64_t sorted[VRANK];
            for (i = 0; i < ndim; i++) {
                int j;
                int64_t d = dim[i] >= 0 ? dim[i] : shape.n + dim[i];
                for (j = i; j > 0 && sorted[j - 1] < d; j--)
                    sorted[j] = sorted[j - 1];
                sorted[j] = d;
            }
            for (i = 0; i < ndim; i++) {
                int64_t d = sorted[i];
                if (d < 0 || d >= out.n)
                    continue;
                if (keepdim) {
                    out.d[d] = 1;
                } else {
                    memmove(&out.d[d], &out.d[d + 1], (size_t)(out.n - d - 1) * sizeof(out.d[0]));
                    out.n--;
                }
            }
            if (out.n == 0)
                nout = 1;
            else if (prod(&out, &nout) != 0)
                return -EINVAL;
        } else {
            nout = 1;
        }
        if (strstr(name, "mean") != NULL)
            rtype = "mean";
        else if (strstr(name, "max") != NULL)
            rtype = "max";
        else if (strstr(name, "min") != NULL)
            rtype = "min";
        else if (strstr(name, "norm") != NULL)
            rtype = "norm";
    }
    bi = dt[0] != NULL && dt[0][0] != '\0' ? pt_name2bpe(dt[0]) : 0;
    bo = dt[1] != NULL ? (dt[1][0] != '\0' ? pt_name2bpe(dt[1]) : 0) : bi;
    p->flops = (double)nin;
    p->has_bytes = bi && bo;
    if (p->has_bytes) {
        int64_t u;
        if (mul(nin, bi, &t) || mul(nout, bo, &u) || add(t, u, &t))
            return -EINVAL;
        p->bytes = (double)t;
    }
    p->category = "reduce";
    p->sheet = "Reduce_fwd";
    vector_spec(p, dt[0]);
    rc = set_int(r, R_IN_ELEMS, nin);
    rc = rc ? rc : set_int(r, R_OUT_ELEMS, nout);
    rc = rc ? rc : set_dtypes(r, R_DTYPE, dt, 2);
    if (!empty)
        rc = rc ? rc : setp(r, R_TYPE, rtype);
    return rc;
}

int pt_vector_model(const char *name, const cJSON *args, struct pt_perf *p, struct grow *r)
{
    enum vkind k = kind_of(name);

    memset(p, 0, sizeof(*p));
    if (args == NULL)
        return -EINVAL;
    switch (k) {
    case V_UNARY:
    case V_PAD:
    case V_UPSAMPLE:
        return unary(k, args, p, r);
    case V_BINARY:
    case V_LIGER:
        return binary(k, args, p, r);
    case V_REDUCE:
        return reduce(name, args, p, r);
    case V_NONE:
        return -EINVAL;
    default:
        return norm(k, name, args, p, r);
    }
}
