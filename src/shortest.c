/*
 * shortest.c - shortest round-trip digits of a double; see shortest.h.
 *
 * The fewest significant digits p (1..17) whose correctly rounded decimal
 * reads back as v. The test is monotonic in p: if p digits read back,
 * p + 1 do too (the p-digit decimal is also a (p + 1)-digit one, and the
 * nearest (p + 1)-digit decimal is no farther from v).
 *
 * One printf gives the 17 correctly rounded digits D (17 always read
 * back). The correctly rounded p-digit decimal is D rounded to p digits,
 * unless D's digits after the p-th are 5 followed by zeros: only there
 * can the exact value lie on the other side of the half way point (D is
 * within half a unit of its 17th digit of the exact value, any other tail
 * is a whole unit away from half). There the nearest is one of D's two
 * roundings: if neither reads back, the answer is no; else the value goes
 * to the search by printf at each p (shortest_digits_by_search).
 * Candidates are tried downward from D without its trailing zeros (a short
 * decimal such as 1.234567 takes one strtod; 0.1, whose 17 digits are
 * 1.0000000000000001, two), then by halves, each one that reads back
 * without its own trailing zeros. Against the search by printf, a typical
 * value costs one printf and one to three strtod instead of four of each.
 */
#include "shortest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int shortest_digits_by_search(double v, char *digits, int *exp10)
{
    char buf[40], cand[40];
    int lo = 1, hi = 17, k = 0, i;

    buf[0] = '\0'; /* the text of hi digits, once some reads back */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        snprintf(cand, sizeof(cand), "%.*e", mid - 1, v);
        if (strtod(cand, NULL) == v) {
            hi = mid;
            memcpy(buf, cand, sizeof(buf));
        } else {
            lo = mid + 1;
        }
    }
    if (buf[0] == '\0')
        snprintf(buf, sizeof(buf), "%.*e", hi - 1, v);
    /* buf: [-]d[.ddd]e[+-]XX */
    for (i = buf[0] == '-' ? 1 : 0; buf[i] != 'e'; i++) {
        if (buf[i] != '.')
            digits[k++] = buf[i];
    }
    *exp10 = atoi(&buf[i + 1]);
    while (k > 1 && digits[k - 1] == '0')
        k--;
    digits[k] = '\0';
    return k;
}

/* The 17 digits d17 rounded to p (< 17) of them into out (p digits), with
 * the power of ten of the first in *exp10 (e17: that of d17's first):
 * up = 1 rounds up, 0 down, -1 to nearest. Returns 0, or -1 when rounding
 * to nearest and d17's tail after p digits is exactly half a unit (the
 * exact value may lie on either side). */
static int round_digits(const char *d17, int e17, int p, int up, char *out, int *exp10)
{
    int i;

    if (up < 0) {
        for (i = p + 1; d17[p] == '5' && i < 17 && d17[i] == '0'; i++)
            ;
        if (d17[p] == '5' && i == 17)
            return -1;
        up = d17[p] >= '5';
    }
    memcpy(out, d17, (size_t)p);
    *exp10 = e17;
    if (!up)
        return 0;
    for (i = p - 1; i >= 0 && out[i] == '9'; i--)
        out[i] = '0';
    if (i >= 0) {
        out[i]++;
    } else {
        /* 9.99 -> 10.0: one digit 1 a power of ten up (the rest zeros) */
        out[0] = '1';
        (*exp10)++;
    }
    return 0;
}

/* 1 if the p digits at d, first at 10^exp10, read back as v. */
static int reads_back(double v, const char *d, int p, int exp10)
{
    char text[48];
    int n = 0;
    unsigned e;

    if (v < 0)
        text[n++] = '-';
    text[n++] = d[0];
    if (p > 1) {
        text[n++] = '.';
        memcpy(text + n, d + 1, (size_t)(p - 1));
        n += p - 1;
    }
    text[n++] = 'e';
    if (exp10 < 0)
        text[n++] = '-';
    e = (unsigned)(exp10 < 0 ? -exp10 : exp10);
    if (e >= 100)
        text[n++] = (char)('0' + e / 100);
    if (e >= 10)
        text[n++] = (char)('0' + e / 10 % 10);
    text[n++] = (char)('0' + e % 10);
    text[n] = '\0';
    return strtod(text, NULL) == v;
}

/* Keep the p digits of d, first at 10^exp10, as the answer. */
static int answer(const char *d, int p, int exp10, char *digits, int *exp10p)
{
    while (p > 1 && d[p - 1] == '0')
        p--;
    memcpy(digits, d, (size_t)p);
    digits[p] = '\0';
    *exp10p = exp10;
    return p;
}

/* Whether the correctly rounded p-digit decimal of v reads back as v, from
 * its 17 digits: 1 (the digits in cand, first at 10^*exp10), 0, or -1 when
 * that cannot be told (a tail of half a unit, and one of its two roundings
 * reads back). */
static int try_digits(double v, const char *d17, int e17, int p, char *cand, int *exp10)
{
    int e;

    if (round_digits(d17, e17, p, -1, cand, exp10) == 0)
        return reads_back(v, cand, p, *exp10);
    /* Half way: the nearest is one of the two; neither reading back says no. */
    if (round_digits(d17, e17, p, 0, cand, &e) == 0 && reads_back(v, cand, p, e))
        return -1;
    if (round_digits(d17, e17, p, 1, cand, &e) == 0 && reads_back(v, cand, p, e))
        return -1;
    return 0;
}

int shortest_digits(double v, char *digits, int *exp10)
{
    char buf[40], d17[18], cand[18], best[18];
    int k = 0, i, e17, lo, hi, best_e, p, r;

    /* buf: [-]d.dddddddddddddddde[+-]XX: 17 correctly rounded digits */
    snprintf(buf, sizeof(buf), "%.16e", v);
    for (i = buf[0] == '-' ? 1 : 0; buf[i] != 'e' && k < 17; i++) {
        if (buf[i] != '.')
            d17[k++] = buf[i];
    }
    if (k != 17 || buf[i] != 'e')
        return shortest_digits_by_search(v, digits, exp10); /* not finite */
    d17[17] = '\0';
    e17 = atoi(&buf[i + 1]);

    /* Without its trailing zeros, D itself: hi digits read back. */
    for (hi = 17; hi > 1 && d17[hi - 1] == '0'; hi--)
        ;
    memcpy(best, d17, 17);
    best_e = e17;
    /* Downward twice (most values stop there), then by halves. */
    for (i = 0; i < 2 && hi > 1; i++) {
        r = try_digits(v, d17, e17, hi - 1, cand, &p);
        if (r < 0)
            return shortest_digits_by_search(v, digits, exp10);
        if (r == 0)
            return answer(best, hi, best_e, digits, exp10);
        /* its trailing zeros off: the same decimal, fewer digits */
        for (hi--; hi > 1 && cand[hi - 1] == '0'; hi--)
            ;
        memcpy(best, cand, (size_t)hi);
        best_e = p;
    }
    lo = 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        r = try_digits(v, d17, e17, mid, cand, &p);
        if (r < 0)
            return shortest_digits_by_search(v, digits, exp10);
        if (r) {
            for (hi = mid; hi > 1 && cand[hi - 1] == '0'; hi--)
                ;
            memcpy(best, cand, (size_t)hi);
            best_e = p;
        } else {
            lo = mid + 1;
        }
    }
    return answer(best, hi, best_e, digits, exp10);
}
