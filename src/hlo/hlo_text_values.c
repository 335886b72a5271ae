/*
 * hlo_text_values.c - the value printers of the HLO text printer
 * (hlo_text_int.h): primitive type names (primitive_util), shapes and
 * layouts (ShapeUtil::PrintHumanString[WithLayout], Layout::Print),
 * numbers as absl and XLA's RoundTripFpToString write them, literals
 * (LiteralBase::PrintWithoutShapeOneline), escapes (absl::CEscape), names
 * (NameUniquer::GetSanitizedName), and the wire helpers the printer walks
 * repeated fields with.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo_module_int.h"
#include "hlo_text_int.h"

/* ---- wire helpers ---- */

void txt_rep_init(struct txt_rep *r, struct wire msg, uint32_t field)
{
    r->msg = msg;
    r->packed.p = r->packed.end = NULL;
    r->field = field;
}

int txt_rep_next(struct txt_rep *r, uint64_t *v)
{
    for (;;) {
        uint32_t f;
        int t;
        if (!wire_eof(&r->packed)) {
            if (wire_varint(&r->packed, v) == 0)
                return 1;
            break;
        }
        if (wire_eof(&r->msg) || wire_key(&r->msg, &f, &t) != 0)
            break;
        if (f == r->field && t == WIRE_VARINT) {
            if (wire_varint(&r->msg, v) != 0)
                break;
            return 1;
        }
        if (f == r->field && t == WIRE_LEN) {
            if (wire_bytes(&r->msg, &r->packed) != 0)
                break;
            continue;
        }
        if (wire_skip(&r->msg, t) != 0)
            break;
    }
    r->msg.p = r->msg.end;
    r->packed.p = r->packed.end;
    return 0;
}

uint64_t txt_rep_count(struct wire msg, uint32_t field)
{
    struct txt_rep r;
    uint64_t v, n = 0;

    txt_rep_init(&r, msg, field);
    while (txt_rep_next(&r, &v))
        n++;
    return n;
}

int txt_msg_next(struct wire *cur, uint32_t field, struct wire *sub)
{
    while (!wire_eof(cur)) {
        uint32_t f;
        int t;
        if (wire_key(cur, &f, &t) != 0)
            break;
        if (f == field && t == WIRE_LEN) {
            if (wire_bytes(cur, sub) != 0)
                break;
            return 1;
        }
        if (wire_skip(cur, t) != 0)
            break;
    }
    cur->p = cur->end;
    return 0;
}

int txt_varint(struct wire msg, uint32_t field, int64_t *v)
{
    int found = 0;

    while (!wire_eof(&msg)) {
        uint32_t f;
        int t;
        uint64_t x;
        if (wire_key(&msg, &f, &t) != 0)
            break;
        if (f == field && t == WIRE_VARINT) {
            if (wire_varint(&msg, &x) != 0)
                break;
            *v = (int64_t)x;
            found = 1;
        } else if (wire_skip(&msg, t) != 0) {
            break;
        }
    }
    return found;
}

int txt_msg(struct wire msg, uint32_t field, struct wire *sub)
{
    struct wire s;
    int found = 0;

    while (txt_msg_next(&msg, field, &s)) {
        *sub = s;
        found = 1;
    }
    return found;
}

/* ---- writers ---- */

void txt_i64s(struct out *o, struct wire msg, uint32_t field, const char *sep, size_t limit)
{
    struct txt_rep r;
    uint64_t v;
    int first = 1;

    txt_rep_init(&r, msg, field);
    while (!txt_full(o, limit) && txt_rep_next(&r, &v)) {
        if (!first)
            out_puts(o, sep);
        out_i64(o, (int64_t)v);
        first = 0;
    }
}

void txt_braced_i64s(struct out *o, struct wire msg, uint32_t field, size_t limit)
{
    out_putc(o, '{');
    txt_i64s(o, msg, field, ",", limit);
    out_putc(o, '}');
}

void txt_cescape(struct out *o, const uint8_t *s, size_t n, size_t limit)
{
    size_t i, run = 0;

    if (n == 0)
        return;
    for (i = 0; i < n && !txt_full(o, limit); i++) {
        uint8_t c = s[i];
        const char *e = NULL;
        char oct[5];
        if (c == '\n')
            e = "\\n";
        else if (c == '\r')
            e = "\\r";
        else if (c == '\t')
            e = "\\t";
        else if (c == '"')
            e = "\\\"";
        else if (c == '\'')
            e = "\\'";
        else if (c == '\\')
            e = "\\\\";
        else if (c < 0x20 || c >= 0x7f) {
            oct[0] = '\\';
            oct[1] = (char)('0' + (c >> 6));
            oct[2] = (char)('0' + ((c >> 3) & 7));
            oct[3] = (char)('0' + (c & 7));
            oct[4] = 0;
            e = oct;
        }
        if (e == NULL) {
            run++;
            continue;
        }
        out_write(o, s + i - run, run);
        run = 0;
        out_puts(o, e);
    }
    out_write(o, s + i - run, run);
}

void txt_bytes(struct out *o, const void *s, size_t n, size_t limit)
{
    if (n > 0 && limit > 0)
        out_write(o, s, n < limit ? n : limit);
}

/* Whether a name is a primitive type's, a keyword of the HLO text. */
static int is_type_name(const char *s, size_t n)
{
    int64_t t;

    for (t = 1; t <= 34; t++) {
        const char *name = txt_type_name(t);
        if (strcmp(name, "invalid") != 0 && strlen(name) == n && memcmp(name, s, n) == 0)
            return 1;
    }
    return 0;
}

/* Whether NameUniquer keeps byte c of a name (past the first): ASCII
 * letters, digits, '-', '.' and '_'. */
static int name_char_ok(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_';
}

/* Byte i of name s as NameUniquer::GetSanitizedName keeps it. */
static char name_char(const char *s, size_t i)
{
    unsigned char c = (unsigned char)s[i];

    if (i == 0)
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ? (char)c : '_';
    return name_char_ok(c) ? (char)c : '_';
}

void txt_name(struct out *o, const char *s, size_t n, size_t limit)
{
    size_t i;
    int clean = 1, dunder;

    out_putc(o, '%');
    if (n == 0)
        return;
    if (n > limit)
        n = limit;
    for (i = 0; i < n && clean; i++)
        clean = name_char(s, i) == s[i];
    /* "__" that is not "__xla_" becomes "a_" (names reserved by backends) */
    dunder = n >= 2 && name_char(s, 0) == '_' && name_char(s, 1) == '_' &&
             !(n >= 6 && name_char(s, 2) == 'x' && name_char(s, 3) == 'l' &&
               name_char(s, 4) == 'a' && name_char(s, 5) == '_');
    if (clean && !dunder) {
        out_write(o, s, n);
    } else {
        for (i = 0; i < n; i++)
            out_putc(o, i == 0 && dunder ? 'a' : name_char(s, i));
    }
    /* type names are keywords of the HLO text ("tuple" excepted) */
    if (clean && is_type_name(s, n) && !(n == 5 && memcmp(s, "tuple", 5) == 0))
        out_putc(o, '_');
}

void txt_g6(struct out *o, double v)
{
    out_printf(o, "%.6g", v);
}

/* ---- types ---- */

const char *txt_type_name(int64_t type)
{
    static const char *const names[] = {
        [1] = "pred",
        [2] = "s8",
        [3] = "s16",
        [4] = "s32",
        [5] = "s64",
        [6] = "u8",
        [7] = "u16",
        [8] = "u32",
        [9] = "u64",
        [10] = "f16",
        [11] = "f32",
        [12] = "f64",
        [13] = "tuple",
        [14] = "opaque",
        [15] = "c64",
        [16] = "bf16",
        [17] = "token",
        [18] = "c128",
        [19] = "f8e5m2",
        [20] = "f8e4m3fn",
        [21] = "s4",
        [22] = "u4",
        [23] = "f8e4m3b11fnuz",
        [24] = "f8e5m2fnuz",
        [25] = "f8e4m3fnuz",
        [26] = "s2",
        [27] = "u2",
        [28] = "f8e4m3",
        [29] = "f8e3m4",
        [30] = "s1",
        [31] = "u1",
        [32] = "f4e2m1fn",
        [33] = "f8e8m0fnu",
        [34] = "buffer",
    };

    if (type < 1 || type > 34 || names[type] == NULL)
        return "invalid";
    return names[type];
}

int txt_is_array(int64_t type)
{
    return type >= 1 && type <= 33 && type != HLO_TUPLE && type != HLO_OPAQUE && type != HLO_TOKEN;
}

/* Whether a PrimitiveType is integral (for the layout's index types). */
static int is_integral_type(int64_t type)
{
    return (type >= 2 && type <= 9) || type == 21 || type == 22 || (type >= 26 && type <= 27) ||
           type == 30 || type == 31;
}

/* ---- shapes and layouts ---- */

/* Whether a layout prints as "{}" (the layout of a scalar is then left out). */
static int layout_empty(const struct hlo_shape *s)
{
    const struct hlo_layout_more *m = s->more;

    if (s->nminor > 0 || s->element_bits != 0 || s->memory_space != 0)
        return 0;
    return m == NULL || (m->ntiles == 0 && m->tail_padding <= 1 && m->index_type == 0 &&
                         m->pointer_type == 0 && m->nsplits == 0 && m->dyn_prefix_bytes <= 0);
}

/* The tiles of a layout: "T(8,128)(2,1)". */
static void put_tiles(struct out *o, const struct hlo_layout_more *m, size_t limit)
{
    uint32_t i, j;

    out_putc(o, 'T');
    for (i = 0; i < m->ntiles && !txt_full(o, limit); i++) {
        out_putc(o, '(');
        for (j = 0; j < m->tiles[i].ndims && !txt_full(o, limit); j++) {
            int64_t d = m->tiles[i].dims[j];
            if (j > 0)
                out_putc(o, ',');
            if (d >= 0) {
                out_i64(o, d);
            } else if (d == INT64_MIN) {
                out_putc(o, '*');
            } else {
                out_puts(o, "Invalid value ");
                out_i64(o, d);
            }
        }
        out_putc(o, ')');
    }
}

/* "#(u32)" / "*(u32)" for a layout's index or pointer type. */
static void put_index_type(struct out *o, char mark, int64_t type)
{
    out_putc(o, mark);
    out_putc(o, '(');
    out_puts(o, is_integral_type(type) ? txt_type_name(type) : "invalid");
    out_putc(o, ')');
}

/* The split configs of a layout: "SC(0:512)(1:2,4)". */
static void put_splits(struct out *o, const struct hlo_layout_more *m, size_t limit)
{
    uint32_t i, j;

    out_puts(o, "SC");
    for (i = 0; i < m->nsplits && !txt_full(o, limit); i++) {
        out_putc(o, '(');
        out_i64(o, m->splits[i].dimension);
        out_putc(o, ':');
        for (j = 0; j < m->splits[i].nindices && !txt_full(o, limit); j++) {
            if (j > 0)
                out_putc(o, ',');
            out_i64(o, m->splits[i].indices[j]);
        }
        out_putc(o, ')');
    }
}

/* Layout::Print of s's layout: "{1,0:T(8,128)(2,1)S(3)}". */
static void put_layout(struct out *o, const struct hlo_shape *s, size_t limit)
{
    const struct hlo_layout_more *m = s->more;
    uint32_t i;
    int colon = 0;

    out_putc(o, '{');
    for (i = 0; i < s->nminor && !txt_full(o, limit); i++) {
        if (i > 0)
            out_putc(o, ',');
        out_i64(o, s->minor_to_major[i]);
    }
#define COLON()                                                                                    \
    do {                                                                                           \
        if (!colon)                                                                                \
            out_putc(o, ':');                                                                      \
        colon = 1;                                                                                 \
    } while (0)
    if (m != NULL && m->ntiles > 0) {
        COLON();
        put_tiles(o, m, limit);
    }
    if (m != NULL && m->tail_padding > 1) {
        COLON();
        out_puts(o, "L(");
        out_i64(o, m->tail_padding);
        out_putc(o, ')');
    }
    if (m != NULL && m->index_type != 0) {
        COLON();
        put_index_type(o, '#', m->index_type);
    }
    if (m != NULL && m->pointer_type != 0) {
        COLON();
        put_index_type(o, '*', m->pointer_type);
    }
    if (s->element_bits != 0) {
        COLON();
        out_puts(o, "E(");
        out_i64(o, s->element_bits);
        out_putc(o, ')');
    }
    if (s->memory_space != 0) {
        COLON();
        out_puts(o, "S(");
        out_i64(o, s->memory_space);
        out_putc(o, ')');
    }
    if (m != NULL && m->nsplits > 0) {
        COLON();
        put_splits(o, m, limit);
    }
    if (m != NULL && m->dyn_prefix_bytes > 0) {
        COLON();
        out_puts(o, "M(");
        out_i64(o, m->dyn_prefix_bytes);
        out_putc(o, ')');
    }
#undef COLON
    out_putc(o, '}');
}

/* The dimensions of an array shape: "[2,<=3,?]". */
static void put_dims(struct out *o, const struct hlo_shape *s, size_t limit)
{
    uint32_t i;

    out_putc(o, '[');
    for (i = 0; i < s->ndims && !txt_full(o, limit); i++) {
        if (i > 0)
            out_putc(o, ',');
        if (s->dynamic != NULL && s->dynamic[i]) {
            if (s->dims[i] == INT64_MIN) {
                out_putc(o, '?');
                continue;
            }
            out_puts(o, "<=");
        }
        out_i64(o, s->dims[i]);
    }
    out_putc(o, ']');
}

void txt_shape(struct out *o, const struct hlo_shape *s, int with_layout, size_t limit)
{
    uint32_t i;

    if (s->type == HLO_TUPLE) {
        out_putc(o, '(');
        for (i = 0; i < s->ntuple && !txt_full(o, limit); i++) {
            if (i > 0 && i % 5 == 0)
                out_printf(o, ", /*index=%u*/", i);
            else if (i > 0)
                out_puts(o, ", ");
            txt_shape(o, &s->tuple[i], with_layout, limit);
        }
        out_putc(o, ')');
        return;
    }
    if (s->type == HLO_BUFFER) {
        out_puts(o, "b(");
        if (s->ntuple > 0)
            txt_shape(o, &s->tuple[0], with_layout, limit);
        out_putc(o, ')');
        return;
    }
    out_puts(o, txt_type_name(s->type));
    if (!txt_is_array(s->type) || s->ndims == 0)
        out_puts(o, "[]");
    else
        put_dims(o, s, limit);
    if (!with_layout || !txt_is_array(s->type) || !s->has_layout)
        return;
    if (s->ndims == 0 && layout_empty(s))
        return;
    put_layout(o, s, limit);
}

void hlo_shape_print(struct out *o, const struct hlo_shape *s, int with_layout)
{
    txt_shape(o, s, with_layout, SIZE_MAX - 1);
}

void txt_shape_proto(struct out *o, struct wire w, size_t limit)
{
    struct arena a;
    struct hlo_shape s;
    int rc;

    arena_init(&a);
    rc = hlo_read_shape(&a, w, &s, 0);
    if (rc == 0)
        txt_shape(o, &s, 1, limit);
    else if (rc == -ENOMEM)
        txt_oom(o);
    arena_free(&a);
}

/* ShapeUtil::GetLeafCount: the non-tuple shapes inside s (0 for "()"). */
static uint64_t leaves(const struct hlo_shape *s)
{
    uint64_t n = 0;
    uint32_t i;

    if (s->type != HLO_TUPLE)
        return 1;
    for (i = 0; i < s->ntuple && n < UINT32_MAX; i++)
        n += leaves(&s->tuple[i]);
    return n;
}

uint64_t txt_leaf_count(const struct hlo_shape *s)
{
    uint64_t n = leaves(s);

    return n == 0 ? 1 : n;
}

int txt_elements(const struct hlo_shape *s, uint64_t max, uint64_t *count)
{
    uint64_t n = 1;
    uint32_t i;

    *count = 0;
    for (i = 0; i < s->ndims; i++) {
        if (s->dims[i] < 0 || __builtin_mul_overflow(n, (uint64_t)s->dims[i], &n))
            return -1;
    }
    if (n > max)
        return -1;
    *count = n;
    return 0;
}

/* ---- numbers ---- */

/* How a small float format spells infinities and NaNs. */
enum {
    FP_IEEE,  /* IEEE-like: the top exponent is inf / NaN */
    FP_FN,    /* finite: all ones is NaN */
    FP_FNUZ,  /* finite, unsigned zero: 0x80 is NaN */
    FP_FINITE /* no inf, no NaN */
};

/* A float of ebits exponent and mbits mantissa bits with bias, as a
 * double. */
static double small_float(uint32_t bits, int ebits, int mbits, int bias, int kind)
{
    uint32_t sign = (bits >> (ebits + mbits)) & 1;
    uint32_t e = (bits >> mbits) & ((1u << ebits) - 1);
    uint32_t m = bits & ((1u << mbits) - 1);
    uint32_t emax = (1u << ebits) - 1;
    double v;

    if (kind == FP_FNUZ && sign && e == 0 && m == 0)
        return -NAN;
    if (kind == FP_IEEE && e == emax)
        return m != 0 ? (sign ? -NAN : NAN) : (sign ? -INFINITY : INFINITY);
    if (kind == FP_FN && e == emax && m == (1u << mbits) - 1)
        return sign ? -NAN : NAN;
    if (e == 0)
        v = ldexp((double)m, 1 - bias - mbits);
    else
        v = ldexp((double)(m | (1u << mbits)), (int)e - bias - mbits);
    return sign ? -v : v;
}

/* "(0x..)" after a NaN whose payload is not the plain quiet NaN's
 * (RoundTripNanPayload). */
static void put_nan_payload(struct out *o, double v, uint64_t payload, uint64_t quiet)
{
    if (isnan(v) && payload != quiet)
        out_printf(o, "(0x%llx)", (unsigned long long)payload);
}

/* A float as RoundTripFpToString(float) writes it. */
static void put_f32(struct out *o, uint32_t bits)
{
    char buf[48];
    float f;

    memcpy(&f, &bits, sizeof(f));
    snprintf(buf, sizeof(buf), "%.6g", (double)f);
    if (strtof(buf, NULL) != f)
        snprintf(buf, sizeof(buf), "%.9g", (double)f);
    out_puts(o, buf);
    put_nan_payload(o, f, bits & 0x7fffffu, 0x400000u);
}

/* A double as RoundTripFpToString(double) writes it. */
static void put_f64(struct out *o, uint64_t bits)
{
    char buf[48];
    double d;

    memcpy(&d, &bits, sizeof(d));
    snprintf(buf, sizeof(buf), "%.15g", d);
    if (strtod(buf, NULL) != d)
        snprintf(buf, sizeof(buf), "%.17g", d);
    out_puts(o, buf);
    put_nan_payload(o, d, bits & 0xfffffffffffffull, 1ull << 51);
}

/* A float of a type smaller than f32 (its bits) as RoundTripFpToString
 * writes it: %g with the type's max_digits10. Returns 0, or -1 when type is
 * not one. */
static int put_small_float(struct out *o, int64_t type, uint32_t b)
{
    double v;
    uint32_t f32;
    float f;

    switch (type) {
    case 10: /* f16 */
        v = small_float(b & 0xffff, 5, 10, 15, FP_IEEE);
        out_printf(o, "%.5g", v);
        put_nan_payload(o, v, b & 0x3ff, 0x200);
        return 0;
    case 16: /* bf16 */
        f32 = (b & 0xffff) << 16;
        memcpy(&f, &f32, sizeof(f));
        out_printf(o, "%.4g", (double)f);
        put_nan_payload(o, f, b & 0x7f, 0x40);
        return 0;
    case 19: /* f8e5m2 */
        v = small_float(b & 0xff, 5, 2, 15, FP_IEEE);
        out_printf(o, "%.2g", v);
        put_nan_payload(o, v, b & 0x3, 0x2);
        return 0;
    case 20:
        out_printf(o, "%.3g", small_float(b & 0xff, 4, 3, 7, FP_FN));
        return 0;
    case 23:
        out_printf(o, "%.3g", small_float(b & 0xff, 4, 3, 11, FP_FNUZ));
        return 0;
    case 24:
        out_printf(o, "%.2g", small_float(b & 0xff, 5, 2, 16, FP_FNUZ));
        return 0;
    case 25:
        out_printf(o, "%.3g", small_float(b & 0xff, 4, 3, 8, FP_FNUZ));
        return 0;
    case 28:
        out_printf(o, "%.3g", small_float(b & 0xff, 4, 3, 7, FP_IEEE));
        return 0;
    case 29:
        out_printf(o, "%.3g", small_float(b & 0xff, 3, 4, 3, FP_IEEE));
        return 0;
    case 32:
        out_printf(o, "%.2g", small_float(b & 0xf, 2, 1, 1, FP_FINITE));
        return 0;
    case 33: /* f8e8m0fnu: a power of two, 0xff is NaN */
        out_printf(o, "%.2g", (b & 0xff) == 0xff ? NAN : ldexp(1.0, (int)(b & 0xff) - 127));
        return 0;
    default:
        return -1;
    }
}

/* ---- literals ---- */

/* How a LiteralProto holds the values of a type. */
enum { LIT_VARINT, LIT_BYTE, LIT_HALF, LIT_FIXED32, LIT_FIXED64 };

/* The LiteralProto field and encoding of a type's values, and the values
 * per element (2 for complex). Returns 0, or -1 for a type without one. */
static int literal_field(int64_t type, uint32_t *field, int *enc, int *per)
{
    static const struct {
        uint8_t type, field, enc, per;
    } map[] = {
        {1, 2, LIT_VARINT, 1},    {2, 15, LIT_BYTE, 1},    {3, 17, LIT_HALF, 1},
        {4, 4, LIT_VARINT, 1},    {5, 5, LIT_VARINT, 1},   {6, 3, LIT_BYTE, 1},
        {7, 16, LIT_HALF, 1},     {8, 6, LIT_VARINT, 1},   {9, 7, LIT_VARINT, 1},
        {10, 11, LIT_HALF, 1},    {11, 8, LIT_FIXED32, 1}, {12, 9, LIT_FIXED64, 1},
        {15, 12, LIT_FIXED32, 2}, {16, 13, LIT_HALF, 1},   {18, 18, LIT_FIXED64, 2},
        {19, 19, LIT_BYTE, 1},    {20, 20, LIT_BYTE, 1},   {21, 21, LIT_BYTE, 1},
        {22, 22, LIT_BYTE, 1},    {23, 23, LIT_BYTE, 1},   {24, 24, LIT_BYTE, 1},
        {25, 25, LIT_BYTE, 1},    {26, 26, LIT_BYTE, 1},   {27, 27, LIT_BYTE, 1},
        {28, 28, LIT_BYTE, 1},    {29, 29, LIT_BYTE, 1},   {30, 30, LIT_BYTE, 1},
        {31, 31, LIT_BYTE, 1},    {32, 32, LIT_BYTE, 1},   {33, 33, LIT_BYTE, 1},
    };
    size_t i;

    for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        if (map[i].type == type) {
            *field = map[i].field;
            *enc = map[i].enc;
            *per = map[i].per;
            return 0;
        }
    }
    return -1;
}

/* Up to n raw values of the repeated fixed-size field `field` (4 or 8 bytes,
 * packed or not) of lit into v. Returns the count read. */
static uint64_t fixed_values(struct wire lit, uint32_t field, int size, uint64_t *v, uint64_t n)
{
    uint64_t k = 0;

    while (k < n && !wire_eof(&lit)) {
        uint32_t f;
        int t;
        struct wire run;
        if (wire_key(&lit, &f, &t) != 0)
            break;
        if (f == field && t == (size == 4 ? WIRE_I32 : WIRE_I64)) {
            run.p = lit.p;
            run.end = lit.end - lit.p >= size ? lit.p + size : lit.end;
        } else if (f == field && t == WIRE_LEN) {
            if (wire_bytes(&lit, &run) != 0)
                break;
        } else {
            if (wire_skip(&lit, t) != 0)
                break;
            continue;
        }
        if (t != WIRE_LEN)
            lit.p = run.end;
        while (k < n && run.end - run.p >= size) {
            uint64_t x = 0;
            memcpy(&x, run.p, (size_t)size);
            v[k++] = x;
            run.p += size;
        }
    }
    return k;
}

/* Up to n raw values of type's field of lit into v. Returns the count. */
static uint64_t literal_values(struct wire lit, int64_t type, uint64_t *v, uint64_t n)
{
    uint32_t field;
    int enc, per;
    struct wire b;
    uint64_t k = 0;

    if (literal_field(type, &field, &enc, &per) != 0)
        return 0;
    n *= (uint64_t)per;
    if (enc == LIT_VARINT) {
        struct txt_rep r;
        txt_rep_init(&r, lit, field);
        while (k < n && txt_rep_next(&r, &v[k]))
            k++;
    } else if (enc == LIT_FIXED32 || enc == LIT_FIXED64) {
        k = fixed_values(lit, field, enc == LIT_FIXED32 ? 4 : 8, v, n);
    } else if (txt_msg(lit, field, &b)) {
        size_t size = enc == LIT_BYTE ? 1 : 2;
        for (; k < n && (size_t)(b.end - b.p) >= size; k++, b.p += size)
            v[k] = size == 1 ? b.p[0] : (uint64_t)(b.p[0] | (b.p[1] << 8));
    }
    return k / (uint64_t)per;
}

/* Bits of a signed type (sub-byte and byte types), 0 when not one. */
static int signed_bits(int64_t type)
{
    switch (type) {
    case 30:
        return 1;
    case 26:
        return 2;
    case 21:
        return 4;
    case 2:
        return 8;
    case 3:
        return 16;
    case 4:
        return 32;
    case 5:
        return 64;
    default:
        return 0;
    }
}

/* Bits of an unsigned type, 0 when not one. */
static int unsigned_bits(int64_t type)
{
    switch (type) {
    case 31:
        return 1;
    case 27:
        return 2;
    case 22:
        return 4;
    case 6:
        return 8;
    case 7:
        return 16;
    case 8:
        return 32;
    case 9:
        return 64;
    default:
        return 0;
    }
}

/* One element (raw values v[0], v[1] for complex) as LiteralBase::
 * GetAsString writes it; in_array: predicates as 1 / 0. */
static void put_element(struct out *o, int64_t type, const uint64_t *v, int in_array)
{
    int sb = signed_bits(type), ub = unsigned_bits(type);

    if (type == HLO_PRED)
        out_puts(o, in_array ? (v[0] ? "1" : "0") : (v[0] ? "true" : "false"));
    else if (sb > 0)
        out_i64(o, (int64_t)(v[0] << (64 - sb)) >> (64 - sb));
    else if (ub > 0)
        out_u64(o, ub == 64 ? v[0] : v[0] & ((1ull << ub) - 1));
    else if (type == 11)
        put_f32(o, (uint32_t)v[0]);
    else if (type == 12)
        put_f64(o, v[0]);
    else if (type == 15 || type == 18) {
        out_putc(o, '(');
        type == 15 ? put_f32(o, (uint32_t)v[0]) : put_f64(o, v[0]);
        out_puts(o, ", ");
        type == 15 ? put_f32(o, (uint32_t)v[1]) : put_f64(o, v[1]);
        out_putc(o, ')');
    } else {
        put_small_float(o, type, (uint32_t)v[0]);
    }
}

/* A literal's array being printed (DenseArrayPrintHelper, one line). */
struct lit_print {
    const struct hlo_shape *s; /* its shape */
    const uint64_t *v;         /* raw values in layout order */
    uint64_t count;            /* elements in v */
    int per;                   /* values per element */
    uint64_t strides[64];      /* layout-order stride of each dimension */
    int64_t idx[64];           /* the index being printed */
};

/* Dimensions [depth, rank) of the array at lp->idx[0..depth). */
static void print_level(struct out *o, struct lit_print *lp, uint32_t depth, size_t limit)
{
    uint32_t rank = lp->s->ndims, left = rank - depth;
    int64_t i, d;

    if (depth == rank) {
        uint64_t lin = 0;
        uint32_t k;
        for (k = 0; k < rank; k++)
            lin += (uint64_t)lp->idx[k] * lp->strides[k];
        if (lin < lp->count) /* always, with a count that did not wrap */
            put_element(o, lp->s->type, lp->v + lin * lp->per, rank > 0);
        return;
    }
    d = lp->s->dims[depth];
    if (rank == 1)
        out_putc(o, '{');
    else if (left == 1)
        out_puts(o, d <= 1 ? "{" : "{ ");
    else if (rank > 3 && depth > 0)
        out_printf(o, "{ /*i%u=%lld*/%s", depth - 1, (long long)lp->idx[depth - 1],
                   d > 0 ? " " : "");
    else
        out_puts(o, "{ ");
    for (i = 0; i < d && !txt_full(o, limit); i++) {
        lp->idx[depth] = i;
        print_level(o, lp, depth + 1, limit);
        if (i < d - 1)
            out_puts(o, ", ");
    }
    if (rank == 1)
        out_putc(o, '}');
    else if (left == 1)
        out_puts(o, d <= 1 ? "}" : " }");
    else
        out_puts(o, " }");
}

/* The layout-order strides of s's dimensions into strides (row major when
 * the layout is not a permutation of them). */
static void layout_strides(const struct hlo_shape *s, uint64_t *strides)
{
    uint64_t seen = 0, stride = 1;
    uint32_t i;
    int perm = s->nminor == s->ndims;

    for (i = 0; perm && i < s->nminor; i++) {
        int64_t d = s->minor_to_major[i];
        if (d < 0 || d >= (int64_t)s->ndims || (seen >> d) & 1)
            perm = 0;
        else
            seen |= 1ull << d;
    }
    for (i = 0; i < s->ndims; i++) {
        uint32_t d = perm ? (uint32_t)s->minor_to_major[i] : s->ndims - 1 - i;
        strides[d] = stride;
        stride *= (uint64_t)s->dims[d];
    }
}

/* Elements of literals printed at most (a custom-call literal may be big). */
#define LITERAL_MAX 65536

int txt_literal(struct out *o, const char *prefix, struct wire lit, int with_shape, size_t limit)
{
    return txt_literal_max(o, prefix, lit, with_shape, LITERAL_MAX, limit);
}

int txt_literal_max(struct out *o, const char *prefix, struct wire lit, int with_shape,
                    uint64_t max_elements, size_t limit)
{
    struct arena a;
    struct wire sw;
    struct hlo_shape s;
    struct lit_print lp;
    uint64_t count = 0, *v = NULL;
    uint32_t field;
    int enc, per = 1, rc = -1, read;

    if (!txt_msg(lit, 1, &sw))
        return -1;
    arena_init(&a);
    read = hlo_read_shape(&a, sw, &s, 0);
    if (read == -ENOMEM)
        txt_oom(o);
    if (read != 0 || s.ndims > 64)
        goto out;
    if (s.type == HLO_TOKEN) {
        out_puts(o, prefix);
        out_puts(o, "token");
        rc = 0;
        goto out;
    }
    if (literal_field(s.type, &field, &enc, &per) != 0)
        goto out;
    if (txt_elements(&s, max_elements, &count) != 0)
        goto out;
    v = malloc((count ? count : 1) * 2 * sizeof(*v));
    if (v == NULL)
        txt_oom(o);
    if (v == NULL || literal_values(lit, s.type, v, count) < count)
        goto out;
    lp.s = &s;
    lp.v = v;
    lp.count = count;
    lp.per = per;
    layout_strides(&s, lp.strides);
    out_puts(o, prefix);
    if (with_shape) {
        txt_shape(o, &s, 1, limit);
        out_putc(o, ' ');
    }
    print_level(o, &lp, 0, limit);
    rc = 0;
out:
    free(v);
    arena_free(&a);
    return rc;
}

/* A tuple literal's elements (LiteralProto.tuple_literals, field 10) as
 * XLA's TupleToStringHelper prints them on one line: "( a, b )", nested
 * tuples alike, depth levels deep at most. Writes to o; -1 when some
 * element cannot be printed or the count is not the shape's. */
static int tuple_literal(struct out *o, struct wire lit, uint64_t max_elements, size_t limit,
                         int depth)
{
    struct arena a;
    struct wire sw, cur = lit, el;
    struct hlo_shape s;
    uint32_t n = 0;
    int rc;

    if (!txt_msg(lit, 1, &sw))
        return -1;
    arena_init(&a);
    rc = hlo_read_shape(&a, sw, &s, 0);
    if (rc == 0 && s.type != HLO_TUPLE)
        rc = txt_literal_max(o, "", lit, 0, max_elements, limit);
    else if (rc == 0 && depth <= 0)
        rc = -1;
    else if (rc == 0) {
        out_puts(o, "( ");
        while (rc == 0 && txt_msg_next(&cur, 10, &el)) {
            if (n++ > 0)
                out_puts(o, ", ");
            rc = tuple_literal(o, el, max_elements, limit, depth - 1);
        }
        if (rc == 0 && n != s.ntuple)
            rc = -1;
        out_puts(o, " )");
    }
    arena_free(&a);
    return rc == 0 ? 0 : -1;
}

int txt_tuple_literal(struct out *o, struct wire lit, uint64_t max_elements, size_t limit)
{
    struct out tmp;
    int rc;

    out_init(&tmp);
    rc = tuple_literal(&tmp, lit, max_elements, limit, 64);
    if (rc == 0 && !out_failed(&tmp))
        out_append(o, &tmp);
    out_discard(&tmp);
    return rc;
}
