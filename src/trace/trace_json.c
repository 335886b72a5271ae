/*
 * trace_json.c - XProf's trace JSON spellings (see trace_json.h).
 *
 * tj_us is on the hot path (two calls per event of a multi-gigabyte trace):
 * it computes the 17 significant digits of the double ps/1e6 exactly with
 * 128-bit integers instead of calling snprintf, rounding ties to even as
 * glibc's printf does, and uses snprintf only outside that range.
 */
#include "trace_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/shortest.h"

/* 1 for bytes XProf's JsonEscape rewrites, 0 for bytes copied as they are. */
static const unsigned char escape_class[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x00 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x10 */
    0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x20: " & */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, /* 0x30: < > */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x40 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, /* 0x50: \ */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x60 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x70 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x80 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x90 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0xa0 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0xb0 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0xc0 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0xd0 */
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0xe0: e2 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0xf0 */
};

static const char hex_digits[] = "0123456789abcdef";

/* Write the escape for byte c at s[i] (escape_class[c] == 1); returns the
 * number of input bytes consumed. */
static size_t write_escape(struct out *o, const unsigned char *s, size_t i, size_t n)
{
    unsigned char c = s[i];
    char buf[8];

    switch (c) {
    case '\b':
        out_write(o, "\\b", 2);
        return 1;
    case '\f':
        out_write(o, "\\f", 2);
        return 1;
    case '\n':
        out_write(o, "\\n", 2);
        return 1;
    case '\r':
        out_write(o, "\\r", 2);
        return 1;
    case '\t':
        out_write(o, "\\t", 2);
        return 1;
    case '"':
        out_write(o, "\\\"", 2);
        return 1;
    case '\\':
        out_write(o, "\\\\", 2);
        return 1;
    case 0xe2:
        if (i + 2 < n && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9)) {
            out_write(o, s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029", 6);
            return 3;
        }
        out_putc(o, (char)c);
        return 1;
    default:
        /* Other control bytes and < > &: \u00XX with lower-case hex. */
        memcpy(buf, "\\u00", 4);
        buf[4] = hex_digits[c >> 4];
        buf[5] = hex_digits[c & 15];
        out_write(o, buf, 6);
        return 1;
    }
}

void tj_str(struct out *o, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, run = 0;

    out_putc(o, '"');
    while (i < n) {
        if (!escape_class[s[i]]) {
            i++;
            continue;
        }
        if (i > run)
            out_write(o, s + run, i - run);
        i += write_escape(o, s, i, n);
        run = i;
    }
    if (i > run)
        out_write(o, s + run, i - run);
    out_putc(o, '"');
}

void tj_cstr(struct out *o, const char *s)
{
    tj_str(o, s != NULL ? s : "", s != NULL ? strlen(s) : 0);
}

void tj_g17(struct out *o, double v)
{
    char buf[40];
    int n = snprintf(buf, sizeof(buf), "%.17g", v);

    out_write(o, buf, (size_t)n);
}

void tj_g6(struct out *o, double v)
{
    char buf[40];
    int n = snprintf(buf, sizeof(buf), "%g", v);

    out_write(o, buf, (size_t)n);
}

/* The 17 significant digits of d (> 0, finite) scaled by 10^k, rounded to
 * nearest with ties to even, computed exactly. Returns 0 when the exact
 * product does not fit the 128-bit arithmetic. */
static int digits17(double d, int k, uint64_t *out)
{
    uint64_t bits, mant;
    int biased, shift;
    unsigned __int128 prod, q, rem, half;

    /* d = mant / 2^shift, read from its bits (frexp and ldexp are calls). */
    memcpy(&bits, &d, sizeof(bits));
    biased = (int)((bits >> 52) & 0x7ff);
    if ((bits >> 63) != 0 || biased == 0 || biased == 0x7ff)
        return 0; /* negative, subnormal or not finite: not ours */
    mant = (bits & ((1ull << 52) - 1)) | (1ull << 52);
    shift = 1075 - biased;
    if (k < 0 || k > 19 || shift <= 0 || shift >= 120)
        return 0;
    prod = (unsigned __int128)mant * out_pow10[k];
    q = prod >> shift;
    rem = prod - (q << shift);
    half = (unsigned __int128)1 << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++;
    *out = (uint64_t)q;
    return 1;
}

/* The 8 digits of v (< 10^8, zero-padded) at p: four independent pairs. */
static void put8(char *p, uint32_t v)
{
    uint32_t hi = v / 10000, lo = v % 10000;

    memcpy(p, &out_two_digits[2 * (hi / 100)], 2);
    memcpy(p + 2, &out_two_digits[2 * (hi % 100)], 2);
    memcpy(p + 4, &out_two_digits[2 * (lo / 100)], 2);
    memcpy(p + 6, &out_two_digits[2 * (lo % 100)], 2);
}

/* Write 17 digits r (10^16 <= r < 10^17) as %.17g with decimal exponent x
 * (position of the first digit), fixed notation, -4 <= x < 17. */
static void put_fixed17(struct out *o, uint64_t r, int x)
{
    char digits[17], buf[48];
    int nd = 17, i, len = 0;

    digits[0] = (char)('0' + r / out_pow10[16]);
    put8(digits + 1, (uint32_t)(r / out_pow10[8] % out_pow10[8]));
    put8(digits + 9, (uint32_t)(r % out_pow10[8]));
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    if (x >= 0) {
        /* Digits up to the point, the point, then the rest (or zeros up
         * to the point when the digits end before it). */
        if (nd > x + 1) {
            memcpy(buf, digits, (size_t)x + 1);
            buf[x + 1] = '.';
            memcpy(buf + x + 2, digits + x + 1, (size_t)(nd - x - 1));
            len = nd + 1;
        } else {
            memcpy(buf, digits, (size_t)nd);
            memset(buf + nd, '0', (size_t)(x + 1 - nd));
            len = x + 1;
        }
    } else {
        buf[len++] = '0';
        buf[len++] = '.';
        for (i = 0; i < -x - 1; i++)
            buf[len++] = '0';
        memcpy(buf + len, digits, (size_t)nd);
        len += nd;
    }
    out_write(o, buf, (size_t)len);
}

/* Number of decimal digits of v (v > 0). */
static int decimal_len(uint64_t v)
{
    int n = 1;

    while (n < 20 && v >= out_pow10[n])
        n++;
    return n;
}

void tj_us(struct out *o, uint64_t ps)
{
    double d;
    uint64_t r;
    int x, k;

    if (ps % 1000000 == 0 && ps / 1000000 < out_pow10[17]) {
        out_u64(o, ps / 1000000);
        return;
    }
    if (ps < 1000) {
        tj_g17(o, (double)ps / 1e6);
        return;
    }
    d = (double)ps / 1e6;
    x = decimal_len(ps) - 1 - 6; /* decimal exponent of ps/1e6 */
    k = 16 - x;
    if (!digits17(d, k, &r)) {
        tj_g17(o, d);
        return;
    }
    if (r >= out_pow10[17]) { /* d rounded up to the next power of ten */
        x++;
        k--;
        if (!digits17(d, k, &r)) {
            tj_g17(o, d);
            return;
        }
    }
    if (x < -4 || x >= 17 || r < out_pow10[16]) {
        tj_g17(o, d);
        return;
    }
    put_fixed17(o, r, x);
}

void tj_py_float(struct out *o, double v)
{
    char out_buf[48];
    int len, x, nd, i, olen = 0;
    char *dot;
    char digits[20];

    if (isnan(v)) {
        out_puts(o, "NaN");
        return;
    }
    if (isinf(v)) {
        out_puts(o, v > 0 ? "Infinity" : "-Infinity");
        return;
    }
    if (v == 0) {
        out_puts(o, signbit(v) ? "-0.0" : "0.0");
        return;
    }
    nd = shortest_digits(v, digits, &x);
    if (v < 0)
        out_buf[olen++] = '-';
    if (x < -4 || x >= 16) {
        /* Python: d[.ddd]e+XX, at least two exponent digits. */
        out_buf[olen++] = digits[0];
        if (nd > 1) {
            out_buf[olen++] = '.';
            for (i = 1; i < nd; i++)
                out_buf[olen++] = digits[i];
        }
        len = snprintf(out_buf + olen, sizeof(out_buf) - (size_t)olen, "e%c%02d", x < 0 ? '-' : '+',
                       abs(x));
        out_write(o, out_buf, (size_t)(olen + len));
        return;
    }
    if (x >= 0) {
        for (i = 0; i <= x || i < nd; i++) {
            if (i == x + 1)
                out_buf[olen++] = '.';
            out_buf[olen++] = i < nd ? digits[i] : '0';
        }
        dot = memchr(out_buf, '.', (size_t)olen);
        if (dot == NULL) {
            out_buf[olen++] = '.';
            out_buf[olen++] = '0';
        }
    } else {
        out_buf[olen++] = '0';
        out_buf[olen++] = '.';
        for (i = 0; i < -x - 1; i++)
            out_buf[olen++] = '0';
        for (i = 0; i < nd; i++)
            out_buf[olen++] = digits[i];
    }
    out_write(o, out_buf, (size_t)olen);
}

void tj_py_us(struct out *o, uint64_t ps)
{
    char buf[40];
    int len = 0, i;
    uint64_t whole = ps / 1000000, frac = ps % 1000000;

    /* Below 2^53 ps the decimal ps/1e6 is the shortest string that reads
     * back as the double, so it is what repr() prints. */
    if (ps < 100 || ps >= (1ull << 53)) {
        tj_py_float(o, (double)ps / 1000000.0);
        return;
    }
    out_u64(o, whole);
    buf[len++] = '.';
    if (frac == 0) {
        buf[len++] = '0';
    } else {
        for (i = 5; i >= 0; i--) {
            buf[len + i] = (char)('0' + frac % 10);
            frac /= 10;
        }
        len += 6;
        while (buf[len - 1] == '0')
            len--;
    }
    out_write(o, buf, (size_t)len);
}

/* Decode one UTF-8 sequence at s[i]; returns its length and *cp, or 1 and
 * U+FFFD for an invalid byte. */
static size_t utf8_decode(const unsigned char *s, size_t i, size_t n, uint32_t *cp)
{
    unsigned char c = s[i];
    size_t len, k;
    uint32_t v, min;

    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        v = c & 0x1f;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        v = c & 0x0f;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        v = c & 0x07;
        min = 0x10000;
    } else {
        *cp = 0xfffd;
        return 1;
    }
    if (i + len > n) {
        *cp = 0xfffd;
        return 1;
    }
    for (k = 1; k < len; k++) {
        if ((s[i + k] & 0xc0) != 0x80) {
            *cp = 0xfffd;
            return 1;
        }
        v = (v << 6) | (s[i + k] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) {
        *cp = 0xfffd;
        return 1;
    }
    *cp = v;
    return len;
}

/* Write \uXXXX with lower-case hex, as Python's json module does. */
static void put_u16_escape(struct out *o, uint32_t v)
{
    char buf[6] = {'\\',
                   'u',
                   hex_digits[(v >> 12) & 15],
                   hex_digits[(v >> 8) & 15],
                   hex_digits[(v >> 4) & 15],
                   hex_digits[v & 15]};

    out_write(o, buf, 6);
}

void tj_py_str(struct out *o, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, run = 0;
    uint32_t cp;

    out_putc(o, '"');
    while (i < n) {
        unsigned char c = s[i];
        size_t len;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            i++;
            continue;
        }
        if (i > run)
            out_write(o, s + run, i - run);
        len = utf8_decode(s, i, n, &cp);
        switch (cp) {
        case '"':
            out_write(o, "\\\"", 2);
            break;
        case '\\':
            out_write(o, "\\\\", 2);
            break;
        case '\n':
            out_write(o, "\\n", 2);
            break;
        case '\r':
            out_write(o, "\\r", 2);
            break;
        case '\t':
            out_write(o, "\\t", 2);
            break;
        case '\b':
            out_write(o, "\\b", 2);
            break;
        case '\f':
            out_write(o, "\\f", 2);
            break;
        default:
            if (cp >= 0x10000) {
                cp -= 0x10000;
                put_u16_escape(o, 0xd800 + (cp >> 10));
                put_u16_escape(o, 0xdc00 + (cp & 0x3ff));
            } else {
                put_u16_escape(o, cp);
            }
        }
        i += len;
        run = i;
    }
    if (i > run)
        out_write(o, s + run, i - run);
    out_putc(o, '"');
}

/* Limit above which XProf quotes integers (JavaScript's exact range). */
#define IEEE_LIMIT (1ull << 53)

void tj_arg_str(struct out *o, const char *name, const char *value, size_t n)
{
    tj_cstr(o, name);
    out_putc(o, ':');
    tj_str(o, value, n);
}

void tj_arg_i64(struct out *o, const char *name, int64_t v)
{
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

    tj_cstr(o, name);
    if (mag > IEEE_LIMIT) {
        out_puts(o, ":\"");
        out_i64(o, v);
        out_putc(o, '"');
    } else {
        out_putc(o, ':');
        out_i64(o, v);
    }
}

void tj_arg_u64(struct out *o, const char *name, uint64_t v)
{
    tj_cstr(o, name);
    if (v > IEEE_LIMIT) {
        out_puts(o, ":\"");
        out_u64(o, v);
        out_putc(o, '"');
    } else {
        out_putc(o, ':');
        out_u64(o, v);
    }
}

int tj_perf_counter_name(const char *name)
{
    size_t n = strlen(name);

    return (n >= 8 && strcmp(name + n - 8, "(util %)") == 0) ||
           (n >= 9 && strcmp(name + n - 9, " (MB/sec)") == 0);
}

void tj_double_value(struct out *o, const char *name, double v)
{
    char buf[64];
    int n;

    if (tj_perf_counter_name(name)) {
        n = snprintf(buf, sizeof(buf), "%.2f", v);
        out_write(o, buf, (size_t)n);
    } else {
        tj_g17(o, v);
    }
}

void tj_arg_double(struct out *o, const char *name, double v)
{
    tj_cstr(o, name);
    if (isfinite(v)) {
        out_putc(o, ':');
        tj_double_value(o, name, v);
    } else if (isinf(v)) {
        out_puts(o, v > 0 ? ":\"Infinity\"" : ":\"-Infinity\"");
    } else {
        out_puts(o, ":\"NaN\"");
    }
}

/* tsl's ContextType numbers 0.. and their GetContextTypeString. */
static const char *const context_names[] = {
    "",
    "",
    "tf_exec",
    "tfrt_exec",
    "batch_sched",
    "PjRt",
    "as_batch_sched",
    "tfrt_rt",
    "tpu_embed",
    "gpu_launch",
    "batcher",
    "tpu_stream",
    "tpu_launch",
    "pathways_exec",
    "pjrt_library_call",
    "threadpool_event",
};

const char *tj_context_name(unsigned cat)
{
    return cat < sizeof(context_names) / sizeof(context_names[0]) ? context_names[cat] : "";
}
