/*
 * pt_perf_params.c - the params of TraceLens's GEMM, SDPA and CONV perf
 * models (PerfModel/perf_model.py get_param_details) for the roofline sheets
 * of perf_report/ (pt_perf_sheet.c): each param as str() prints the Python
 * value (ints, True / False, tuples, floats by repr, None), and
 * gemm_name_parser's transpose from a kernel name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pt_perf_sheet_int.h"
#include "pt_pyrepr.h"

/* A param value: index p of row r gets the text s. */
int pt_sheet_set_param(struct grow *r, int p, const char *s)
{
    r->params[p] = strdup(s);
    if (r->params[p] == NULL)
        return -ENOMEM;
    r->order[r->nparams++] = (uint8_t)p;
    return 0;
}

int pt_sheet_float_columns(struct grow *rows, size_t n)
{
    int p;
    size_t i;

    for (p = 0; p < MAX_PARAMS; p++) {
        int numeric = 1, any = 0, floaty = 0;
        for (i = 0; i < n && numeric; i++) {
            if (rows[i].params[p] == NULL) {
                floaty = 1; /* NaN */
                continue;
            }
            any = 1;
            numeric = rows[i].kind[p] != 0;
            floaty |= rows[i].kind[p] == PK_FLOAT;
        }
        if (!any || !numeric || !floaty)
            continue;
        for (i = 0; i < n; i++) {
            char num[40];
            if (rows[i].params[p] == NULL || rows[i].kind[p] != PK_INT)
                continue;
            pt_float_repr(strtod(rows[i].params[p], NULL), num, sizeof(num));
            free(rows[i].params[p]);
            rows[i].params[p] = strdup(num);
            if (rows[i].params[p] == NULL)
                return -ENOMEM;
            rows[i].kind[p] = PK_FLOAT;
        }
    }
    return 0;
}

static int item_int(const cJSON *a, int i, long long *v)
{
    const cJSON *x = cJSON_GetArrayItem(a, i);

    if (!cJSON_IsNumber(x))
        return -EINVAL;
    *v = (long long)x->valuedouble;
    return 0;
}

/* repr(tuple(list)) of a JSON list of ints or strings into buf. */
int pt_sheet_tuple_repr(const cJSON *a, int from, int to, struct pt_buf *b)
{
    int n = cJSON_GetArraySize(a), i, k = 0;

    if (!cJSON_IsArray(a))
        return -EINVAL;
    if (to > n)
        to = n;
    pt_buf_putc(b, '(');
    for (i = from; i < to; i++, k++) {
        const cJSON *x = cJSON_GetArrayItem(a, i);
        char num[32];
        if (k > 0)
            pt_buf_puts(b, ", ");
        if (cJSON_IsString(x)) {
            pt_str_repr(b, x->valuestring, strlen(x->valuestring));
        } else if (cJSON_IsNumber(x)) {
            snprintf(num, sizeof(num), "%lld", (long long)x->valuedouble);
            pt_buf_puts(b, num);
        } else {
            return -EINVAL;
        }
    }
    if (k == 1)
        pt_buf_putc(b, ',');
    pt_buf_putc(b, ')');
    pt_buf_putc(b, '\0');
    return b->oom ? -ENOMEM : 0;
}

/* TraceLens's gemm_name_parser transpose of one kernel name: 1 and *out
 * when the name is a ROCm Tensile or NVIDIA nvjet GEMM, -1 when parsing
 * would raise (the op is then dropped), 0 otherwise. */
int pt_sheet_transpose(const char *name, char *out, size_t n)
{
    const char *p, *a = NULL, *b = NULL;

    if (strchr(name, '\n') == NULL) {
        for (p = name; *p != '\0'; p++) {
            int ok = p[0] == 'C' && p[1] >= 'a' && p[1] <= 'z' && p[2] >= 'a' && p[2] <= 'z' &&
                     p[3] >= 'a' && p[3] <= 'z' && p[4] == '_' && p[5] == 'A';
            ok = ok && p[6] >= 'a' && p[6] <= 'z' && p[7] >= 'a' && p[7] <= 'z' && p[8] >= 'a' &&
                 p[8] <= 'z' && p[9] == '_' && p[10] == 'B' && p[11] >= 'a' && p[11] <= 'z' &&
                 p[12] >= 'a' && p[12] <= 'z' && p[13] >= 'a' && p[13] <= 'z';
            if (ok)
                break;
        }
        if (*p != '\0') {
            a = strstr(name, "_Ailk_") ? "False" : strstr(name, "_Alik_") ? "True" : "None";
            b = strstr(name, "_Bljk_") ? "False" : strstr(name, "_Bjlk_") ? "True" : "None";
            snprintf(out, n, "(%s, %s)", a, b);
            return 1;
        }
    }
    if (strncmp(name, "nvjet", 5) == 0) {
        const char *last = strrchr(name, '_');
        last = last != NULL ? last + 1 : name;
        if (strlen(last) < 2)
            return -1;
        snprintf(out, n, "(%s, %s)", last[0] == 'T' ? "True" : "False",
                 last[1] == 'T' ? "True" : "False");
        return 1;
    }
    return 0;
}

static int other_gemm_params(const cJSON *args, const struct pt_gemm_layout *l, struct grow *r);

/* The GEMM params of op name on args into r (get_param_details). Returns
 * 0, -EINVAL when TraceLens's model would raise, -ENOMEM. */
int pt_sheet_gemm_params(const char *name, const cJSON *args, struct grow *r)
{
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(args, "Input Dims");
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(args, "Input type");
    const cJSON *strides = cJSON_GetObjectItemCaseSensitive(args, "Input Strides");
    int batched = strcmp(name, "aten::bmm") == 0 || strcmp(name, "aten::baddbmm") == 0;
    int ia = strcmp(name, "aten::addmm") == 0 || strcmp(name, "aten::baddbmm") == 0;
    int scaled = strcmp(name, "aten::_scaled_mm") == 0 ||
                 strcmp(name, "trtllm::cublas_scaled_mm") == 0 ||
                 strcmp(name, "bitsandbytes::int8_linear_matmul") == 0;
    int bias = ia || (scaled && cJSON_GetArraySize(dims) == 3);
    const cJSON *A = cJSON_GetArrayItem(dims, ia), *B = cJSON_GetArrayItem(dims, ia + 1);
    long long Bd = 1, M, N, K;
    char num[32], sa[256] = "None", sb[256] = "None";
    struct pt_buf b;
    int rc;

    struct pt_gemm_layout l;

    if (pt_gemm_layout(name, args, &l) == 0)
        return other_gemm_params(args, &l, r);
    memset(&b, 0, sizeof(b));
    if (!cJSON_IsArray(A) || !cJSON_IsArray(B))
        return -EINVAL;
    if (batched) {
        if (cJSON_GetArraySize(A) != 3 || cJSON_GetArraySize(B) != 3 || item_int(A, 0, &Bd) ||
            item_int(A, 1, &M) || item_int(A, 2, &K) || item_int(B, 2, &N))
            return -EINVAL;
    } else if (item_int(A, 0, &M) || item_int(B, 1, &N) || item_int(A, 1, &K)) {
        return -EINVAL;
    }
    if (pt_sheet_tuple_repr(types, ia, ia + 2, &b) != 0)
        goto bad;
    if (strides != NULL) {
        const cJSON *x = cJSON_GetArrayItem(strides, ia), *y = cJSON_GetArrayItem(strides, ia + 1);
        struct pt_buf c;
        memset(&c, 0, sizeof(c));
        if (x == NULL || y == NULL || pt_sheet_tuple_repr(x, 0, cJSON_GetArraySize(x), &c) != 0) {
            pt_buf_free(&c);
            goto bad;
        }
        snprintf(sa, sizeof(sa), "%s", c.p);
        c.n = 0;
        if (pt_sheet_tuple_repr(y, 0, cJSON_GetArraySize(y), &c) != 0) {
            pt_buf_free(&c);
            goto bad;
        }
        snprintf(sb, sizeof(sb), "%s", c.p);
        pt_buf_free(&c);
    }
    rc = 0;
    if (batched) {
        snprintf(num, sizeof(num), "%lld", Bd);
        rc = pt_sheet_set_param(r, 7, num);
    }
    snprintf(num, sizeof(num), "%lld", M);
    rc = rc ? rc : pt_sheet_set_param(r, 0, num);
    snprintf(num, sizeof(num), "%lld", N);
    rc = rc ? rc : pt_sheet_set_param(r, 1, num);
    snprintf(num, sizeof(num), "%lld", K);
    rc = rc ? rc : pt_sheet_set_param(r, 2, num);
    rc = rc ? rc : pt_sheet_set_param(r, 3, bias ? "True" : "False");
    rc = rc ? rc : pt_sheet_set_param(r, 4, sa);
    rc = rc ? rc : pt_sheet_set_param(r, 5, sb);
    rc = rc ? rc : pt_sheet_set_param(r, 6, b.p);
    if (!batched)
        rc = rc ? rc : pt_sheet_set_param(r, 7, "1");
    pt_buf_free(&b);
    return rc;
bad:
    pt_buf_free(&b);
    return -EINVAL;
}

/* The GEMM params of tex_ts::te_gemm_ts and vllm::gemm_with_dynamic_quant
 * (operands where pt_gemm_layout says). 0, -EINVAL, -ENOMEM. */
static int other_gemm_params(const cJSON *args, const struct pt_gemm_layout *l, struct grow *r)
{
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(args, "Input type");
    const cJSON *strides = cJSON_GetObjectItemCaseSensitive(args, "Input Strides");
    char num[32], st[2][256] = {"None", "None"};
    struct pt_buf b;
    int k, rc = 0;

    memset(&b, 0, sizeof(b));
    for (k = 0; strides != NULL && k < 2; k++) {
        const cJSON *x = cJSON_GetArrayItem(strides, k == 0 ? l->sa : l->sb);
        b.n = 0;
        if (x == NULL || pt_sheet_tuple_repr(x, 0, cJSON_GetArraySize(x), &b) != 0)
            goto bad;
        snprintf(st[k], sizeof(st[k]), "%s", b.p);
    }
    b.n = 0;
    pt_buf_putc(&b, '(');
    for (k = 0; k < l->ndt; k++) {
        const cJSON *x = cJSON_GetArrayItem(types, l->dt[k]);
        if (!cJSON_IsString(x))
            goto bad;
        if (k > 0)
            pt_buf_puts(&b, ", ");
        pt_str_repr(&b, x->valuestring, strlen(x->valuestring));
    }
    pt_buf_puts(&b, ")");
    pt_buf_putc(&b, '\0');
    if (b.oom)
        rc = -ENOMEM;
    snprintf(num, sizeof(num), "%lld", (long long)l->M);
    rc = rc ? rc : pt_sheet_set_param(r, 0, num);
    snprintf(num, sizeof(num), "%lld", (long long)l->N);
    rc = rc ? rc : pt_sheet_set_param(r, 1, num);
    snprintf(num, sizeof(num), "%lld", (long long)l->K);
    rc = rc ? rc : pt_sheet_set_param(r, 2, num);
    rc = rc ? rc : pt_sheet_set_param(r, 3, l->bias ? "True" : "False");
    rc = rc ? rc : pt_sheet_set_param(r, 4, st[0]);
    rc = rc ? rc : pt_sheet_set_param(r, 5, st[1]);
    rc = rc ? rc : pt_sheet_set_param(r, 6, b.p);
    rc = rc ? rc : pt_sheet_set_param(r, 7, "1");
    pt_buf_free(&b);
    return rc;
bad:
    pt_buf_free(&b);
    return -EINVAL;
}

/* Python's float(s) of a Concrete Inputs string, optional_float's default
 * 0.0 for "" / "None" / what float() refuses (*bad set then, for float()). */
static double py_float_or(const char *s, int *bad)
{
    char *end;
    double v;

    *bad = 0;
    if (s == NULL || s[0] == '\0' || strcmp(s, "None") == 0) {
        *bad = 1;
        return 0.0;
    }
    v = strtod(s, &end);
    while (*end == ' ')
        end++;
    if (end == s || *end != '\0') {
        *bad = 1;
        return 0.0;
    }
    return v;
}

/* The SDPA params of op name on args into r (get_param_details of
 * TraceLens's SDPA classes). Returns 0, -EINVAL, -ENOMEM. */
int pt_sheet_sdpa_params(const char *name, const cJSON *args, struct grow *r)
{
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(args, "Input Dims");
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(args, "Input type");
    const cJSON *strides = cJSON_GetObjectItemCaseSensitive(args, "Input Strides");
    const cJSON *ci = cJSON_GetObjectItemCaseSensitive(args, "Concrete Inputs");
    int flash =
        strcmp(name, "FlashAttnFunc") == 0 || strcmp(name, "flash_attn::_flash_attn_forward") == 0;
    int hi = flash ? 2 : 1, ni = flash ? 1 : 2, rc = 0, k, bad, causal;
    const cJSON *q = cJSON_GetArrayItem(dims, 0), *kk = cJSON_GetArrayItem(dims, 1),
                *v = cJSON_GetArrayItem(dims, 2);
    long long val[7];
    char num[48], st[3][256];
    struct pt_buf b;
    double dropout;
    const char *cs;

    memset(&b, 0, sizeof(b));
    if (item_int(q, 0, &val[0]) || item_int(q, ni, &val[1]) || item_int(q, hi, &val[2]) ||
        item_int(kk, ni, &val[3]) || item_int(kk, hi, &val[4]) || item_int(q, 3, &val[5]) ||
        item_int(v, 3, &val[6]))
        return -EINVAL;
    if (pt_sheet_tuple_repr(types, 0, 2, &b) != 0) {
        pt_buf_free(&b);
        return -EINVAL;
    }
    if (flash) {
        for (k = 0; k < 3; k++) {
            struct pt_buf c;
            const cJSON *x = cJSON_GetArrayItem(strides, k);
            memset(&c, 0, sizeof(c));
            if (x == NULL || pt_sheet_tuple_repr(x, 0, cJSON_GetArraySize(x), &c) != 0) {
                pt_buf_free(&c);
                pt_buf_free(&b);
                return -EINVAL;
            }
            snprintf(st[k], sizeof(st[k]), "%s", c.p);
            pt_buf_free(&c);
        }
        cs = cJSON_GetStringValue(cJSON_GetArrayItem(ci, 3));
        dropout = py_float_or(cs, &bad);
        if (bad)
            goto inval; /* float() raises */
        cs = cJSON_GetStringValue(cJSON_GetArrayItem(ci, 5));
        if (cs == NULL || (strcmp(cs, "True") != 0 && strcmp(cs, "False") != 0))
            goto inval; /* eval() of anything else: not followed */
        causal = strcmp(cs, "True") == 0;
    } else {
        int ic = strcmp(name, "aten::_scaled_dot_product_flash_attention") == 0 ? 3 : 5;
        cs = cJSON_GetStringValue(cJSON_GetArrayItem(ci, ic));
        if (cJSON_GetArrayItem(ci, ic) == NULL)
            goto inval;
        dropout = cs != NULL ? py_float_or(cs, &bad) : 0.0;
        cs = cJSON_GetStringValue(cJSON_GetArrayItem(ci, ic + 1));
        if (cs == NULL)
            goto inval;
        causal = strcmp(cs, "") != 0 && strcmp(cs, "None") != 0 && strcasecmp(cs, "true") == 0;
    }
    for (k = 0; k < 7 && rc == 0; k++) {
        snprintf(num, sizeof(num), "%lld", val[k]);
        rc = pt_sheet_set_param(r, k, num);
    }
    for (k = 0; flash && k < 3 && rc == 0; k++)
        rc = pt_sheet_set_param(r, 7 + k, st[k]);
    pt_float_repr(dropout, num, sizeof(num));
    rc = rc ? rc : pt_sheet_set_param(r, 10, num);
    rc = rc ? rc : pt_sheet_set_param(r, 11, causal ? "True" : "False");
    rc =
        rc ? rc
           : pt_sheet_set_param(
                 r, 12,
                 flash || strcmp(name, "aten::_scaled_dot_product_flash_attention") == 0 ? "True"
                                                                                         : "False");
    rc = rc ? rc : pt_sheet_set_param(r, 13, b.p);
    pt_buf_free(&b);
    return rc;
inval:
    pt_buf_free(&b);
    return -EINVAL;
}

/* aten_conv.str_to_tuple of a Concrete Inputs string ("[2, 2]"), or the
 * default dflt x ndims for ""; a 1-tuple broadcast to ndims. Writes the
 * repr of the tuple into out. Returns 0 or -EINVAL (int() raises). */
static int conv_pt_sheet_tuple_repr(const char *s, long long dflt, int ndims, char *out, size_t n)
{
    long long v[16];
    int k = 0, i;
    size_t len, used = 0;
    char buf[256], *p;

    if (s == NULL)
        return -EINVAL;
    len = strlen(s);
    if (len == 0) {
        for (k = 0; k < ndims && k < 16; k++)
            v[k] = dflt;
    } else {
        if (len < 2 || len - 2 >= sizeof(buf))
            return -EINVAL;
        memcpy(buf, s + 1, len - 2);
        buf[len - 2] = '\0';
        for (p = buf;;) {
            char *end;
            if (k == 16)
                return -EINVAL;
            v[k] = strtoll(p, &end, 10);
            if (end == p)
                return -EINVAL;
            while (*end == ' ')
                end++;
            k++;
            if (*end == '\0')
                break;
            if (*end != ',')
                return -EINVAL;
            p = end + 1;
        }
        if (k == 1)
            for (i = 1; i < ndims && i < 16; i++)
                v[k++] = v[0];
    }
    used += (size_t)snprintf(out + used, n - used, "(");
    for (i = 0; i < k && used < n; i++)
        used += (size_t)snprintf(out + used, n - used, "%s%lld", i ? ", " : "", v[i]);
    if (used < n)
        snprintf(out + used, n - used, k == 1 ? ",)" : ")");
    return 0;
}

/* The CONV params of aten::convolution (bwd 0) or aten::convolution_backward
 * (bwd 1: every arg one later, grad_output first) on args into r (aten_conv's
 * and aten_conv_bwd's get_param_details). Returns 0, -EINVAL, -ENOMEM. */
int pt_sheet_conv_params(const cJSON *args, int bwd, struct grow *r)
{
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(args, "Input Dims");
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(args, "Input type");
    const cJSON *strides = cJSON_GetObjectItemCaseSensitive(args, "Input Strides");
    const cJSON *ci = cJSON_GetObjectItemCaseSensitive(args, "Concrete Inputs");
    const cJSON *x = cJSON_GetArrayItem(dims, bwd), *w = cJSON_GetArrayItem(dims, bwd + 1);
    static const int ci_index[4] = {3, 4, 5, 7};
    const char *bias;
    static const long long dflt[4] = {1, 0, 1, 0};
    char tup[4][256], shape[2][256], st[2][256] = {"None", "None"}, num[32], *end;
    const char *tr, *gs;
    struct pt_buf b;
    int ndims, k, rc = 0;
    long long groups;

    if (!cJSON_IsArray(x) || !cJSON_IsArray(w) || !cJSON_IsArray(ci))
        return -EINVAL;
    ndims = cJSON_GetArraySize(x) - 2;
    if (ndims < 1 || ndims > 3)
        return -EINVAL; /* convNd unknown */
    for (k = 0; k < 2; k++) {
        memset(&b, 0, sizeof(b));
        if (pt_sheet_tuple_repr(k == 0 ? x : w, 0, cJSON_GetArraySize(k == 0 ? x : w), &b) != 0) {
            pt_buf_free(&b);
            return -EINVAL;
        }
        snprintf(shape[k], sizeof(shape[k]), "%s", b.p);
        pt_buf_free(&b);
    }
    for (k = 0; k < 4; k++) {
        if (conv_pt_sheet_tuple_repr(
                cJSON_GetStringValue(cJSON_GetArrayItem(ci, ci_index[k] + bwd)), dflt[k], ndims,
                tup[k], sizeof(tup[k])) != 0)
            return -EINVAL;
    }
    tr = cJSON_GetStringValue(cJSON_GetArrayItem(ci, 6 + bwd));
    if (tr == NULL || (strcmp(tr, "True") != 0 && strcmp(tr, "False") != 0))
        return -EINVAL;
    gs = cJSON_GetStringValue(cJSON_GetArrayItem(ci, 8 + bwd));
    if (gs == NULL)
        return -EINVAL;
    groups = strtoll(gs, &end, 10);
    if (end == gs || *end != '\0')
        return -EINVAL;
    if (strides != NULL) {
        for (k = 0; k < 2; k++) {
            const cJSON *y = cJSON_GetArrayItem(strides, k + bwd);
            memset(&b, 0, sizeof(b));
            if (y == NULL || pt_sheet_tuple_repr(y, 0, cJSON_GetArraySize(y), &b) != 0) {
                pt_buf_free(&b);
                return -EINVAL;
            }
            snprintf(st[k], sizeof(st[k]), "%s", b.p);
            pt_buf_free(&b);
        }
    }
    memset(&b, 0, sizeof(b));
    if (pt_sheet_tuple_repr(types, bwd, bwd + 2, &b) != 0) {
        pt_buf_free(&b);
        return -EINVAL;
    }
    if (!bwd) {
        bias = cJSON_GetArraySize(dims) == 3 ? "True" : "False";
    } else {
        /* len(dims) > 3 and dims[3] and len(dims[3]) > 0: the falsy value
         * itself when dims[3] is [] or None */
        const cJSON *bs = cJSON_GetArrayItem(dims, 3);
        if (cJSON_GetArraySize(dims) <= 3)
            bias = "False";
        else if (bs == NULL || cJSON_IsNull(bs))
            bias = "None";
        else if (!cJSON_IsArray(bs))
            return -EINVAL;
        else
            bias = cJSON_GetArraySize(bs) > 0 ? "True" : "[]";
    }
    snprintf(num, sizeof(num), "conv%dd", ndims);
    rc = pt_sheet_set_param(r, 0, num);
    rc = rc ? rc : pt_sheet_set_param(r, 1, shape[0]);
    rc = rc ? rc : pt_sheet_set_param(r, 2, shape[1]);
    rc = rc ? rc : pt_sheet_set_param(r, 3, b.p);
    rc = rc ? rc : pt_sheet_set_param(r, 4, st[0]);
    rc = rc ? rc : pt_sheet_set_param(r, 5, st[1]);
    rc = rc ? rc : pt_sheet_set_param(r, 6, bias);
    rc = rc ? rc : pt_sheet_set_param(r, 7, tup[0]);
    rc = rc ? rc : pt_sheet_set_param(r, 8, tup[1]);
    rc = rc ? rc : pt_sheet_set_param(r, 9, tup[2]);
    rc = rc ? rc : pt_sheet_set_param(r, 10, tr);
    rc = rc ? rc : pt_sheet_set_param(r, 11, tup[3]);
    snprintf(num, sizeof(num), "%lld", groups);
    rc = rc ? rc : pt_sheet_set_param(r, 12, num);
    pt_buf_free(&b);
    return rc;
}
