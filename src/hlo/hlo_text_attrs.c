/*
 * hlo_text_attrs.c - the attributes each opcode prints after its operands
 * (the PrintExtraAttributesImpl of XLA's HloInstruction subclasses, in
 * xla/hlo/ir/hlo_instructions.cc), for the HLO text printer
 * (hlo_text_int.h): windows, dimension labels, dot / gather / scatter
 * dimension numbers, slices, padding, precision configs, collectives,
 * custom calls, fusion kinds and the small ones.
 */
#include <stdlib.h>
#include <string.h>

#include "hlo_text_int.h"

/* Opcode strings and their kinds, sorted by string. */
static const struct {
    const char *name;
    enum txt_kind kind;
} kinds[] = {
    {"acos", K_UNARY_ACCURACY},
    {"acosh", K_UNARY_ACCURACY},
    {"all-gather", K_ALL_GATHER},
    {"all-gather-start", K_ALL_GATHER},
    {"all-reduce", K_ALL_REDUCE},
    {"all-reduce-start", K_ALL_REDUCE},
    {"all-to-all", K_ALL_TO_ALL},
    {"asin", K_UNARY_ACCURACY},
    {"asinh", K_UNARY_ACCURACY},
    {"async-done", K_ASYNC_OTHER},
    {"async-start", K_ASYNC_START},
    {"async-update", K_ASYNC_OTHER},
    {"atanh", K_UNARY_ACCURACY},
    {"batch-norm-grad", K_BATCH_NORM},
    {"batch-norm-inference", K_BATCH_NORM},
    {"batch-norm-training", K_BATCH_NORM},
    {"broadcast", K_DIMS},
    {"call", K_CALL},
    {"cbrt", K_UNARY_ACCURACY},
    {"cholesky", K_CHOLESKY},
    {"collective-broadcast", K_COLLECTIVE},
    {"collective-permute", K_PERMUTE},
    {"collective-permute-start", K_PERMUTE},
    {"compare", K_COMPARE},
    {"concatenate", K_DIM0},
    {"conditional", K_CONDITIONAL},
    {"constant", K_CONSTANT},
    {"convolution", K_CONV},
    {"copy-start", K_COPY_START},
    {"cosh", K_UNARY_ACCURACY},
    {"cosine", K_UNARY_ACCURACY},
    {"custom-call", K_CUSTOM_CALL},
    {"dot", K_DOT},
    {"dynamic-slice", K_DYNAMIC_SLICE},
    {"equal-to", K_COMPARE},
    {"erf", K_UNARY_ACCURACY},
    {"exponential", K_UNARY_ACCURACY},
    {"exponential-minus-one", K_UNARY_ACCURACY},
    {"fft", K_FFT},
    {"fusion", K_FUSION},
    {"gather", K_GATHER},
    {"get-dimension-size", K_DIM_SIZE},
    {"get-tuple-element", K_GTE},
    {"greater-than", K_COMPARE},
    {"greater-than-or-equal-to", K_COMPARE},
    {"iota", K_IOTA},
    {"less-than", K_COMPARE},
    {"less-than-or-equal-to", K_COMPARE},
    {"log", K_UNARY_ACCURACY},
    {"log-plus-one", K_UNARY_ACCURACY},
    {"logistic", K_UNARY_ACCURACY},
    {"map", K_MAP},
    {"not-equal-to", K_COMPARE},
    {"outfeed", K_OUTFEED},
    {"pad", K_PAD},
    {"parameter", K_PARAMETER},
    {"ragged-all-to-all", K_COLLECTIVE},
    {"ragged-dot", K_RAGGED_DOT},
    {"recv", K_SEND_RECV},
    {"recv-done", K_SEND_RECV},
    {"reduce", K_REDUCE},
    {"reduce-precision", K_REDUCE_PRECISION},
    {"reduce-scatter", K_REDUCE_SCATTER},
    {"reduce-window", K_REDUCE_WINDOW},
    {"reshape", K_RESHAPE},
    {"reverse", K_DIMS},
    {"rng", K_RNG},
    {"rng-bit-generator", K_RNG_BIT_GENERATOR},
    {"rng-get-and-update-state", K_RNG_STATE},
    {"rsqrt", K_UNARY_ACCURACY},
    {"scaled-dot", K_SCALED_DOT},
    {"scan", K_SCAN},
    {"scatter", K_SCATTER},
    {"select-and-scatter", K_SELECT_AND_SCATTER},
    {"send", K_SEND_RECV},
    {"send-done", K_SEND_RECV},
    {"set-dimension-size", K_DIM_SIZE},
    {"sine", K_UNARY_ACCURACY},
    {"sinh", K_UNARY_ACCURACY},
    {"slice", K_SLICE},
    {"sort", K_SORT},
    {"sqrt", K_UNARY_ACCURACY},
    {"tan", K_UNARY_ACCURACY},
    {"tanh", K_UNARY_ACCURACY},
    {"topk", K_TOPK},
    {"transpose", K_DIMS},
    {"triangular-solve", K_TRIANGULAR_SOLVE},
    {"while", K_WHILE},
};

enum txt_kind txt_opcode_kind(const char *opcode)
{
    size_t lo = 0, hi = sizeof(kinds) / sizeof(kinds[0]);

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(kinds[mid].name, opcode);
        if (c == 0)
            return kinds[mid].kind;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return K_NONE;
}

/* The first value of the instruction's dimensions field: 1 when given. */
static int dim0(const struct txt_instr *in, int64_t *v)
{
    struct txt_rep r;
    uint64_t x;

    txt_rep_init(&r, in->all, 14);
    if (!txt_rep_next(&r, &x))
        return 0;
    *v = (int64_t)x;
    return 1;
}

/* ", name={a,b}" of a repeated varint field. */
static void put_list_attr(struct out *o, const char *name, struct wire msg, uint32_t field,
                          size_t limit)
{
    out_puts(o, ", ");
    out_puts(o, name);
    out_putc(o, '=');
    txt_braced_i64s(o, msg, field, limit);
}

/* ", name=N". */
static void put_int_attr(struct out *o, const char *name, int64_t v)
{
    out_puts(o, ", ");
    out_puts(o, name);
    out_putc(o, '=');
    out_i64(o, v);
}

/* ", dimensions={d0}" when the instruction has a first dimension. */
static void put_dim0(struct out *o, const struct txt_instr *in)
{
    int64_t d;

    if (!dim0(in, &d))
        return;
    out_puts(o, ", dimensions={");
    out_i64(o, d);
    out_putc(o, '}');
}

/* ---- windows and dimension numbers ---- */

/* Varint field f of message m, 0 when absent (proto3's default). */
static int64_t field(struct wire m, uint32_t f)
{
    int64_t v = 0;

    txt_varint(m, f, &v);
    return v;
}

/* One heading of window_util::ToString: " pad=1_1x1_1" ... over the
 * dimensions of window w; what picks the field(s) printed. */
static void put_window_field(struct out *o, struct wire w, const char *heading, int what,
                             size_t limit)
{
    struct wire cur = w, d;
    int first = 1;

    out_puts(o, heading);
    out_putc(o, '=');
    while (!txt_full(o, limit) && txt_msg_next(&cur, 1, &d)) {
        int64_t a = 0, b = 0;
        if (!first)
            out_putc(o, 'x');
        first = 0;
        txt_varint(d, (uint32_t)what, &a);
        if (what == 3) { /* padding: low_high */
            txt_varint(d, 4, &b);
            out_i64(o, a);
            out_putc(o, '_');
            out_i64(o, b);
        } else {
            out_i64(o, what == 7 ? a != 0 : a);
        }
    }
}

/* window_util::ToString of Window w: "size=3x3 stride=2x2 pad=1_1x1_1". */
static void put_window(struct out *o, struct wire w, size_t limit)
{
    struct wire cur = w, d;
    int any = 0, stride = 0, pad = 0, base = 0, win = 0, rev = 0;

    while (txt_msg_next(&cur, 1, &d)) {
        any = 1;
        stride |= field(d, 2) != 1;
        pad |= field(d, 3) != 0 || field(d, 4) != 0;
        base |= field(d, 6) != 1;
        win |= field(d, 5) != 1;
        rev |= field(d, 7) != 0;
    }
    if (any)
        put_window_field(o, w, "size", 1, limit);
    if (stride)
        put_window_field(o, w, " stride", 2, limit);
    if (pad)
        put_window_field(o, w, " pad", 3, limit);
    if (base)
        put_window_field(o, w, " lhs_dilate", 6, limit);
    if (win)
        put_window_field(o, w, " rhs_dilate", 5, limit);
    if (rev)
        put_window_field(o, w, " rhs_reversal", 7, limit);
}

/* ", window={...}" when the window has dimensions (always when always). */
static void put_window_attr(struct out *o, struct wire w, int always, size_t limit)
{
    struct wire cur = w, d;

    if (!txt_has(w) || (!always && !txt_msg_next(&cur, 1, &d)))
        return;
    out_puts(o, ", window={");
    put_window(o, w, limit);
    out_putc(o, '}');
}

/* Labels of one operand of a convolution: codes per dimension, 'b' / 'f'
 * (or 'i' / 'o') for the two named ones, the spatial number for the others.
 * Returns the rank, or -1 when a dimension number is out of range. */
static int conv_labels(struct wire dn, uint32_t fa, uint32_t fb, uint32_t fs, int16_t *code)
{
    struct txt_rep r;
    uint64_t v;
    int64_t a = 0, b = 0, len;
    int i, k;

    txt_varint(dn, fa, &a);
    txt_varint(dn, fb, &b);
    len = (a > b ? a : b) + 1;
    txt_rep_init(&r, dn, fs);
    while (txt_rep_next(&r, &v))
        len = (int64_t)v + 1 > len ? (int64_t)v + 1 : len;
    if (a < 0 || b < 0 || len > 64 || len < 1)
        return -1;
    for (i = 0; i < len; i++)
        code[i] = -1;
    code[a] = -2;
    code[b] = -3;
    txt_rep_init(&r, dn, fs);
    for (k = 0; txt_rep_next(&r, &v); k++) {
        if (v >= 64)
            return -1;
        code[v] = (int16_t)k;
    }
    return (int)len;
}

/* One operand's labels: "b01f". */
static void put_labels(struct out *o, const int16_t *code, int n, char a, char b)
{
    int i;

    for (i = 0; i < n; i++) {
        if (code[i] == -1)
            out_putc(o, '?');
        else if (code[i] == -2)
            out_putc(o, a);
        else if (code[i] == -3)
            out_putc(o, b);
        else
            out_i64(o, code[i]);
    }
}

/* ", dim_labels=b01f_01io->b01f" (ConvolutionDimensionNumbersToString). */
static void put_dim_labels(struct out *o, struct wire dn)
{
    int16_t in[64], ker[64], res[64];
    int ni = conv_labels(dn, 7, 8, 11, in);
    int nk = conv_labels(dn, 3, 4, 6, ker);
    int nr = conv_labels(dn, 9, 10, 12, res);

    if (!txt_has(dn) || ni < 0 || nk < 0 || nr < 0)
        return;
    out_puts(o, ", dim_labels=");
    put_labels(o, in, ni, 'b', 'f');
    out_putc(o, '_');
    put_labels(o, ker, nk, 'i', 'o');
    out_puts(o, "->");
    put_labels(o, res, nr, 'b', 'f');
}

/* DotDimensionNumbersToString. */
static void put_dot_numbers(struct out *o, struct wire dn, size_t limit)
{
    if (txt_rep_count(dn, 3) > 0) {
        out_puts(o, "lhs_batch_dims=");
        txt_braced_i64s(o, dn, 3, limit);
        out_puts(o, ", ");
    }
    out_puts(o, "lhs_contracting_dims=");
    txt_braced_i64s(o, dn, 1, limit);
    if (txt_rep_count(dn, 4) > 0)
        put_list_attr(o, "rhs_batch_dims", dn, 4, limit);
    put_list_attr(o, "rhs_contracting_dims", dn, 2, limit);
}

/* PrintPrecisionConfig: operand_precision (the first nops entries, default
 * beyond) when one is not default, the algorithm when set. */
static void put_precision(struct out *o, struct wire pc, uint64_t nops)
{
    static const char *const prec[] = {"default", "high", "highest"};
    static const char *const alg[] = {
        NULL,
        "dot_any_f8_any_f8_f32",
        "dot_any_f8_any_f8_f32_fast_accum",
        "dot_f16_f16_f16",
        "dot_f16_f16_f32",
        "dot_bf16_bf16_bf16",
        "dot_bf16_bf16_f32",
        "dot_bf16_bf16_f32_x3",
        "dot_bf16_bf16_f32_x6",
        "dot_tf32_tf32_f32",
        "dot_tf32_tf32_f32_x3",
        "dot_f32_f32_f32",
        "dot_f64_f64_f64",
        "dot_bf16_bf16_f32_x9",
    };
    struct txt_rep r;
    uint64_t v, i;
    int64_t a = 0;
    int any = 0;

    txt_rep_init(&r, pc, 1);
    for (i = 0; i < nops && txt_rep_next(&r, &v); i++) {
        if (v > 2)
            return; /* XLA refuses the instruction */
        any |= v != 0;
    }
    if (any) {
        out_puts(o, ", operand_precision={");
        txt_rep_init(&r, pc, 1);
        for (i = 0; i < nops; i++) {
            if (!txt_rep_next(&r, &v))
                v = 0;
            if (i > 0)
                out_putc(o, ',');
            out_puts(o, prec[v]);
        }
        out_putc(o, '}');
    }
    txt_varint(pc, 2, &a);
    if (a > 0 && a < (int64_t)(sizeof(alg) / sizeof(alg[0]))) {
        out_puts(o, ", algorithm=");
        out_puts(o, alg[a]);
    }
}

/* ", slice={[0:2], [1:3:2]}". */
static void put_slice(struct out *o, const struct txt_instr *in, size_t limit)
{
    struct wire cur = in->all, d;
    int omit = 1, first = 1;

    while (txt_msg_next(&cur, 17, &d)) {
        int64_t stride = 0;
        txt_varint(d, 3, &stride);
        omit &= stride == 1;
    }
    out_puts(o, ", slice={");
    cur = in->all;
    while (!txt_full(o, limit) && txt_msg_next(&cur, 17, &d)) {
        int64_t start = 0, lim = 0, stride = 0;
        txt_varint(d, 1, &start);
        txt_varint(d, 2, &lim);
        txt_varint(d, 3, &stride);
        if (!first)
            out_puts(o, ", ");
        first = 0;
        out_putc(o, '[');
        out_i64(o, start);
        out_putc(o, ':');
        out_i64(o, lim);
        if (!omit) {
            out_putc(o, ':');
            out_i64(o, stride);
        }
        out_putc(o, ']');
    }
    out_putc(o, '}');
}

/* ", padding=0_0x1_1" (PaddingConfigToString). */
static void put_padding(struct out *o, struct wire pc, size_t limit)
{
    struct wire cur = pc, d;
    int interior = 0, first = 1;

    while (txt_msg_next(&cur, 1, &d)) {
        int64_t v = 0;
        txt_varint(d, 3, &v);
        interior |= v != 0;
    }
    out_puts(o, ", padding=");
    cur = pc;
    while (!txt_full(o, limit) && txt_msg_next(&cur, 1, &d)) {
        int64_t lo = 0, hi = 0, mid = 0;
        txt_varint(d, 1, &lo);
        txt_varint(d, 2, &hi);
        txt_varint(d, 3, &mid);
        if (!first)
            out_putc(o, 'x');
        first = 0;
        out_i64(o, lo);
        out_putc(o, '_');
        out_i64(o, hi);
        if (interior) {
            out_putc(o, '_');
            out_i64(o, mid);
        }
    }
}

/* Gather (scatter when scatter) dimension numbers, as one attribute. */
static void put_gather_numbers(struct out *o, struct wire dn, int scatter, size_t limit)
{
    static const char *const names[2][5] = {
        {"offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims",
         "start_indices_batching_dims"},
        {"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
         "input_batching_dims", "scatter_indices_batching_dims"},
    };
    static const uint32_t fields[5] = {1, 2, 3, 5, 6};
    int64_t ivd = 0;
    int i;

    out_puts(o, ", ");
    for (i = 0; i < 5; i++) {
        if (i >= 3 && txt_rep_count(dn, fields[i]) == 0)
            continue;
        if (i > 0)
            out_puts(o, ", ");
        out_puts(o, names[scatter][i]);
        out_putc(o, '=');
        txt_braced_i64s(o, dn, fields[i], limit);
    }
    txt_varint(dn, 4, &ivd);
    out_puts(o, ", index_vector_dim=");
    out_i64(o, ivd);
}

/* ", output_to_operand_aliasing={{0}: (1, {})}" of field 74. */
static void put_aliasing(struct out *o, const struct txt_instr *in, size_t limit)
{
    struct wire cur = in->all, a;
    int first = 1;

    if (!txt_msg(in->all, 74, &a))
        return;
    out_puts(o, ", output_to_operand_aliasing={");
    while (!txt_full(o, limit) && txt_msg_next(&cur, 74, &a)) {
        int64_t operand = 0;
        txt_varint(a, 2, &operand);
        if (!first)
            out_puts(o, ", ");
        first = 0;
        txt_braced_i64s(o, a, 1, limit);
        out_puts(o, ": (");
        out_i64(o, operand);
        out_puts(o, ", ");
        txt_braced_i64s(o, a, 3, limit);
        out_putc(o, ')');
    }
    out_putc(o, '}');
}

/* ---- collectives ---- */

/* ", channel_id=N" when the instruction has one (all_reduce_id too for the
 * all-reduce family). */
static void put_channel(struct out *o, const struct txt_instr *in, int all_reduce)
{
    int64_t ch = in->channel_id > 0 ? in->channel_id : 0;

    if (all_reduce && in->all_reduce_id > 0)
        ch = in->all_reduce_id;
    if (ch > 0)
        put_int_attr(o, "channel_id", ch);
}

/* HloCollectiveInstruction: channel, replica groups, constrain_layout. */
static void put_collective(struct out *o, const struct txt_instr *in, int all_reduce, size_t limit)
{
    put_channel(o, in, all_reduce);
    out_puts(o, ", replica_groups=");
    txt_replica_groups(o, in, limit);
    if (in->constrain_layout)
        out_puts(o, ", constrain_layout=true");
}

/* ", source_target_pairs={{0,1},{1,0}}". */
static void put_pairs(struct out *o, const struct txt_instr *in, size_t limit)
{
    struct wire cur = in->all, p;
    int first = 1;

    out_puts(o, ", source_target_pairs={");
    while (!txt_full(o, limit) && txt_msg_next(&cur, 52, &p)) {
        int64_t s = 0, t = 0;
        txt_varint(p, 1, &s);
        txt_varint(p, 2, &t);
        if (!first)
            out_putc(o, ',');
        first = 0;
        out_putc(o, '{');
        out_i64(o, s);
        out_putc(o, ',');
        out_i64(o, t);
        out_putc(o, '}');
    }
    out_putc(o, '}');
}

/* The collectives' attributes. */
static void collective_attrs(struct out *o, const struct txt_instr *in, enum txt_kind k,
                             size_t limit)
{
    switch (k) {
    case K_ALL_GATHER:
        put_collective(o, in, 0, limit);
        put_dim0(o, in);
        if (in->use_global_ids)
            out_puts(o, ", use_global_device_ids=true");
        break;
    case K_ALL_REDUCE:
    case K_REDUCE_SCATTER:
        put_collective(o, in, 1, limit);
        if (in->use_global_ids)
            out_puts(o, ", use_global_device_ids=true");
        if (k == K_REDUCE_SCATTER)
            put_dim0(o, in);
        break;
    case K_ALL_TO_ALL:
        put_collective(o, in, 0, limit);
        put_dim0(o, in);
        break;
    case K_COLLECTIVE:
        put_collective(o, in, 0, limit);
        break;
    case K_PERMUTE:
        put_channel(o, in, 0);
        put_pairs(o, in, limit);
        break;
    case K_SEND_RECV:
        put_channel(o, in, 0);
        if (in->is_host_transfer)
            out_puts(o, ", is_host_transfer=true");
        break;
    default:
        break;
    }
}

/* ---- custom calls ---- */

/* The names of CustomCallApiVersion values (API_VERSION_ORIGINAL is not
 * printed). */
static const char *api_version_name(int64_t v)
{
    switch (v) {
    case 0:
        return "API_VERSION_UNSPECIFIED";
    case 2:
        return "API_VERSION_STATUS_RETURNING";
    case 3:
        return "API_VERSION_STATUS_RETURNING_UNIFIED";
    case 4:
        return "API_VERSION_TYPED_FFI";
    default:
        return NULL;
    }
}

/* ", operand_layout_constraints={f32[2]{0}, ...}". */
static void put_layout_constraints(struct out *o, const struct txt_instr *in, size_t limit)
{
    struct wire cur = in->all, s;
    int first = 1;

    out_puts(o, ", operand_layout_constraints={");
    while (!txt_full(o, limit) && txt_msg_next(&cur, 57, &s)) {
        if (!first)
            out_puts(o, ", ");
        first = 0;
        txt_shape_proto(o, s, limit);
    }
    out_putc(o, '}');
}

/* HloCustomCallInstruction::PrintExtraAttributesImpl. */
static void custom_call_attrs(struct out *o, const struct txt_instr *in, size_t limit)
{
    const char *api = api_version_name(in->api_version);

    put_window_attr(o, in->window, 1, limit);
    put_dim_labels(o, in->conv_dims);
    if (in->feature_groups > 1)
        put_int_attr(o, "feature_group_count", in->feature_groups);
    if (in->batch_groups > 1)
        put_int_attr(o, "batch_group_count", in->batch_groups);
    put_precision(o, in->precision, in->nd->noperands);
    if (in->padding_type == 1 || in->padding_type == 2)
        out_puts(o, in->padding_type == 1 ? ", padding_type=PADDING_VALID"
                                          : ", padding_type=PADDING_SAME");
    out_puts(o, ", custom_call_target=\"");
    if (txt_has(in->target))
        txt_cescape(o, in->target.p, (size_t)(in->target.end - in->target.p), limit);
    out_putc(o, '"');
    if (in->constrain_layout)
        put_layout_constraints(o, in, limit);
    if (in->side_effect)
        out_puts(o, ", custom_call_has_side_effect=true");
    if (txt_has(in->literal))
        txt_literal(o, ", literal=", in->literal, 1, limit);
    put_aliasing(o, in, limit);
    if (in->schedule == 1 || in->schedule == 2)
        out_puts(o,
                 in->schedule == 1 ? ", schedule=SCHEDULE_LATEST" : ", schedule=SCHEDULE_EARLIEST");
    if (api != NULL) {
        out_puts(o, ", api_version=");
        out_puts(o, api);
    }
}

/* ---- the others ---- */

/* Comparison::DefaultComparisonType of a PrimitiveType, as its name. */
static const char *default_comparison(int32_t type)
{
    if ((type >= 2 && type <= 5) || type == 21 || type == 26 || type == 30)
        return "SIGNED";
    if (type == 1 || (type >= 6 && type <= 9) || type == 22 || type == 27 || type == 31)
        return "UNSIGNED";
    return "FLOAT";
}

/* HloCompareInstruction: direction, and the type when not the default. */
static void compare_attrs(struct out *o, const struct txt_instr *in, size_t limit)
{
    static const struct {
        const char *opcode, *dir;
    } old[] = {
        {"equal-to", "EQ"},     {"not-equal-to", "NE"},          {"greater-than-or-equal-to", "GE"},
        {"greater-than", "GT"}, {"less-than-or-equal-to", "LE"}, {"less-than", "LT"}};
    const struct hlo_node *nd = in->nd;
    const char *def;
    size_t i, n;

    out_puts(o, ", direction=");
    for (i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
        if (strcmp(nd->opcode, old[i].opcode) == 0) {
            out_puts(o, old[i].dir);
            return;
        }
    }
    if (txt_has(in->cmp_dir))
        txt_bytes(o, in->cmp_dir.p, (size_t)(in->cmp_dir.end - in->cmp_dir.p), limit);
    if (!txt_has(in->cmp_type) || in->cmp_type.p == in->cmp_type.end || nd->noperands == 0)
        return;
    def = default_comparison(in->g->nodes[nd->operands[0]].shape.type);
    n = (size_t)(in->cmp_type.end - in->cmp_type.p);
    if (n == strlen(def) && memcmp(in->cmp_type.p, def, n) == 0)
        return;
    out_puts(o, ", type=");
    txt_bytes(o, in->cmp_type.p, n, limit);
}

/* TriangularSolveOptions / CholeskyOptions (PrintAttributeProto: the fields
 * set, in number order). */
static void options_attrs(struct out *o, struct wire opts, int cholesky)
{
    static const char *const names[] = {NULL, "left_side", "lower", "unit_diagonal"};
    static const char *const transpose[] = {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE",
                                            "ADJOINT"};
    int64_t v;
    uint32_t f;

    for (f = 1; f <= (cholesky ? 1u : 4u); f++) {
        v = 0;
        txt_varint(opts, f, &v);
        if (v == 0)
            continue;
        out_puts(o, ", ");
        if (cholesky) {
            out_puts(o, "lower=true");
        } else if (f < 4) {
            out_puts(o, names[f]);
            out_puts(o, "=true");
        } else if (v > 0 && v < 4) {
            out_puts(o, "transpose_a=");
            out_puts(o, transpose[v]);
        }
    }
}

/* The small subclasses: batch norm, fft, rng, top-k, reduce-precision ... */
static void small_attrs(struct out *o, const struct txt_instr *in, enum txt_kind k, size_t limit)
{
    static const char *const fft[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
    static const char *const dist[] = {"rng_invalid", "rng_uniform", "rng_normal"};
    static const char *const alg[] = {"rng_default", "rng_three_fry", "rng_philox"};
    float eps;

    switch (k) {
    case K_BATCH_NORM:
        memcpy(&eps, &in->epsilon, sizeof(eps));
        out_puts(o, ", epsilon=");
        txt_g6(o, eps);
        put_int_attr(o, "feature_index", in->feature_index);
        break;
    case K_FFT:
        if (in->fft_type >= 0 && in->fft_type < 4) {
            out_puts(o, ", fft_type=");
            out_puts(o, fft[in->fft_type]);
        }
        put_list_attr(o, "fft_length", in->all, 32, limit);
        break;
    case K_RNG:
        if (in->distribution >= 0 && in->distribution < 3) {
            out_puts(o, ", distribution=");
            out_puts(o, dist[in->distribution]);
        }
        break;
    case K_RNG_BIT_GENERATOR:
        if (in->rng_algorithm >= 0 && in->rng_algorithm < 3) {
            out_puts(o, ", algorithm=");
            out_puts(o, alg[in->rng_algorithm]);
        }
        break;
    case K_RNG_STATE:
        put_int_attr(o, "delta", in->delta);
        break;
    case K_TOPK:
        put_int_attr(o, "k", in->k);
        out_puts(o, in->largest ? ", largest=true" : ", largest=false");
        break;
    case K_REDUCE_PRECISION:
        put_int_attr(o, "exponent_bits", (int32_t)in->exponent_bits);
        put_int_attr(o, "mantissa_bits", (int32_t)in->mantissa_bits);
        break;
    case K_TRIANGULAR_SOLVE:
    case K_CHOLESKY:
        if (txt_has(k == K_CHOLESKY ? in->cholesky : in->triangular))
            options_attrs(o, k == K_CHOLESKY ? in->cholesky : in->triangular, k == K_CHOLESKY);
        break;
    default:
        break;
    }
}

/* ", parameter_replication={true,false}" when given. */
static void put_replication(struct out *o, struct wire pr, size_t limit)
{
    struct txt_rep r;
    uint64_t v;
    int first = 1;

    if (!txt_has(pr) || txt_rep_count(pr, 1) == 0)
        return;
    out_puts(o, ", parameter_replication={");
    txt_rep_init(&r, pr, 1);
    while (!txt_full(o, limit) && txt_rep_next(&r, &v)) {
        if (!first)
            out_putc(o, ',');
        first = 0;
        out_puts(o, v ? "true" : "false");
    }
    out_putc(o, '}');
}

/* The array and indexing ops: dimensions, slices, pads, gathers ... */
static void shape_attrs(struct out *o, const struct txt_instr *in, enum txt_kind k, size_t limit)
{
    int64_t d;
    uint32_t i;

    switch (k) {
    case K_DIMS:
    case K_REDUCE:
        put_list_attr(o, "dimensions", in->all, 14, limit);
        break;
    case K_DIM0:
    case K_DIM_SIZE:
        put_dim0(o, in);
        break;
    case K_SORT:
        put_dim0(o, in);
        if (in->is_stable)
            out_puts(o, ", is_stable=true");
        break;
    case K_MAP:
        out_puts(o, ", dimensions={");
        for (i = 0; i < in->nd->shape.ndims && !txt_full(o, limit); i++)
            out_printf(o, i ? ",%u" : "%u", i);
        out_putc(o, '}');
        break;
    case K_RESHAPE:
        if (dim0(in, &d) && d != -1)
            put_int_attr(o, "inferred_dimension", d);
        break;
    case K_SLICE:
        put_slice(o, in, limit);
        break;
    case K_PAD:
        if (txt_has(in->padding))
            put_padding(o, in->padding, limit);
        break;
    case K_DYNAMIC_SLICE:
        put_list_attr(o, "dynamic_slice_sizes", in->all, 20, limit);
        break;
    case K_IOTA:
        if (dim0(in, &d))
            put_int_attr(o, "iota_dimension", d);
        break;
    case K_GATHER:
        if (txt_has(in->gather_dims))
            put_gather_numbers(o, in->gather_dims, 0, limit);
        put_list_attr(o, "slice_sizes", in->all, 34, limit);
        if (in->sorted_indices)
            out_puts(o, ", indices_are_sorted=true");
        break;
    case K_SCATTER:
        if (txt_has(in->scatter_dims))
            put_gather_numbers(o, in->scatter_dims, 1, limit);
        if (in->sorted_indices)
            out_puts(o, ", indices_are_sorted=true");
        if (in->unique_indices)
            out_puts(o, ", unique_indices=true");
        break;
    default:
        break;
    }
}

/* Convolutions and dots. */
static void contraction_attrs(struct out *o, const struct txt_instr *in, enum txt_kind k,
                              size_t limit)
{
    struct wire dn;

    switch (k) {
    case K_CONV:
        put_window_attr(o, in->window, 0, limit);
        put_dim_labels(o, in->conv_dims);
        if (in->feature_groups > 1)
            put_int_attr(o, "feature_group_count", in->feature_groups);
        if (in->batch_groups > 1)
            put_int_attr(o, "batch_group_count", in->batch_groups);
        put_precision(o, in->precision, in->nd->noperands);
        break;
    case K_DOT:
    case K_SCALED_DOT:
        if (txt_has(in->dot_dims)) {
            out_puts(o, ", ");
            put_dot_numbers(o, in->dot_dims, limit);
        }
        put_precision(o, in->precision, k == K_DOT ? in->nd->noperands : 2);
        break;
    case K_RAGGED_DOT:
        if (txt_has(in->ragged_dims)) {
            dn.p = dn.end = NULL;
            txt_msg(in->ragged_dims, 1, &dn);
            out_puts(o, ", ");
            put_dot_numbers(o, dn, limit);
            if (txt_rep_count(in->ragged_dims, 2) > 0)
                put_list_attr(o, "lhs_ragged_dims", in->ragged_dims, 2, limit);
            if (txt_rep_count(in->ragged_dims, 3) > 0)
                put_list_attr(o, "rhs_group_dims", in->ragged_dims, 3, limit);
        }
        put_precision(o, in->precision, 2);
        break;
    default:
        break;
    }
}

/* async-start: its thread, then the wrapped instruction's attributes when
 * the syntax sugar prints it in the async op's place. */
static void async_attrs(struct out *o, const struct txt_instr *in, size_t limit, int depth)
{
    struct txt_instr w;
    uint32_t root;
    size_t n = (size_t)(in->async_thread.end - in->async_thread.p);

    if (txt_has(in->async_thread) && n > 0 &&
        !(n == 4 && memcmp(in->async_thread.p, "main", 4) == 0)) {
        out_puts(o, ", async_execution_thread=\"");
        txt_bytes(o, in->async_thread.p, n, limit);
        out_putc(o, '"');
    }
    root = txt_async_wrapped(in->g, in->node);
    if (root == UINT32_MAX || depth >= 4 || txt_instr_read(&w, in->g, in->src, root) != 0)
        return;
    txt_extra_attrs(o, &w, limit, depth + 1);
}

void txt_opcode_attrs(struct out *o, const struct txt_instr *in, size_t limit, int depth)
{
    enum txt_kind k = txt_opcode_kind(in->nd->opcode);

    switch (k) {
    case K_ALL_GATHER:
    case K_ALL_REDUCE:
    case K_REDUCE_SCATTER:
    case K_ALL_TO_ALL:
    case K_COLLECTIVE:
    case K_PERMUTE:
    case K_SEND_RECV:
        collective_attrs(o, in, k, limit);
        break;
    case K_CUSTOM_CALL:
        custom_call_attrs(o, in, limit);
        break;
    case K_CONV:
    case K_DOT:
    case K_SCALED_DOT:
    case K_RAGGED_DOT:
        contraction_attrs(o, in, k, limit);
        break;
    case K_REDUCE_WINDOW:
    case K_SELECT_AND_SCATTER:
        put_window_attr(o, in->window, 0, limit);
        break;
    case K_FUSION:
        out_puts(o, ", kind=");
        out_puts(o, in->nd->fusion_kind);
        put_aliasing(o, in, limit);
        break;
    case K_GTE:
        put_int_attr(o, "index", in->nd->tuple_index);
        break;
    case K_PARAMETER:
        put_replication(o, in->param_repl, limit);
        break;
    case K_COMPARE:
        compare_attrs(o, in, limit);
        break;
    case K_COPY_START:
        if (in->has_prefetch_index || in->cross_program)
            put_int_attr(o, "cross_program_prefetch_index",
                         in->has_prefetch_index ? (int32_t)in->prefetch_index : 0);
        break;
    case K_OUTFEED:
        if (txt_has(in->outfeed_shape)) {
            out_puts(o, ", outfeed_shape=");
            txt_shape_proto(o, in->outfeed_shape, limit);
        }
        break;
    case K_ASYNC_START:
        async_attrs(o, in, limit, depth);
        break;
    case K_BATCH_NORM:
    case K_FFT:
    case K_RNG:
    case K_RNG_BIT_GENERATOR:
    case K_RNG_STATE:
    case K_TOPK:
    case K_REDUCE_PRECISION:
    case K_TRIANGULAR_SOLVE:
    case K_CHOLESKY:
        small_attrs(o, in, k, limit);
        break;
    default:
        shape_attrs(o, in, k, limit);
        break;
    }
}
