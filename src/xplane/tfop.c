/*
 * tfop.c - framework op name parsing (see tfop.h).
 *
 * The regular expressions of tf_op_utils.cc are written out as small
 * character-class scanners.
 */
#include "tfop.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

static int is_lower(char c)
{
    return c >= 'a' && c <= 'z';
}

static int is_upper(char c)
{
    return c >= 'A' && c <= 'Z';
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_alnum(char c)
{
    return is_lower(c) || is_upper(c) || is_digit(c);
}

/* [A-Za-z0-9.][A-Za-z0-9_./>-]* */
int tfop_is_tf_name(const char *s, size_t n)
{
    size_t i;

    if (n == 0 || !(is_alnum(s[0]) || s[0] == '.'))
        return 0;
    for (i = 1; i < n; i++) {
        char c = s[i];
        if (!(is_alnum(c) || c == '_' || c == '.' || c == '/' || c == '>' || c == '-'))
            return 0;
    }
    return 1;
}

/* [A-Z_][a-zA-Z0-9_]* */
int tfop_is_tf_type(const char *s, size_t n)
{
    size_t i;

    if (n == 0 || !(is_upper(s[0]) || s[0] == '_'))
        return 0;
    for (i = 1; i < n; i++) {
        if (!(is_alnum(s[i]) || s[i] == '_'))
            return 0;
    }
    return 1;
}

/* [a-z_][a-z0-9_]*(\[.*\])?  ('.' does not match a newline) */
int tfop_is_jax_type(const char *s, size_t n)
{
    size_t i;

    if (n == 0 || !(is_lower(s[0]) || s[0] == '_'))
        return 0;
    for (i = 1; i < n && (is_lower(s[i]) || is_digit(s[i]) || s[i] == '_'); i++)
        ;
    if (i == n)
        return 1;
    if (s[i] != '[' || n - i < 2 || s[n - 1] != ']')
        return 0;
    for (; i < n; i++) {
        if (s[i] == '\n')
            return 0;
    }
    return 1;
}

/* The last '/'-separated component of s[0..n). */
static const char *last_scope(const char *s, size_t n, size_t *len)
{
    size_t i = n;

    while (i > 0 && s[i - 1] != '/')
        i--;
    *len = n - i;
    return s + i;
}

static int contains(const char *hay, size_t hn, const char *needle, size_t nn)
{
    size_t i;

    if (nn == 0)
        return 1;
    for (i = 0; i + nn <= hn; i++) {
        if (memcmp(hay + i, needle, nn) == 0)
            return 1;
    }
    return 0;
}

int tfop_is_jax_name_and_type(const char *name, size_t nn, const char *type, size_t tn)
{
    size_t ln;
    const char *last;

    if (nn == 0 || !tfop_is_jax_type(type, tn))
        return 0;
    last = last_scope(name, nn, &ln);
    return contains(last, ln, type, tn);
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* absl::SimpleAtoi into int64: optional blanks, an optional sign, digits. */
static int is_integer(const char *s, size_t n)
{
    size_t i = 0, j = n, digits;
    uint64_t v = 0;
    int neg = 0;

    while (i < j && is_space(s[i]))
        i++;
    while (j > i && is_space(s[j - 1]))
        j--;
    if (i < j && (s[i] == '+' || s[i] == '-')) {
        neg = s[i] == '-';
        i++;
    }
    if (i == j)
        return 0;
    for (digits = 0; i < j; i++, digits++) {
        if (!is_digit(s[i]))
            return 0;
        if (v > (UINT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    return neg ? v <= (uint64_t)INT64_MAX + 1 : v <= (uint64_t)INT64_MAX;
}

/* DeriveOpType: the last scope without a numeric "_<n>" suffix. */
static void derive_op_type(const char *s, size_t n, const char **t, size_t *tn)
{
    size_t ln, i;
    const char *last = last_scope(s, n, &ln);

    *t = last;
    *tn = ln;
    for (i = ln; i > 0 && last[i - 1] != '_'; i--)
        ;
    if (i > 0 && is_integer(last + i, ln - i))
        *tn = i - 1;
}

static int starts_icase(const char *s, size_t n, const char *prefix)
{
    size_t pn = strlen(prefix);

    return n >= pn && strncasecmp(s, prefix, pn) == 0;
}

void tfop_parse(const char *s, size_t n, struct tfop *op)
{
    const char *colon = memchr(s, ':', n);
    const char *left, *right, *t;
    size_t ln, rn, tn;

    op->category = TFOP_UNKNOWN;
    op->name = s;
    op->name_len = n;
    op->type = "";
    op->type_len = 0;
    if (colon == NULL) {
        static const struct {
            const char *prefix;
            const char *type;
            enum tfop_category category;
        } memcpy_ops[] = {
            {"MEMCPYHToD", "MemcpyHToD", TFOP_MEMCPY_HTOD},
            {"MEMCPYDToH", "MemcpyDToH", TFOP_MEMCPY_DTOH},
            {"MEMCPYDToD", "MemcpyDToD", TFOP_MEMCPY_DTOD},
            {"MEMCPYHToH", "MemcpyHToH", TFOP_MEMCPY_HTOH},
        };
        size_t i;

        for (i = 0; i < sizeof(memcpy_ops) / sizeof(memcpy_ops[0]); i++) {
            if (starts_icase(s, n, memcpy_ops[i].prefix)) {
                op->category = memcpy_ops[i].category;
                op->type = memcpy_ops[i].type;
                op->type_len = strlen(memcpy_ops[i].type);
                return;
            }
        }
        return;
    }
    left = s;
    ln = (size_t)(colon - s);
    right = colon + 1;
    rn = n - ln - 1;
    if (ln == 8 && memcmp(left, "Iterator", 8) == 0) {
        op->category = TFOP_TFDATA;
        op->type = "Dataset";
        op->type_len = 7;
        return;
    }
    if (tfop_is_tf_name(left, ln) && tfop_is_tf_type(right, rn)) {
        op->category = TFOP_TENSORFLOW;
        op->name = left;
        op->name_len = ln;
        op->type = right;
        op->type_len = rn;
        return;
    }
    if (rn == 0) {
        derive_op_type(left, ln, &t, &tn);
    } else {
        t = right;
        tn = rn;
    }
    if (tfop_is_jax_type(t, tn)) {
        const char *bracket = memchr(t, '[', tn);
        op->category = TFOP_JAX;
        op->name = left;
        op->name_len = ln;
        op->type = t;
        op->type_len = bracket ? (size_t)(bracket - t) : tn;
        return;
    }
    if (rn == 0) {
        op->category = TFOP_TENSORFLOW;
        op->name = left;
        op->name_len = ln;
        op->type = t;
        op->type_len = tn;
    }
}

/* Scan the '/'-separated scopes of s; the last component is skipped when
 * skip_last (ParseTfNameScopes). Returns 1 if one starts with prefix and
 * check(rest) holds. */
static int tf_gradient_scope(const char *s, size_t n)
{
    size_t i = 0;

    while (i < n) {
        size_t j = i;
        while (j < n && s[j] != '/')
            j++;
        if (j == n)
            break; /* the op name itself, not a scope */
        if (j - i >= 8 && memcmp(s + i, "gradient", 8) == 0) {
            const char *rest = s + i + 8;
            size_t rn = j - i - 8;
            if ((rn == 5 && memcmp(rest, "_tape", 5) == 0) || (rn >= 1 && rest[0] == 's'))
                return 1;
        }
        i = j + 1;
    }
    return 0;
}

static int jax_transpose_scope(const char *s, size_t n)
{
    size_t i = 0;

    for (;;) {
        size_t j = i;
        while (j < n && s[j] != '/')
            j++;
        if (j - i >= 10 && memcmp(s + i, "transpose(", 10) == 0)
            return 1;
        if (j >= n)
            return 0;
        i = j + 1;
    }
}

int tfop_is_training_op(const char *op_name, size_t nn, const char *op_type, size_t tn)
{
    if (tfop_is_tf_type(op_type, tn) && tfop_is_tf_name(op_name, nn))
        return tf_gradient_scope(op_name, nn);
    if (tfop_is_jax_name_and_type(op_name, nn, op_type, tn) || tn == 0)
        return jax_transpose_scope(op_name, nn);
    return 0;
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t sn = strlen(suffix);

    return n >= sn && memcmp(s + n - sn, suffix, sn) == 0;
}

int tfop_tc_eligible(const char *s, size_t n)
{
    static const char *const suffixes[] = {
        "Conv2D",
        "Conv2DBackpropFilter",
        "Conv2DBackpropInput",
        "Conv3D",
        "DepthwiseConv2dNative",
        "DepthwiseConv2dNativeBackpropFilter",
        "DepthwiseConv2dNativeBackpropInput",
        "/MatMul",
        "FusedMatMul",
        "/CudnnRNN",
        "XlaDot",
        "XlaDotV2",
        NULL,
    };
    static const char *const infixes[] = {"BatchMatMul", "CudnnRNNV", "CudnnRNNForward",
                                          "CudnnRNNBackprop", NULL};
    int i;

    for (i = 0; suffixes[i] != NULL; i++) {
        if (ends_with(s, n, suffixes[i]))
            return 1;
    }
    for (i = 0; infixes[i] != NULL; i++) {
        if (contains(s, n, infixes[i], strlen(infixes[i])))
            return 1;
    }
    return 0;
}

int tfop_einsum_tc_eligible(const char *eq, size_t n)
{
    size_t i, arrows = 0, arrow_at = 0, commas = 0;

    if (n == 0)
        return 0;
    for (i = 0; i + 1 < n; i++) {
        if (eq[i] == '-' && eq[i + 1] == '>') {
            if (arrows == 0)
                arrow_at = i;
            arrows++;
        }
    }
    if (arrows != 1)
        return 0;
    for (i = 0; i < arrow_at; i++) {
        if (eq[i] == ',')
            commas++;
    }
    return commas == 1;
}
