/*
 * shortest.c - shortest round-trip digits of a double; see shortest.h.
 *
 * The fewest significant digits p (1..17) whose correctly rounded decimal
 * reads back as v, found by halves: if p digits read back, p + 1 do too
 * (the p-digit decimal is also a (p + 1)-digit one, and the nearest
 * (p + 1)-digit decimal is no farther from v), so the test is monotonic in
 * p. Five rounds of printf and strtod at most, instead of up to seventeen.
 */
#include "shortest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int shortest_digits(double v, char *digits, int *exp10)
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
