/*
 * gt_pyrepr.c - doubles as TraceLens's CSVs print them (pandas writes
 * Python's repr: the shortest digits that read back, up to 17):
 * exact integer arithmetic for the magnitudes the tables hold, printf and
 * strtod for the rest.
 */
#include "gpu_timeline.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/out.h"

/* The significant digits of a positive double (no trailing zeros) and the
 * decimal exponent of the first one. */
struct pydigits {
    char digits[24];
    int nd;
    int exp10;
};

/* Digits of the general search with printf and strtod: the shortest
 * precision (1..17, by bisection) whose %e text reads back as a. */
static void digits_search(double a, struct pydigits *d)
{
    char tmp[40], *e;
    int lo = 1, hi = 17, k;

    while (lo < hi) {
        int mid = (lo + hi) / 2;
        snprintf(tmp, sizeof(tmp), "%.*e", mid - 1, a);
        if (strtod(tmp, NULL) == a)
            hi = mid;
        else
            lo = mid + 1;
    }
    snprintf(tmp, sizeof(tmp), "%.*e", lo - 1, a);
    e = strchr(tmp, 'e');
    d->exp10 = atoi(e + 1);
    d->nd = 0;
    for (k = 0; tmp + k < e; k++) {
        if (tmp[k] != '.')
            d->digits[d->nd++] = tmp[k];
    }
    while (d->nd > 1 && d->digits[d->nd - 1] == '0')
        d->nd--;
}

/* a = m * 2^-k exactly, rounded to q significant digits as printf's %e does
 * (exact value, ties to even): rounded = the digits as an integer before any
 * carry into a new digit (may be 10^q), scaled = m * 10^s, the exact value
 * times 10^s * 2^k, with s = q - 1 - exp10. */
struct rounding {
    unsigned __int128 scaled;
    uint64_t rounded;
    int s;
    int exp10;
};

/* 0 when the scale leaves the range the 128-bit arithmetic covers. */
static int round_to_digits(uint64_t m, int k, int q, int exp10_guess, struct rounding *r)
{
    int exp10 = exp10_guess, tries;

    for (tries = 0; tries < 3; tries++) {
        int s = q - 1 - exp10;
        unsigned __int128 scaled, below, rest, half;
        if (s < 0 || s > 19)
            return 0;
        scaled = (unsigned __int128)m * out_pow10[s];
        below = scaled >> k;
        if (below < out_pow10[q - 1]) {
            exp10--;
            continue;
        }
        if (below >= out_pow10[q]) {
            exp10++;
            continue;
        }
        rest = scaled & ((((unsigned __int128)1) << k) - 1);
        half = ((unsigned __int128)1) << (k - 1);
        r->rounded = (uint64_t)below + (rest > half || (rest == half && (below & 1)));
        r->scaled = scaled;
        r->s = s;
        r->exp10 = exp10;
        return 1;
    }
    return 0;
}

/* 1 if the decimal r->rounded * 10^-s reads back as m * 2^-k (a normal
 * double): it lies within half a gap of the neighbours, ties going to the
 * even significand as strtod rounds. In the scaled units one ulp is 10^s. */
static int reads_back(const struct rounding *r, uint64_t m, int k)
{
    unsigned __int128 decimal = (unsigned __int128)r->rounded << k, ulp = out_pow10[r->s], twice;

    if (decimal >= r->scaled) {
        twice = 2 * (decimal - r->scaled);
        return twice < ulp || (twice == ulp && (m & 1) == 0);
    }
    if (m == 1ull << 52) /* a power of two: the gap below is half as wide */
        return 4 * (r->scaled - decimal) <= ulp;
    twice = 2 * (r->scaled - decimal);
    return twice < ulp || (twice == ulp && (m & 1) == 0);
}

static void digits_from(uint64_t rounded, int q, int exp10, struct pydigits *d)
{
    int k;

    if (rounded == out_pow10[q]) { /* 9.99.. carried into 10.0.. */
        rounded = out_pow10[q - 1];
        exp10++;
    }
    for (k = q - 1; k >= 0; k--) {
        d->digits[k] = (char)('0' + rounded % 10);
        rounded /= 10;
    }
    d->nd = q;
    while (d->nd > 1 && d->digits[d->nd - 1] == '0')
        d->nd--;
    d->exp10 = exp10;
}

/* The same digits as digits_search, exactly, for 1e-4 <= a < 1e15: the
 * search's precisions that read back form a run up to 15 (DBL_DIG: distinct
 * 15-digit decimals stay distinct as doubles, so a shorter decimal that reads
 * back as a is a's 15-digit rounding with trailing zeros), so its answer is
 * the 15-digit rounding trimmed if that reads back, else the 16-digit one
 * if that does, else the 17-digit one (which always does). Returns 0 outside
 * that range. */
static int digits_exact(double a, struct pydigits *d)
{
    struct rounding r;
    uint64_t m;
    int ex, k, guess;
    double f;

    if (!(a >= 1e-4 && a < 1e15))
        return 0;
    f = frexp(a, &ex); /* a = f * 2^ex, 0.5 <= f < 1 */
    m = (uint64_t)ldexp(f, 53);
    k = 53 - ex;
    if (k < 1 || k > 70)
        return 0;
    guess = (int)floor((ex - 1) * 0.30102999566398120);
    if (!round_to_digits(m, k, 15, guess, &r))
        return 0;
    if (reads_back(&r, m, k)) {
        digits_from(r.rounded, 15, r.exp10, d);
        return 1;
    }
    if (!round_to_digits(m, k, 16, r.exp10, &r))
        return 0;
    if (reads_back(&r, m, k)) {
        digits_from(r.rounded, 16, r.exp10, d);
        return 1;
    }
    if (!round_to_digits(m, k, 17, r.exp10, &r))
        return 0;
    digits_from(r.rounded, 17, r.exp10, d);
    return 1;
}

static size_t put_uint(char *p, uint64_t v, int min_width)
{
    char rev[24];
    int n = 0, k;

    do {
        rev[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0 || n < min_width);
    for (k = 0; k < n; k++)
        p[k] = rev[n - 1 - k];
    return (size_t)n;
}

/* Python's layout of the digits: scientific below 1e-4 and from 1e16 on. */
static size_t layout(int negative, const struct pydigits *d, char *p)
{
    size_t len = 0;
    int k;

    if (negative)
        p[len++] = '-';
    if (d->exp10 < -4 || d->exp10 >= 16) {
        p[len++] = d->digits[0];
        if (d->nd > 1) {
            p[len++] = '.';
            memcpy(p + len, d->digits + 1, (size_t)d->nd - 1);
            len += (size_t)d->nd - 1;
        }
        p[len++] = 'e';
        p[len++] = d->exp10 < 0 ? '-' : '+';
        len += put_uint(p + len, (uint64_t)abs(d->exp10), 2);
    } else if (d->exp10 < 0) {
        p[len++] = '0';
        p[len++] = '.';
        for (k = 0; k < -d->exp10 - 1; k++)
            p[len++] = '0';
        memcpy(p + len, d->digits, (size_t)d->nd);
        len += (size_t)d->nd;
    } else {
        for (k = 0; k <= d->exp10; k++)
            p[len++] = k < d->nd ? d->digits[k] : '0';
        p[len++] = '.';
        if (d->nd > d->exp10 + 1) {
            memcpy(p + len, d->digits + d->exp10 + 1, (size_t)(d->nd - d->exp10 - 1));
            len += (size_t)(d->nd - d->exp10 - 1);
        } else {
            p[len++] = '0';
        }
    }
    return len;
}

/* A whole number of thousandths (µs with ns resolution) below 1e12, or of
 * millionths (ps resolution) below 1e9: there the value's ulp is far below
 * the last decimal, so no shorter decimal reads back as v, and the digits
 * with trailing zeros trimmed are exactly Python's repr. Returns the length
 * written, 0 if v is not such a number. */
static size_t fixed_point(double v, char *p)
{
    static const struct {
        double scale;
        double limit;
        int places;
        uint64_t div;
    } fast[] = {{1e3, 1e12, 3, 1000}, {1e6, 1e9, 6, 1000000}};
    size_t f, len;

    if (!(fabs(v) >= 1e-4))
        return 0;
    for (f = 0; f < sizeof(fast) / sizeof(fast[0]); f++) {
        double t;
        uint64_t q;
        if (fabs(v) >= fast[f].limit)
            continue;
        t = round(v * fast[f].scale);
        if (t / fast[f].scale != v)
            continue;
        q = (uint64_t)fabs(t);
        len = 0;
        if (v < 0)
            p[len++] = '-';
        len += put_uint(p + len, q / fast[f].div, 1);
        p[len++] = '.';
        len += put_uint(p + len, q % fast[f].div, fast[f].places);
        while (p[len - 1] == '0' && p[len - 2] != '.')
            len--;
        return len;
    }
    return 0;
}

static size_t special(char *p, const char *text)
{
    size_t len = strlen(text);

    memcpy(p, text, len);
    return len;
}

size_t gt_pyrepr(double v, char *buf, size_t n)
{
    char tmp[48];
    struct pydigits d;
    size_t len;

    if (isnan(v)) {
        len = special(tmp, "nan");
    } else if (isinf(v)) {
        len = special(tmp, v > 0 ? "inf" : "-inf");
    } else if (v == 0) {
        len = special(tmp, signbit(v) ? "-0.0" : "0.0");
    } else {
        len = fixed_point(v, tmp);
        if (len == 0) {
            if (!digits_exact(fabs(v), &d))
                digits_search(fabs(v), &d);
            len = layout(v < 0, &d, tmp);
        }
    }
    if (n == 0)
        return len;
    if (len > n - 1)
        len = n - 1;
    memcpy(buf, tmp, len);
    buf[len] = 0;
    return len;
}
