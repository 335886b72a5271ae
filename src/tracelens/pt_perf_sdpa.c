/*
 * pt_perf_sdpa.c - the attention perf models of TraceLens (PerfModel/
 * perf_model.py, mapped by torch_op_mapping.py) beyond the aten
 * scaled-dot-product ops and flash_attn's forward (pt_perf_model.c):
 * flash_attention_backward, flash_attention_varlen_forward / _backward,
 * flash_attn_v3_forward and the aiter classes (_flash_attn_forward /
 * _backward, fmha_v3 wrappers, mha_fwd, fmha_v3_fwd, mha_bwd).
 *
 * All are TraceLens's SDPA class read from different arg positions: the
 * q, k, v shapes (B, N, H, d in bnhd order, or T, H, d for varlen, where
 * B = 1), dropout and causal from Concrete Inputs, each class its own way
 * (float() that raises, optional_float, eval(), s.lower() == "true"), and
 * for some the q/k/v strides and dtype_A_B. The backward classes give
 * flops_bwd() and bytes_bwd(); varlen estimates from the sequence count and
 * max lengths in float arithmetic. Numbers follow Python's: ints stay exact
 * (int64 here; an op that overflows is left out), a float operand makes
 * the rest float, `/` is true division and `//` floor division. Where the
 * Python code raises, the op is left out, as build_df_perf_metrics drops it.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pt_perf_sheet_int.h"
#include "pt_pyrepr.h"

/* How a class reads dropout. */
enum drop {
    D_FLOAT, /* float(ci[i]), raising */
    D_OPT,   /* optional_float(ci[i]): 0.0 for "", "None" or a bad number */
    D_FA,    /* float(ci[i]) if len(ci) > i and ci[i] else 0.0 */
    D_ZERO,  /* 0.0 */
};

/* How a class reads causal. */
enum causal {
    C_EVAL,  /* eval(ci[i]) */
    C_LOWER, /* ci[i].lower() == "true", False for "" and "None" */
    C_FA,    /* eval(ci[i]) if len(ci) > i and ci[i] else True */
};

struct sdpa_spec {
    const char *name;
    int qi;           /* q in Input Dims; k and v follow */
    int varlen;       /* 0: (B, N, H, d); 1: (T, H, d) with cu_seqlens at
                       * Input Dims[cu], [cu + 1] and max seqlens at ci[mx], [mx + 1] */
    int cu, mx;       /* varlen positions */
    int strides;      /* q/k/v strides and dtype_A_B among the params */
    int bwd;          /* flops_bwd() / bytes_bwd() */
    enum drop drop;   /* dropout ... */
    int di;           /* ... from ci[di] */
    enum causal caus; /* causal ... */
    int ci_;          /* ... from ci[ci_] */
    int bpe_dtype;    /* bytes with name2bpe(dtype_A_B[0]) (raises if
                       * unknown); else with 2 bytes an element */
};

static const struct sdpa_spec specs[] = {
    {"flash_attn::_flash_attn_backward", 1, 0, 0, 0, 1, 1, D_FA, 8, C_FA, 10, 1},
    {"flash_attn::_flash_attn_varlen_forward", 0, 1, 3, 5, 1, 0, D_FLOAT, 7, C_EVAL, 9, 0},
    {"flash_attn::_flash_attn_varlen_backward", 1, 1, 9, 11, 1, 1, D_FLOAT, 13, C_EVAL, 15, 0},
    {"aiter::_flash_attn_forward", 0, 0, 0, 0, 0, 0, D_OPT, 3, C_LOWER, 5, 0},
    {"aiter::_flash_attn_backward", 0, 0, 0, 0, 0, 1, D_OPT, 10, C_LOWER, 12, 0},
    {"aiter::wrapper_fmha_v3_fwd", 1, 0, 0, 0, 0, 0, D_OPT, 4, C_LOWER, 6, 0},
    {"aiter::wrapper_fmha_v3_bwd", 1, 0, 0, 0, 0, 1, D_OPT, 7, C_LOWER, 9, 0},
    {"aiter::mha_fwd", 0, 0, 0, 0, 0, 0, D_OPT, 3, C_LOWER, 5, 0},
    {"aiter::fmha_v3_fwd", 0, 0, 0, 0, 0, 0, D_OPT, 3, C_LOWER, 5, 0},
    {"aiter::mha_bwd", 1, 0, 0, 0, 0, 1, D_OPT, 6, C_LOWER, 8, 0},
    {"flash_attn_3::fwd", 0, 0, 0, 0, 0, 0, D_ZERO, 0, C_LOWER, 24, 0},
};

/* The SDPA sheet's param indexes (pt_perf_sheet.c's sdpa_names). */
enum {
    P_B,
    P_NQ,
    P_HQ,
    P_NKV,
    P_HKV,
    P_DQK,
    P_DV,
    P_QST,
    P_KST,
    P_VST,
    P_DROPOUT,
    P_CAUSAL,
    P_FLASH,
    P_DTYPE,
    P_NSQ,
    P_NSKV,
    P_MAXQ,
    P_MAXKV
};

static const struct sdpa_spec *spec_of(const char *name)
{
    size_t i;

    for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        if (strcmp(specs[i].name, name) == 0)
            return &specs[i];
    }
    return NULL;
}

int pt_sdpa_known(const char *name)
{
    return spec_of(name) != NULL;
}

/* ---- Python numbers ------------------------------------------------------------ */

/* An int or a float, as Python keeps them. */
struct pn {
    int isf;   /* a float */
    int64_t i; /* the int */
    double d;  /* the float */
};

static struct pn pn_int(int64_t v)
{
    struct pn r = {0, v, 0};
    return r;
}

static struct pn pn_flt(double v)
{
    struct pn r = {1, 0, v};
    return r;
}

static double pn_dbl(struct pn a)
{
    return a.isf ? a.d : (double)a.i;
}

/* a * b, a + b, a - b into *r. 0 or -EINVAL (an int overflow). */
static int pn_mul(struct pn a, struct pn b, struct pn *r)
{
    if (a.isf || b.isf) {
        *r = pn_flt(pn_dbl(a) * pn_dbl(b));
        return 0;
    }
    r->isf = 0;
    return __builtin_mul_overflow(a.i, b.i, &r->i) ? -EINVAL : 0;
}

static int pn_add(struct pn a, struct pn b, struct pn *r)
{
    if (a.isf || b.isf) {
        *r = pn_flt(pn_dbl(a) + pn_dbl(b));
        return 0;
    }
    r->isf = 0;
    return __builtin_add_overflow(a.i, b.i, &r->i) ? -EINVAL : 0;
}

static int pn_sub(struct pn a, struct pn b, struct pn *r)
{
    if (a.isf || b.isf) {
        *r = pn_flt(pn_dbl(a) - pn_dbl(b));
        return 0;
    }
    r->isf = 0;
    return __builtin_sub_overflow(a.i, b.i, &r->i) ? -EINVAL : 0;
}

/* a // b as CPython computes it (float_floor_div for floats). -EINVAL on
 * division by zero (ZeroDivisionError). */
static int pn_floordiv(struct pn a, struct pn b, struct pn *r)
{
    double vx, wx, mod, div, fl;

    if (!a.isf && !b.isf) {
        int64_t q;
        if (b.i == 0 || (a.i == INT64_MIN && b.i == -1))
            return -EINVAL;
        q = a.i / b.i;
        if ((a.i % b.i != 0) && ((a.i < 0) != (b.i < 0)))
            q--;
        *r = pn_int(q);
        return 0;
    }
    vx = pn_dbl(a);
    wx = pn_dbl(b);
    if (wx == 0)
        return -EINVAL;
    mod = fmod(vx, wx);
    div = (vx - mod) / wx;
    if (mod != 0 && ((wx < 0) != (mod < 0)))
        div -= 1.0;
    if (div != 0) {
        fl = floor(div);
        if (div - fl > 0.5)
            fl += 1.0;
    } else {
        fl = copysign(0.0, vx / wx);
    }
    *r = pn_flt(fl);
    return 0;
}

/* a == b, comparing an int with a float exactly enough here. */
static int pn_eq(struct pn a, struct pn b)
{
    if (!a.isf && !b.isf)
        return a.i == b.i;
    return pn_dbl(a) == pn_dbl(b);
}

/* ---- reading args ---------------------------------------------------------------- */

/* A Python value of causal: a bool, None, an int or a float. */
struct pyval {
    int kind; /* 'b', 'n', 'i', 'f' */
    int64_t i;
    double d;
};

static int pyval_truth(const struct pyval *v)
{
    switch (v->kind) {
    case 'b':
    case 'i':
        return v->i != 0;
    case 'f':
        return v->d != 0;
    default:
        return 0;
    }
}

/* str() of v into buf; its PK_ kind into *kind. */
static void pyval_str(const struct pyval *v, char *buf, size_t n, uint8_t *kind)
{
    *kind = 0;
    switch (v->kind) {
    case 'b':
        snprintf(buf, n, "%s", v->i ? "True" : "False");
        break;
    case 'i':
        snprintf(buf, n, "%lld", (long long)v->i);
        *kind = PK_INT;
        break;
    case 'f':
        pt_float_repr(v->d, buf, n);
        *kind = PK_FLOAT;
        break;
    default:
        snprintf(buf, n, "None");
    }
}

/* Python's float(s): decimal (no hex), surrounding blanks allowed. */
static int py_float(const char *s, double *v)
{
    char *end;

    if (s == NULL || strpbrk(s, "xX_") != NULL)
        return -EINVAL;
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    if (*s == '\0')
        return -EINVAL;
    *v = strtod(s, &end);
    if (end == s)
        return -EINVAL;
    while (*end == ' ' || *end == '\t' || *end == '\n')
        end++;
    return *end == '\0' ? 0 : -EINVAL;
}

/* eval(s) of the literals a Concrete Inputs entry can hold: True, False,
 * None, an int, a float. -EINVAL for anything else (not followed). */
static int py_eval(const char *s, struct pyval *v)
{
    char *end;
    long long i;

    if (strcmp(s, "True") == 0 || strcmp(s, "False") == 0) {
        v->kind = 'b';
        v->i = s[0] == 'T';
        return 0;
    }
    if (strcmp(s, "None") == 0) {
        v->kind = 'n';
        return 0;
    }
    if (s[0] != '\0' && strpbrk(s, ".eEinIN") == NULL) {
        errno = 0;
        i = strtoll(s, &end, 10);
        if (errno == 0 && end != s && *end == '\0' && (s[0] != '0' || s[1] == '\0')) {
            v->kind = 'i';
            v->i = i;
            return 0;
        }
        return -EINVAL;
    }
    if (strstr(s, "inf") != NULL || strstr(s, "nan") != NULL || py_float(s, &v->d) != 0)
        return -EINVAL; /* names, not literals, to eval */
    v->kind = 'f';
    return 0;
}

/* Concrete Inputs entry i as a string, or NULL (absent or not a string). */
static const char *ci_str(const cJSON *ci, int i)
{
    return cJSON_GetStringValue(cJSON_GetArrayItem(ci, i));
}

/* Shape item i of Input Dims: its first n ints into d (IndexError if
 * shorter). */
static int shape_at(const cJSON *dims, int i, int n, int64_t *d)
{
    const cJSON *s = cJSON_GetArrayItem(dims, i);
    int k;

    if (!cJSON_IsArray(s) || cJSON_GetArraySize(s) < n)
        return -EINVAL;
    for (k = 0; k < n; k++) {
        const cJSON *x = cJSON_GetArrayItem(s, k);
        if (!cJSON_IsNumber(x) || x->valuedouble != (double)(int64_t)x->valuedouble)
            return -EINVAL;
        d[k] = (int64_t)x->valuedouble;
    }
    return 0;
}

/* ---- the model ------------------------------------------------------------------- */

/* SDPA.flops_func, or flops_bwd_func (flash_impl True) when bwd. */
static int flops_of(int bwd, struct pn B, struct pn NQ, struct pn HQ, struct pn NKV, struct pn HKV,
                    struct pn dqk, struct pn dv, int causal, struct pn *r)
{
    struct pn two = pn_int(2), one = pn_int(1), bh, t, u, total, g;

    if (pn_mul(B, HQ, &bh))
        return -EINVAL;
    if (!bwd) {
        /* B*H_Q*(2*N_Q*N_KV*d_qk) + B*H_Q*(2*N_Q*d_v*N_KV) */
        if (pn_mul(two, NQ, &t) || pn_mul(t, NKV, &t) || pn_mul(t, dqk, &t) ||
            pn_mul(bh, t, &total) || pn_mul(two, NQ, &t) || pn_mul(t, dv, &t) ||
            pn_mul(t, NKV, &t) || pn_mul(bh, t, &t) || pn_add(total, t, &total))
            return -EINVAL;
    } else {
        /* recompute qk, V grad (+ the GQA reduce), P grad, Q grad, K grad (+ reduce) */
        if (pn_floordiv(HQ, HKV, &g) || pn_sub(g, one, &g))
            return -EINVAL;
        if (pn_mul(two, NQ, &t) || pn_mul(t, NKV, &t) || pn_mul(t, dqk, &t) || pn_mul(bh, t, &t) ||
            pn_add(pn_int(0), t, &total))
            return -EINVAL;
        if (pn_mul(two, NKV, &t) || pn_mul(t, NQ, &t) || pn_mul(t, dv, &t) || pn_mul(bh, t, &t) ||
            pn_mul(B, NKV, &u) || pn_mul(u, dv, &u) || pn_mul(u, g, &u) || pn_add(t, u, &t) ||
            pn_add(total, t, &total))
            return -EINVAL;
        if (pn_mul(two, NQ, &t) || pn_mul(t, NKV, &t) || pn_mul(t, dv, &t) || pn_mul(bh, t, &t) ||
            pn_add(total, t, &total))
            return -EINVAL;
        if (pn_mul(two, NQ, &t) || pn_mul(t, NKV, &t) || pn_mul(t, dqk, &t) || pn_mul(bh, t, &t) ||
            pn_add(total, t, &total))
            return -EINVAL;
        if (pn_mul(two, NKV, &t) || pn_mul(t, NQ, &t) || pn_mul(t, dqk, &t) || pn_mul(bh, t, &t) ||
            pn_mul(B, NKV, &u) || pn_mul(u, dqk, &u) || pn_mul(u, g, &u) || pn_add(t, u, &t) ||
            pn_add(total, t, &total))
            return -EINVAL;
    }
    if (causal) {
        if (!pn_eq(NQ, NKV))
            return -EINVAL; /* causal=True but N_Q != N_K */
        total = pn_flt(pn_dbl(total) / 2);
    }
    *r = total;
    return 0;
}

/* bytes_func / bytes_bwd_func of the shapes in elements, times bpe. */
static int bytes_of(int bwd, const int64_t *c, int64_t bpe, int64_t *r)
{
    int64_t q, k, v, o, t;

    /* q, k, v read, out written; bwd: q, k, v and dO read, dQ, dK, dV written */
    if (__builtin_mul_overflow(c[0], c[1], &q) || __builtin_mul_overflow(q, c[2], &q) ||
        __builtin_mul_overflow(c[0], c[3], &k) || __builtin_mul_overflow(k, c[4], &k) ||
        __builtin_mul_overflow(k, c[6], &v) || __builtin_mul_overflow(k, c[5], &k) ||
        __builtin_mul_overflow(q, c[6], &o) || __builtin_mul_overflow(q, c[5], &q))
        return -EINVAL;
    if (__builtin_add_overflow(q, k, &t) || __builtin_add_overflow(t, v, &t) ||
        __builtin_add_overflow(t, o, &t))
        return -EINVAL;
    if (bwd && (__builtin_add_overflow(t, q, &t) || __builtin_add_overflow(t, k, &t) ||
                __builtin_add_overflow(t, v, &t)))
        return -EINVAL;
    return __builtin_mul_overflow(t, bpe, r) ? -EINVAL : 0;
}

/* repr(tuple(x)) of a JSON list into a fresh string, or NULL. */
static char *tuple_str(const cJSON *x, int from, int to, int *bad)
{
    struct pt_buf b;
    char *s;

    memset(&b, 0, sizeof(b));
    *bad = pt_sheet_tuple_repr(x, from, to, &b) == -EINVAL;
    s = b.oom || *bad ? NULL : strdup(b.p);
    pt_buf_free(&b);
    return s;
}

int pt_sdpa_model(const char *name, const cJSON *args, struct pt_perf *p, struct grow *r)
{
    const struct sdpa_spec *sp = spec_of(name);
    const cJSON *dims, *types, *ci, *strides;
    int64_t q[4], k[4], v[4], c[7], bpe = 2; /* c: B, N_Q, H_Q, N_KV, H_KV, d_qk, d_v */
    int64_t nsq = 0, nskv = 0;
    double dropout = 0, maxq = 0, maxkv = 0;
    char *st[4] = {NULL, NULL, NULL, NULL}; /* q, k, v strides, dtype_A_B */
    struct pyval causal;
    struct pn fl, t;
    const char *s;
    int i, bad, rc = -EINVAL, n = sp != NULL && sp->varlen ? 3 : 4;
    int64_t bytes;

    memset(p, 0, sizeof(*p));
    if (sp == NULL || args == NULL)
        return -EINVAL;
    dims = cJSON_GetObjectItemCaseSensitive(args, "Input Dims");
    types = cJSON_GetObjectItemCaseSensitive(args, "Input type");
    ci = cJSON_GetObjectItemCaseSensitive(args, "Concrete Inputs");
    strides = cJSON_GetObjectItemCaseSensitive(args, "Input Strides");
    if (shape_at(dims, sp->qi, n, q) || shape_at(dims, sp->qi + 1, n, k) ||
        shape_at(dims, sp->qi + 2, n, v))
        return -EINVAL;
    if (!sp->varlen) {
        /* extract_sdpa_cfg, bnhd: B, N, H, d = s[0], s[1], s[2], s[3] */
        if (q[0] != k[0] || q[0] != v[0] || k[2] != v[2] || k[1] != v[1] || q[3] != k[3])
            return -EINVAL;
        c[0] = q[0], c[1] = q[1], c[2] = q[2], c[3] = k[1], c[4] = k[2], c[5] = q[3];
        c[6] = v[3];
    } else {
        /* extract_sdpa_varlen_cfg: T, H, d = s[0], s[1], s[2]; B = 1 */
        if (k[1] != v[1] || k[0] != v[0] || q[2] != k[2])
            return -EINVAL;
        c[0] = 1, c[1] = q[0], c[2] = q[1], c[3] = k[0], c[4] = k[1], c[5] = q[2], c[6] = v[2];
    }
    if (sp->drop != D_FA && sp->drop != D_ZERO && ci == NULL)
        return -EINVAL; /* event["args"]["Concrete Inputs"] */
    if (sp->strides) {
        /* dtype_A_B = tuple(Input type[:2]); strides = Input Strides, each tuple()'d */
        if (types == NULL || strides == NULL || cJSON_GetArraySize(types) < 1)
            return -EINVAL;
        st[3] = tuple_str(types, 0, 2, &bad);
        for (i = 0; i < 3 && !bad && st[3] != NULL; i++) {
            const cJSON *x = cJSON_GetArrayItem(strides, sp->qi + i);
            if (!cJSON_IsArray(x)) {
                bad = 1;
                break;
            }
            st[i] = tuple_str(x, 0, cJSON_GetArraySize(x), &bad);
            if (st[i] == NULL)
                break;
        }
        if (bad)
            goto out;
        if (st[0] == NULL || st[1] == NULL || st[2] == NULL || st[3] == NULL) {
            rc = -ENOMEM;
            goto out;
        }
    }
    if (sp->varlen) {
        int64_t a[1], b[1];
        if (shape_at(dims, sp->cu, 1, a) || shape_at(dims, sp->cu + 1, 1, b) ||
            py_float(ci_str(ci, sp->mx), &maxq) || py_float(ci_str(ci, sp->mx + 1), &maxkv))
            goto out;
        nsq = a[0] - 1;
        nskv = b[0] - 1;
    }
    switch (sp->drop) {
    case D_FLOAT:
        if (py_float(ci_str(ci, sp->di), &dropout))
            goto out;
        break;
    case D_OPT:
        if (cJSON_GetArrayItem(ci, sp->di) == NULL)
            goto out;
        s = ci_str(ci, sp->di);
        if (s == NULL || strcmp(s, "None") == 0 || py_float(s, &dropout) != 0)
            dropout = 0.0;
        break;
    case D_FA:
        s = ci_str(ci, sp->di);
        if (s != NULL && s[0] != '\0' && py_float(s, &dropout) != 0)
            goto out;
        break;
    case D_ZERO:
        break;
    }
    s = ci_str(ci, sp->ci_);
    switch (sp->caus) {
    case C_EVAL:
        if (s == NULL || py_eval(s, &causal) != 0)
            goto out;
        break;
    case C_LOWER:
        if (s == NULL)
            goto out;
        causal.kind = 'b';
        causal.i = strcmp(s, "") != 0 && strcmp(s, "None") != 0 && strcasecmp(s, "true") == 0;
        break;
    case C_FA:
        causal.kind = 'b';
        causal.i = 1;
        if (s != NULL && s[0] != '\0' && py_eval(s, &causal) != 0)
            goto out;
        break;
    }
    /* flops */
    if (!sp->varlen) {
        if (flops_of(sp->bwd, pn_int(c[0]), pn_int(c[1]), pn_int(c[2]), pn_int(c[3]), pn_int(c[4]),
                     pn_int(c[5]), pn_int(c[6]), pyval_truth(&causal), &fl))
            goto out;
    } else {
        /* the longest sequences at max_seqlen, the other num_seqs - 1 of equal
         * length: (N - max_seqlen) // (num_seqs - 1) */
        if (flops_of(sp->bwd, pn_int(1), pn_flt(maxq), pn_int(c[2]), pn_flt(maxkv), pn_int(c[4]),
                     pn_int(c[5]), pn_int(c[6]), pyval_truth(&causal), &fl))
            goto out;
        if (nsq > 1) {
            struct pn nq, nkv;
            if (pn_sub(pn_int(c[1]), pn_flt(maxq), &nq) || pn_floordiv(nq, pn_int(nsq - 1), &nq) ||
                pn_sub(pn_int(c[3]), pn_flt(maxkv), &nkv) ||
                pn_floordiv(nkv, pn_int(nskv - 1), &nkv) ||
                flops_of(sp->bwd, pn_int(1), nq, pn_int(c[2]), nkv, pn_int(c[4]), pn_int(c[5]),
                         pn_int(c[6]), pyval_truth(&causal), &t) ||
                pn_mul(pn_int(nsq - 1), t, &t) || pn_add(fl, t, &fl))
                goto out;
        }
    }
    /* bytes */
    if (sp->bpe_dtype) {
        bpe = pt_name2bpe(cJSON_GetStringValue(cJSON_GetArrayItem(types, 0)));
        if (bpe == 0)
            goto out; /* None * elements raises */
    }
    if (bytes_of(sp->bwd, c, bpe, &bytes))
        goto out;
    p->flops = pn_dbl(fl);
    p->has_bytes = 1;
    p->bytes = (double)bytes;
    p->category = sp->bwd ? "SDPA_bwd" : "SDPA_fwd";
    p->sheet = "SDPA_fwd";
    p->maf = "matrix";
    p->precision = NULL;
    if (sp->strides) {
        s = cJSON_GetStringValue(cJSON_GetArrayItem(types, 0));
        p->precision = s != NULL && s[0] != '\0' ? pt_torch_dtype_map(s) : NULL;
    }
    rc = 0;
    if (r != NULL) {
        char num[48];
        uint8_t kind;
        for (i = 0; i < 7 && rc == 0; i++) {
            snprintf(num, sizeof(num), "%lld", (long long)c[i]);
            rc = pt_sheet_set_param(r, P_B + i, num);
            r->kind[P_B + i] = PK_INT;
        }
        for (i = 0; sp->strides && i < 3 && rc == 0; i++)
            rc = pt_sheet_set_param(r, P_QST + i, st[i]);
        pt_float_repr(dropout, num, sizeof(num));
        rc = rc ? rc : pt_sheet_set_param(r, P_DROPOUT, num);
        r->kind[P_DROPOUT] = PK_FLOAT;
        pyval_str(&causal, num, sizeof(num), &kind);
        rc = rc ? rc : pt_sheet_set_param(r, P_CAUSAL, num);
        r->kind[P_CAUSAL] = kind;
        rc = rc ? rc : pt_sheet_set_param(r, P_FLASH, "True");
        if (sp->strides)
            rc = rc ? rc : pt_sheet_set_param(r, P_DTYPE, st[3]);
        if (sp->varlen && rc == 0) {
            snprintf(num, sizeof(num), "%lld", (long long)nsq);
            rc = pt_sheet_set_param(r, P_NSQ, num);
            r->kind[P_NSQ] = PK_INT;
            snprintf(num, sizeof(num), "%lld", (long long)nskv);
            rc = rc ? rc : pt_sheet_set_param(r, P_NSKV, num);
            r->kind[P_NSKV] = PK_INT;
            pt_float_repr(maxq, num, sizeof(num));
            rc = rc ? rc : pt_sheet_set_param(r, P_MAXQ, num);
            r->kind[P_MAXQ] = PK_FLOAT;
            pt_float_repr(maxkv, num, sizeof(num));
            rc = rc ? rc : pt_sheet_set_param(r, P_MAXKV, num);
            r->kind[P_MAXKV] = PK_FLOAT;
        }
    }
out:
    for (i = 0; i < 4; i++)
        free(st[i]);
    return rc;
}
