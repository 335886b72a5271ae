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

/* The significant digits of printf's "%e" text buf ([-]d[.ddd]e[+-]XX),
 * at most max of them, into digits, and the power of ten of the first;
 * returns their number, or -1 for any other text (inf, nan). */
static int e_digits(const char *buf, char *digits, int max, int *exp10)
{
    int k = 0, i;

    for (i = buf[0] == '-' ? 1 : 0; buf[i] != 'e' && buf[i] != '\0' && k < max; i++) {
        if (buf[i] != '.')
            digits[k++] = buf[i];
    }
    if (buf[i] != 'e')
        return -1;
    *exp10 = atoi(&buf[i + 1]);
    return k;
}

/* p digits at d without their trailing zeros (the first one stays). */
static int without_zeros(const char *d, int p)
{
    while (p > 1 && d[p - 1] == '0')
        p--;
    return p;
}

int shortest_digits_by_search(double v, char *digits, int *exp10)
{
    char buf[40], cand[40];
    int lo = 1, hi = 17, k;

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
    k = e_digits(buf, digits, 17, exp10);
    if (k < 0) {
        k = 1; /* not finite: no digits to give */
        digits[0] = '0';
        *exp10 = 0;
    }
    k = without_zeros(digits, k);
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
    int e17, lo = 1, hi, best_e, p, r, round;

    /* 17 correctly rounded digits */
    snprintf(buf, sizeof(buf), "%.16e", v);
    if (e_digits(buf, d17, 17, &e17) != 17)
        return shortest_digits_by_search(v, digits, exp10); /* not finite */
    /* Without its trailing zeros, D itself: hi digits read back. */
    hi = without_zeros(d17, 17);
    memcpy(best, d17, 17);
    best_e = e17;
    /* Downward twice (most values stop there: a miss ends the search),
     * then by halves. */
    for (round = 0; lo < hi; round++) {
        int mid = round < 2 ? hi - 1 : lo + (hi - lo) / 2;
        r = try_digits(v, d17, e17, mid, cand, &p);
        if (r < 0)
            return shortest_digits_by_search(v, digits, exp10);
        if (r) {
            /* its trailing zeros off: the same decimal, fewer digits */
            hi = without_zeros(cand, mid);
            memcpy(best, cand, (size_t)hi);
            best_e = p;
        } else {
            lo = mid + 1;
        }
    }
    memcpy(digits, best, (size_t)hi);
    digits[hi] = '\0';
    *exp10 = best_e;
    return hi;
}
