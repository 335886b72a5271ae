/*
 * pt_perf_model.c - TraceLens's GEMM, CONV and SDPA perf models (see
 * pt_perf_model.h). Python's ints are int64 here; an op whose numbers
 * overflow int64 is treated as one the model cannot read.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pt_perf_model.h"
#include "pt_perf_sheet_int.h"

#define MAX_RANK 8

enum model {
    M_NONE = 0,
    M_MM,
    M_ADDMM,
    M_BMM,
    M_BADDBMM,
    M_SCALED_MM, /* aten::_scaled_mm and the ops TraceLens models as it */
    M_TEV2,      /* Transformer Engine v2 pseudo GEMMs (tev2_pseudo_gemm) */
    M_TE_GEMM,   /* tex_ts::te_gemm_ts */
    M_VLLM_DQ,   /* vllm::gemm_with_dynamic_quant */
    M_CONV,
    M_CONV_BWD,       /* aten::convolution_backward (aten_conv_bwd) */
    M_SDPA_FLASH,     /* aten::_scaled_dot_product_flash_attention */
    M_SDPA_EFFICIENT, /* aten::_scaled_dot_product_efficient_attention */
    M_SDPA_CUDNN,     /* aten::_scaled_dot_product_cudnn_attention */
    M_FLASH_ATTN,     /* FlashAttnFunc, flash_attn::_flash_attn_forward */
};

static const struct {
    const char *name;
    enum model model;
} models[] = {
    {"aten::mm", M_MM},
    {"aten::addmm", M_ADDMM},
    {"aten::bmm", M_BMM},
    {"aten::baddbmm", M_BADDBMM},
    {"aten::_scaled_mm", M_SCALED_MM},
    {"trtllm::cublas_scaled_mm", M_SCALED_MM},
    {"bitsandbytes::int8_linear_matmul", M_SCALED_MM},
    {"tex_ts::te_gemm_ts", M_TE_GEMM},
    {"vllm::gemm_with_dynamic_quant", M_VLLM_DQ},
    {"_Linear_yfwd_mm", M_TEV2},
    {"_LinearBackward_xgrad_mm", M_TEV2},
    {"_LinearBackward_wgrad_mm", M_TEV2},
    {"_LayerNormLinear_yfwd_mm", M_TEV2},
    {"_LayerNormLinearBackward_xgrad_mm", M_TEV2},
    {"_LayerNormLinearBackward_wgrad_mm", M_TEV2},
    {"aten::convolution", M_CONV},
    {"aten::convolution_backward", M_CONV_BWD},
    {"aten::_scaled_dot_product_flash_attention", M_SDPA_FLASH},
    {"aten::_scaled_dot_product_efficient_attention", M_SDPA_EFFICIENT},
    {"aten::_scaled_dot_product_cudnn_attention", M_SDPA_CUDNN},
    {"FlashAttnFunc", M_FLASH_ATTN},
    {"flash_attn::_flash_attn_forward", M_FLASH_ATTN},
};

static enum model model_of(const char *name)
{
    size_t i;

    for (i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
        if (strcmp(models[i].name, name) == 0)
            return models[i].model;
    }
    return M_NONE;
}

int pt_perf_model_known(const char *name)
{
    return model_of(name) != M_NONE || pt_vector_known(name) || pt_sdpa_known(name);
}

/* ---- reading args ------------------------------------------------------------ */

/* A shape: the integer list at index i of the array arr. */
struct shape {
    int64_t d[MAX_RANK];
    int n;
};

static int get_shape(const cJSON *arr, int i, struct shape *s)
{
    const cJSON *item = cJSON_GetArrayItem(arr, i), *x;

    if (!cJSON_IsArray(item))
        return -EINVAL;
    s->n = 0;
    cJSON_ArrayForEach(x, item)
    {
        if (!cJSON_IsNumber(x) || s->n == MAX_RANK ||
            x->valuedouble != (double)(int64_t)x->valuedouble)
            return -EINVAL;
        s->d[s->n++] = (int64_t)x->valuedouble;
    }
    return 0;
}

/* Item i of a list of strings, or NULL. */
static const char *get_str(const cJSON *arr, int i)
{
    const cJSON *item = cJSON_GetArrayItem(arr, i);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

/* "Input Strides" entries first..last must be lists when the key exists
 * (tuple(strides[i]) raises otherwise); required: the key must exist. */
static int check_strides(const cJSON *args, int first, int last, int required)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(args, "Input Strides");
    int i;

    if (st == NULL)
        return required ? -EINVAL : 0;
    for (i = first; i <= last; i++) {
        if (!cJSON_IsArray(cJSON_GetArrayItem(st, i)))
            return -EINVAL;
    }
    return 0;
}

/* name2bpe: bytes per element of a dtype name, 0 if unknown. */
static int name2bpe(const char *t)
{
    static const char *const b8[] = {"double", "long int", NULL};
    static const char *const b4[] = {"float", "scalar", "int", NULL};
    static const char *const b2[] = {"c10::half", "c10::bfloat16", NULL};
    static const char *const b1[] = {"c10::float8_e4m3fnuz",
                                     "c10::float8_e4m3fn",
                                     "c10::float8_e5m2",
                                     "c10::float8_e8m0fnu",
                                     "unsigned char",
                                     "signed char",
                                     "fp8",
                                     "c10::float4_e2m1fn_x2",
                                     "fp4",
                                     NULL};
    static const char *const *const lists[] = {b8, b4, b2, b1};
    static const int sizes[] = {8, 4, 2, 1};
    int i, j;

    if (t == NULL)
        return 0;
    for (i = 0; i < 4; i++) {
        for (j = 0; lists[i][j] != NULL; j++) {
            if (strcasecmp(lists[i][j], t) == 0)
                return sizes[i];
        }
    }
    return 0;
}

/* torch_dtype_map: the precision name of a dtype, or NULL. */
static const char *torch_dtype_map(const char *t)
{
    static const char *const map[][2] = {
        {"float", "fp32"},
        {"double", "fp64"},
        {"c10::half", "fp16"},
        {"c10::bfloat16", "bf16"},
        {"c10::float8_e4m3fnuz", "fp8"},
        {"unsigned char", "fp8"},
        {"fp8", "fp8"},
        {"fp4", "fp4"},
        {"mxfp4", "fp4"},
        {"c10::float4_e2m1fn_x2", "fp4"},
        {"c10::float8_e4m3fn", "fp8"},
    };
    size_t i;

    if (t == NULL || t[0] == '\0')
        return NULL;
    for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        if (strcasecmp(map[i][0], t) == 0)
            return map[i][1];
    }
    return NULL;
}

int pt_name2bpe(const char *t)
{
    return name2bpe(t);
}

const char *pt_torch_dtype_map(const char *t)
{
    return torch_dtype_map(t);
}

/* Python's int(s) for a decimal literal (surrounding blanks allowed). */
static int py_int(const char *s, int64_t *v)
{
    char *end;

    errno = 0;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0')
        return -EINVAL;
    *v = strtoll(s, &end, 10);
    if (errno != 0 || end == s)
        return -EINVAL;
    while (isspace((unsigned char)*end))
        end++;
    return *end == '\0' ? 0 : -EINVAL;
}

/* Python's float(s) (no hex: Python rejects it). */
static int py_float(const char *s, double *v)
{
    char *end;

    if (strpbrk(s, "xX") != NULL)
        return -EINVAL;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0')
        return -EINVAL;
    *v = strtod(s, &end);
    while (isspace((unsigned char)*end))
        end++;
    return *end == '\0' ? 0 : -EINVAL;
}

/* eval(s) of a bool or int literal as a truth value. */
static int py_truth(const char *s, int *v)
{
    int64_t i;

    if (strcmp(s, "True") == 0 || strcmp(s, "False") == 0) {
        *v = s[0] == 'T';
        return 0;
    }
    if (py_int(s, &i) != 0)
        return -EINVAL;
    *v = i != 0;
    return 0;
}

/* aten_conv.str_to_tuple: "[a, b]" -> (a, b); "" -> defaults (n copies of
 * dflt). Fills v[0..*n). */
static int conv_tuple(const char *s, int64_t dflt, int ndims, int64_t *v, int *n)
{
    char buf[256], *p, *comma;
    size_t len = strlen(s);

    if (len == 0) {
        for (*n = 0; *n < ndims && *n < MAX_RANK; (*n)++)
            v[*n] = dflt;
        return 0;
    }
    if (len < 2 || len - 2 >= sizeof(buf))
        return -EINVAL;
    memcpy(buf, s + 1, len - 2);
    buf[len - 2] = '\0';
    *n = 0;
    for (p = buf;; p = comma + 1) {
        comma = strchr(p, ',');
        if (comma != NULL)
            *comma = '\0';
        if (*n == MAX_RANK || py_int(p, &v[*n]) != 0)
            return -EINVAL;
        (*n)++;
        if (comma == NULL)
            break;
    }
    return 0;
}

/* ---- overflow-checked int64 arithmetic ---------------------------------------- */

static int mul(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_mul_overflow(a, b, r) ? -EINVAL : 0;
}

static int add(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_add_overflow(a, b, r) ? -EINVAL : 0;
}

static int prod(const int64_t *v, int n, int64_t *r)
{
    int i;

    *r = 1;
    for (i = 0; i < n; i++) {
        if (mul(*r, v[i], r) != 0)
            return -EINVAL;
    }
    return 0;
}

/* ---- GEMM -------------------------------------------------------------------- */

int pt_gemm_layout(const char *name, const cJSON *args, struct pt_gemm_layout *l)
{
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(args, "Input Dims");
    const cJSON *ci = cJSON_GetObjectItemCaseSensitive(args, "Concrete Inputs");
    const cJSON *x;
    enum model m = model_of(name);
    struct shape a, b;
    int i, n = 0;

    memset(l, 0, sizeof(*l));
    if (m == M_TE_GEMM) {
        /* A = dims[0], B = dims[5] (C = dims[10]), transa / transb at
         * ci[4] / ci[9], a bias unless ci[14] is ""; dtypes of A, B, C and
         * the bias at 0, 5, 10, 18 */
        const char *tra = get_str(ci, 4), *trb = get_str(ci, 9), *bs = get_str(ci, 14);
        if (cJSON_GetArraySize(dims) <= 10 || tra == NULL || trb == NULL || bs == NULL ||
            get_shape(dims, 0, &a) || get_shape(dims, 5, &b) || a.n < 2 || b.n < 2)
            return -EINVAL;
        l->ia = l->sa = 0, l->ib = l->sb = 5;
        l->M = strcmp(tra, "1") == 0 ? a.d[0] : a.d[1];
        l->K = strcmp(tra, "1") == 0 ? a.d[1] : a.d[0];
        l->N = strcmp(trb, "1") == 0 ? b.d[1] : b.d[0];
        l->bias = bs[0] != '\0';
        l->dt[0] = 0, l->dt[1] = 5, l->dt[2] = 10, l->dt[3] = 18, l->ndt = 4;
        return 0;
    }
    if (m == M_VLLM_DQ) {
        /* A, B: the first two 2-D shapes; out[M, N] = x[M, K] @ w[N, K].T */
        int at[2] = {-1, -1};
        for (i = 0; i < cJSON_GetArraySize(dims) && n < 2; i++) {
            x = cJSON_GetArrayItem(dims, i);
            if (cJSON_IsArray(x) && cJSON_GetArraySize(x) == 2)
                at[n++] = i;
        }
        if (n < 2 || get_shape(dims, at[0], &a) || get_shape(dims, at[1], &b))
            return -EINVAL;
        l->ia = at[0], l->ib = at[1], l->sa = 0, l->sb = 1;
        l->M = a.d[0], l->K = a.d[1], l->N = b.d[0];
        l->dt[0] = 0, l->dt[1] = 1, l->ndt = 2;
        return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(args, "Input type")) < 2
                   ? -EINVAL
                   : 0;
    }
    return -EINVAL;
}

/* tex_ts::te_gemm_ts and vllm::gemm_with_dynamic_quant: a GEMM whose A and B
 * sit elsewhere in the args (pt_gemm_layout), bytes by each dtype's size
 * (te_gemm_ts: A, B, output, bias) or the first one's (vLLM). */
static int gemm_other(enum model m, const char *name, const cJSON *args, struct pt_perf *p)
{
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(args, "Input type");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(args, "Input Strides");
    struct pt_gemm_layout l;
    int64_t t, flops, bytes, bpe[4];
    const char *dt[4];
    int i;

    if (pt_gemm_layout(name, args, &l) != 0)
        return -EINVAL;
    for (i = 0; i < l.ndt; i++) {
        if (cJSON_GetArrayItem(types, l.dt[i]) == NULL)
            return -EINVAL; /* IndexError */
        dt[i] = get_str(types, l.dt[i]);
    }
    if (st != NULL && (!cJSON_IsArray(cJSON_GetArrayItem(st, l.sa)) ||
                       !cJSON_IsArray(cJSON_GetArrayItem(st, l.sb))))
        return -EINVAL;
    if (mul(2, l.M, &t) || mul(t, l.N, &t) || mul(t, l.K, &flops))
        return -EINVAL;
    if (l.bias && (mul(l.M, l.N, &t) || add(flops, t, &flops)))
        return -EINVAL;
    p->flops = (double)flops;
    for (i = 0; i < 4; i++)
        bpe[i] = name2bpe(m == M_TE_GEMM ? dt[i] : dt[0]);
    p->has_bytes = bpe[0] && bpe[1] && bpe[2] && bpe[3];
    if (p->has_bytes) {
        /* M*K*bpe_a + K*N*bpe_b + M*N*bpe_out + (N if bias)*bpe_bias */
        if (mul(l.M, l.K, &bytes) || mul(bytes, bpe[0], &bytes) || mul(l.K, l.N, &t) ||
            mul(t, bpe[1], &t) || add(bytes, t, &bytes) || mul(l.M, l.N, &t) ||
            mul(t, bpe[2], &t) || add(bytes, t, &bytes) || mul(l.bias ? l.N : 0, bpe[3], &t) ||
            add(bytes, t, &bytes))
            return -EINVAL;
        p->bytes = (double)bytes;
    }
    p->category = p->sheet = "GEMM";
    p->maf = "matrix";
    p->precision = dt[0] != NULL && dt[0][0] != '\0' ? torch_dtype_map(dt[0]) : NULL;
    return 0;
}

static int gemm(enum model m, const cJSON *args, struct pt_perf *p)
{
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(args, "Input Dims");
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(args, "Input type");
    int batched = m == M_BMM || m == M_BADDBMM, first = (m == M_ADDMM || m == M_BADDBMM);
    int bias = first || (m == M_SCALED_MM && cJSON_GetArraySize(dims) == 3), bpe, out_bpe;
    struct shape a, b;
    int64_t B = 1, M, N, K, t, flops, bytes, x;
    const char *ta, *tb;

    if (dims == NULL || types == NULL || get_shape(dims, first, &a) != 0 ||
        get_shape(dims, first + 1, &b) != 0)
        return -EINVAL;
    if (batched) {
        if (a.n != 3 || b.n != 3) /* unpacking needs exactly three */
            return -EINVAL;
        B = a.d[0];
        M = a.d[1];
        K = a.d[2];
        N = b.d[2];
    } else {
        if (a.n < 2 || b.n < 2)
            return -EINVAL;
        M = a.d[0];
        K = a.d[1];
        N = b.d[1];
    }
    if (check_strides(args, first, first + 1, 0) != 0)
        return -EINVAL;
    ta = get_str(types, first);
    tb = get_str(types, first + 1);
    if (ta == NULL || tb == NULL) /* dtype_A_B[1] is read by bytes() */
        return -EINVAL;
    /* flops = B * (2MNK + (MN if bias)) */
    if (mul(2, M, &t) || mul(t, N, &t) || mul(t, K, &flops))
        return -EINVAL;
    if (bias && (mul(M, N, &t) || add(flops, t, &flops)))
        return -EINVAL;
    if (mul(flops, B, &flops))
        return -EINVAL;
    p->flops = (double)flops;
    bpe = name2bpe(ta);
    out_bpe = bpe;
    if (m == M_SCALED_MM) {
        /* asserts both sizes known; fp8 writes fp16, 2- and 4-byte types
         * write their own, anything else an unknown size */
        if (bpe == 0 || name2bpe(tb) == 0)
            return -EINVAL;
        out_bpe = bpe == 1 ? 2 : (bpe == 2 || bpe == 4) ? bpe : 0;
    } else if (m == M_TEV2) {
        if (strcmp(ta, tb) != 0) /* raises on mixed input dtypes */
            return -EINVAL;
        out_bpe = 2; /* always writes fp16 / bf16 */
    }
    p->has_bytes = bpe != 0 && out_bpe != 0;
    if (p->has_bytes && out_bpe == bpe) {
        if (mul(M, K, &bytes) || mul(K, N, &t) || add(bytes, t, &bytes) || mul(M, N, &t) ||
            add(bytes, t, &bytes) || add(bytes, bias ? N : 0, &bytes) || mul(bytes, bpe, &bytes) ||
            mul(bytes, B, &x))
            return -EINVAL;
        p->bytes = (double)x;
    } else if (p->has_bytes) {
        /* M*K*bpe + K*N*bpe + M*N*out_bpe + (N if bias)*bpe */
        if (mul(M, K, &bytes) || mul(K, N, &t) || add(bytes, t, &bytes) ||
            add(bytes, bias ? N : 0, &bytes) || mul(bytes, bpe, &bytes) || mul(M, N, &t) ||
            mul(t, out_bpe, &t) || add(bytes, t, &x))
            return -EINVAL;
        p->bytes = (double)x;
    }
    p->category = p->sheet = "GEMM";
    p->maf = "matrix";
    p->precision = torch_dtype_map(ta);
    return 0;
}

/* ---- CONV -------------------------------------------------------------------- */

/* The bias of aten_conv_bwd: Input Dims[3] (bias_sizes) a non-empty list. A
 * profiler records an int list as [], so this is mostly false. */
static int conv_bwd_bias(const cJSON *dims)
{
    const cJSON *b = cJSON_GetArrayItem(dims, 3);

    if (cJSON_GetArraySize(dims) <= 3 || b == NULL || cJSON_IsNull(b))
        return 0;
    return cJSON_IsArray(b) && cJSON_GetArraySize(b) > 0;
}

/* aten::convolution (CONV_fwd) and, with m M_CONV_BWD, aten::convolution_backward:
 * the same model on args shifted by one (grad_output comes first), with
 * flops_bwd() and bytes_bwd() (CONV_bwd). */
static int conv(enum model m, const cJSON *args, struct pt_perf *p)
{
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(args, "Input Dims");
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(args, "Input type");
    const cJSON *ci = cJSON_GetObjectItemCaseSensitive(args, "Concrete Inputs");
    struct shape x, w;
    int64_t param[4][MAX_RANK], groups, out[MAX_RANK + 2], px, pw, po, flops, t, u, bytes;
    int nparam[4], ndims, i, bias, transposed, bpe, nout, o = m == M_CONV_BWD;
    static const int64_t dflt[4] = {1, 0, 1, 0}; /* stride, padding, dilation, output_padding */
    static const int ci_index[4] = {3, 4, 5, 7};
    const char *t0, *t1, *s;

    if (dims == NULL || ci == NULL || types == NULL || get_shape(dims, o, &x) != 0 ||
        get_shape(dims, o + 1, &w) != 0)
        return -EINVAL;
    ndims = x.n - 2;
    bias = o ? conv_bwd_bias(dims) : cJSON_GetArraySize(dims) == 3;
    for (i = 0; i < 4; i++) {
        s = get_str(ci, ci_index[i] + o);
        if (s == NULL || conv_tuple(s, dflt[i], ndims, param[i], &nparam[i]) != 0)
            return -EINVAL;
    }
    s = get_str(ci, 6 + o);
    if (s == NULL || py_truth(s, &transposed) != 0)
        return -EINVAL;
    s = get_str(ci, 8 + o);
    if (s == NULL || py_int(s, &groups) != 0)
        return -EINVAL;
    /* Length-1 tuples are repeated to the spatial rank. */
    for (i = 0; i < 4; i++) {
        if (nparam[i] == 1) {
            int j;
            if (ndims > MAX_RANK)
                return -EINVAL;
            for (j = 1; j < ndims; j++)
                param[i][j] = param[i][0];
            nparam[i] = ndims > 0 ? ndims : 0;
        }
    }
    t0 = get_str(types, o);
    t1 = get_str(types, o + 1);
    if (t0 == NULL || t1 == NULL || strcmp(t0, t1) != 0)
        return -EINVAL;
    if (check_strides(args, o, o + 1, 0) != 0 || x.n < 3 || x.n > 5)
        return -EINVAL;
    /* Output shape. */
    if (w.n < 2 || w.n - 2 < ndims)
        return -EINVAL;
    for (i = 0; i < 3; i++) {
        if (nparam[i] < ndims)
            return -EINVAL;
    }
    if (transposed && nparam[3] < ndims)
        return -EINVAL;
    out[0] = x.d[0];
    out[1] = transposed ? w.d[1] : w.d[0];
    for (i = 0; i < ndims; i++) {
        int64_t in = x.d[2 + i], k = w.d[2 + i], st = param[0][i], pad = param[1][i],
                dil = param[2][i];
        if (!transposed) {
            double num = (double)(in + 2 * pad - dil * (k - 1) - 1);
            if (st == 0)
                return -EINVAL;
            out[2 + i] = (int64_t)(num / (double)st + 1.0);
        } else {
            out[2 + i] = (in - 1) * st - 2 * pad + dil * (k - 1) + param[3][i] + 1;
        }
    }
    nout = 2 + ndims;
    (void)groups;
    if (prod(x.d, x.n, &px) || prod(w.d, w.n, &pw) || prod(out, nout, &po))
        return -EINVAL;
    if (!o) {
        /* flops = 2 * prod(w[1:]) * prod(out or x) + (prod(out) if bias) */
        if (prod(w.d + 1, w.n - 1, &t) || mul(t, 2, &t) || mul(t, transposed ? px : po, &flops) ||
            add(flops, bias ? po : 0, &flops))
            return -EINVAL;
    } else {
        /* flops_bwd: input grad 2 * prod(w[1:]) * prod(out or x), weight grad
         * 2 * prod(w) * (N * prod(spatial of x or out)), bias grad prod(out) */
        int64_t sp = 1;
        const int64_t *g = transposed ? x.d : out;
        if (prod(w.d + 1, w.n - 1, &t) || mul(t, 2, &t) || mul(t, transposed ? px : po, &flops))
            return -EINVAL;
        if (prod(g + 2, nout - 2, &sp) || mul(sp, g[0], &sp) || mul(sp, 2, &u) || mul(pw, u, &u) ||
            add(flops, u, &flops) || add(flops, bias ? po : 0, &flops))
            return -EINVAL;
    }
    p->flops = (double)flops;
    bpe = name2bpe(t0);
    p->has_bytes = bpe != 0;
    if (bpe != 0 && !o) {
        if (add(px, pw, &bytes) || add(bytes, bias ? out[1] : 0, &bytes) ||
            add(bytes, po, &bytes) || mul(bytes, bpe, &bytes))
            return -EINVAL;
        p->bytes = (double)bytes;
    } else if (bpe != 0) {
        /* bytes_bwd: (out + w + x) * bpe twice (input and weight grads), and
         * prod(out) + C_out elements (not bytes) for the bias grad */
        if (add(po, pw, &bytes) || add(bytes, px, &bytes) || mul(bytes, bpe, &bytes) ||
            mul(bytes, 2, &bytes) || add(po, out[1], &t) || add(bytes, bias ? t : 0, &bytes))
            return -EINVAL;
        p->bytes = (double)bytes;
    }
    p->category = o ? "CONV_bwd" : "CONV_fwd";
    p->sheet = "CONV_fwd";
    p->maf = "matrix";
    p->precision = torch_dtype_map(t0);
    return 0;
}

/* ---- SDPA -------------------------------------------------------------------- */

static int sdpa(enum model m, const cJSON *args, struct pt_perf *p)
{
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(args, "Input Dims");
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(args, "Input type");
    const cJSON *ci = cJSON_GetObjectItemCaseSensitive(args, "Concrete Inputs");
    struct shape q, k, v;
    /* index of B, H, N, d in a shape */
    int hi = m == M_FLASH_ATTN ? 2 : 1, ni = m == M_FLASH_ATTN ? 1 : 2, causal = 0;
    int64_t B, NQ, HQ, NKV, HKV, DQK, DV, t, u, flops, bytes;
    const char *s;
    double dropout;

    if (dims == NULL || get_shape(dims, 0, &q) || get_shape(dims, 1, &k) ||
        get_shape(dims, 2, &v) || q.n < 4 || k.n < 4 || v.n < 4)
        return -EINVAL;
    if (q.d[0] != k.d[0] || q.d[0] != v.d[0] || k.d[hi] != v.d[hi] || k.d[ni] != v.d[ni] ||
        q.d[3] != k.d[3])
        return -EINVAL;
    B = q.d[0];
    HQ = q.d[hi];
    NQ = q.d[ni];
    DQK = q.d[3];
    HKV = k.d[hi];
    NKV = k.d[ni];
    DV = v.d[3];
    if (ci == NULL)
        return -EINVAL;
    if (m == M_FLASH_ATTN) {
        if (types == NULL || check_strides(args, 0, 2, 1) != 0)
            return -EINVAL;
        s = get_str(ci, 3);
        if (s == NULL || py_float(s, &dropout) != 0)
            return -EINVAL;
        s = get_str(ci, 5);
        if (s == NULL || py_truth(s, &causal) != 0)
            return -EINVAL;
    } else {
        int ci_causal = m == M_SDPA_FLASH ? 4 : 6;
        if (get_str(ci, ci_causal - 1) == NULL)
            return -EINVAL;
        s = get_str(ci, ci_causal);
        if (s == NULL)
            return -EINVAL;
        causal = strcmp(s, "") != 0 && strcmp(s, "None") != 0 && strcasecmp(s, "true") == 0;
        if (types == NULL)
            return -EINVAL;
    }
    /* flops = B*HQ*(2*NQ*NKV*DQK) + B*HQ*(2*NQ*DV*NKV), halved when causal */
    if (mul(B, HQ, &t) || mul(2, NQ, &u) || mul(u, NKV, &u) || mul(u, DQK, &flops) ||
        mul(flops, t, &flops) || mul(2, NQ, &u) || mul(u, DV, &u) || mul(u, NKV, &u) ||
        mul(u, t, &u) || add(flops, u, &flops))
        return -EINVAL;
    p->flops = (double)flops;
    if (causal) {
        if (NQ != NKV)
            return -EINVAL;
        p->flops = (double)flops / 2;
    }
    /* bytes = 2 * (B*NQ*HQ*DQK + B*NKV*HKV*DQK + B*NKV*HKV*DV + B*NQ*HQ*DV) */
    if (mul(B, NQ, &t) || mul(t, HQ, &t) || mul(B, NKV, &u) || mul(u, HKV, &u) ||
        add(DQK, DV, &bytes) || mul(t, bytes, &t) || mul(u, bytes, &u) || add(t, u, &bytes) ||
        mul(bytes, 2, &bytes))
        return -EINVAL;
    p->has_bytes = 1;
    p->bytes = (double)bytes;
    p->category = p->sheet = "SDPA_fwd";
    p->maf = "matrix";
    if (cJSON_GetArraySize(types) < 1)
        return -EINVAL; /* dtype_A_B[0] */
    p->precision = torch_dtype_map(get_str(types, 0));
    return 0;
}

int pt_perf_model(const char *name, const cJSON *args, struct pt_perf *p)
{
    enum model m = model_of(name);

    memset(p, 0, sizeof(*p));
    if (args == NULL)
        return -EINVAL;
    switch (m) {
    case M_MM:
    case M_ADDMM:
    case M_BMM:
    case M_BADDBMM:
    case M_SCALED_MM:
    case M_TEV2:
        return gemm(m, args, p);
    case M_TE_GEMM:
    case M_VLLM_DQ:
        return gemm_other(m, name, args, p);
    case M_CONV:
    case M_CONV_BWD:
        return conv(m, args, p);
    case M_SDPA_FLASH:
    case M_SDPA_EFFICIENT:
    case M_SDPA_CUDNN:
    case M_FLASH_ATTN:
        return sdpa(m, args, p);
    case M_NONE:
        break;
    }
    if (pt_vector_known(name))
        return pt_vector_model(name, args, p, NULL);
    if (pt_sdpa_known(name))
        return pt_sdpa_model(name, args, p, NULL);
    return -EINVAL;
}
