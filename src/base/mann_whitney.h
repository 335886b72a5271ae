/*
 * mann_whitney.h - the Mann-Whitney U test of two samples: two-sided,
 * normal approximation with the tie correction and a continuity correction
 * of 0.5 (scipy.stats.mannwhitneyu(method="asymptotic"), R's
 * wilcox.test(exact=FALSE)). It asks whether one sample tends to hold
 * larger values than the other, without assuming a distribution.
 */
#ifndef XPROFS_MANN_WHITNEY_H
#define XPROFS_MANN_WHITNEY_H

#include <stddef.h>

struct mw_result {
    double u; /* U of the first sample (pairs where it is larger, ties half) */
    double z; /* the normal deviate of max(U1, U2), continuity corrected */
    double p; /* two-sided p-value, in [0, 1]; 1 when every value ties */
};

/* Test a[0..na) against b[0..nb) (na, nb > 0). Returns 0, or -ENOMEM. */
int mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct mw_result *r);

#endif
