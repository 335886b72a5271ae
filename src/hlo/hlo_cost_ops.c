/*
 * hlo_cost_ops.c - opcode tables and the handlers of single instructions:
 * dot, ragged dot and convolution flops, the elementwise profile, slices,
 * gathers, scatters, collectives and custom calls (cuBLAS GEMMs, cuDNN
 * convolutions, unknown ones), after HloCostAnalysis and GpuHloCostAnalysis.
 */
#include "hlo_cost_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const hc_elementwise_ops[] = {
    "abs",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atanh",
    "round-nearest-afz",
    "round-nearest-even",
    "ceil",
    "count-leading-zeros",
    "convert",
    "copy",
    "cosine",
    "cosh",
    "erf",
    "exponential",
    "exponential-minus-one",
    "floor",
    "imag",
    "is-finite",
    "log",
    "log-plus-one",
    "not",
    "negate",
    "popcnt",
    "real",
    "reduce-precision",
    "rsqrt",
    "logistic",
    "sign",
    "sine",
    "sinh",
    "sqrt",
    "cbrt",
    "tan",
    "tanh",
    "add",
    "atan2",
    "compare",
    "complex",
    "divide",
    "maximum",
    "minimum",
    "multiply",
    "mulhi",
    "power",
    "remainder",
    "subtract",
    "and",
    "or",
    "xor",
    "shift-left",
    "shift-right-arithmetic",
    "shift-right-logical",
    "stochastic-convert",
    "select",
    "clamp",
    "constant",
    "rng",
    NULL,
};

/* Clock cycles per element of the sm_86 op profile (the default device
 * profile of GpuHloCostAnalysis), by opcode and element type. */
struct profile_entry {
    const char *opcode;
    int32_t type;
    int32_t cycles;
};

static const struct profile_entry profile[] = {
    {"divide", 2, 370},
    {"divide", 3, 367},
    {"divide", 4, 306},
    {"divide", 5, 918},
    {"divide", 6, 306},
    {"divide", 7, 302},
    {"divide", 8, 115},
    {"divide", 9, 838},
    {"divide", 12, 2016},
    {"divide", 15, 687},
    {"divide", 18, 7941},
    {"power", 2, 392},
    {"power", 3, 396},
    {"power", 5, 601},
    {"power", 6, 388},
    {"power", 7, 399},
    {"power", 9, 604},
    {"power", 10, 975},
    {"power", 11, 925},
    {"power", 12, 5511},
    {"power", 15, 3351},
    {"power", 18, 18205},
    {"cbrt", 10, 925},
    {"cbrt", 11, 867},
    {"cbrt", 12, 6339},
    {"cosine", 10, 691},
    {"cosine", 11, 662},
    {"cosine", 12, 1717},
    {"cosine", 18, 6613},
    {"exponential", 10, 108},
    {"exponential", 11, 86},
    {"exponential", 12, 1652},
    {"exponential", 15, 1360},
    {"exponential", 18, 4028},
    {"exponential-minus-one", 10, 396},
    {"exponential-minus-one", 11, 381},
    {"exponential-minus-one", 12, 1900},
    {"exponential-minus-one", 15, 1400},
    {"exponential-minus-one", 18, 4161},
    {"log", 10, 266},
    {"log", 11, 244},
    {"log", 12, 608},
    {"log", 15, 950},
    {"log", 18, 7599},
    {"log-plus-one", 10, 284},
    {"log-plus-one", 11, 262},
    {"log-plus-one", 12, 2073},
    {"log-plus-one", 15, 842},
    {"log-plus-one", 18, 6962},
    {"logistic", 10, 226},
    {"logistic", 11, 176},
    {"logistic", 12, 2412},
    {"rsqrt", 10, 97},
    {"rsqrt", 11, 75},
    {"rsqrt", 12, 698},
    {"rsqrt", 15, 2383},
    {"rsqrt", 18, 11318},
    {"sqrt", 10, 97},
    {"sqrt", 11, 75},
    {"sqrt", 12, 986},
    {"sqrt", 15, 3193},
    {"sqrt", 18, 15606},
    {"tanh", 10, 212},
    {"tanh", 11, 190},
    {"tanh", 12, 1609},
    {"tanh", 18, 9939},
    {"sine", 11, 662},
    {"sine", 12, 1789},
    {"sine", 18, 5878},
    {"add", 12, 97},
    {"add", 18, 97},
    {"multiply", 12, 97},
    {"multiply", 18, 270},
    {"subtract", 12, 97},
    {"subtract", 18, 97},
};

int64_t hc_flops_per_element(const char *opcode, int32_t type)
{
    size_t i;

    for (i = 0; i < sizeof(profile) / sizeof(profile[0]); i++) {
        if (profile[i].type == type && strcmp(profile[i].opcode, opcode) == 0)
            return profile[i].cycles;
    }
    return 3;
}

static const char *const gemm_targets[] = {
    "__cublas$gemm",         "__cublas$lt$matmul",        "__cublas$lt$matmul$f8",
    "__cublas$lt$matmul$mx", "__cublas$lt$groupedMatmul", NULL,
};

static const char *const lt_gemm_targets[] = {
    "__cublas$lt$matmul",
    "__cublas$lt$matmul$f8",
    "__cublas$lt$matmul$mx",
    "__cublas$lt$groupedMatmul",
    NULL,
};

static const char *const dnn_conv_targets[] = {
    "__cudnn$convForward",        "__cudnn$convForwardGraph",          "__cudnn$convBackwardInput",
    "__cudnn$convBackwardFilter", "__cudnn$convBiasActivationForward", NULL,
};

void hc_zero_outputs(struct analysis *an, const struct hlo_node *nd, int operands)
{
    uint32_t i;

    an->cur.bytes = 0;
    hc_kv_set(an, &an->cur, KV_OUTPUT_BYTES, 0, 0, 0);
    if (operands) {
        for (i = 0; i < nd->noperands; i++)
            hc_kv_set(an, &an->cur, KV_OPERAND_BYTES, (int32_t)i, 0, 0);
    }
}

void hc_handle_bitcast(struct analysis *an)
{
    an->cur.bytes = 0;
    hc_kv_set(an, &an->cur, KV_OUTPUT_BYTES, 0, 0, 0);
    hc_kv_set(an, &an->cur, KV_OPERAND_BYTES, 0, 0, 0);
}

/* ShapeUtil::TransposeIsBitcast for a transpose with layouts. */
int hc_transpose_is_bitcast(const struct analysis *an, const struct hlo_node *nd)
{
    const struct hlo_shape *in, *out = &nd->shape;
    uint32_t i;

    if (nd->noperands < 1)
        return 0;
    in = hc_operand_shape(an, nd, 0);
    if (!in->has_layout || !out->has_layout || in->type != out->type)
        return 0;
    if (out->nminor != in->nminor)
        return 0;
    for (i = 0; i < out->nminor; i++) {
        int64_t pos = out->minor_to_major[i];
        if (pos < 0 || (uint64_t)pos >= nd->ndims || nd->dims[pos] != in->minor_to_major[i])
            return 0;
    }
    return 1;
}

int64_t hc_dot_flops(const struct hlo_shape *lhs, const struct hlo_shape *out,
                     const int64_t *contracting, uint32_t ncontracting)
{
    int64_t width = 1;
    uint32_t i;

    for (i = 0; i < ncontracting; i++) {
        int64_t d = contracting[i];
        width *= d >= 0 && (uint64_t)d < lhs->ndims ? lhs->dims[d] : 1;
    }
    return 2 * hlo_shape_elements(out) * width;
}

/* HloCostAnalysis::HandleRaggedDot: GetDotFlops over the ragged dot's own
 * dot dimension numbers and its result shape with "the group dimensions
 * removed", which XLA does by deleting dimension i of the shrinking result
 * for each i below the number of rhs_group_dimensions (the values are not
 * read). Step i thus removes original dimension 2i: for the usual
 * [m,k] x [g,k,n] -> [m,n] it leaves [n], so XLA prices 2*n*k. A deletion
 * past the shrunk rank (where XLA's DeleteDimension would fail a check) is
 * skipped. */
int hc_handle_ragged_dot(struct analysis *an, const struct hlo_node *nd)
{
    const struct hlo_shape *lhs, *out = &nd->shape;
    uint64_t elements = 1, width = 1; /* wrapping, as XLA's int64 products */
    uint32_t d, i;

    if (nd->noperands < 1)
        return -1;
    lhs = hc_operand_shape(an, nd, 0);
    if (out->type == HLO_TUPLE)
        elements = 0; /* ElementsIn of a tuple, as hlo_shape_elements */
    for (d = 0; d < out->ndims; d++) {
        if (d % 2 == 0 && d / 2 < nd->ragged_ngroups)
            continue;
        elements *= (uint64_t)out->dims[d];
    }
    for (i = 0; i < nd->ragged_ncontracting; i++) {
        int64_t c = nd->ragged_contracting[i];
        width *= c >= 0 && (uint64_t)c < lhs->ndims ? (uint64_t)lhs->dims[c] : 1;
    }
    an->cur.flops = (float)(int64_t)(2 * elements * width);
    return 0;
}

/* HloCostAnalysis::GetConvolutionFlops. */
int64_t hc_conv_flops(const struct hlo_node *nd, const struct hlo_shape *lhs,
                      const struct hlo_shape *rhs, const struct hlo_shape *out)
{
    int64_t in_feature = hc_dim_of(lhs, nd->in_feature_dim);
    int64_t out_feature = hc_dim_of(out, nd->out_feature_dim);
    int64_t batch = hc_dim_of(lhs, nd->in_batch_dim);
    int64_t positions = 1;
    uint32_t s;

    for (s = 0; s < nd->nwindow; s++) {
        const struct hlo_window_dim *w = &nd->window[s];
        int64_t in = s < nd->nspatial ? hc_dim_of(lhs, nd->in_spatial[s]) : 0;
        int64_t outl = s < nd->nspatial ? hc_dim_of(out, nd->out_spatial[s]) : 0;
        int64_t ker = s < nd->nspatial ? hc_dim_of(rhs, nd->kernel_spatial[s]) : 0;
        int64_t count = 0, k, o;
        if (in == outl && ker == outl && in == w->base_dilation && w->window_dilation == 1 &&
            (in - 1 > 1 ? in - 1 : 1) == w->stride && w->pad_low == 0 && w->pad_high == 0) {
            positions *= in;
            continue;
        }
        if (in == 1 && ker == outl && w->window_dilation == 1 && w->base_dilation == 1 &&
            w->stride == 1 && w->pad_high == outl - 1 && w->pad_low == outl - 1) {
            positions *= outl;
            continue;
        }
        for (k = 0; k < ker; k++) {
            if (w->stride == 1 && w->base_dilation == 1) {
                /* output o reads input o - pad_low + k*dilation: count the o
                 * in [0, out) with that index in [0, in) */
                int64_t base = w->pad_low - k * w->window_dilation;
                int64_t hi = in + base < outl ? in + base : outl;
                int64_t lo = base > 0 ? base : 0;
                count += hi > lo ? hi - lo : 0;
                continue;
            }
            for (o = 0; o < outl; o++) {
                int64_t undilated = o * w->stride - w->pad_low + k * w->window_dilation;
                int64_t idx = w->base_dilation > 1 ? undilated / w->base_dilation : undilated;
                if (undilated != idx * w->base_dilation || idx < 0 || idx >= in)
                    continue;
                count++;
            }
        }
        positions *= count;
    }
    return (in_feature / nd->feature_group_count) * out_feature * (batch / nd->batch_group_count) *
           positions * 2;
}

static void replace_output(struct analysis *an, float size)
{
    struct props *cur = &an->cur;

    cur->bytes -= hc_kv_get(cur, KV_OUTPUT_BYTES, 0, 0);
    cur->bytes += size;
    hc_kv_set(an, cur, KV_OUTPUT_BYTES, 0, 0, size);
}

float hc_adjusted(float flops, int bits)
{
    float divisor = bits == 8 ? 2.0f : bits == 4 ? 4.0f : 1.0f;

    return flops - flops / divisor;
}

/* lhs_contracting_dimensions of a GEMM backend config; -1 when the JSON is
 * broken (the analysis then fails, as XLA's backend_config() does). */
static int gemm_contracting(const struct hlo_node *nd, int64_t *dims, uint32_t *n, uint32_t cap)
{
    cJSON *root, *list, *item;

    *n = 0;
    if (nd->backend_config_len == 0)
        return 0;
    root = cJSON_ParseWithLength(nd->backend_config, nd->backend_config_len);
    if (root == NULL)
        return -1;
    list = cJSON_GetObjectItemCaseSensitive(root, "gemm_backend_config");
    list = list ? cJSON_GetObjectItemCaseSensitive(list, "dot_dimension_numbers") : NULL;
    list = list ? cJSON_GetObjectItemCaseSensitive(list, "lhs_contracting_dimensions") : NULL;
    cJSON_ArrayForEach(item, list)
    {
        if (*n == cap)
            break;
        if (cJSON_IsNumber(item))
            dims[(*n)++] = (int64_t)item->valuedouble;
        else if (cJSON_IsString(item))
            dims[(*n)++] = strtoll(item->valuestring, NULL, 10);
    }
    cJSON_Delete(root);
    return 0;
}

/* A cost_estimate_json value ("flops", "bytes_accessed") in a custom call's
 * backend config, quoted in any of the usual escapes; -1 when absent. */
static int64_t cost_estimate(const char *text, const char *key)
{
    static const char *const quotes[] = {"\"",    "22",    "x22",       "X22",
                                         "u0022", "U0022", "u00000022", ""};
    size_t klen = strlen(key);
    const char *p = text;

    while ((p = strstr(p, key)) != NULL) {
        const char *after = p + klen;
        int slash, qi;
        p++;
        for (slash = 1; slash >= 0; slash--) {
            const char *start = after;
            if (slash) {
                if (*start != '\\')
                    continue;
                start++;
            }
            for (qi = 0; qi < 8; qi++) {
                const char *q = start, *v;
                int s2, q2;
                if (strncmp(q, quotes[qi], strlen(quotes[qi])) != 0)
                    continue;
                q += strlen(quotes[qi]);
                while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r' || *q == '\v' ||
                       *q == '\f')
                    q++;
                if (*q != '=' && *q != ':')
                    continue;
                q++;
                while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r' || *q == '\v' ||
                       *q == '\f')
                    q++;
                for (s2 = 1; s2 >= 0; s2--) {
                    const char *vs = q;
                    if (s2) {
                        if (*vs != '\\')
                            continue;
                        vs++;
                    }
                    for (q2 = 0; q2 < 8; q2++) {
                        if (strncmp(vs, quotes[q2], strlen(quotes[q2])) != 0)
                            continue;
                        v = vs + strlen(quotes[q2]);
                        if ((v[0] >= '0' && v[0] <= '9') ||
                            (v[0] == '-' && v[1] >= '0' && v[1] <= '9'))
                            return strtoll(v, NULL, 10);
                    }
                }
            }
        }
    }
    return -1;
}

int hc_handle_custom_call(struct analysis *an, const struct hlo_node *nd)
{
    struct props *cur = &an->cur;
    const struct hlo_shape *out =
        nd->shape.type == HLO_TUPLE && nd->shape.ntuple > 0 ? &nd->shape.tuple[0] : &nd->shape;
    uint32_t i;
    float v;

    if (hc_in_list(nd->custom_call_target, gemm_targets)) {
        int64_t dims[16];
        uint32_t n;
        if (nd->noperands < 1 || gemm_contracting(nd, dims, &n, 16) != 0)
            return -1;
        cur->flops = (float)hc_dot_flops(hc_operand_shape(an, nd, 0), out, dims, n);
        replace_output(an, (float)hc_byte_size(out));
        if (hc_in_list(nd->custom_call_target, lt_gemm_targets))
            cur->adjust = hc_adjusted(cur->flops, hlo_type_bits(hc_operand_shape(an, nd, 0)->type));
        return 0;
    }
    if (hc_in_list(nd->custom_call_target, dnn_conv_targets)) {
        if (nd->noperands < 2)
            return -1;
        cur->flops =
            (float)hc_conv_flops(nd, hc_operand_shape(an, nd, 0), hc_operand_shape(an, nd, 1), out);
        if (nd->shape.type == HLO_TUPLE)
            replace_output(an, (float)hc_byte_size(out));
        return 0;
    }
    v = strcmp(nd->custom_call_target, "__xla_internal_call_marker_before") == 0 ||
                strcmp(nd->custom_call_target, "__xla_internal_call_marker_after") == 0
            ? 0.0f
            : -1.0f;
    cur->bytes = v;
    hc_kv_set(an, cur, KV_OUTPUT_BYTES, 0, 0, v);
    for (i = 0; i < nd->noperands; i++)
        hc_kv_set(an, cur, KV_OPERAND_BYTES, (int32_t)i, 0, v);
    cur->flops = v;
    if (strstr(nd->backend_config, "cost_estimate_json") != NULL) {
        int64_t f = cost_estimate(nd->backend_config, "flops");
        int64_t b = cost_estimate(nd->backend_config, "bytes_accessed");
        if (f >= 0)
            cur->flops = (float)f;
        if (b >= 0)
            cur->bytes = (float)b;
    }
    return 0;
}

int hc_handle_slicing(struct analysis *an, const struct hlo_node *nd)
{
    int64_t out = hc_shape_size(&nd->shape), ops[3];

    if (hc_op_is(nd, "dynamic-update-slice")) {
        int64_t outputs, updates;
        if (nd->noperands < 3)
            return -1;
        ops[0] = 0;
        ops[1] = hc_shape_size(hc_operand_shape(an, nd, 1));
        ops[2] = hc_shape_size(hc_operand_shape(an, nd, 2));
        hc_transfers(an, ops[1], ops, 3);
        updates = hlo_shape_elements(hc_operand_shape(an, nd, 1));
        outputs = hlo_shape_elements(&nd->shape);
        hc_kv_set(an, &an->cur, KV_OPERAND_UTIL, 0, 0,
                  (float)((double)(outputs - updates) / (double)outputs));
        return 0;
    }
    if (nd->noperands < 1 || (hc_op_is(nd, "dynamic-slice") && nd->noperands < 2))
        return -1;
    ops[0] = out;
    if (hc_op_is(nd, "slice")) {
        hc_transfers(an, out, ops, 1);
    } else {
        ops[1] = hc_shape_size(hc_operand_shape(an, nd, 1));
        hc_transfers(an, out, ops, 2);
    }
    hc_kv_set(an, &an->cur, KV_OPERAND_UTIL, 0, 0,
              (float)((double)hlo_shape_elements(&nd->shape) /
                      (double)hlo_shape_elements(hc_operand_shape(an, nd, 0))));
    return 0;
}

int hc_handle_gather(struct analysis *an, const struct hlo_node *nd)
{
    int64_t out = hc_shape_size(&nd->shape), ops[2];

    if (nd->noperands < 2)
        return -1;
    ops[0] = out;
    ops[1] = hc_shape_size(hc_operand_shape(an, nd, 1));
    hc_transfers(an, out, ops, 2);
    hc_kv_set(an, &an->cur, KV_OPERAND_UTIL, 0, 0,
              (float)((double)hlo_shape_elements(&nd->shape) /
                      (double)hlo_shape_elements(hc_operand_shape(an, nd, 0))));
    return 0;
}

int hc_handle_scatter(struct analysis *an, const struct hlo_node *nd)
{
    uint32_t count = nd->noperands >= 1 ? (nd->noperands - 1) / 2 : 0, i;
    int64_t total = 0, indices;
    const struct props *sub;
    int rc;

    if (count == 0 || nd->ncalled < 1)
        return -1;
    for (i = 0; i < count; i++) {
        int64_t size = hc_shape_size(hc_operand_shape(an, nd, count + 1 + i));
        hc_kv_set(an, &an->cur, KV_OPERAND_BYTES, (int32_t)i, 0, (float)size);
        hc_kv_set(an, &an->cur, KV_OPERAND_BYTES, (int32_t)(count + 1 + i), 0, (float)size);
        total += size;
    }
    indices = hc_shape_size(hc_operand_shape(an, nd, count));
    hc_kv_set(an, &an->cur, KV_OPERAND_BYTES, (int32_t)count, 0, (float)indices);
    an->cur.bytes = (float)(total * 3 + indices);
    hc_kv_set(an, &an->cur, KV_OUTPUT_BYTES, 0, 0, (float)total);
    sub = hc_subcomputation(an, nd->called[0], &rc);
    if (sub == NULL)
        return rc;
    hc_copy_scaled(&an->cur, sub, hlo_shape_elements(hc_operand_shape(an, nd, count + 1)), 0);
    return 0;
}

/* The number of ranks of a collective (largest replica group, 1 when none);
 * -1 for the invalid modes XLA refuses. */
static int64_t num_ranks(const struct hlo_node *nd)
{
    int channel = nd->channel_id > 0;

    if (!channel && nd->use_global_device_ids)
        return -1;
    if (!nd->group_list_given && channel && nd->use_global_device_ids)
        return -1;
    return nd->largest_group > 1 ? nd->largest_group : 1;
}

/* Bytes of the array leaves of s, not gated on layouts; leaves under
 * top-level tuple index skip are left out (skip < 0: none). */
static int64_t ring_size(const struct hlo_shape *s, int64_t skip, int top)
{
    int64_t n = 0;
    uint32_t i;

    if (s->type != HLO_TUPLE)
        return hc_is_array(s) ? hc_byte_size(s) : 0;
    for (i = 0; i < s->ntuple; i++) {
        if (top && (int64_t)i == skip)
            continue;
        n += ring_size(&s->tuple[i], skip, 0);
    }
    return n;
}

static int64_t reducer_flops(const struct analysis *an, const struct hlo_node *nd)
{
    const struct hlo_comp *c;

    if (nd->ncalled < 1)
        return -1;
    c = &an->g->comps[nd->called[0]];
    return hc_flops_per_element(an->g->nodes[c->root].opcode, nd->shape.type) *
           hlo_shape_elements_recursive(&nd->shape);
}

int hc_handle_collective(struct analysis *an, const struct hlo_node *nd)
{
    int64_t ranks = num_ranks(nd), transferred, rank_size, fl;
    uint32_t i;

    if (ranks < 0)
        return -1;
    if (hc_op_is(nd, "all-gather") || hc_op_is(nd, "all-gather-start")) {
        transferred = ring_size(&nd->shape, hc_op_is(nd, "all-gather-start") ? 0 : -1, 1);
        rank_size = transferred / ranks;
        an->cur.bytes = (float)(rank_size * (2 * ranks - 1) + rank_size * ranks);
        return 0;
    }
    if (hc_op_is(nd, "all-reduce")) {
        struct subs x = hc_subshapes(an, &nd->shape);
        int64_t out = 0, bytes;
        for (i = 0; i < x.n; i++) {
            if (hc_is_array(x.v[i].s))
                out += hc_shape_size(x.v[i].s);
        }
        free(x.v);
        bytes = out;
        for (i = 0; i < nd->noperands; i++)
            bytes += hc_shape_size(hc_operand_shape(an, nd, i));
        hc_kv_set(an, &an->cur, KV_OUTPUT_BYTES, 0, 0, (float)out);
        an->cur.bytes = (float)bytes;
    } else if (hc_op_is(nd, "all-reduce-start")) {
        an->cur.bytes = (float)ring_size(&nd->shape, -1, 1);
    } else { /* reduce-scatter */
        transferred = 0;
        for (i = 0; i < nd->noperands; i++)
            transferred += ring_size(hc_operand_shape(an, nd, i), -1, 1);
        rank_size = transferred / ranks;
        an->cur.bytes = (float)(rank_size * ranks + rank_size * (2 * ranks - 1));
    }
    fl = reducer_flops(an, nd);
    if (fl < 0)
        return -1;
    an->cur.flops = (float)fl;
    return 0;
}
